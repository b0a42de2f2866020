// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: byte_source.h
// -----------------------------------------------------------------------------
// Where the bytes of an input come from when they are not a local file: an
// object-store object read by ranges (flinkstate/objstore/s3_source.h), or
// bytes in memory in tests. A `ByteSource` is read only through
// `SparseMapping` (sparse_mapping.h), which gives the readers the same
// contiguous `ByteView` a mapped local file gives them and fetches only the
// ranges they touch.
//
//   ```c++
//   class Bytes : public flinkstate::serde::ByteSource {
//    public:
//     explicit Bytes(std::string b) : b_(std::move(b)) {}
//     const std::string& name() const override { return name_; }
//     uint64_t size() const override { return b_.size(); }
//     absl::Status ReadAt(uint64_t offset, absl::Span<uint8_t> out) override {
//       std::memcpy(out.data(), b_.data() + offset, out.size());
//       return absl::OkStatus();
//     }
//    private:
//     std::string name_ = "<bytes>";
//     std::string b_;
//   };
//   ```
//
// Thread safety: `SparseMapping` calls `ReadAt` from one thread at a time
// (its own lock), possibly not the thread that created the source.

#ifndef FLINKSTATE_SERDE_BYTE_SOURCE_H_
#define FLINKSTATE_SERDE_BYTE_SOURCE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace flinkstate::serde {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // What messages call the input (a URL such as "s3://bucket/key").
  virtual const std::string& name() const = 0;
  // The size in bytes, fixed for the source's lifetime (an object-store
  // source reads one version of the object: see its `ReadAt`).
  virtual uint64_t size() const = 0;
  // Fills `out` with bytes [offset, offset + out.size()).
  // Precondition: offset + out.size() <= size().
  // Return values: OK, or the failure naming `name()` (an object that changed
  // since it was opened is `FailedPrecondition`; transport failures after
  // retries `Unavailable`).
  [[nodiscard]] virtual absl::Status ReadAt(uint64_t offset, absl::Span<uint8_t> out) = 0;
};

}  // namespace flinkstate::serde

#endif  // FLINKSTATE_SERDE_BYTE_SOURCE_H_
