// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: object_store.h
// -----------------------------------------------------------------------------
// Object-store inputs for every reader: `InstallObjectStore()` makes
// `serde::MappedFile::Open` (and so `flinkstate::Open`, every command)
// accept `s3://bucket/key`, `s3a://` and `s3p://` URLs. The object is read by
// ranges into a `serde::SparseMapping`: only the pages the decoders touch are
// downloaded, so `inspect` of a large `_metadata` fetches its structure and
// not the operator-state offset arrays it skips. Every range read carries
// `If-Match` with the ETag seen at open, so an object replaced meanwhile is
// reported (`FailedPrecondition`), never mixed.
//
//   ```c++
//   flinkstate::objstore::InstallObjectStore();
//   absl::StatusOr<flinkstate::serde::MappedFile> f =
//       flinkstate::serde::MappedFile::Open("s3://bucket/job/chk-7");  // its _metadata
//   ```
//
// A URL whose key is not an object but a "directory" (a prefix such as
// `.../chk-7` or `.../chk-7/`) opens `<prefix>/_metadata`, as a local
// checkpoint directory does.
//
// Configuration: S3Config::FromEnvironment (s3_client.h), with the endpoint
// given by `SetS3Endpoint` (the CLI's `--s3-endpoint`) winning.
//
// Thread safety: `InstallObjectStore` and `SetS3Endpoint` are meant for
// start-up; the rest is thread-safe.

#ifndef FLINKSTATE_OBJSTORE_OBJECT_STORE_H_
#define FLINKSTATE_OBJSTORE_OBJECT_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "flinkstate/objstore/s3_client.h"
#include "flinkstate/serde/byte_source.h"
#include "flinkstate/serde/mapped_file.h"

namespace flinkstate::objstore {

// Sets `serde::MappedFile`'s URL opener to `OpenObject` (idempotent).
void InstallObjectStore();

// The endpoint every later client uses ("http://127.0.0.1:9000"); empty:
// from the environment.
void SetS3Endpoint(std::string endpoint);

// The configuration a new client gets (environment + `SetS3Endpoint`).
[[nodiscard]] absl::StatusOr<S3Config> CurrentS3Config();

// A `ByteSource` over one version of an object (its ETag at open).
class S3Source : public serde::ByteSource {
 public:
  S3Source(std::unique_ptr<S3Client> client, ObjectUrl url, ObjectInfo info);
  const std::string& name() const override { return name_; }
  uint64_t size() const override { return info_.size; }
  absl::Status ReadAt(uint64_t offset, absl::Span<uint8_t> out) override;
  const ObjectInfo& info() const { return info_; }
  const ObjectUrl& url() const { return url_; }
  const S3Client& client() const { return *client_; }

 private:
  std::unique_ptr<S3Client> client_;
  ObjectUrl url_;
  ObjectInfo info_;
  std::string name_;
};

// Opens `url` (see the file comment for prefixes) as a sparse mapping.
// Return values: `InvalidArgument` for a malformed URL; the client's errors
// (`NotFound` naming the key and saying that `<key>/_metadata` is absent too;
// `PermissionDenied`; `Unavailable`).
[[nodiscard]] absl::StatusOr<serde::MappedFile> OpenObject(absl::string_view url);

// The URL of the object `url` opens (a prefix: its `_metadata`).
[[nodiscard]] absl::StatusOr<std::string> ResolveObjectUrl(absl::string_view url);

// The size of the object at `url` (HEAD).
[[nodiscard]] absl::StatusOr<uint64_t> ObjectSize(absl::string_view url);

// Objects directly under the "directory" `url` (a prefix; a trailing '/' is
// added): their URLs and sizes, and the sub-"directories" (URLs ending in
// '/'), each sorted.
struct DirectoryListing {
  std::vector<std::pair<std::string, uint64_t>> files;
  std::vector<std::string> dirs;
};
[[nodiscard]] absl::StatusOr<DirectoryListing> ListDirectory(absl::string_view url);

}  // namespace flinkstate::objstore

#endif  // FLINKSTATE_OBJSTORE_OBJECT_STORE_H_
