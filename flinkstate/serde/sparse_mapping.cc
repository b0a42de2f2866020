// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/serde/sparse_mapping.h"

#include <fcntl.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "flinkstate/serde/signal_chain.h"

namespace flinkstate::serde {
namespace {

// The fault table, read by the signal handler without locks: a slot is
// claimed by a CAS on `begin` (0 = free), `end` and `mapping` are published
// before `begin`.
struct Slot {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<SparseMapping*> mapping{nullptr};
};
Slot g_slots[SparseMapping::kMaxMappings];
struct sigaction g_previous;
std::once_flag g_install_once;
int g_pipe[2] = {-1, -1};

// What the handler sends the fetch thread (smaller than PIPE_BUF: one
// atomic write).
struct Request {
  SparseMapping* mapping;
  uintptr_t addr;
  sem_t* done;
  int* served;
};

void FetchThread() {
  for (;;) {
    Request r;
    ssize_t n = ::read(g_pipe[0], &r, sizeof(r));
    if (n != static_cast<ssize_t>(sizeof(r))) {
      if (n < 0 && errno == EINTR) continue;
      return;
    }
    *r.served = r.mapping->ServeFault(r.addr) ? 1 : 2;
    ::sem_post(r.done);
  }
}

void Chain(int sig, siginfo_t* info, void* context) {
  internal::ChainSignal(g_previous, sig, info, context);
}

// The last address this thread faulted on whose page was already present:
// the first time that is a race with another thread's fetch (retrying
// succeeds); twice in a row it is a write to the read-only mapping.
thread_local uintptr_t t_present_fault = 0;

void OnSigsegv(int sig, siginfo_t* info, void* context) {
  const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
  for (Slot& slot : g_slots) {
    const uintptr_t begin = slot.begin.load(std::memory_order_acquire);
    if (begin == 0 || addr < begin) continue;
    if (addr >= slot.end.load(std::memory_order_acquire)) continue;
    const int saved_errno = errno;
    sem_t done;
    int served = 0;
    ::sem_init(&done, 0, 0);
    Request r{slot.mapping.load(std::memory_order_acquire), addr, &done, &served};
    // write(2), sem_wait and sem_post are async-signal-safe; the fetch
    // thread does the rest in an ordinary context.
    ssize_t n;
    do {
      n = ::write(g_pipe[1], &r, sizeof(r));
    } while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(sizeof(r))) {
      while (::sem_wait(&done) != 0 && errno == EINTR) {
      }
    }
    ::sem_destroy(&done);
    errno = saved_errno;
    if (served == 1) {
      t_present_fault = 0;
      return;  // the faulting load is retried and finds the page
    }
    if (served == 2 && t_present_fault != addr) {
      t_present_fault = addr;
      return;  // fetched meanwhile by another thread's fault: retry once
    }
    break;
  }
  Chain(sig, info, context);
}

void Install() {
  std::call_once(g_install_once, [] {
    if (::pipe2(g_pipe, O_CLOEXEC) != 0) return;
    std::thread(FetchThread).detach();
    internal::InstallChainedHandler(SIGSEGV, OnSigsegv, &g_previous);
  });
}

int Claim(SparseMapping* m, const uint8_t* data, uint64_t size) {
  const auto begin = reinterpret_cast<uintptr_t>(data);
  for (int i = 0; i < SparseMapping::kMaxMappings; ++i) {
    uintptr_t expected = 0;
    Slot& s = g_slots[i];
    if (s.begin.compare_exchange_strong(expected, UINTPTR_MAX, std::memory_order_acq_rel)) {
      s.mapping.store(m, std::memory_order_release);
      s.end.store(begin + size, std::memory_order_release);
      s.begin.store(begin, std::memory_order_release);
      return i;
    }
  }
  return -1;
}

}  // namespace

SparseMapping::SparseMapping(std::unique_ptr<ByteSource> source, SparseOptions options)
    : source_(std::move(source)), options_(options) {}

