// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: alloc_guard.h
// -----------------------------------------------------------------------------
// An allocation cap for fuzzing: `alloc_guard.cc` replaces the global
// `operator new`/`operator delete` family with versions that count bytes
// (as `malloc_usable_size`) and, while a guard is armed, abort with a report
// when one allocation or the live total allocated since arming exceeds the
// budget. DESIGN.md promises "never ... an allocation larger than the input
// justifies"; this is where that is enforced under the fuzzer.
//
//   AllocGuard::Arm(BudgetFor(input.size()));
//   ... decode ...
//   AllocGuard::Disarm();
//
// Allocations made with `malloc` directly are not counted (libFuzzer's
// `-malloc_limit_mb` and `-rss_limit_mb` cover those in libFuzzer builds).

#ifndef FLINKSTATE_FUZZ_ALLOC_GUARD_H_
#define FLINKSTATE_FUZZ_ALLOC_GUARD_H_

#include <cstddef>
#include <cstdint>

namespace flinkstate::fuzz {

// The budget for an input of `input_size` bytes: 64 x input + 1 MiB.
inline constexpr uint64_t kBudgetMultiple = 64;
inline constexpr uint64_t kBudgetBase = uint64_t{1} << 20;
inline uint64_t BudgetFor(size_t input_size, uint64_t multiple = kBudgetMultiple) {
  return multiple * static_cast<uint64_t>(input_size) + kBudgetBase;
}
// The metadata targets: the reader's own model budget is 60 bytes of model
// per input byte (`MetadataReadOptions`, the densest legitimate shape needs
// 58), and its vectors grow by doubling as elements decode, so the heap peak
// can reach about three times the charged model.
inline constexpr uint64_t kMetadataBudgetMultiple = 3 * 64;
// The javaobj targets: the model holds one 88-byte `Item` per grammar
// occurrence, and TC_NULL / TC_RESET are one byte, so a stream of nulls or
// resets costs ~90 bytes of items per input byte, plus the top-level and
// epoch vectors (growing by doubling) and the item chunks' spare capacity
// (under 4096 items). Measured with FLINKSTATE_FUZZ_PRINT_PEAK=1 through
// javaobj_roundtrip (decode + encode): streams of 1 KB - 1 MB of resets peak
// at 113-133x, of nulls at 105-117x. Canonical descriptions are bounded
// separately to 16x input + 64 KiB by the targets. Same allowance as the
// metadata.
inline constexpr uint64_t kJavaObjBudgetMultiple = 3 * 64;

class AllocGuard {
 public:
  // Starts counting from zero with `budget` bytes.
  static void Arm(uint64_t budget);
  static void Disarm();
  // Changes the budget of an armed guard without resetting its counts.
  static void SetBudget(uint64_t budget);
  // Largest live total seen since `Arm`.
  static uint64_t peak();
  // True if the replacement operators are linked in (they are whenever this
  // library is, unless FLINKSTATE_FUZZ_NO_NEW_OVERRIDE is defined).
  static bool active();
};

}  // namespace flinkstate::fuzz

#endif  // FLINKSTATE_FUZZ_ALLOC_GUARD_H_
