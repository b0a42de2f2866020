// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: s3_client.h
// -----------------------------------------------------------------------------
// A small S3 client over libcurl (Debian libcurl4-openssl-dev): requests are
// signed by curl itself (`CURLOPT_AWS_SIGV4`), XML answers are parsed by
// s3_xml.h. It does what flinkstate needs: HEAD, ranged GET, PUT (multipart
// above a threshold), multipart uploads whose unchanged ranges are
// server-side part copies of the original (`PutComposed`), server-side copy
// with ETag preconditions, DELETE and ListObjectsV2.
//
//   ```c++
//   FLINKSTATE_ASSIGN_OR_RETURN(flinkstate::objstore::S3Config config,
//                               flinkstate::objstore::S3Config::FromEnvironment());
//   flinkstate::objstore::S3Client s3(config);
//   FLINKSTATE_ASSIGN_OR_RETURN(flinkstate::objstore::ObjectInfo info,
//                               s3.Head({"bucket", "job/chk-7/_metadata"}));
//   std::string head(64, '\0');
//   FLINKSTATE_RETURN_IF_ERROR(s3.GetRange({"bucket", "job/chk-7/_metadata"}, 0,
//       absl::Span<uint8_t>(reinterpret_cast<uint8_t*>(head.data()), head.size()),
//       info.etag));
//   ```
//
// Configuration is read as the AWS CLI reads it (`FromEnvironment`):
//   endpoint  `--s3-endpoint` (`S3Config::endpoint`), else AWS_ENDPOINT_URL_S3,
//             AWS_ENDPOINT_URL, the profile's `endpoint_url`, else
//             https://s3.<region>.amazonaws.com
//   region    AWS_REGION, AWS_DEFAULT_REGION, the profile's `region`, else us-east-1
//   profile   AWS_PROFILE (else "default") in AWS_SHARED_CREDENTIALS_FILE
//             (~/.aws/credentials) and AWS_CONFIG_FILE (~/.aws/config,
//             sections "[profile NAME]")
//   credentials, first found: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY
//             (+ AWS_SESSION_TOKEN); AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN
//             (or the profile's `web_identity_token_file` + `role_arn`),
//             exchanged with STS AssumeRoleWithWebIdentity (Kubernetes IRSA;
//             STS at AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL, else
//             https://sts.<region>.amazonaws.com); the credentials file; the
//             config file. None: requests go unsigned.
//   addressing path-style for a custom endpoint, virtual-hosted for AWS
//             (`addressing_style = path|virtual` in the profile overrides)
//   retries   AWS_MAX_ATTEMPTS attempts (default 5) with exponential backoff
//             and full jitter on 5xx, 429, `SlowDown`, `RequestTimeout` and
//             transport errors (first backoff FLINKSTATE_S3_RETRY_BASE_MS,
//             default 100). Each attempt ends after
//             FLINKSTATE_S3_CONNECT_TIMEOUT_MS (default 5000) without a
//             connection, or FLINKSTATE_S3_STALL_SECONDS (default 15)
//             connected without a byte moving: a server that accepts and
//             never answers costs at most attempts x (stall + backoff)
//             (~80 s by default, was 5 x 60 s), and the error names the
//             endpoint, the request, the key, the attempts and the backoff.
//   multipart PUT bodies above FLINKSTATE_S3_MULTIPART_THRESHOLD bytes
//             (default 64 MiB) go in FLINKSTATE_S3_PART_SIZE parts (default
//             16 MiB, at least 5 MiB as S3 requires).
//   part copy FLINKSTATE_S3_PART_COPY=0 turns off `PutComposed` (server-side
//             UploadPartCopy of the unchanged ranges of an edited object;
//             on by default). A server that refuses UploadPartCopy (501
//             NotImplemented, 400 InvalidRequest) turns it off for the rest
//             of the process: the upload is made in full.
//
// Errors name the object URL, the method, the HTTP status and the S3 error
// code and message, e.g. "objstore: s3://b/k: GET: HTTP 404 NoSuchKey: The
// specified key does not exist.". Codes: 404 `NotFound`; 401/403
// `PermissionDenied` (with where the credentials came from); 412
// `FailedPrecondition`; 5xx/throttling after the last attempt and transport
// failures `Unavailable`; other 4xx `InvalidArgument`.
//
// Thread safety: an `S3Client` is not thread-safe (it keeps one curl handle
// and its connection); use one per thread.

