// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: splice_writer.h
// -----------------------------------------------------------------------------
// Executes an `EditPlan` into a file without copying unchanged bytes through
// user space, and replaces the target only after the result was re-read and
// verified.
//
//   ```c++ (const serde::EditPlan& plan, const serde::MappedFile& input)
//   FLINKSTATE_RETURN_IF_ERROR(serde::WritePlanAtomically(
//       plan, input, "/ckpt/chk-7/_metadata.stripped",
//       [](serde::ByteView out) { return out.empty() ? absl::DataLossError("empty")
//                                                    : absl::OkStatus(); }));
//   ```
//
// Copy pieces of at least `SpliceOptions::copy_file_range_threshold` bytes
// (1 MiB) of a local input are moved by system calls from the input's
// descriptor, never through the mapping, chosen per piece by where it lands
// (BENCHMARKS.md "Copy path" and "Copy path at 2 GiB": the methods on ext4
// and tmpfs, and this choice against the 1 MiB bounce alone):
//   * input and output offsets congruent modulo the 4 KiB page:
//     `copy_file_range(2)`, in-kernel, as `cp` copies (a reflink where the
//     file system can clone);
//   * otherwise `splice(2)` from the input into a pipe (the page-cache pages
//     are lent, not copied) and from the pipe into the output: one copy, as
//     `cp`'s;
//   * except when the output lies 1 to 63 bytes past the input modulo 4 KiB:
//     a forward copy that close behind its own stores runs slower on x86
//     (4K aliasing of string moves; not yet measured here), and no
//     in-kernel copy can avoid it, so those pieces are copied with
//     `pread`/`write` through one reused 1 MiB buffer placed in memory so
//     that neither of its two copies is that close.
// Each method falls back to the next where the kernel or file system refuses
// it (EXDEV, ENOSYS, EINVAL, EOPNOTSUPP; EBADF from `copy_file_range` for an
// O_APPEND output): `copy_file_range` to `splice`, `splice` to the buffer, at
// any point of a piece (bytes already in the pipe are written out first).
// Smaller pieces and inserts are gathered into `writev(2)` batches, those
// under 4 KiB copied back to back into a 1 MiB buffer (one entry for many),
// larger ones straight from the input mapping (after `MappedFile::Ensure`,
// which fetches the range of a remote input; a remote input, which has no
// descriptor, is written from its mapping throughout). Memory: the two
// 1 MiB buffers and a 1 MiB pipe (their pages lent by the page cache), made
// on first use.
//
// A local input that ends before a range the plan copies (truncated while
// being written from) fails the write with `DataLoss` naming the file and the
// byte where it ended; any other error of a system call is first checked
// against the input in the same way (`MappedFile::CheckIntact`).
//
// Safety: output goes to a temporary file `<target>.flinkstate-tmp-XXXXXX` in
// the target's directory; it is flushed (`fsync` unless disabled), mapped
// again, passed to the verifier, and only then `rename(2)`d over the target.
// The temporary file gets the mode and owner of the file it replaces (fchmod/
// fchown before the first byte), the input is checked not to have been
// truncated under the writer, and after the rename the directory is fsynced.
// On any failure the temporary file is removed and the target is untouched.
// The input is only read. A kill -9 can leave the temporary file; writes that
// must leave nothing behind, keep backups or replace several files together
// use `serde/file_transaction.h`.
//
// Thread safety: the functions keep no state; calls for different targets may
// run concurrently and may share one input `MappedFile` and one plan (both are
// only read). Two calls for the same target are not coordinated: each renames
// its own verified temporary file, and the last rename wins.

#ifndef FLINKSTATE_SERDE_SPLICE_WRITER_H_
#define FLINKSTATE_SERDE_SPLICE_WRITER_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>

#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "flinkstate/serde/byte_view.h"
#include "flinkstate/serde/edit_plan.h"
#include "flinkstate/serde/mapped_file.h"