absl::StatusOr<std::unique_ptr<SparseMapping>> SparseMapping::Create(
    std::unique_ptr<ByteSource> source, SparseOptions options) {
  std::unique_ptr<SparseMapping> m(new SparseMapping(std::move(source), options));
  m->page_ = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  m->size_ = m->source_->size();
  if (m->size_ == 0) return m;
  m->reserved_ = (m->size_ + m->page_ - 1) / m->page_ * m->page_;
  void* p = ::mmap(nullptr, m->reserved_, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "serde: cannot reserve ", m->size_, " bytes of address space for ", m->name(), ": ",
        std::strerror(errno)));
  }
  m->data_ = static_cast<uint8_t*>(p);
  m->present_.assign(m->reserved_ / m->page_, 0);
  Install();
  if (g_pipe[1] < 0) return absl::InternalError("serde: cannot start the fetch thread");
  m->slot_ = Claim(m.get(), m->data_, m->reserved_);
  const bool whole = m->size_ <= options.whole_below || m->slot_ < 0;
  // Unguarded (more than kMaxMappings at once): fetched whole, the old way.
  if (absl::Status s = m->Ensure(0, whole ? m->size_ : options.head); !s.ok()) return s;
  return m;
}

SparseMapping::~SparseMapping() {
  if (slot_ >= 0) {
    g_slots[slot_].end.store(0, std::memory_order_release);
    g_slots[slot_].begin.store(0, std::memory_order_release);
    g_slots[slot_].mapping.store(nullptr, std::memory_order_release);
  }
  if (data_ != nullptr) ::munmap(data_, reserved_);
}

absl::Status SparseMapping::FillLocked(uint64_t first, uint64_t count) {
  const uint64_t offset = first * page_;
  const uint64_t len = count * page_;
  uint8_t* target = data_ + offset;
  // Shared anonymous memory: a reader that releases consumed pages with
  // madvise(MADV_DONTNEED) (metadata_reader's release_consumed_input) drops
  // only the page-table entries; the bytes stay in the shared object and the
  // next read finds them again, instead of zeros.
  void* tmp = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  absl::Status s;
  if (tmp == MAP_FAILED) {
    s = absl::ResourceExhaustedError(
        absl::StrCat("serde: cannot allocate ", len, " bytes to fetch ", name()));
  } else {
    const uint64_t n = std::min(len, size_ - offset);
    s = source_->ReadAt(offset, absl::Span<uint8_t>(static_cast<uint8_t*>(tmp), n));
    ++stats_.requests;
    if (s.ok()) {
      stats_.bytes_fetched += n;
      ::mprotect(tmp, len, PROT_READ);
      if (::mremap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, target) == MAP_FAILED) {
        s = absl::InternalError(absl::StrCat("serde: mremap for ", name(), ": ",
                                             std::strerror(errno)));
        ::munmap(tmp, len);
      }
    } else {
      ::munmap(tmp, len);
    }
  }
  if (!s.ok()) {
    // Zeros instead, so that readers go on (and a fault is not retried
    // forever); `status()` says the bytes are not to be trusted.
    ::mmap(target, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (status_.ok()) status_ = s;
  }
  for (uint64_t i = 0; i < count; ++i) present_[first + i] = 1;
  return s;
}

absl::Status SparseMapping::Ensure(uint64_t offset, uint64_t size) {
  if (offset >= size_ || size == 0) return absl::OkStatus();
  const uint64_t end = std::min(size_, offset + size);
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t last = (end - 1) / page_;
  const uint64_t max_pages = std::max<uint64_t>(1, options_.max_fetch / page_);
  for (uint64_t p = offset / page_; p <= last;) {
    if (present_[p]) {
      ++p;
      continue;
    }
    uint64_t q = p;
    while (q <= last && !present_[q] && q - p < max_pages) ++q;
    if (absl::Status s = FillLocked(p, q - p); !s.ok()) return s;
    p = q;
  }
  return absl::OkStatus();
}

bool SparseMapping::ServeFault(uintptr_t addr) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t page = (addr - reinterpret_cast<uintptr_t>(data_)) / page_;
  if (page >= present_.size() || present_[page]) return false;
  ++stats_.faults;
  const uint64_t min_pages = std::max<uint64_t>(1, options_.min_fetch / page_);
  const uint64_t max_pages = std::max<uint64_t>(1, options_.max_fetch / page_);
  readahead_ = page == next_sequential_ ? std::min(max_pages, readahead_ * 2) : min_pages;
  uint64_t q = page;
  while (q < present_.size() && !present_[q] && q - page < readahead_) ++q;
  next_sequential_ = q;
  FillLocked(page, q - page).IgnoreError();  // kept in status_
  return true;
}

absl::Status SparseMapping::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

SparseStats SparseMapping::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace flinkstate::serde
