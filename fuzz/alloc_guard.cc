// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// The replacement global allocation functions behind `AllocGuard`. Every
// form of `operator new` goes through `Allocate` and every `operator delete`
// through `Release`; sizes are counted as `malloc_usable_size` on both sides
// so that the books balance whatever the allocator rounds to.

#include "fuzz/alloc_guard.h"

#include <malloc.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>

namespace flinkstate::fuzz {
namespace {

std::atomic<bool> g_armed{false};
std::atomic<int64_t> g_live{0};
std::atomic<int64_t> g_peak{0};
std::atomic<uint64_t> g_budget{0};

[[noreturn]] void OverBudget(const char* what, uint64_t bytes) {
  g_armed.store(false);  // fprintf may allocate
  std::fprintf(stderr,
               "==flinkstate-fuzz== allocation cap exceeded: %s %llu bytes, "
               "budget %llu bytes (multiple x input + %llu, multiple %llu by default)\n",
               what, static_cast<unsigned long long>(bytes),
               static_cast<unsigned long long>(g_budget.load()),
               static_cast<unsigned long long>(kBudgetBase),
               static_cast<unsigned long long>(kBudgetMultiple));
  std::abort();
}

void Count(void* p) {
  if (!g_armed.load(std::memory_order_relaxed)) return;
  const int64_t n = static_cast<int64_t>(malloc_usable_size(p));
  const int64_t live = g_live.fetch_add(n, std::memory_order_relaxed) + n;
  int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (live > peak &&
         !g_peak.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
  if (live > static_cast<int64_t>(g_budget.load(std::memory_order_relaxed))) {
    OverBudget("live total", static_cast<uint64_t>(live));
  }
}

void* Allocate(size_t n, size_t align, bool nothrow) {
  // A single request over the budget is refused before it reaches malloc
  // (a hostile count would otherwise touch gigabytes first).
  if (g_armed.load(std::memory_order_relaxed) &&
      n > g_budget.load(std::memory_order_relaxed)) {
    OverBudget("single allocation of", n);
  }
  if (n == 0) n = 1;
  void* p = nullptr;
  if (align <= alignof(std::max_align_t)) {
    p = std::malloc(n);
  } else if (posix_memalign(&p, align, n) != 0) {
    p = nullptr;
  }
  if (p == nullptr) {
    if (nothrow) return nullptr;
    throw std::bad_alloc();
  }
  Count(p);
  return p;
}

void Release(void* p) {
  if (p == nullptr) return;
  if (g_armed.load(std::memory_order_relaxed)) {
    g_live.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)),
                     std::memory_order_relaxed);
  }
  std::free(p);
}

}  // namespace

void AllocGuard::Arm(uint64_t budget) {
  g_live.store(0);
  g_peak.store(0);
  g_budget.store(budget);
  g_armed.store(true);
}
void AllocGuard::Disarm() { g_armed.store(false); }
void AllocGuard::SetBudget(uint64_t budget) { g_budget.store(budget); }
uint64_t AllocGuard::peak() { return static_cast<uint64_t>(g_peak.load()); }
bool AllocGuard::active() {
#ifdef FLINKSTATE_FUZZ_NO_NEW_OVERRIDE
  return false;
#else
  return true;
#endif
}

}  // namespace flinkstate::fuzz

#ifndef FLINKSTATE_FUZZ_NO_NEW_OVERRIDE
using flinkstate::fuzz::Allocate;
using flinkstate::fuzz::Release;
constexpr size_t kPlain = alignof(std::max_align_t);

void* operator new(size_t n) { return Allocate(n, kPlain, false); }
void* operator new[](size_t n) { return Allocate(n, kPlain, false); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  return Allocate(n, kPlain, true);
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  return Allocate(n, kPlain, true);
}
void* operator new(size_t n, std::align_val_t a) {
  return Allocate(n, static_cast<size_t>(a), false);
}
void* operator new[](size_t n, std::align_val_t a) {
  return Allocate(n, static_cast<size_t>(a), false);
}
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return Allocate(n, static_cast<size_t>(a), true);
}
void* operator new[](size_t n, std::align_val_t a,
                     const std::nothrow_t&) noexcept {
  return Allocate(n, static_cast<size_t>(a), true);
}
void operator delete(void* p) noexcept { Release(p); }
void operator delete[](void* p) noexcept { Release(p); }
void operator delete(void* p, size_t) noexcept { Release(p); }
void operator delete[](void* p, size_t) noexcept { Release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { Release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { Release(p); }
void operator delete(void* p, std::align_val_t) noexcept { Release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { Release(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { Release(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept {
  Release(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  Release(p);
}
void operator delete[](void* p, std::align_val_t,
                       const std::nothrow_t&) noexcept {
  Release(p);
}
#endif  // FLINKSTATE_FUZZ_NO_NEW_OVERRIDE
