// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: s3_xml.h
// -----------------------------------------------------------------------------
// The XML documents an S3 server (and STS) answers with, parsed with expat
// (Debian libexpat): object listings, error bodies, multipart and copy
// results, web-identity credentials. Hostile bodies are bounded: a DOCTYPE
// (entity declarations) is refused, nesting is limited to `kMaxXmlDepth`, and
// nothing larger than the body is allocated.
//
//   ```c++ (absl::string_view body)
//   absl::StatusOr<flinkstate::objstore::ListResult> page =
//       flinkstate::objstore::ParseListBucketResult(body);
//   if (!page.ok()) return page.status();
//   for (const flinkstate::objstore::ListedObject& o : page->objects) { /* o.key, o.size */ }
//   ```
//
// Element names are those of the S3 API reference (ListObjectsV2's
// `ListBucketResult`, `Error`, `InitiateMultipartUploadResult`, ...).
//
// Thread safety: the functions are thread-safe (no shared state).

#ifndef FLINKSTATE_OBJSTORE_S3_XML_H_
#define FLINKSTATE_OBJSTORE_S3_XML_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace flinkstate::objstore {

inline constexpr int kMaxXmlDepth = 32;

// Every element of `xml` in document order of its end tag, as
// ("Root/Child/Leaf", text content). Text is the element's own character
// data (whitespace kept; entities resolved).
// Return values: `InvalidArgument` "objstore: xml: <expat's message> at line
// L column C" for malformed XML, a DOCTYPE, or nesting deeper than
// `kMaxXmlDepth`.
[[nodiscard]] absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseXmlElements(
    absl::string_view xml);

// One `<Contents>` of a ListObjectsV2 page.
struct ListedObject {
  std::string key;
  uint64_t size = 0;
  std::string etag;  // with its quotes, as S3 gives it
};
// A ListObjectsV2 page (`ListBucketResult`).
struct ListResult {
  std::vector<ListedObject> objects;
  std::vector<std::string> common_prefixes;  // `CommonPrefixes/Prefix`
  bool is_truncated = false;
  std::string next_continuation_token;
};
// Return values: `InvalidArgument` for malformed XML, another root element,
// or a `Size` that is not a decimal count.
[[nodiscard]] absl::StatusOr<ListResult> ParseListBucketResult(absl::string_view xml);

// An S3 `<Error>` body (or STS's `<ErrorResponse><Error>`). Fields absent in
// the body are empty.
struct S3Error {
  std::string code;        // "NoSuchKey", "SlowDown", "InvalidAccessKeyId", ...
  std::string message;
  std::string resource;    // `Key`, else `BucketName`, else `Resource`
  std::string request_id;
};
// Return values: `InvalidArgument` if `xml` is not XML with an `Error`
// element (an HTML page from a proxy, an empty body).
[[nodiscard]] absl::StatusOr<S3Error> ParseS3Error(absl::string_view xml);

// The text of the first element whose path ends with `suffix`
// ("InitiateMultipartUploadResult/UploadId", "CopyObjectResult/ETag").
// Return values: `InvalidArgument` for malformed XML or no such element.
[[nodiscard]] absl::StatusOr<std::string> XmlText(absl::string_view xml,
                                                  absl::string_view suffix);

// STS `AssumeRoleWithWebIdentityResponse` credentials.
struct StsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;
  std::string expiration;
};
[[nodiscard]] absl::StatusOr<StsCredentials> ParseAssumeRoleWithWebIdentityResponse(
    absl::string_view xml);

}  // namespace flinkstate::objstore

#endif  // FLINKSTATE_OBJSTORE_S3_XML_H_