namespace flinkstate::serde {

// How copy pieces of at least `SpliceOptions::copy_file_range_threshold`
// bytes are moved (see the top of this file).
enum class CopyMethod : uint8_t {
  kAuto,           // chosen per piece by its placement
  kCopyFileRange,  // copy_file_range(2) for every large piece
  kSplice,         // splice(2) through a pipe for every large piece
  kBounce,         // pread(2)/write(2) through a 1 MiB buffer
};

namespace internal {
// Test seam: the copying system calls of the writer, so that a test can make
// one fail and check the fallback. An empty member calls the real one.
// Each returns what the system call returns and leaves `errno` as it does.
struct CopySyscalls {
  // copy_file_range(in_fd, in_off, out_fd, NULL, len, 0).
  std::function<ssize_t(int in_fd, int64_t* in_off, int out_fd, size_t len)> copy_file_range;
  // splice(in_fd, in_off, pipe_fd, NULL, len, SPLICE_F_MOVE): file -> pipe.
  std::function<ssize_t(int in_fd, int64_t* in_off, int pipe_fd, size_t len)> splice_in;
  // splice(pipe_fd, NULL, out_fd, NULL, len, SPLICE_F_MOVE): pipe -> file.
  std::function<ssize_t(int pipe_fd, int out_fd, size_t len)> splice_out;
};
}  // namespace internal

struct SpliceOptions {
  // `fsync` the output before renaming it into place.
  bool sync = true;
  // Copy pieces at least this large are moved by system calls from the
  // input's descriptor (`copy_method`); smaller ones are written from the
  // mapping. The name is historical.
  uint64_t copy_file_range_threshold = uint64_t{1} << 20;
  CopyMethod copy_method = CopyMethod::kAuto;
  // Tests only (null: the real system calls). Must outlive the call.
  const internal::CopySyscalls* syscalls = nullptr;
  // Called after each piece with (output bytes done, output bytes total).
  std::function<void(uint64_t, uint64_t)> progress;
  // Drop the input's resident pages behind the writer once written from
  // (`MappedFile::ReleasePages`, in batches of 8 MiB), so that memory stays
  // flat when a plan of small pieces reads most of a large input through
  // the mapping.
  bool release_consumed_input = false;
};

struct SpliceStats {
  uint64_t bytes_written = 0;
  uint64_t bytes_copy_file_range = 0;  // moved in-kernel by copy_file_range
  uint64_t bytes_spliced = 0;          // moved through the pipe
  uint64_t bytes_writev = 0;           // written from the mapping or inserts
  uint64_t bytes_bounced = 0;          // copied through the pread/write buffer
  uint64_t syscalls = 0;
};

// Writes the output of `plan` over `input` to the open descriptor `out_fd` at
// its current position.
//
// Precondition: `plan.Validate(input.size())` is OK (checked again here; a
// streamed plan while it runs, so an invalid one fails after writing part of
// its output).
// Return values:
//   `FailedPrecondition` for an invalid plan; `DataLoss` naming the input and
//   the byte where it ended when it was truncated under the writer;
//   `Internal` naming the system call, the input and output offsets and the
//   `errno` text on an I/O error.
[[nodiscard]] absl::Status ExecutePlan(const EditPlan& plan,
                                       const MappedFile& input, int out_fd,
                                       const SpliceOptions& options = {},
                                       SpliceStats* stats = nullptr);

// Verifier run on the complete output before it replaces the target.
// Lifetime: the view is valid only during the call.
using OutputVerifier = std::function<absl::Status(ByteView output)>;

// What a dry run checks of the output it would write: executes `plan` over
// `input` into an anonymous in-memory file (memfd_create(2): nothing is
// created in any directory, and it is gone when the call returns, or the
// process dies) and runs `verify` on it.
// Memory: the output's size, as shared memory pages of the process, for the
// duration of the call. Thread-safe for distinct inputs.
// Return values: the verifier's error, its message prefixed "the planned
// output does not verify: "; any error of `ExecutePlan`; `Internal` naming
// the system call when the in-memory file cannot be made or mapped.
[[nodiscard]] absl::Status VerifyPlanInMemory(const EditPlan& plan, const MappedFile& input,
                                              const OutputVerifier& verify);

// Executes `plan` into a temporary file beside `target_path`, verifies it and
// renames it to `target_path` (replacing an existing file atomically).
//
// Return values:
//   the verifier's error (annotated "verification of the output failed") or
//   any error of `ExecutePlan`; the target is then unchanged.
[[nodiscard]] absl::Status WritePlanAtomically(
    const EditPlan& plan, const MappedFile& input,
    absl::string_view target_path, const OutputVerifier& verify,
    const SpliceOptions& options = {}, SpliceStats* stats = nullptr);

// Writes `content` to `target_path` the same safe way (temporary file,
// verify, rename). For outputs produced whole in memory.
[[nodiscard]] absl::Status WriteBytesAtomically(
    ByteView content, absl::string_view target_path,
    const OutputVerifier& verify, const SpliceOptions& options = {});

}  // namespace flinkstate::serde

#endif  // FLINKSTATE_SERDE_SPLICE_WRITER_H_