#ifndef FLINKSTATE_OBJSTORE_S3_CLIENT_H_
#define FLINKSTATE_OBJSTORE_S3_CLIENT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "flinkstate/objstore/multipart_plan.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate::objstore {

// "s3://bucket/key" (also s3a://, s3p://, as Flink's file systems name them).
struct ObjectUrl {
  std::string bucket;
  std::string key;  // may be empty (the bucket's root) or a prefix
  std::string scheme = "s3";
  std::string ToString() const;  // "<scheme>://bucket/key"
};
bool IsObjectUrl(absl::string_view path);
// Return values: `InvalidArgument` for another scheme or an empty bucket.
[[nodiscard]] absl::StatusOr<ObjectUrl> ParseObjectUrl(absl::string_view url);

struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;
  std::string source;  // where they came from, for messages
};

struct S3Config {
  std::string endpoint;  // "http://127.0.0.1:9000"; empty: AWS's for `region`
  std::string region = "us-east-1";
  enum class Addressing : uint8_t { kAuto, kPath, kVirtual };
  Addressing addressing = Addressing::kAuto;
  int max_attempts = 5;
  int retry_base_ms = 100;     // first backoff; doubled per attempt
  int retry_max_ms = 5000;     // backoff cap
  // A TCP connection not made within this ends the attempt.
  int connect_timeout_ms = 5000;
  // A connected request during which nothing arrives (or can be sent) for
  // this long ends the attempt (a server that accepts and never answers).
  int stall_seconds = 15;
  uint64_t multipart_threshold = uint64_t{64} << 20;  // PUT bodies larger go multipart
  uint64_t part_size = uint64_t{16} << 20;            // >= 5 MiB except the last
  // Server-side part copies of unchanged ranges (`PutComposed`) allowed.
  bool part_copy = true;
  // Resolved lazily (first request) unless set.
  std::optional<Credentials> credentials;
  // Where FromEnvironment looked, for messages about missing credentials.
  std::string credential_search;
  // Web identity (resolved on first use).
  std::string web_identity_token_file;
  std::string role_arn;
  std::string role_session_name;
  std::string sts_endpoint;

  // As the AWS CLI reads the environment and files (see the file comment).
  // `endpoint_flag` (from --s3-endpoint) wins over the environment.
  // Return values: `InvalidArgument` for a malformed AWS_MAX_ATTEMPTS or
  // endpoint URL; a missing file is no error.
  [[nodiscard]] static absl::StatusOr<S3Config> FromEnvironment(
      absl::string_view endpoint_flag = "");
};

struct ObjectInfo {
  uint64_t size = 0;
  std::string etag;  // with quotes
  std::string last_modified;
  std::string txn_tag;  // x-amz-meta-flinkstate-txn, if any
};

// Preconditions of a write (S3 conditional requests).
struct WriteConditions {
  std::string if_match;       // the destination's current ETag must be this
  bool if_none_match = false; // the destination must not exist
  std::string source_if_match;  // copies: the source's ETag must be this
  // PUT: stored as x-amz-meta-flinkstate-txn. A copy keeps the source's
  // metadata unless this is set (then it gets this tag instead).
  std::string txn_tag;
};

// Byte counters since the client was made (for `inspect`'s figures and tests).
struct TransferStats {
  uint64_t requests = 0;
  uint64_t bytes_down = 0;  // response bodies
  uint64_t bytes_up = 0;    // request bodies
  uint64_t retries = 0;
  // Bytes copied server-side into multipart uploads (UploadPartCopy); no
  // byte of them passes through the client.
  uint64_t bytes_part_copied = 0;
};

// The sum over every S3Client of this process (thread-safe): what a command
// transferred in all, for its figures and the tests' byte counts.
TransferStats ProcessTransferStats();

// The requests the object-store write protocols make (object_transaction.h),
// one virtual method each: `S3Client` is the real one; tests put an
// in-memory store with injected failures behind it
// (tests/testing/fault_object_client.h). Errors as `S3Client`'s below.
class ObjectClient {
 public:
  virtual ~ObjectClient() = default;

