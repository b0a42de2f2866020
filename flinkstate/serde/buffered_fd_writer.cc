// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/serde/buffered_fd_writer.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/str_cat.h"

namespace flinkstate::serde {

BufferedFdWriter::BufferedFdWriter(int fd, absl::string_view label)
    : fd_(fd), label_(label) {
  if (fd_ >= 0) buf_.reset(new uint8_t[kBufferBytes]);
}

void BufferedFdWriter::Bytes(const void* p, size_t n) {
  size_ += n;
  if (counting() || !status_.ok()) return;
  const auto* b = static_cast<const uint8_t*>(p);
  while (n > 0 && status_.ok()) {
    if (used_ == kBufferBytes) Flush();
    const size_t k = std::min(n, kBufferBytes - used_);
    std::memcpy(buf_.get() + used_, b, k);
    used_ += k;
    b += k;
    n -= k;
  }
}

void BufferedFdWriter::Flush() {
  if (counting()) return;
  size_t done = 0;
  while (done < used_ && status_.ok()) {
    const ssize_t w = ::write(fd_, buf_.get() + done, used_ - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      status_ = absl::Status(absl::ErrnoToStatusCode(errno),
                             absl::StrCat(label_, ": write failed: ", std::strerror(errno)));
      break;
    }
    done += static_cast<size_t>(w);
  }
  used_ = 0;
}

}  // namespace flinkstate::serde
