// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: input_releaser.h
// -----------------------------------------------------------------------------
// Releases the pages of a read-only file mapping behind a cursor
// (`madvise(MADV_DONTNEED)`), so that a pass over a large file does not keep
// it all resident: peak RSS stays flat however large the file. Pages read
// again fault back in from the page cache.
//
//   ```c++ (const serde::MappedFile& f)
//   serde::InputReleaser release(f.bytes(), /*enabled=*/true);
//   release.Upto(8u << 20);  // the first 8 MiB are no longer resident
//   ```
//
// Must stay disabled for any memory that is not a file mapping: the call
// would discard its contents.
//
// Thread safety: one releaser per reader; the call itself is safe while other
// threads read the range (they only pay a page fault).

#ifndef FLINKSTATE_SERDE_INPUT_RELEASER_H_
#define FLINKSTATE_SERDE_INPUT_RELEASER_H_

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "flinkstate/serde/byte_view.h"

namespace flinkstate::serde {

class InputReleaser {
 public:
  InputReleaser(ByteView input, bool enabled)
      : base_(reinterpret_cast<uintptr_t>(input.data())),
        size_(input.size()),
        enabled_(enabled && input.size() > 0) {}

  // Releases the whole pages of input bytes [0, end), in batches of at least
  // 8 MiB (fewer system calls; a batch is a small fraction of a large file).
  void Upto(uint64_t end) {
    if (!enabled_) return;
    static const uintptr_t kPage = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const uintptr_t from = (base_ + done_ + kPage - 1) / kPage * kPage;
    const uintptr_t to = (base_ + std::min(end, size_)) / kPage * kPage;
    if (to <= from || to - from < (uintptr_t{8} << 20)) return;
    ::madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
    done_ = to - base_;
  }

 private:
  uintptr_t base_;
  uint64_t size_;
  bool enabled_;
  uint64_t done_ = 0;
};

}  // namespace flinkstate::serde

#endif  // FLINKSTATE_SERDE_INPUT_RELEASER_H_