  [[nodiscard]] virtual absl::StatusOr<ObjectInfo> Head(const ObjectUrl& url) = 0;
  // Reads [offset, offset + out.size()) of the object, which must still have
  // ETag `etag` if it is non-empty (`FailedPrecondition` if it changed).
  [[nodiscard]] virtual absl::Status GetRange(const ObjectUrl& url, uint64_t offset,
                                              absl::Span<uint8_t> out,
                                              const std::string& etag) = 0;
  // The whole (small) object; `OutOfRange` above `max_bytes`.
  [[nodiscard]] virtual absl::StatusOr<std::string> GetSmall(const ObjectUrl& url,
                                                             uint64_t max_bytes) = 0;
  // Writes `data` (S3Client: multipart above `multipart_threshold`); returns
  // the new ETag.
  [[nodiscard]] virtual absl::StatusOr<std::string> Put(const ObjectUrl& url,
                                                        serde::ByteView data,
                                                        const WriteConditions& when) = 0;
  // Server-side copy of `from` over `to`; returns `to`'s new ETag.
  [[nodiscard]] virtual absl::StatusOr<std::string> Copy(const ObjectUrl& from,
                                                         const ObjectUrl& to,
                                                         const WriteConditions& when) = 0;
  [[nodiscard]] virtual absl::Status Delete(const ObjectUrl& url) = 0;
  // Every object under `prefix` (all pages). With `delimiter` "/", keys
  // below the next '/' are folded into `common_prefixes`.
  struct Listing {
    std::vector<std::pair<std::string, uint64_t>> objects;  // key, size
    std::vector<std::string> common_prefixes;
  };
  [[nodiscard]] virtual absl::StatusOr<Listing> List(const ObjectUrl& prefix,
                                                     absl::string_view delimiter) = 0;

  // When this client composes objects from server-side copies
  // (`PutComposed`): for PUT bodies above `threshold` bytes, in parts within
  // `limits`. None (the default): it does not.
  struct PartCopyConfig {
    uint64_t threshold = 0;
    MultipartLimits limits;
  };
  virtual std::optional<PartCopyConfig> part_copy() const { return std::nullopt; }
  // Writes `data` to `url` as a multipart upload of `parts` (tiling `data`;
  // objstore::PlanMultipartParts): uploaded parts from `data`, copy parts
  // server-side from `source`, which must still have ETag `source_etag`
  // (`x-amz-copy-source-if-match`). `when` as for `Put`. Returns the new ETag.
  // Return values: `Unimplemented` when the server (or this client) does not
  // do server-side part copies (the multipart upload is aborted: `Put`
  // instead); `FailedPrecondition` when `source` changed; as `Put`.
  [[nodiscard]] virtual absl::StatusOr<std::string> PutComposed(
      const ObjectUrl& url, serde::ByteView data, const ObjectUrl& source,
      const std::string& source_etag, absl::Span<const MultipartPart> parts,
      const WriteConditions& when);

  // Without conditions / delimiter.
  [[nodiscard]] absl::StatusOr<std::string> Put(const ObjectUrl& url, serde::ByteView data) {
    return Put(url, data, WriteConditions{});
  }
  [[nodiscard]] absl::StatusOr<std::string> Copy(const ObjectUrl& from, const ObjectUrl& to) {
    return Copy(from, to, WriteConditions{});
  }
  [[nodiscard]] absl::StatusOr<Listing> List(const ObjectUrl& prefix) { return List(prefix, ""); }
};

class S3Client : public ObjectClient {
 public:
  explicit S3Client(S3Config config);
  ~S3Client() override;
  S3Client(const S3Client&) = delete;
  S3Client& operator=(const S3Client&) = delete;

