// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/serde/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace flinkstate::serde {
namespace {

absl::Status ErrnoStatus(int err, absl::string_view what,
                         absl::string_view path) {
  std::string msg =
      absl::StrCat("serde: ", what, " ", path, ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(msg);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(msg);
    default:
      return absl::InternalError(msg);
  }
}

}  // namespace

absl::StatusOr<MappedFile> MappedFile::Open(absl::string_view path) {
  MappedFile f;
  f.path_ = std::string(path);
  // O_NONBLOCK: opening a FIFO (or a device that waits for a peer) must not
  // block before the regular-file check below rejects it.
  f.fd_ = ::open(f.path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (f.fd_ < 0) return ErrnoStatus(errno, "cannot open", path);
  struct stat st;
  if (::fstat(f.fd_, &st) != 0) return ErrnoStatus(errno, "cannot stat", path);
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("serde: not a regular file: ", path));
  }
  f.size_ = static_cast<uint64_t>(st.st_size);
  if (f.size_ > 0) {
    void* p = ::mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, f.fd_, 0);
    if (p == MAP_FAILED) return ErrnoStatus(errno, "cannot map", path);
    f.data_ = static_cast<const uint8_t*>(p);
  }
  return f;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    Reset();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() { Reset(); }

void MappedFile::Reset() {
  if (data_ != nullptr) {
    ::munmap(const_cast<uint8_t*>(data_), size_);
    data_ = nullptr;
  }
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  size_ = 0;
}

void MappedFile::AdviseSequential() const {
  if (data_ != nullptr) {
    ::madvise(const_cast<uint8_t*>(data_), size_, MADV_SEQUENTIAL);
  }
}

absl::StatusOr<std::string> ReadSmallFile(absl::string_view path,
                                          uint64_t max_bytes) {
  absl::StatusOr<MappedFile> f = MappedFile::Open(path);
  if (!f.ok()) return f.status();
  if (f->size() > max_bytes) {
    return absl::OutOfRangeError(absl::StrCat(
        "serde: ", path, " has ", f->size(), " bytes, more than the ",
        max_bytes, " expected"));
  }
  return std::string(AsStringView(f->bytes()));
}

}  // namespace flinkstate::serde
