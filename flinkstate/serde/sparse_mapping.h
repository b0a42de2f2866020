// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: sparse_mapping.h
// -----------------------------------------------------------------------------
// A contiguous read-only view of a `ByteSource` (byte_source.h) whose pages
// are fetched only when they are read: what lets every reader, written for a
// mapped local file, decode a remote object while fetching only the ranges
// it touches. `inspect` of a `_metadata` skips the operator-state offset
// arrays by length, so their pages are never fetched.
//
//   ```c++ (std::unique_ptr<serde::ByteSource> source)
//   FLINKSTATE_ASSIGN_OR_RETURN(std::unique_ptr<flinkstate::serde::SparseMapping> m,
//                               flinkstate::serde::SparseMapping::Create(std::move(source)));
//   flinkstate::serde::DataInput in(m->bytes());   // reads fetch on demand
//   // ... decode ...
//   FLINKSTATE_RETURN_IF_ERROR(m->status());       // a fetch failed meanwhile?
//   ```
//
// How: the object's size is reserved as one inaccessible anonymous mapping.
// The first read of a page raises SIGSEGV; a process-wide handler (installed
// on the first `Create`, chaining to any handler installed before it for
// faults outside our mappings) hands the address to a fetch thread and waits
// for it. The fetch thread reads a range around the page from the source
// into a fresh buffer and moves it over the reserved pages atomically
// (`mremap`), so a reader never sees a half-filled page. A run of faults on
// consecutive pages doubles the range fetched each time (read-ahead, up to
// `max_fetch`); an isolated fault fetches `min_fetch`. `Ensure` fetches a
// range explicitly (a caller that knows it will read all of it, or the
// kernel: `write(2)` from an unfetched page fails with `EFAULT` instead of
// faulting, so the splice writer calls `Ensure` first).
//
// A fetch that fails inside a fault cannot return an error to the reader: the
// pages are filled with zeros and `status()` holds the failure, exactly like
// the truncation guard of `MappedFile::CheckIntact`. Decoders therefore see
// zeros rather than dying; callers check `status()` before trusting what they
// decoded.
//
// Thread safety: `bytes()` may be read from any number of threads (faults are
// served one at a time). `Ensure`, `status` and `stats` are thread-safe.
// Destroying the mapping while another thread reads it is a data race.

#ifndef FLINKSTATE_SERDE_SPARSE_MAPPING_H_
#define FLINKSTATE_SERDE_SPARSE_MAPPING_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "flinkstate/serde/byte_source.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate::serde {

struct SparseOptions {
  // Smallest range (bytes, rounded up to pages) an isolated fault fetches.
  uint64_t min_fetch = uint64_t{16} << 10;
  // Largest range one request fetches (read-ahead cap; `Ensure` splits).
  uint64_t max_fetch = uint64_t{8} << 20;
  // Sources at most this size are fetched whole by `Create`, in one request.
  uint64_t whole_below = uint64_t{256} << 10;
  // Bytes fetched by `Create` from offset 0 (the kind sniffing reads them).
  uint64_t head = uint64_t{64} << 10;
};

struct SparseStats {
  uint64_t bytes_fetched = 0;  // bytes read from the source
  uint64_t requests = 0;       // `ReadAt` calls
  uint64_t faults = 0;         // page faults served
};

class SparseMapping {
 public:
  // Reserves `source->size()` bytes and fetches the head (or all of a small
  // source).
  // Return values: the source's error for the head; `ResourceExhausted` if
  // the address space cannot be reserved; `Internal` for other system errors.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SparseMapping>> Create(
      std::unique_ptr<ByteSource> source, SparseOptions options = {});

  SparseMapping(const SparseMapping&) = delete;
  SparseMapping& operator=(const SparseMapping&) = delete;
  ~SparseMapping();

  // The whole source.
  // Lifetime: valid while this object is alive.
  ByteView bytes() const ABSL_ATTRIBUTE_LIFETIME_BOUND { return ByteView(data_, size_); }
  uint64_t size() const { return size_; }
  const std::string& name() const { return source_->name(); }
  ByteSource& source() { return *source_; }
  const ByteSource& source() const { return *source_; }

  // Fetches every page of [offset, offset + size) not fetched yet (clipped to
  // the source). Return values: the source's error (also kept in `status()`).
  [[nodiscard]] absl::Status Ensure(uint64_t offset, uint64_t size);

  // OK, or the first failure of a fetch made inside a page fault (whose
  // pages were filled with zeros).
  [[nodiscard]] absl::Status status() const;
  SparseStats stats() const;

  static constexpr int kMaxMappings = 64;

  // For the fault handler's fetch thread only: serves a fault at `addr`.
  // Returns false if the page was already present (another thread's fault
  // fetched it meanwhile, or a write to the read-only mapping).
  bool ServeFault(uintptr_t addr);

 private:
  SparseMapping(std::unique_ptr<ByteSource> source, SparseOptions options);
  // Fetches pages [first, first + count) (all absent). Caller holds `mu_`.
  absl::Status FillLocked(uint64_t first, uint64_t count);

  std::unique_ptr<ByteSource> source_;
  SparseOptions options_;
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  uint64_t reserved_ = 0;  // size_ rounded up to pages
  uint64_t page_ = 4096;
  int slot_ = -1;
  mutable std::mutex mu_;
  std::vector<uint8_t> present_;  // per page, guarded by mu_
  uint64_t next_sequential_ = UINT64_MAX;  // page after the last fault's range
  uint64_t readahead_ = 0;
  SparseStats stats_;
  absl::Status status_;
};

}  // namespace flinkstate::serde

#endif  // FLINKSTATE_SERDE_SPARSE_MAPPING_H_