  using ObjectClient::Copy;
  using ObjectClient::List;
  using ObjectClient::Put;
  [[nodiscard]] absl::StatusOr<ObjectInfo> Head(const ObjectUrl& url) override;
  [[nodiscard]] absl::Status GetRange(const ObjectUrl& url, uint64_t offset,
                                      absl::Span<uint8_t> out, const std::string& etag) override;
  [[nodiscard]] absl::StatusOr<std::string> GetSmall(const ObjectUrl& url,
                                                     uint64_t max_bytes) override;
  [[nodiscard]] absl::StatusOr<std::string> Put(const ObjectUrl& url, serde::ByteView data,
                                                const WriteConditions& when) override;
  [[nodiscard]] absl::StatusOr<std::string> Copy(const ObjectUrl& from, const ObjectUrl& to,
                                                 const WriteConditions& when) override;
  [[nodiscard]] absl::Status Delete(const ObjectUrl& url) override;
  [[nodiscard]] absl::StatusOr<Listing> List(const ObjectUrl& prefix,
                                             absl::string_view delimiter) override;
  // Unless FLINKSTATE_S3_PART_COPY=0 or the server refused a part copy
  // earlier in this process: `multipart_threshold`, parts of `part_size`.
  std::optional<PartCopyConfig> part_copy() const override;
  [[nodiscard]] absl::StatusOr<std::string> PutComposed(
      const ObjectUrl& url, serde::ByteView data, const ObjectUrl& source,
      const std::string& source_etag, absl::Span<const MultipartPart> parts,
      const WriteConditions& when) override;

  // The requests of a multipart upload (`Put` above the threshold and
  // `PutComposed` make them). `CreateMultipartUpload` returns the upload id
  // (`when.txn_tag` is stored on the object); `UploadPart` and
  // `UploadPartCopy` the part's ETag; `CompleteMultipartUpload` the object's
  // ETag (`when`'s If-Match / If-None-Match apply), aborting the upload if it
  // fails. `UploadPartCopy` copies `size` bytes of `source` from `offset`
  // (`x-amz-copy-source-range`), if it still has ETag `source_etag` (when not
  // empty). Return values: as the other requests'; `UploadPartCopy`:
  // `Unimplemented` when the server does not do it (501, NotImplemented,
  // InvalidRequest), `FailedPrecondition` when `source` changed.
  [[nodiscard]] absl::StatusOr<std::string> CreateMultipartUpload(const ObjectUrl& url,
                                                                  const WriteConditions& when);
  [[nodiscard]] absl::StatusOr<std::string> UploadPart(const ObjectUrl& url,
                                                       const std::string& upload_id,
                                                       int number, serde::ByteView data);
  [[nodiscard]] absl::StatusOr<std::string> UploadPartCopy(const ObjectUrl& url,
                                                           const std::string& upload_id,
                                                           int number, const ObjectUrl& source,
                                                           uint64_t offset, uint64_t size,
                                                           const std::string& source_etag);
  [[nodiscard]] absl::StatusOr<std::string> CompleteMultipartUpload(
      const ObjectUrl& url, const std::string& upload_id,
      const std::vector<std::string>& part_etags, const WriteConditions& when);
  // Best effort (a bucket lifecycle rule reaps what is left).
  void AbortMultipartUpload(const ObjectUrl& url, const std::string& upload_id);

  const TransferStats& stats() const { return stats_; }
  const S3Config& config() const { return config_; }
  // Whether the server honoured `If-Match` on a PUT/copy the last time it was
  // asked (a server that ignores it answers 200 regardless; see
  // object_store.h's write protocol). Unknown until tried: true.
  bool if_match_supported() const { return if_match_supported_; }

  struct Request;
  struct Response {
    long status = 0;
    std::map<std::string, std::string> headers;  // lower-case names
    std::string body;
  };

 private:
  absl::StatusOr<Response> Send(const Request& r);
  absl::StatusOr<Response> SendOnce(const Request& r, std::string* transport_error);
  absl::Status ResolveCredentials();
  std::string UrlFor(const ObjectUrl& u, const std::vector<std::pair<std::string, std::string>>& q);
  absl::Status ErrorFor(const ObjectUrl& u, absl::string_view method, const Response& r,
                        int attempts);
  absl::StatusOr<std::string> PutMultipart(const ObjectUrl& url, serde::ByteView data,
                                           const WriteConditions& when);

  S3Config config_;
  void* curl_ = nullptr;
  TransferStats stats_;
  bool credentials_resolved_ = false;
  bool if_match_supported_ = true;
};

}  // namespace flinkstate::objstore

#endif  // FLINKSTATE_OBJSTORE_S3_CLIENT_H_
