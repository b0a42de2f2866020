// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/serde/splice_writer.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/file_transaction.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate::serde {
namespace {

constexpr uint64_t kPageSize = 4096;

absl::Status SysError(absl::string_view call, absl::string_view detail = {}) {
  return absl::InternalError(absl::StrCat("serde: splice writer: ", call,
                                          detail.empty() ? "" : " ", detail,
                                          ": ", std::strerror(errno)));
}

// Gathers small pieces into one writev call.
class IovBatch {
 public:
  explicit IovBatch(int fd, SpliceStats* stats) : fd_(fd), stats_(stats) {}

  absl::Status Add(const void* data, size_t size) {
    if (size == 0) return absl::OkStatus();
    iov_.push_back({const_cast<void*>(data), size});
    pending_ += size;
    if (iov_.size() >= kMaxIov || pending_ >= kFlushBytes) return Flush();
    return absl::OkStatus();
  }

  // As `Add`, extending the last entry when `data` continues it (bytes
  // staged one after the other in one buffer), so that many small pieces
  // cost one entry, not one each.
  absl::Status AddContiguous(const void* data, size_t size) {
    if (size == 0) return absl::OkStatus();
    if (!iov_.empty() &&
        static_cast<const char*>(iov_.back().iov_base) + iov_.back().iov_len == data) {
      iov_.back().iov_len += size;
      pending_ += size;
      return pending_ >= kFlushBytes ? Flush() : absl::OkStatus();
    }
    return Add(data, size);
  }

  absl::Status Flush() {
    size_t first = 0;
    while (first < iov_.size()) {
      const int count = static_cast<int>(std::min(iov_.size() - first, kMaxIov));
      ssize_t n = ::writev(fd_, &iov_[first], count);
      ++stats_->syscalls;
      if (n < 0) {
        if (errno == EINTR) continue;
        return SysError("writev");
      }
      stats_->bytes_writev += static_cast<uint64_t>(n);
      // Advance past what was written (short writes are legal).
      size_t left = static_cast<size_t>(n);
      while (left > 0 && first < iov_.size()) {
        if (left >= iov_[first].iov_len) {
          left -= iov_[first].iov_len;
          ++first;
        } else {
          iov_[first].iov_base = static_cast<char*>(iov_[first].iov_base) + left;
          iov_[first].iov_len -= left;
          left = 0;
        }
      }
    }
    iov_.clear();
    pending_ = 0;
    return absl::OkStatus();
  }

  bool empty() const { return iov_.empty(); }

