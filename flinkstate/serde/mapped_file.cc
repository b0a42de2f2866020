// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/serde/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/signal_chain.h"

namespace flinkstate::serde {
namespace {

// The SIGBUS guard. A fixed table of lock-free slots, so that the signal
// handler reads it without locks or allocation. A slot is claimed by a CAS on
// `begin` (0 = free); `end` is published before `begin`.
struct GuardSlot {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<int> lost{0};  // set by the handler: zero pages were mapped in
};
GuardSlot g_slots[MappedFile::kMaxGuardedMappings];
struct sigaction g_previous;
std::once_flag g_install_once;

void OnSigbus(int sig, siginfo_t* info, void* context) {
  const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
  for (GuardSlot& slot : g_slots) {
    const uintptr_t begin = slot.begin.load(std::memory_order_acquire);
    if (begin == 0 || addr < begin) continue;
    const uintptr_t end = slot.end.load(std::memory_order_acquire);
    if (addr >= end) continue;
    const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const uintptr_t from = addr & ~(page - 1);
    // mmap is a plain system call here (not on POSIX's async-signal-safe
    // list, but it takes no user-space locks). Zero pages from the fault to
    // the end of the mapping: everything after a lost page is lost too.
    void* p = ::mmap(reinterpret_cast<void*>(from), end - from, PROT_READ,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (p != MAP_FAILED) {
      slot.lost.store(1, std::memory_order_release);
      return;  // the faulting load is retried and reads zeros
    }
    break;
  }
  // Not ours (or the repair failed): what would have happened without us.
  internal::ChainSignal(g_previous, sig, info, context);
}

void InstallSigbusGuard() {
  std::call_once(g_install_once,
                 [] { internal::InstallChainedHandler(SIGBUS, OnSigbus, &g_previous); });
}

int GuardMapping(const uint8_t* data, uint64_t size) {
  InstallSigbusGuard();
  const auto begin = reinterpret_cast<uintptr_t>(data);
  for (int i = 0; i < MappedFile::kMaxGuardedMappings; ++i) {
    uintptr_t expected = 0;
    GuardSlot& slot = g_slots[i];
    // Claim with a sentinel that no address matches, then publish.
    if (slot.begin.compare_exchange_strong(expected, UINTPTR_MAX, std::memory_order_acq_rel)) {
      slot.lost.store(0, std::memory_order_relaxed);
      slot.end.store(begin + size, std::memory_order_release);
      slot.begin.store(begin, std::memory_order_release);
      return i;
    }
  }
  return -1;
}

void UnguardMapping(int i) {
  if (i < 0) return;
  g_slots[i].end.store(0, std::memory_order_release);
  g_slots[i].begin.store(0, std::memory_order_release);
}

}  // namespace

MappedFile::UrlOpener g_url_opener = nullptr;

bool IsUrl(absl::string_view path) {
  const size_t colon = path.find("://");
  if (colon == absl::string_view::npos || colon == 0) return false;
  for (size_t i = 0; i < colon; ++i) {
    const char c = path[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (i > 0 && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'));
    if (!ok) return false;
  }
  return true;
}

void MappedFile::SetUrlOpener(UrlOpener opener) { g_url_opener = opener; }

MappedFile MappedFile::FromSparse(std::unique_ptr<SparseMapping> mapping, std::string path) {
  MappedFile f;
  f.path_ = std::move(path);
  f.data_ = mapping->bytes().data();
  f.size_ = mapping->size();
  f.sparse_ = std::move(mapping);
  return f;
}

absl::Status MappedFile::Ensure(uint64_t offset, uint64_t size) const {
  if (sparse_ == nullptr) return absl::OkStatus();
  return sparse_->Ensure(offset, size);
}

absl::StatusOr<MappedFile> MappedFile::Open(absl::string_view path) {
  if (IsUrl(path)) {
    if (g_url_opener != nullptr) return g_url_opener(path);
    return absl::UnimplementedError(absl::StrCat(
        "serde: ", path, ": a URL, and this program reads no object stores"));
  }
  MappedFile f;
  f.path_ = std::string(path);
  // O_NONBLOCK: opening a FIFO (or a device that waits for a peer) must not
  // block before the regular-file check below rejects it.
  f.fd_ = ::open(f.path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (f.fd_ < 0) return ErrnoStatus(errno, "cannot open", path);
  struct stat st;
  if (::fstat(f.fd_, &st) != 0) return ErrnoStatus(errno, "cannot stat", path);
  if (!S_ISREG(st.st_mode)) {
    return LocatedIn(absl::InvalidArgumentError(absl::StrCat("serde: not a regular file: ", path)),
                     "serde", path);
  }
  f.size_ = static_cast<uint64_t>(st.st_size);
  if (f.size_ > 0) {
    void* p = ::mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, f.fd_, 0);
    if (p == MAP_FAILED) return ErrnoStatus(errno, "cannot map", path);
    f.data_ = static_cast<const uint8_t*>(p);
    f.guard_slot_ = GuardMapping(f.data_, f.size_);
  }
  return f;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      guard_slot_(std::exchange(other.guard_slot_, -1)),
      sparse_(std::move(other.sparse_)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    Reset();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    guard_slot_ = std::exchange(other.guard_slot_, -1);
    sparse_ = std::move(other.sparse_);
  }
  return *this;
}

MappedFile::~MappedFile() { Reset(); }

void MappedFile::Reset() {
  if (sparse_ != nullptr) {
    sparse_.reset();  // unmaps its reservation
    data_ = nullptr;
  }
  if (data_ != nullptr) {
    // Unguard first: once unmapped, the range may be reused by anyone.
    UnguardMapping(std::exchange(guard_slot_, -1));
    ::munmap(const_cast<uint8_t*>(data_), size_);
    data_ = nullptr;
  }
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  size_ = 0;
}

absl::Status MappedFile::CheckIntact() const {
  if (sparse_ != nullptr) return sparse_->status();
  const bool lost =
      guard_slot_ >= 0 && g_slots[guard_slot_].lost.load(std::memory_order_acquire) != 0;
  struct stat st;
  const bool shorter = fd_ >= 0 && ::fstat(fd_, &st) == 0 &&
                       static_cast<uint64_t>(st.st_size) < size_;
  if (!lost && !shorter) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(
      "serde: ", path_, " was truncated while being read (it had ", size_, " bytes",
      shorter ? absl::StrCat(", now ", st.st_size) : std::string(),
      "); whatever was decoded from it is not trusted: read it again once it is complete"));
}

void MappedFile::AdviseSequential() const {
  if (data_ != nullptr && sparse_ == nullptr) {
    ::madvise(const_cast<uint8_t*>(data_), size_, MADV_SEQUENTIAL);
  }
}

void MappedFile::ReleasePages(uint64_t offset, uint64_t size) const {
  if (data_ == nullptr || sparse_ != nullptr || offset >= size_) return;
  static const uint64_t kPage = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const auto base = reinterpret_cast<uintptr_t>(data_);  // page-aligned (mmap)
  const uint64_t from = (offset + kPage - 1) / kPage * kPage;
  const uint64_t end = std::min(size_, offset + std::min(size, size_ - offset));
  // The last page of the file may be partial: it counts as whole at the end.
  const uint64_t to = end == size_ ? (size_ + kPage - 1) / kPage * kPage : end / kPage * kPage;
  if (to <= from) return;
  ::madvise(reinterpret_cast<void*>(base + from), to - from, MADV_DONTNEED);
}

bool IsLocalFileMapping(ByteView bytes) {
  if (bytes.empty()) return false;
  const auto begin = reinterpret_cast<uintptr_t>(bytes.data());
  const uintptr_t end = begin + bytes.size();
  for (const GuardSlot& slot : g_slots) {
    const uintptr_t b = slot.begin.load(std::memory_order_acquire);
    if (b == 0 || b == UINTPTR_MAX || begin < b) continue;
    if (end <= slot.end.load(std::memory_order_acquire)) return true;
  }
  return false;
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

absl::Status ErrnoStatus(int err, absl::string_view call, absl::string_view what) {
  return ErrnoStatus(err, call, what, what);
}

absl::Status ErrnoStatus(int err, absl::string_view call, absl::string_view what,
                         absl::string_view file) {
  absl::StatusCode code = absl::StatusCode::kInternal;
  switch (err) {
    case ENOENT:
      code = absl::StatusCode::kNotFound;
      break;
    case EACCES:
    case EPERM:
      code = absl::StatusCode::kPermissionDenied;
      break;
    case EEXIST:
      code = absl::StatusCode::kAlreadyExists;
      break;
    default:
      break;
  }
  return LocatedIn(absl::Status(code, absl::StrCat("serde: ", call, " ", what, ": ",
                                                  std::strerror(err))),
                   "serde", file);
}

}  // namespace flinkstate::serde
