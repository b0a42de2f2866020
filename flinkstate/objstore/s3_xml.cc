// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/objstore/s3_xml.h"

#include <expat.h>

#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace flinkstate::objstore {
namespace {

struct ParseState {
  XML_Parser parser = nullptr;
  std::vector<std::string> stack;  // element names
  std::vector<std::string> text;   // per open element
  std::vector<std::pair<std::string, std::string>> out;
  std::string error;
};

void Stop(ParseState* s, std::string why) {
  if (s->error.empty()) s->error = std::move(why);
  XML_StopParser(s->parser, XML_FALSE);
}

void OnStart(void* data, const XML_Char* name, const XML_Char** /*attrs*/) {
  auto* s = static_cast<ParseState*>(data);
  if (static_cast<int>(s->stack.size()) >= kMaxXmlDepth) {
    Stop(s, absl::StrCat("elements nested deeper than ", kMaxXmlDepth));
    return;
  }
  s->stack.emplace_back(name);
  s->text.emplace_back();
}

void OnEnd(void* data, const XML_Char* /*name*/) {
  auto* s = static_cast<ParseState*>(data);
  if (s->stack.empty()) return;
  std::string path;
  for (const std::string& e : s->stack) {
    if (!path.empty()) path += '/';
    path += e;
  }
  s->out.emplace_back(std::move(path), std::move(s->text.back()));
  s->stack.pop_back();
  s->text.pop_back();
}

void OnText(void* data, const XML_Char* t, int len) {
  auto* s = static_cast<ParseState*>(data);
  if (!s->text.empty()) s->text.back().append(t, static_cast<size_t>(len));
}

void OnDoctype(void* data, const XML_Char*, const XML_Char*, const XML_Char*, int) {
  Stop(static_cast<ParseState*>(data), "a DOCTYPE (refused: S3 bodies have none)");
}

// The element name after the last '/'.
absl::string_view Leaf(absl::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

absl::string_view Root(absl::string_view path) { return path.substr(0, path.find('/')); }

}  // namespace

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseXmlElements(
    absl::string_view xml) {
  ParseState s;
  std::unique_ptr<XML_ParserStruct, void (*)(XML_Parser)> parser(XML_ParserCreate("UTF-8"),
                                                                  XML_ParserFree);
  if (parser == nullptr) return absl::ResourceExhaustedError("objstore: xml: out of memory");
  s.parser = parser.get();
  XML_SetUserData(s.parser, &s);
  XML_SetElementHandler(s.parser, OnStart, OnEnd);
  XML_SetCharacterDataHandler(s.parser, OnText);
  XML_SetStartDoctypeDeclHandler(s.parser, OnDoctype);
  if (xml.size() > static_cast<size_t>(INT32_MAX)) {
    return absl::InvalidArgumentError(absl::StrCat("objstore: xml: a body of ", xml.size(),
                                                   " bytes, larger than any S3 answer"));
  }
  const XML_Status st = XML_Parse(s.parser, xml.data(), static_cast<int>(xml.size()), XML_TRUE);
  if (st != XML_STATUS_OK || !s.error.empty()) {
    const std::string what =
        s.error.empty() ? std::string(XML_ErrorString(XML_GetErrorCode(s.parser))) : s.error;
    return absl::InvalidArgumentError(absl::StrCat(
        "objstore: xml: ", what, " at line ", XML_GetCurrentLineNumber(s.parser), " column ",
        XML_GetCurrentColumnNumber(s.parser)));
  }
  return std::move(s.out);
}

absl::StatusOr<ListResult> ParseListBucketResult(absl::string_view xml) {
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> els = ParseXmlElements(xml);
  if (!els.ok()) return els.status();
  ListResult r;
  ListedObject cur;
  bool root_ok = false;
  for (const auto& [path, text] : *els) {
    if (path == "ListBucketResult") root_ok = true;
    if (path == "ListBucketResult/Contents/Key") cur.key = text;
    if (path == "ListBucketResult/Contents/ETag") cur.etag = text;
    if (path == "ListBucketResult/Contents/Size" && !absl::SimpleAtoi(text, &cur.size)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "objstore: xml: ListBucketResult/Contents/Size: not a byte count: \"", text, "\""));
    }
    if (path == "ListBucketResult/Contents") r.objects.push_back(std::exchange(cur, {}));
    if (path == "ListBucketResult/CommonPrefixes/Prefix") r.common_prefixes.push_back(text);
    if (path == "ListBucketResult/IsTruncated") r.is_truncated = text == "true";
    if (path == "ListBucketResult/NextContinuationToken") r.next_continuation_token = text;
  }
  if (!root_ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "objstore: xml: not a ListBucketResult (root element ",
        els->empty() ? std::string("none") : std::string(Root(els->back().first)), ")"));
  }
  if (r.is_truncated && r.next_continuation_token.empty()) {
    return absl::InvalidArgumentError(
        "objstore: xml: ListBucketResult: IsTruncated without a NextContinuationToken");
  }
  return r;
}