 private:
  static constexpr size_t kMaxIov = IOV_MAX;
  static constexpr size_t kFlushBytes = size_t{8} << 20;
  int fd_;
  SpliceStats* stats_;
  std::vector<iovec> iov_;
  size_t pending_ = 0;
};

// Copies `range` of the input in-kernel. Sets `*unsupported` (and returns OK
// having copied nothing) when the file system refuses before any byte moved.
absl::Status CopyRange(const MappedFile& input, int out_fd, SourceRange range,
                       SpliceStats* stats, bool* unsupported) {
  loff_t in_off = static_cast<loff_t>(range.offset);
  uint64_t left = range.size;
  while (left > 0) {
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(left, 1u << 30));
    ssize_t n = ::copy_file_range(input.fd(), &in_off, out_fd, nullptr, chunk, 0);
    ++stats->syscalls;
    if (n < 0) {
      if (errno == EINTR) continue;
      if (left == range.size && (errno == EXDEV || errno == ENOSYS ||
                                 errno == EINVAL || errno == EOPNOTSUPP)) {
        *unsupported = true;
        return absl::OkStatus();
      }
      return SysError("copy_file_range");
    }
    if (n == 0) {
      return absl::InternalError(absl::StrCat(
          "serde: splice writer: input ", input.path(),
          " ended early (was it truncated while being read?)"));
    }
    left -= static_cast<uint64_t>(n);
    stats->bytes_copy_file_range += static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

// Copies `range` of the input through a bounce buffer with pread/write. Used
// where source and destination offsets are not congruent modulo the page size:
// the kernel's in-kernel copy is markedly slower then (measured ~1.8x on ext4),
// while a user-space copy through one reused buffer runs at `cp` speed and,
// unlike reading through the mapping, takes no page faults.
absl::Status BounceRange(const MappedFile& input, int out_fd, SourceRange range,
                         std::vector<uint8_t>* buffer, SpliceStats* stats) {
  if (buffer->empty()) buffer->resize(size_t{1} << 20);
  uint64_t off = range.offset;
  uint64_t left = range.size;
  while (left > 0) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(left, buffer->size()));
    ssize_t n = ::pread(input.fd(), buffer->data(), want, static_cast<off_t>(off));
    ++stats->syscalls;
    if (n < 0) {
      if (errno == EINTR) continue;
      return SysError("pread", input.path());
    }
    if (n == 0) {
      return absl::InternalError(absl::StrCat("serde: splice writer: input ", input.path(),
                                              " ended early (was it truncated?)"));
    }
    size_t done = 0;
    while (done < static_cast<size_t>(n)) {
      ssize_t w = ::write(out_fd, buffer->data() + done, static_cast<size_t>(n) - done);
      ++stats->syscalls;
      if (w < 0) {
        if (errno == EINTR) continue;
        return SysError("write");
      }
      done += static_cast<size_t>(w);
    }
    stats->bytes_bounced += static_cast<uint64_t>(n);
    off += static_cast<uint64_t>(n);
    left -= static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

// Creates the temporary file beside `target` (unique name, O_EXCL) with the
// mode and owner of the file it replaces, set before any byte is written (a
// new output gets 0666 & ~umask); returns its fd and path.
absl::Status MakeTemp(absl::string_view target, int* fd, std::string* path) {
  *path = absl::StrCat(target, ".flinkstate-tmp-XXXXXX");
  *fd = ::mkostemp(path->data(), O_CLOEXEC);
  if (*fd < 0) return SysError("mkostemp", *path);
  struct stat st;
  mode_t mode;
  if (::stat(std::string(target).c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    mode = st.st_mode & 07777;
    if ((st.st_uid != ::geteuid() || st.st_gid != ::getegid()) &&
        ::fchown(*fd, st.st_uid, st.st_gid) != 0) {
      absl::Status s = SysError("fchown", absl::StrCat(*path, " (to keep the owner of ", target, ")"));
      ::close(*fd);
      ::unlink(path->c_str());
      return s;
    }
  } else {
    mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (::fchmod(*fd, mode) != 0) {
    absl::Status s = SysError("fchmod", *path);
    ::close(*fd);
    ::unlink(path->c_str());
    return s;
  }
  return absl::OkStatus();
}

// Flushes, verifies and renames a written temporary file; removes it on error.
absl::Status FinishTemp(int fd, const std::string& tmp, absl::string_view target,
                        const MappedFile* input, const OutputVerifier& verify,
                        const SpliceOptions& options) {
  auto fail = [&](absl::Status s) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  };
  if (options.sync && ::fsync(fd) != 0) return fail(SysError("fsync", tmp));
  {
    absl::StatusOr<MappedFile> written = MappedFile::Open(tmp);
    if (!written.ok()) return fail(written.status());
    if (verify) {
      absl::Status v = verify(written->bytes());
      if (!v.ok()) {
        return fail(WithMessage(
            v, absl::StrCat("verification of the output failed, ",
                                   target, " was not written: ", v.message())));
      }
    }
  }
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return SysError("close", tmp);
  }
  if (input != nullptr) {
    if (absl::Status s = input->CheckIntact(); !s.ok()) {
      ::unlink(tmp.c_str());
      return s;
    }
  }
  if (::rename(tmp.c_str(), std::string(target).c_str()) != 0) {
    absl::Status s = SysError("rename", absl::StrCat(tmp, " -> ", target));
    ::unlink(tmp.c_str());
    return s;
  }
  if (options.sync) {
    int dfd = ::open(DirName(target).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// Writes the pieces it is given to `out_fd` (see the header for the choice
// of system call per piece).
class WriterSink : public PieceSink {
 public:
  WriterSink(const EditPlan& plan, const MappedFile& input, int out_fd,
             const SpliceOptions& options, SpliceStats* run)
      : plan_(plan),
        input_(input),
        in_(input.bytes()),
        out_fd_(out_fd),
        options_(options),
        run_(run),
        batch_(out_fd, run),
        cfr_ok_(input.fd() >= 0),
        stable_inserts_(!plan.is_streamed()) {}

  absl::Status Copy(SourceRange r) override {
    const bool large = input_.fd() >= 0 && r.size >= options_.copy_file_range_threshold;
    const bool page_congruent = ((r.offset ^ done_) & (kPageSize - 1)) == 0;
    if (large && (!cfr_ok_ || !page_congruent)) {
      FLINKSTATE_RETURN_IF_ERROR(Flush());
      FLINKSTATE_RETURN_IF_ERROR(BounceRange(input_, out_fd_, r, &bounce_, run_));
    } else if (large) {
      FLINKSTATE_RETURN_IF_ERROR(Flush());
      bool unsupported = false;
      FLINKSTATE_RETURN_IF_ERROR(CopyRange(input_, out_fd_, r, run_, &unsupported));
      if (unsupported) {
        cfr_ok_ = false;
        FLINKSTATE_RETURN_IF_ERROR(BounceRange(input_, out_fd_, r, &bounce_, run_));
      }
    } else {
      // A remote input: the kernel cannot fault its pages in (EFAULT).
      FLINKSTATE_RETURN_IF_ERROR(input_.Ensure(r.offset, r.size));
      ByteView b = Slice(in_, r);
      pending_input_end_ = r.end();
      if (b.size() < kStagedPiece) {
        FLINKSTATE_RETURN_IF_ERROR(Stage(b));
      } else {
        FLINKSTATE_RETURN_IF_ERROR(Add(b.data(), b.size()));
      }
    }
    return Advance(r.size);
  }

  absl::Status Insert(ByteView b) override {
    if (b.empty()) {
      // Nothing to write.
    } else if (b.size() < kStagedPiece || (!stable_inserts_ && b.size() <= kArenaBytes)) {
      // Small, or the source's only during the call: copied into the arena.
      FLINKSTATE_RETURN_IF_ERROR(Stage(b));
    } else if (stable_inserts_) {
      FLINKSTATE_RETURN_IF_ERROR(Add(b.data(), b.size()));
    } else {
      // Too large to keep: written before the call returns.
      FLINKSTATE_RETURN_IF_ERROR(Add(b.data(), b.size()));
      FLINKSTATE_RETURN_IF_ERROR(Flush());
    }
    return Advance(b.size());
  }

  absl::Status Flush() {
    FLINKSTATE_RETURN_IF_ERROR(batch_.Flush());
    OnWritten();
    return absl::OkStatus();
  }

 private:
  static constexpr uint64_t kArenaBytes = uint64_t{1} << 20;
  static constexpr uint64_t kReleaseBatch = uint64_t{8} << 20;
  // Pieces smaller than this are copied into the arena, back to back, and
  // written as one `writev` entry: per entry the kernel's copy costs more
  // than a `memcpy` of a few hundred bytes (a relocate of 2.97 M paths is
  // ~6 M pieces of ~45 bytes).
  static constexpr uint64_t kStagedPiece = 4096;

  // Copies `b` into the arena until the batch that points at it is written.
  // Precondition: `b.size() <= kArenaBytes`.
  absl::Status Stage(ByteView b) {
    if (arena_used_ + b.size() > kArenaBytes) FLINKSTATE_RETURN_IF_ERROR(Flush());
    if (arena_ == nullptr) arena_ = std::make_unique<uint8_t[]>(kArenaBytes);
    uint8_t* at = arena_.get() + arena_used_;
    std::memcpy(at, b.data(), b.size());
    arena_used_ += b.size();
    FLINKSTATE_RETURN_IF_ERROR(batch_.AddContiguous(at, b.size()));
    if (batch_.empty()) OnWritten();  // the batch filled up and was written
    return absl::OkStatus();
  }

  absl::Status Add(const uint8_t* data, size_t size) {
    FLINKSTATE_RETURN_IF_ERROR(batch_.Add(data, size));
    if (batch_.empty()) OnWritten();  // the batch filled up and was written
    return absl::OkStatus();
  }

  // Everything handed over so far is written.
  void OnWritten() {
    arena_used_ = 0;
    // The input pages of what was written are not needed any more.
    if (options_.release_consumed_input && pending_input_end_ >= released_ + kReleaseBatch) {
      input_.ReleasePages(released_, pending_input_end_ - released_);
      released_ = pending_input_end_;
    }
  }

  absl::Status Advance(uint64_t n) {
    done_ += n;
    if (options_.progress) options_.progress(done_, plan_.output_size());
    return absl::OkStatus();
  }

  const EditPlan& plan_;
  const MappedFile& input_;
  const ByteView in_;
  const int out_fd_;
  const SpliceOptions& options_;
  SpliceStats* run_;
  IovBatch batch_;
  bool cfr_ok_;
  const bool stable_inserts_;
  std::vector<uint8_t> bounce_;
  std::unique_ptr<uint8_t[]> arena_;
  uint64_t arena_used_ = 0;
  uint64_t done_ = 0;
  uint64_t pending_input_end_ = 0;
  uint64_t released_ = 0;
};

}  // namespace

absl::Status ExecutePlan(const EditPlan& plan, const MappedFile& input,
                         int out_fd, const SpliceOptions& options,
                         SpliceStats* stats) {
  // A streamed plan is checked while it runs (ForEachPiece).
  if (!plan.is_streamed()) {
    if (absl::Status s = plan.Validate(input.size()); !s.ok()) return s;
  }
  SpliceStats run;
  WriterSink sink(plan, input, out_fd, options, &run);
  if (absl::Status s = plan.ForEachPiece(input.size(), &sink); !s.ok()) return s;
  if (absl::Status s = sink.Flush(); !s.ok()) return s;
  run.bytes_written = run.bytes_copy_file_range + run.bytes_writev + run.bytes_bounced;
  if (stats != nullptr) {
    stats->bytes_written += run.bytes_written;
    stats->bytes_copy_file_range += run.bytes_copy_file_range;
    stats->bytes_writev += run.bytes_writev;
    stats->bytes_bounced += run.bytes_bounced;
    stats->syscalls += run.syscalls;
  }
  if (run.bytes_written != plan.output_size()) {
    return absl::InternalError(absl::StrCat(
        "serde: splice writer: wrote ", run.bytes_written,
        " bytes, the plan has ", plan.output_size()));
  }
  return absl::OkStatus();
}

absl::Status VerifyPlanInMemory(const EditPlan& plan, const MappedFile& input,
                                const OutputVerifier& verify) {
  FLINKSTATE_RETURN_IF_ERROR(plan.Validate(input.size()));
  const int fd = ::memfd_create("flinkstate-dry-run", MFD_CLOEXEC);
  if (fd < 0) return SysError("memfd_create", "the planned output");
  absl::Status s = ExecutePlan(plan, input, fd);
  const uint64_t size = plan.output_size();
  void* p = nullptr;
  if (s.ok() && size > 0) {
    p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      p = nullptr;
      s = SysError("mmap", "the planned output");
    }
  }
  ::close(fd);  // the mapping keeps the pages until munmap
  if (s.ok() && verify) {
    const absl::Status v =
        verify(ByteView(static_cast<const uint8_t*>(p), static_cast<size_t>(size)));
    if (!v.ok()) {
      s = WithMessage(v, absl::StrCat("the planned output does not verify: ", v.message()));
    }
  }
  if (p != nullptr) ::munmap(p, size);
  if (s.ok()) s = input.CheckIntact();
  return s;
}

absl::Status WritePlanAtomically(const EditPlan& plan, const MappedFile& input,
                                 absl::string_view target_path,
                                 const OutputVerifier& verify,
                                 const SpliceOptions& options,
                                 SpliceStats* stats) {
  if (absl::Status s = plan.Validate(input.size()); !s.ok()) return s;
  int fd;
  std::string tmp;
  if (absl::Status s = MakeTemp(target_path, &fd, &tmp); !s.ok()) return s;
  if (absl::Status s = ExecutePlan(plan, input, fd, options, stats); !s.ok()) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  }
  return FinishTemp(fd, tmp, target_path, &input, verify, options);
}

absl::Status WriteBytesAtomically(ByteView content,
                                  absl::string_view target_path,
                                  const OutputVerifier& verify,
                                  const SpliceOptions& options) {
  int fd;
  std::string tmp;
  if (absl::Status s = MakeTemp(target_path, &fd, &tmp); !s.ok()) return s;
  SpliceStats stats;
  IovBatch batch(fd, &stats);
  absl::Status s = batch.Add(content.data(), content.size());
  if (s.ok()) s = batch.Flush();
  if (!s.ok()) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  }
  return FinishTemp(fd, tmp, target_path, nullptr, verify, options);
}

}  // namespace flinkstate::serde
