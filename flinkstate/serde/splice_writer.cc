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

absl::Status SysError(absl::string_view call, absl::string_view detail = {},
                      int err = errno) {
  return absl::InternalError(absl::StrCat("serde: splice writer: ", call,
                                          detail.empty() ? "" : " ", detail,
                                          ": ", std::strerror(err)));
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

// Forward copies whose destination lies this few bytes past their source,
// modulo the page, run at about half speed on x86 (each load aliases a store
// just made: "4K aliasing"); see the header.
constexpr uint64_t kAliasWindow = 64;
constexpr size_t kBounceBytes = size_t{1} << 20;
constexpr int kPipeBytes = 1 << 20;  // the unprivileged maximum by default

// True if a copy from `src` to `dst` (byte offsets in page-cache pages or
// buffers) moves its bytes a few bytes forward modulo the page.
bool InAliasWindow(uint64_t src, uint64_t dst) {
  const uint64_t d = (dst - src) % kPageSize;
  return d != 0 && d < kAliasWindow;
}

// Whether `err` means "this system call cannot do this copy" (so another
// method should) rather than an I/O error.
bool Refused(int err) {
  return err == EXDEV || err == ENOSYS || err == EINVAL || err == EOPNOTSUPP;
}

// Copies large pieces of a local input by system calls from its descriptor
// (`copy_file_range`, `splice` through a pipe, `pread`/`write` through a
// buffer; see the header), falling back from one to the next. Owns the pipe
// and the buffer, made on first use.
class RangeCopier {
 public:
  RangeCopier(const MappedFile& input, int out_fd, uint64_t out_start,
              const SpliceOptions& options, SpliceStats* stats)
      : input_(input),
        out_fd_(out_fd),
        out_start_(out_start),
        method_(options.copy_method),
        calls_(options.syscalls),
        stats_(stats) {}
  RangeCopier(const RangeCopier&) = delete;
  RangeCopier& operator=(const RangeCopier&) = delete;
  ~RangeCopier() {
    if (pipe_[0] >= 0) ::close(pipe_[0]);
    if (pipe_[1] >= 0) ::close(pipe_[1]);
  }

  // Appends input bytes `r` to the output, which has `out_done` bytes
  // written since `out_start`.
  absl::Status Copy(SourceRange r, uint64_t out_done) {
    if (!advised_) {
      // As `cp` does: the kernel may read ahead further (a hint; its error
      // changes nothing).
      ::posix_fadvise(input_.fd(), 0, 0, POSIX_FADV_SEQUENTIAL);
      advised_ = true;
    }
    Cursor c{r.offset, r.end(), out_start_ + out_done};
    const bool congruent = (c.in % kPageSize) == (c.out % kPageSize);
    bool use_cfr = false;
    bool use_splice = false;
    switch (method_) {
      case CopyMethod::kAuto:
        use_cfr = congruent;
        use_splice = !InAliasWindow(c.in, c.out);
        break;
      case CopyMethod::kCopyFileRange:
        use_cfr = use_splice = true;
        break;
      case CopyMethod::kSplice:
        use_splice = true;
        break;
      case CopyMethod::kBounce:
        break;
    }
    if (use_cfr && cfr_ok_) FLINKSTATE_RETURN_IF_ERROR(CopyFileRange(&c));
    if (c.in < c.end && use_splice && splice_ok_) FLINKSTATE_RETURN_IF_ERROR(Splice(&c));
    if (c.in < c.end) FLINKSTATE_RETURN_IF_ERROR(Bounce(&c));
    return absl::OkStatus();
  }

 private:
  // Where a piece's copy stands: the next input byte, the input byte after the
  // piece, and the output file offset of the next byte.
  struct Cursor {
    uint64_t in;
    uint64_t end;
    uint64_t out;
    void Advance(uint64_t n) {
      in += n;
      out += n;
    }
  };

  // Copies in-kernel until done or refused (`cfr_ok_` cleared).
  absl::Status CopyFileRange(Cursor* c) {
    while (c->in < c->end) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(c->end - c->in, 1u << 30));
      int64_t off = static_cast<int64_t>(c->in);
      ssize_t n;
      if (calls_ != nullptr && calls_->copy_file_range) {
        n = calls_->copy_file_range(input_.fd(), &off, out_fd_, want);
      } else {
        loff_t o = off;
        n = ::copy_file_range(input_.fd(), &o, out_fd_, nullptr, want, 0);
      }
      ++stats_->syscalls;
      if (n < 0) {
        if (errno == EINTR) continue;
        // EBADF: an O_APPEND output, which `write` takes.
        if (Refused(errno) || errno == EBADF) {
          cfr_ok_ = false;
          return absl::OkStatus();
        }
        return CallError("copy_file_range", *c);
      }
      if (n == 0) return EndedEarly(c->in);
      stats_->bytes_copy_file_range += static_cast<uint64_t>(n);
      c->Advance(static_cast<uint64_t>(n));
    }
    return absl::OkStatus();
  }

  // Makes the pipe; false where the process may have no more (the caller
  // copies otherwise).
  bool MakePipe() {
    if (pipe_[0] >= 0) return true;
    if (::pipe2(pipe_, O_CLOEXEC) != 0) return false;
    // 1 MiB: one round per MiB; where the limit (/proc/sys/fs/pipe-max-size,
    // or the user's pipe quota) is lower, what the pipe has (64 KiB).
    int size = ::fcntl(pipe_[1], F_SETPIPE_SZ, kPipeBytes);
    if (size < 0) size = ::fcntl(pipe_[1], F_GETPIPE_SZ);
    pipe_bytes_ = size > 0 ? static_cast<size_t>(size) : size_t{4096};
    return true;
  }

  // Copies file -> pipe -> file until done or refused (`splice_ok_` cleared;
  // what the pipe holds then is written out first).
  absl::Status Splice(Cursor* c) {
    if (!MakePipe()) {
      splice_ok_ = false;
      return absl::OkStatus();
    }
    while (c->in < c->end) {
      // Up to a page boundary of the input: the pipe holds one page (or
      // part of one) per slot, so a round that ends mid-page leaves a slot
      // short and the next round nearly empty.
      const uint64_t room = pipe_bytes_ - c->in % kPageSize;
      const size_t want = static_cast<size_t>(std::min<uint64_t>(c->end - c->in, room));
      int64_t off = static_cast<int64_t>(c->in);
      ssize_t n;
      if (calls_ != nullptr && calls_->splice_in) {
        n = calls_->splice_in(input_.fd(), &off, pipe_[1], want);
      } else {
        loff_t o = off;
        n = ::splice(input_.fd(), &o, pipe_[1], nullptr, want, SPLICE_F_MOVE);
      }
      ++stats_->syscalls;
      if (n < 0) {
        if (errno == EINTR) continue;
        // The pipe is empty here: the rest goes another way.
        if (Refused(errno) || errno == EAGAIN) {
          splice_ok_ = false;
          return absl::OkStatus();
        }
        return CallError("splice from the input", *c);
      }
      if (n == 0) return EndedEarly(c->in);
      size_t held = static_cast<size_t>(n);
      while (held > 0) {
        ssize_t w;
        if (calls_ != nullptr && calls_->splice_out) {
          w = calls_->splice_out(pipe_[0], out_fd_, held);
        } else {
          w = ::splice(pipe_[0], nullptr, out_fd_, nullptr, held, SPLICE_F_MOVE);
        }
        ++stats_->syscalls;
        if (w < 0) {
          if (errno == EINTR) continue;
          if (Refused(errno) || errno == EAGAIN) {
            splice_ok_ = false;
            return DrainPipe(held, c);
          }
          return CallError("splice to the output", *c);
        }
        if (w == 0) {
          errno = EIO;
          return CallError("splice to the output (no progress)", *c);
        }
        stats_->bytes_spliced += static_cast<uint64_t>(w);
        held -= static_cast<size_t>(w);
        c->Advance(static_cast<uint64_t>(w));
      }
    }
    return absl::OkStatus();
  }

  // Writes the `held` bytes in the pipe (the input's next bytes) to the
  // output with read/write.
  absl::Status DrainPipe(size_t held, Cursor* c) {
    uint8_t* const buffer = Buffer();
    while (held > 0) {
      ssize_t n = ::read(pipe_[0], buffer, std::min(held, kBounceBytes));
      ++stats_->syscalls;
      if (n < 0) {
        if (errno == EINTR) continue;
        return CallError("read from the pipe", *c);
      }
      if (n == 0) {
        errno = EIO;
        return CallError("read from the pipe (it held less than spliced into it)", *c);
      }
      FLINKSTATE_RETURN_IF_ERROR(WriteAll(buffer, static_cast<size_t>(n), c));
      stats_->bytes_bounced += static_cast<uint64_t>(n);
      held -= static_cast<size_t>(n);
    }
    return absl::OkStatus();
  }

  // The buffer (1 MiB, and a page either side to place the data in).
  uint8_t* Buffer() {
    if (buffer_ == nullptr) buffer_ = std::make_unique<uint8_t[]>(kBounceBytes + 2 * kPageSize);
    return buffer_.get();
  }

  // Copies through the buffer with pread/write, its data placed at the
  // source's page offset (the read copies page to page), or half a page
  // further when the output lies a few bytes past the input (see
  // `InAliasWindow`), so that neither copy does.
  absl::Status Bounce(Cursor* c) {
    const auto base = reinterpret_cast<uintptr_t>(Buffer());
    uint8_t* const page = reinterpret_cast<uint8_t*>((base + kPageSize - 1) / kPageSize * kPageSize);
    while (c->in < c->end) {
      const uint64_t place = InAliasWindow(c->in, c->out) ? c->in + kPageSize / 2 : c->in;
      uint8_t* const data = page + place % kPageSize;
      const size_t want = static_cast<size_t>(std::min<uint64_t>(c->end - c->in, kBounceBytes));
      ssize_t n = ::pread(input_.fd(), data, want, static_cast<off_t>(c->in));
      ++stats_->syscalls;
      if (n < 0) {
        if (errno == EINTR) continue;
        return CallError("pread", *c);
      }
      if (n == 0) return EndedEarly(c->in);
      FLINKSTATE_RETURN_IF_ERROR(WriteAll(data, static_cast<size_t>(n), c));
      stats_->bytes_bounced += static_cast<uint64_t>(n);
    }
    return absl::OkStatus();
  }

  // Writes `size` bytes (the input's bytes at `c->in`) and advances `c`.
  absl::Status WriteAll(const uint8_t* data, size_t size, Cursor* c) {
    size_t done = 0;
    while (done < size) {
      ssize_t w = ::write(out_fd_, data + done, size - done);
      ++stats_->syscalls;
      if (w < 0) {
        if (errno == EINTR) continue;
        return CallError("write", *c);
      }
      done += static_cast<size_t>(w);
      c->Advance(static_cast<uint64_t>(w));
    }
    return absl::OkStatus();
  }

  absl::Status EndedEarly(uint64_t at) const {
    return LocatedIn(
        WithLocation(absl::DataLossError(absl::StrCat(
                         "serde: splice writer: ", input_.path(), " ends at byte ", at,
                         ", before the range the plan copies (it was truncated while being "
                         "read, it had ", input_.size(), " bytes); nothing was replaced")),
                     "serde", "", at),
        "serde", input_.path());
  }

  absl::Status CallError(absl::string_view call, const Cursor& c) const {
    const int err = errno;
    return SysError(call, absl::StrCat("(input ", input_.path(), " at byte ", c.in,
                                       ", output at byte ", c.out, ")"), err);
  }

  const MappedFile& input_;
  const int out_fd_;
  const uint64_t out_start_;
  const CopyMethod method_;
  const internal::CopySyscalls* const calls_;
  SpliceStats* const stats_;
  bool advised_ = false;
  bool cfr_ok_ = true;
  bool splice_ok_ = true;
  int pipe_[2] = {-1, -1};
  size_t pipe_bytes_ = 0;
  std::unique_ptr<uint8_t[]> buffer_;
};

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
  // `out_start`: the output file offset the plan's first byte goes to.
  WriterSink(const EditPlan& plan, const MappedFile& input, int out_fd, uint64_t out_start,
             const SpliceOptions& options, SpliceStats* run)
      : plan_(plan),
        input_(input),
        in_(input.bytes()),
        options_(options),
        batch_(out_fd, run),
        copier_(input, out_fd, out_start, options, run),
        stable_inserts_(!plan.is_streamed()) {}

  absl::Status Copy(SourceRange r) override {
    // A local input (a remote one has no descriptor: its bytes are fetched
    // into the mapping and written from there).
    if (input_.fd() >= 0 && input_.sparse() == nullptr &&
        r.size >= options_.copy_file_range_threshold) {
      FLINKSTATE_RETURN_IF_ERROR(Flush());
      FLINKSTATE_RETURN_IF_ERROR(copier_.Copy(r, done_));
    } else {
      // From the mapping; a remote input's range is fetched first (the
      // kernel cannot fault its pages in: EFAULT).
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
  const SpliceOptions& options_;
  IovBatch batch_;
  RangeCopier copier_;
  const bool stable_inserts_;
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
  // Where the output starts decides which pieces are page-congruent (0 for
  // a descriptor without a position, a pipe or a socket). An O_APPEND file
  // is written at its end, whatever its position.
  off_t at = ::lseek(out_fd, 0, SEEK_CUR);
  if (const int flags = ::fcntl(out_fd, F_GETFL); flags >= 0 && (flags & O_APPEND) != 0) {
    struct stat st;
    if (::fstat(out_fd, &st) == 0 && S_ISREG(st.st_mode)) at = st.st_size;
  }
  SpliceStats run;
  absl::Status s;
  {
    WriterSink sink(plan, input, out_fd, at > 0 ? static_cast<uint64_t>(at) : 0, options, &run);
    s = plan.ForEachPiece(input.size(), &sink);
    if (s.ok()) s = sink.Flush();
  }
  if (!s.ok()) {
    // A call that failed on the mapping of a truncated input says "Bad
    // address": the truncation is what to report.
    if (!absl::IsDataLoss(s)) {
      if (absl::Status intact = input.CheckIntact(); !intact.ok()) {
        return LocatedIn(intact, "serde", input.path());
      }
    }
    return s;
  }
  run.bytes_written =
      run.bytes_copy_file_range + run.bytes_spliced + run.bytes_writev + run.bytes_bounced;
  if (stats != nullptr) {
    stats->bytes_written += run.bytes_written;
    stats->bytes_copy_file_range += run.bytes_copy_file_range;
    stats->bytes_spliced += run.bytes_spliced;
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
