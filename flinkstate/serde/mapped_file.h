// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: mapped_file.h
// -----------------------------------------------------------------------------
// A read-only memory map of a whole file: the single owner of the mapping.
//
//   ```c++
//   FLINKSTATE_ASSIGN_OR_RETURN(serde::MappedFile file,
//                               serde::MappedFile::Open("/ckpt/chk-7/_metadata"));
//   serde::DataInput in(file.bytes());
//   ```
//
// Pages are touched only when read, so decoding the structure of a 500 MB
// file faults in only the pages that hold structure.
//
// Truncation under the reader: if another process shortens the file while it
// is mapped, reading a lost page would raise SIGBUS and kill the process. A
// process-wide SIGBUS handler (installed on the first `Open`, chaining to any
// handler installed before it) recognises faults inside a live `MappedFile`,
// maps zero-filled pages over the rest of that mapping, flags the file, and
// lets the read continue. Decoders therefore see zeros instead of dying, and
// callers call `CheckIntact()` after decoding: it reports the truncation as
// `DataLoss`, so nothing decoded from zeros is trusted. Faults outside our
// mappings go to the previous handler (or the default action). Up to
// `kMaxGuardedMappings` mappings are guarded at once; beyond that a mapping
// is unguarded (the old behaviour) rather than an error.
//
// Thread safety: `Open` may be called from any thread. The mapping is
// read-only: any number of threads may read `bytes()` of one `MappedFile` at the
// same time. Moving, assigning or destroying it while another thread reads is a
// data race.

#ifndef FLINKSTATE_SERDE_MAPPED_FILE_H_
#define FLINKSTATE_SERDE_MAPPED_FILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "flinkstate/serde/byte_view.h"
#include "flinkstate/serde/sparse_mapping.h"

namespace flinkstate::serde {

// True for "scheme://..." paths (s3://bucket/key): those `MappedFile::Open`
// hands to the opener set by `SetUrlOpener`.
bool IsUrl(absl::string_view path);

class MappedFile {
 public:
  // Maps `path` read-only (`MAP_PRIVATE`). An empty file yields an empty view.
  //
  // Return values:
  //   `NotFound` if the file does not exist; `PermissionDenied` if it cannot
  //   be opened; `InvalidArgument` if it is not a regular file; `Internal` for
  //   other system errors. Messages name the path and the `errno` text.
  // A URL (`IsUrl`) is opened by the opener set with `SetUrlOpener`
  // (flinkstate/objstore/object_store.h installs the `s3://` one): a
  // `SparseMapping` of the object, whose `path()` is the URL it resolved to;
  // without an opener `Unimplemented`.
  [[nodiscard]] static absl::StatusOr<MappedFile> Open(absl::string_view path);

  // A file whose bytes are `mapping`'s (fetched on demand). `fd()` is -1.
  static MappedFile FromSparse(std::unique_ptr<SparseMapping> mapping, std::string path);

  // Opens a URL; set once at start-up (not thread-safe against `Open`).
  using UrlOpener = absl::StatusOr<MappedFile> (*)(absl::string_view url);
  static void SetUrlOpener(UrlOpener opener);

  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  // The whole file.
  // Lifetime: valid while this object is alive (and not moved from) and the
  // file is not truncated by another process.
  ByteView bytes() const ABSL_ATTRIBUTE_LIFETIME_BOUND {
    return ByteView(data_, size_);
  }
  uint64_t size() const { return size_; }
  // The open descriptor (for `copy_file_range`); -1 when default-constructed.
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

  // OK if the file still has the size it had when mapped and no read hit a
  // page lost to truncation. `DataLoss` "serde: <path> was truncated while
  // being read (...)" otherwise. Call it after decoding (and after writing
  // output from the mapping) before trusting the result. Thread-safe.
  [[nodiscard]] absl::Status CheckIntact() const;

  static constexpr int kMaxGuardedMappings = 256;

  // Hints the kernel that the map will be read front to back.
  void AdviseSequential() const;

  // Drops this process's resident pages of [offset, offset + size) (the whole
  // pages inside it) with `madvise(MADV_DONTNEED)`; read again, they fault
  // back in from the page cache. For passes over large files, so that
  // resident memory does not grow with the file. No-op for a sparse mapping.
  // Thread-safe (readers of the range only pay a page fault).
  void ReleasePages(uint64_t offset, uint64_t size) const;

  // Makes [offset, offset + size) readable by the kernel (a sparse mapping
  // fetches it; a local file needs nothing). Call before handing a range of
  // `bytes()` to a system call such as `writev`.
  [[nodiscard]] absl::Status Ensure(uint64_t offset, uint64_t size) const;
  // The remote mapping behind `bytes()`, or null for a local file.
  const SparseMapping* sparse() const { return sparse_.get(); }

 private:
  void Reset();

  std::string path_;
  int fd_ = -1;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  int guard_slot_ = -1;  // index in the SIGBUS guard table, -1 if unguarded
  std::unique_ptr<SparseMapping> sparse_;  // set by FromSparse
};

// True if `bytes` lies inside the read-only mapping of a live local
// `MappedFile` (guarded against truncation): memory whose pages may be
// dropped behind a cursor (`MetadataReadOptions::release_consumed_input`)
// because they fault back in from the file. False for any other memory
// (heap, a sparse mapping, a mapping beyond the guard table). Thread-safe.
bool IsLocalFileMapping(ByteView bytes);

// Reads a whole (small) file into memory; for inputs that are not mapped,
// such as text pointers. `OutOfRange` if it is larger than `max_bytes`.
[[nodiscard]] absl::StatusOr<std::string> ReadSmallFile(absl::string_view path,
                                                        uint64_t max_bytes);

// The Status of a failed system call `call` on `what` (a path, usually):
// `NotFound` for ENOENT, `PermissionDenied` for EACCES/EPERM, `AlreadyExists`
// for EEXIST, else `Internal`; message "serde: <call> <what>: <strerror>",
// with an `ErrorLocation` (error_location.h) of layer "serde" and file
// `file` (`what` when not given: a report names the file even though no byte
// of it was read). Thread-safe. The one errno mapping of the byte layer
// (files, transactions).
absl::Status ErrnoStatus(int err, absl::string_view call, absl::string_view what);
absl::Status ErrnoStatus(int err, absl::string_view call, absl::string_view what,
                         absl::string_view file);

}  // namespace flinkstate::serde

#endif  // FLINKSTATE_SERDE_MAPPED_FILE_H_
