// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// Fuzz entries of the object-store layer (fuzz_entries.h): the XML bodies an
// S3 server or STS answers with (objstore/s3_xml.h).

#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "flinkstate/objstore/s3_xml.h"
#include "flinkstate/serde/byte_view.h"
#include "fuzz/fuzz_common.h"
#include "fuzz/fuzz_entries.h"

namespace flinkstate::fuzz {
namespace {

constexpr absl::string_view kTarget = "objstore_s3_xml";

// XML character data for `s` (the five predefined entities; control
// characters other than tab/newline cannot appear in XML 1.0 text and were
// refused by the parser, so they never reach here).
std::string Escape(absl::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\r': out += "&#13;"; break;  // a literal CR would be normalised away
      default: out += c;
    }
  }
  return out;
}

void CheckXmlError(const absl::Status& s, absl::string_view what) {
  FUZZ_CHECK(kTarget, s.code() == absl::StatusCode::kInvalidArgument ||
                          s.code() == absl::StatusCode::kResourceExhausted,
             what, " failed with ", s.ToString());
  FUZZ_CHECK(kTarget, absl::StartsWith(s.message(), "objstore: xml: "), what,
             " error without the layer: ", s.message());
}

}  // namespace

absl::Status FuzzS3Xml(serde::ByteView input) {
  const absl::string_view xml(reinterpret_cast<const char*>(input.data()), input.size());
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> els = objstore::ParseXmlElements(xml);
  if (!els.ok()) CheckXmlError(els.status(), "ParseXmlElements");

  // A listing page that parses re-renders to XML that parses to the same page.
  absl::StatusOr<objstore::ListResult> l = objstore::ParseListBucketResult(xml);
  if (!l.ok()) {
    CheckXmlError(l.status(), "ParseListBucketResult");
  } else {
    FUZZ_CHECK(kTarget, !l->is_truncated || !l->next_continuation_token.empty(),
               "a truncated page without a token");
    std::string again = "<ListBucketResult>";
    for (const objstore::ListedObject& o : l->objects) {
      absl::StrAppend(&again, "<Contents><Key>", Escape(o.key), "</Key><Size>", o.size,
                      "</Size><ETag>", Escape(o.etag), "</ETag></Contents>");
    }
    for (const std::string& p : l->common_prefixes) {
      absl::StrAppend(&again, "<CommonPrefixes><Prefix>", Escape(p), "</Prefix></CommonPrefixes>");
    }
    absl::StrAppend(&again, "<IsTruncated>", l->is_truncated ? "true" : "false",
                    "</IsTruncated><NextContinuationToken>", Escape(l->next_continuation_token),
                    "</NextContinuationToken></ListBucketResult>");
    absl::StatusOr<objstore::ListResult> r = objstore::ParseListBucketResult(again);
    FUZZ_CHECK(kTarget, r.ok(), "re-rendered listing refused: ", r.status().ToString());
    FUZZ_CHECK(kTarget, r->objects.size() == l->objects.size(), "object count changed");
    for (size_t i = 0; i < l->objects.size(); ++i) {
      FUZZ_CHECK(kTarget, r->objects[i].key == l->objects[i].key, "key ", i, " changed");
      FUZZ_CHECK(kTarget, r->objects[i].size == l->objects[i].size, "size ", i, " changed");
      FUZZ_CHECK(kTarget, r->objects[i].etag == l->objects[i].etag, "etag ", i, " changed");
    }
    FUZZ_CHECK(kTarget, r->common_prefixes == l->common_prefixes, "prefixes changed");
    FUZZ_CHECK(kTarget, r->next_continuation_token == l->next_continuation_token,
               "token changed");
    CountOutcome("objstore: listing re-rendered");
  }

  // An error body likewise.
  absl::StatusOr<objstore::S3Error> e = objstore::ParseS3Error(xml);
  if (!e.ok()) {
    CheckXmlError(e.status(), "ParseS3Error");
  } else {
    const std::string again =
        absl::StrCat("<Error><Code>", Escape(e->code), "</Code><Message>", Escape(e->message),
                     "</Message><Key>", Escape(e->resource), "</Key><RequestId>",
                     Escape(e->request_id), "</RequestId></Error>");
    absl::StatusOr<objstore::S3Error> r = objstore::ParseS3Error(again);
    FUZZ_CHECK(kTarget, r.ok(), "re-rendered error refused: ", r.status().ToString());
    FUZZ_CHECK(kTarget, r->code == e->code && r->message == e->message &&
                            r->resource == e->resource && r->request_id == e->request_id,
               "error fields changed");
    CountOutcome("objstore: error re-rendered");
  }

  absl::StatusOr<objstore::StsCredentials> c =
      objstore::ParseAssumeRoleWithWebIdentityResponse(xml);
  if (!c.ok()) {
    CheckXmlError(c.status(), "ParseAssumeRoleWithWebIdentityResponse");
  } else {
    FUZZ_CHECK(kTarget, !c->access_key_id.empty() && !c->secret_access_key.empty(),
               "credentials without a key");
    CountOutcome("objstore: credentials parsed");
  }
  return absl::OkStatus();
}

}  // namespace flinkstate::fuzz