absl::StatusOr<S3Error> ParseS3Error(absl::string_view xml) {
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> els = ParseXmlElements(xml);
  if (!els.ok()) return els.status();
  S3Error e;
  bool found = false;
  std::string key, bucket, resource;
  for (const auto& [path, text] : *els) {
    const bool in_error = path == "Error" || absl::StartsWith(path, "Error/") ||
                          absl::StartsWith(path, "ErrorResponse/Error");
    if (!in_error) {
      if (absl::EndsWith(path, "/RequestId") && e.request_id.empty()) e.request_id = text;
      continue;
    }
    found = true;
    const absl::string_view leaf = Leaf(path);
    if (leaf == "Code") e.code = text;
    if (leaf == "Message") e.message = text;
    if (leaf == "Key") key = text;
    if (leaf == "BucketName") bucket = text;
    if (leaf == "Resource") resource = text;
    if (leaf == "RequestId") e.request_id = text;
  }
  if (!found) {
    return absl::InvalidArgumentError(absl::StrCat(
        "objstore: xml: no Error element (root ",
        els->empty() ? std::string("none") : std::string(Root(els->back().first)), ")"));
  }
  e.resource = !key.empty() ? key : !bucket.empty() ? bucket : resource;
  return e;
}

absl::StatusOr<std::string> XmlText(absl::string_view xml, absl::string_view suffix) {
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> els = ParseXmlElements(xml);
  if (!els.ok()) return els.status();
  for (const auto& [path, text] : *els) {
    if (path == suffix || absl::EndsWith(path, absl::StrCat("/", suffix))) return text;
  }
  return absl::InvalidArgumentError(absl::StrCat("objstore: xml: no ", suffix, " element"));
}

absl::StatusOr<StsCredentials> ParseAssumeRoleWithWebIdentityResponse(absl::string_view xml) {
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> els = ParseXmlElements(xml);
  if (!els.ok()) return els.status();
  StsCredentials c;
  constexpr absl::string_view kPrefix =
      "AssumeRoleWithWebIdentityResponse/AssumeRoleWithWebIdentityResult/Credentials/";
  for (const auto& [path, text] : *els) {
    if (!absl::StartsWith(path, kPrefix)) continue;
    const absl::string_view leaf = absl::string_view(path).substr(kPrefix.size());
    if (leaf == "AccessKeyId") c.access_key_id = text;
    if (leaf == "SecretAccessKey") c.secret_access_key = text;
    if (leaf == "SessionToken") c.session_token = text;
    if (leaf == "Expiration") c.expiration = text;
  }
  if (c.access_key_id.empty() || c.secret_access_key.empty()) {
    return absl::InvalidArgumentError(
        "objstore: xml: AssumeRoleWithWebIdentityResponse without Credentials/AccessKeyId and "
        "SecretAccessKey");
  }
  return c;
}

}  // namespace flinkstate::objstore
