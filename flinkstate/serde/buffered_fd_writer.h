// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: buffered_fd_writer.h
// -----------------------------------------------------------------------------
// A big-endian writer that streams into a 1 MiB buffer flushed to a file
// descriptor, for tools that write large files front to back in constant
// memory (the incident generators). With `fd < 0` it only counts bytes, so
// the same code can compute the exact size of what it would write.
//
//   ```c++ (int fd)
//   serde::BufferedFdWriter out(fd, "generator");
//   out.I32(0x4960672D);
//   out.Flush();
//   FLINKSTATE_RETURN_IF_ERROR(out.status());
//   ```
//
// Errors are sticky: the first failure (a `write(2)` error, mapped from errno
// with `absl::ErrnoToStatusCode`, or one set with `Fail`) is kept, and later
// writes are dropped. Writes never fail individually.
//
// Thread safety: not thread-safe; a writer and its descriptor belong to one
// thread at a time.

#ifndef FLINKSTATE_SERDE_BUFFERED_FD_WRITER_H_
#define FLINKSTATE_SERDE_BUFFERED_FD_WRITER_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "flinkstate/serde/endian.h"

namespace flinkstate::serde {

class BufferedFdWriter {
 public:
  static constexpr size_t kBufferBytes = size_t{1} << 20;

  // Writes to `fd` (not owned; the caller closes it), or only counts when
  // `fd < 0`. `label` starts write error messages ("<label>: write failed: ...").
  BufferedFdWriter(int fd, absl::string_view label);

  // Bytes written (or counted) so far, flushed or not.
  uint64_t size() const { return size_; }
  bool counting() const { return fd_ < 0; }
  const absl::Status& status() const { return status_; }
  // Records `s` as the writer's error unless one is already recorded.
  void Fail(absl::Status s) {
    if (status_.ok()) status_ = std::move(s);
  }

  void Bytes(const void* p, size_t n);
  void U8(uint8_t v) { Bytes(&v, 1); }
  void U16(uint16_t v) {
    uint8_t b[2];
    EncodeBigEndian16(v, b);
    Bytes(b, 2);
  }
  void I32(int32_t v) {
    uint8_t b[4];
    EncodeBigEndian32(static_cast<uint32_t>(v), b);
    Bytes(b, 4);
  }
  // Inline fast path: generators write tens of millions of these.
  void I64(int64_t v) {
    size_ += 8;
    if (counting() || !status_.ok()) return;
    if (kBufferBytes - used_ < 8) Flush();
    EncodeBigEndian64(static_cast<uint64_t>(v), buf_.get() + used_);
    used_ += 8;
  }

  // Writes the buffered bytes out. No-op when counting.
  void Flush();

 private:
  int fd_;
  std::string label_;
  std::unique_ptr<uint8_t[]> buf_;
  size_t used_ = 0;
  uint64_t size_ = 0;
  absl::Status status_;
};

}  // namespace flinkstate::serde

#endif  // FLINKSTATE_SERDE_BUFFERED_FD_WRITER_H_
