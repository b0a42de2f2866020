// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/objstore/s3_client.h"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "flinkstate/objstore/s3_xml.h"
#include "flinkstate/serde/error_location.h"

namespace flinkstate::objstore {

struct S3Client::Request {
  std::string method = "GET";
  ObjectUrl url;
  std::vector<std::pair<std::string, std::string>> query;
  std::vector<std::string> headers;
  serde::ByteView body;       // PUT/POST body
  bool has_body = false;
  absl::Span<uint8_t> into;   // GET: write the body here (exact size expected)
  bool want_into = false;
  bool unsigned_request = false;  // STS AssumeRoleWithWebIdentity
  bool single_attempt = false;    // no retries (an error body asked for)
  std::string full_url;           // overrides UrlFor (STS)
};

namespace {

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

std::string Home() {
  const char* h = Env("HOME");
  return h != nullptr ? h : "";
}

// RFC 3986 percent-encoding as SigV4 wants it: unreserved characters kept,
// '/' kept in paths.
std::string UriEncode(absl::string_view s, bool keep_slash) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// A minimal INI reader for ~/.aws/{credentials,config}: section -> key -> value.
// Nested blocks ("s3 =" followed by indented lines) are flattened into the
// section ("addressing_style").
using Ini = std::map<std::string, std::map<std::string, std::string>>;
Ini ReadIni(const std::string& path) {
  Ini ini;
  std::ifstream in(path);
  std::string line, section;
  while (std::getline(in, line)) {
    absl::string_view l = absl::StripAsciiWhitespace(line);
    if (l.empty() || l[0] == '#' || l[0] == ';') continue;
    if (l.front() == '[' && l.back() == ']') {
      section = std::string(absl::StripAsciiWhitespace(l.substr(1, l.size() - 2)));
      continue;
    }
    const size_t eq = l.find('=');
    if (eq == absl::string_view::npos) continue;
    std::string k(absl::StripAsciiWhitespace(l.substr(0, eq)));
    std::string v(absl::StripAsciiWhitespace(l.substr(eq + 1)));
    if (!v.empty()) ini[section][absl::AsciiStrToLower(k)] = v;
  }
  return ini;
}

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t OnBody(char* p, size_t size, size_t n, void* user) {
  auto* sink = static_cast<std::pair<S3Client::Response*, absl::Span<uint8_t>*>*>(user);
  const size_t len = size * n;
  if (sink->second != nullptr && sink->first->status / 100 == 2) {
    absl::Span<uint8_t>& into = *sink->second;
    if (len > into.size()) return 0;  // longer than asked: abort the transfer
    std::memcpy(into.data(), p, len);
    into.remove_prefix(len);
    return len;
  }
  // Error bodies are small; bound them anyway.
  if (sink->first->body.size() + len > (size_t{1} << 20)) return 0;
  sink->first->body.append(p, len);
  return len;
}

size_t OnHeader(char* p, size_t size, size_t n, void* user) {
  auto* r = static_cast<S3Client::Response*>(user);
  absl::string_view h(p, size * n);
  if (absl::StartsWith(h, "HTTP/")) {
    r->headers.clear();
    // "HTTP/1.1 206 Partial Content": the status of this (final) response.
    const size_t sp = h.find(' ');
    if (sp != absl::string_view::npos) {
      long code = 0;
      if (absl::SimpleAtoi(h.substr(sp + 1, 3), &code)) r->status = code;
    }
    return size * n;
  }
  const size_t colon = h.find(':');
  if (colon != absl::string_view::npos) {
    r->headers[absl::AsciiStrToLower(h.substr(0, colon))] =
        std::string(absl::StripAsciiWhitespace(h.substr(colon + 1)));
  }
  return size * n;
}

struct UploadCursor {
  serde::ByteView data;
};

size_t OnRead(char* p, size_t size, size_t n, void* user) {
  auto* c = static_cast<UploadCursor*>(user);
  const size_t len = std::min(size * n, c->data.size());
  std::memcpy(p, c->data.data(), len);
  c->data.remove_prefix(len);
  return len;
}

bool Retryable(long status, absl::string_view code) {
  return status >= 500 || status == 429 || code == "SlowDown" || code == "RequestTimeout" ||
         code == "Throttling" || code == "ThrottlingException";
}

std::atomic<uint64_t> g_requests{0}, g_down{0}, g_up{0}, g_retries{0}, g_part_copied{0};
// Set when a server refused UploadPartCopy: no more tries in this process.
std::atomic<bool> g_part_copy_refused{false};

}  // namespace

TransferStats ProcessTransferStats() {
  TransferStats t;
  t.requests = g_requests.load();
  t.bytes_down = g_down.load();
  t.bytes_up = g_up.load();
  t.retries = g_retries.load();
  t.bytes_part_copied = g_part_copied.load();
  return t;
}

std::string ObjectUrl::ToString() const { return absl::StrCat(scheme, "://", bucket, "/", key); }

bool IsObjectUrl(absl::string_view path) {
  return absl::StartsWith(path, "s3://") || absl::StartsWith(path, "s3a://") ||
         absl::StartsWith(path, "s3p://");
}

absl::StatusOr<ObjectUrl> ParseObjectUrl(absl::string_view url) {
  ObjectUrl u;
  const size_t colon = url.find("://");
  if (!IsObjectUrl(url) || colon == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("objstore: ", url, ": not an s3://, s3a:// or s3p:// URL"));
  }
  u.scheme = std::string(url.substr(0, colon));
  absl::string_view rest = url.substr(colon + 3);
  const size_t slash = rest.find('/');
  u.bucket = std::string(rest.substr(0, slash));
  if (slash != absl::string_view::npos) u.key = std::string(rest.substr(slash + 1));
  if (u.bucket.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("objstore: ", url, ": no bucket name"));
  }
  return u;
}

absl::StatusOr<S3Config> S3Config::FromEnvironment(absl::string_view endpoint_flag) {
  S3Config c;
  const char* profile_env = Env("AWS_PROFILE");
  const std::string profile = profile_env != nullptr ? profile_env : "default";
  const std::string cred_path = Env("AWS_SHARED_CREDENTIALS_FILE") != nullptr
                                    ? Env("AWS_SHARED_CREDENTIALS_FILE")
                                    : Home() + "/.aws/credentials";
  const std::string config_path =
      Env("AWS_CONFIG_FILE") != nullptr ? Env("AWS_CONFIG_FILE") : Home() + "/.aws/config";
  Ini creds = ReadIni(cred_path);
  Ini config = ReadIni(config_path);
  std::map<std::string, std::string> prof =
      config[profile == "default" ? "default" : absl::StrCat("profile ", profile)];
  if (profile != "default" && prof.empty()) prof = config[profile];

  if (const char* r = Env("AWS_REGION")) {
    c.region = r;
  } else if (const char* r2 = Env("AWS_DEFAULT_REGION")) {
    c.region = r2;
  } else if (prof.count("region")) {
    c.region = prof["region"];
  }
  if (!endpoint_flag.empty()) {
    c.endpoint = std::string(endpoint_flag);
  } else if (const char* e = Env("AWS_ENDPOINT_URL_S3")) {
    c.endpoint = e;
  } else if (const char* e2 = Env("AWS_ENDPOINT_URL")) {
    c.endpoint = e2;
  } else if (prof.count("endpoint_url")) {
    c.endpoint = prof["endpoint_url"];
  }
  while (absl::EndsWith(c.endpoint, "/")) c.endpoint.pop_back();
  if (!c.endpoint.empty() && !absl::StartsWith(c.endpoint, "http://") &&
      !absl::StartsWith(c.endpoint, "https://")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "objstore: endpoint \"", c.endpoint, "\" is not an http:// or https:// URL"));
  }
  if (prof.count("addressing_style")) {
    const std::string& a = prof["addressing_style"];
    c.addressing = a == "path"      ? Addressing::kPath
                   : a == "virtual" ? Addressing::kVirtual
                                    : Addressing::kAuto;
  }
  if (const char* m = Env("AWS_MAX_ATTEMPTS")) {
    if (!absl::SimpleAtoi(m, &c.max_attempts) || c.max_attempts < 1 || c.max_attempts > 100) {
      return absl::InvalidArgumentError(
          absl::StrCat("objstore: AWS_MAX_ATTEMPTS=\"", m, "\" is not a count from 1 to 100"));
    }
  }
  if (const char* t = Env("FLINKSTATE_S3_MULTIPART_THRESHOLD")) {
    if (!absl::SimpleAtoi(t, &c.multipart_threshold)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "objstore: FLINKSTATE_S3_MULTIPART_THRESHOLD=\"", t, "\" is not a byte count"));
    }
  }
  if (const char* ps = Env("FLINKSTATE_S3_PART_SIZE")) {
    if (!absl::SimpleAtoi(ps, &c.part_size) || c.part_size < (uint64_t{5} << 20)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "objstore: FLINKSTATE_S3_PART_SIZE=\"", ps, "\" is not a byte count of at least 5 MiB"));
    }
  }
  if (const char* pc = Env("FLINKSTATE_S3_PART_COPY")) {
    const std::string v = absl::AsciiStrToLower(pc);
    if (v == "0" || v == "false" || v == "off") {
      c.part_copy = false;
    } else if (v != "1" && v != "true" && v != "on") {
      return absl::InvalidArgumentError(absl::StrCat(
          "objstore: FLINKSTATE_S3_PART_COPY=\"", pc, "\" is not 0 or 1"));
    }
  }
  if (const char* t = Env("FLINKSTATE_S3_CONNECT_TIMEOUT_MS")) {
    if (!absl::SimpleAtoi(t, &c.connect_timeout_ms) || c.connect_timeout_ms < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "objstore: FLINKSTATE_S3_CONNECT_TIMEOUT_MS=\"", t, "\" is not a positive count"));
    }
  }
  if (const char* t = Env("FLINKSTATE_S3_STALL_SECONDS")) {
    if (!absl::SimpleAtoi(t, &c.stall_seconds) || c.stall_seconds < 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "objstore: FLINKSTATE_S3_STALL_SECONDS=\"", t, "\" is not a positive count"));
    }
  }
  if (const char* b = Env("FLINKSTATE_S3_RETRY_BASE_MS")) {
    if (!absl::SimpleAtoi(b, &c.retry_base_ms) || c.retry_base_ms < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("objstore: FLINKSTATE_S3_RETRY_BASE_MS=\"", b, "\" is not a count"));
    }
  }

  // Credentials, in the AWS CLI's order.
  std::vector<std::string> searched;
  const char* id = Env("AWS_ACCESS_KEY_ID");
  const char* secret = Env("AWS_SECRET_ACCESS_KEY");
  searched.push_back("AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY");
  if (id != nullptr && secret != nullptr) {
    Credentials k{id, secret, Env("AWS_SESSION_TOKEN") ? Env("AWS_SESSION_TOKEN") : "",
                  "environment (AWS_ACCESS_KEY_ID)"};
    c.credentials = k;
  }
  searched.push_back("AWS_WEB_IDENTITY_TOKEN_FILE+AWS_ROLE_ARN");
  if (!c.credentials) {
    const char* tf = Env("AWS_WEB_IDENTITY_TOKEN_FILE");
    const char* role = Env("AWS_ROLE_ARN");
    if (tf != nullptr && role != nullptr) {
      c.web_identity_token_file = tf;
      c.role_arn = role;
    } else if (prof.count("web_identity_token_file") && prof.count("role_arn")) {
      c.web_identity_token_file = prof["web_identity_token_file"];
      c.role_arn = prof["role_arn"];
    }
    if (!c.role_arn.empty()) {
      const char* sn = Env("AWS_ROLE_SESSION_NAME");
      c.role_session_name = sn != nullptr ? sn : absl::StrCat("flinkstate-", ::getpid());
      if (const char* s = Env("AWS_ENDPOINT_URL_STS")) {
        c.sts_endpoint = s;
      } else if (const char* s2 = Env("AWS_ENDPOINT_URL")) {
        c.sts_endpoint = s2;
      } else {
        c.sts_endpoint = absl::StrCat("https://sts.", c.region, ".amazonaws.com");
      }
      while (absl::EndsWith(c.sts_endpoint, "/")) c.sts_endpoint.pop_back();
    }
  }
  for (const auto& [path, ini, section] :
       {std::make_tuple(cred_path, &creds, profile),
        std::make_tuple(config_path, &config,
                        profile == "default" ? profile : absl::StrCat("profile ", profile))}) {
    searched.push_back(absl::StrCat(path, " [", section, "]"));
    if (c.credentials || !c.role_arn.empty()) continue;
    auto& s = (*ini)[section];
    if (s.count("aws_access_key_id") && s.count("aws_secret_access_key")) {
      c.credentials = Credentials{s["aws_access_key_id"], s["aws_secret_access_key"],
                                  s.count("aws_session_token") ? s["aws_session_token"] : "",
                                  absl::StrCat(path, " [", section, "]")};
    }
  }
  c.credential_search = absl::StrJoin(searched, ", ");
  return c;
}

S3Client::S3Client(S3Config config) : config_(std::move(config)) {
  GlobalInit();
  curl_ = curl_easy_init();
}

S3Client::~S3Client() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

std::string S3Client::UrlFor(const ObjectUrl& u,
                             const std::vector<std::pair<std::string, std::string>>& q) {
  std::vector<std::pair<std::string, std::string>> sorted = q;
  std::sort(sorted.begin(), sorted.end());
  std::string query;
  for (const auto& [k, v] : sorted) {
    absl::StrAppend(&query, query.empty() ? "?" : "&", UriEncode(k, false), "=",
                    UriEncode(v, false));
  }
  const bool custom = !config_.endpoint.empty();
  const bool path_style =
      config_.addressing == S3Config::Addressing::kPath ||
      (config_.addressing == S3Config::Addressing::kAuto &&
       (custom || absl::StrContains(u.bucket, ".")));
  const std::string base =
      custom ? config_.endpoint : absl::StrCat("https://s3.", config_.region, ".amazonaws.com");
  if (path_style) {
    return absl::StrCat(base, "/", UriEncode(u.bucket, false), "/", UriEncode(u.key, true), query);
  }
  const size_t scheme_end = base.find("://") + 3;
  return absl::StrCat(base.substr(0, scheme_end), u.bucket, ".", base.substr(scheme_end), "/",
                      UriEncode(u.key, true), query);
}

absl::Status S3Client::ResolveCredentials() {
  if (credentials_resolved_) return absl::OkStatus();
  credentials_resolved_ = true;
  if (config_.credentials || config_.role_arn.empty()) return absl::OkStatus();
  std::ifstream in(config_.web_identity_token_file);
  if (!in) {
    return absl::PermissionDeniedError(
        absl::StrCat("objstore: cannot read the web identity token file ",
                     config_.web_identity_token_file, " (AWS_WEB_IDENTITY_TOKEN_FILE)"));
  }
  std::stringstream token;
  token << in.rdbuf();
  Request r;
  r.method = "POST";
  r.unsigned_request = true;
  r.full_url = config_.sts_endpoint + "/";
  const std::string form = absl::StrCat(
      "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=",
      UriEncode(config_.role_arn, false), "&RoleSessionName=",
      UriEncode(config_.role_session_name, false), "&WebIdentityToken=",
      UriEncode(absl::StripAsciiWhitespace(token.str()), false));
  r.body = serde::ByteView(reinterpret_cast<const uint8_t*>(form.data()), form.size());
  r.has_body = true;
  r.headers.push_back("Content-Type: application/x-www-form-urlencoded");
  r.url.bucket = "(sts)";
  absl::StatusOr<Response> resp = Send(r);
  if (!resp.ok()) return resp.status();
  if (resp->status != 200) {
    ObjectUrl sts{"", "", "sts"};
    absl::StatusOr<S3Error> e = ParseS3Error(resp->body);
    return absl::PermissionDeniedError(absl::StrCat(
        "objstore: STS AssumeRoleWithWebIdentity for ", config_.role_arn, " at ",
        config_.sts_endpoint, ": HTTP ", resp->status,
        e.ok() ? absl::StrCat(" ", e->code, ": ", e->message) : std::string()));
  }
  absl::StatusOr<StsCredentials> c = ParseAssumeRoleWithWebIdentityResponse(resp->body);
  if (!c.ok()) return c.status();
  config_.credentials =
      Credentials{c->access_key_id, c->secret_access_key, c->session_token,
                  absl::StrCat("STS AssumeRoleWithWebIdentity (", config_.role_arn, ")")};
  return absl::OkStatus();
}

absl::StatusOr<S3Client::Response> S3Client::SendOnce(const Request& r,
                                                      std::string* transport_error) {
  CURL* c = static_cast<CURL*>(curl_);
  if (c == nullptr) return absl::InternalError("objstore: curl_easy_init failed");
  curl_easy_reset(c);
  Response resp;
  const std::string url = r.full_url.empty() ? UrlFor(r.url, r.query) : r.full_url;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(config_.connect_timeout_ms));
  // A connected server that sends nothing (no answer, or a body that stops)
  // for `stall_seconds` ends the attempt.
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, static_cast<long>(config_.stall_seconds));
  absl::Span<uint8_t> into = r.into;
  std::pair<Response*, absl::Span<uint8_t>*> sink{&resp, r.want_into ? &into : nullptr};
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &resp);
  struct curl_slist* headers = nullptr;
  for (const std::string& h : r.headers) headers = curl_slist_append(headers, h.c_str());
  std::string sigv4, userpwd;
  if (!r.unsigned_request && config_.credentials) {
    // curl computes the SigV4 signature; the payload is declared unsigned
    // (allowed by S3 and keeps bodies streamable).
    headers = curl_slist_append(headers, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    if (!config_.credentials->session_token.empty()) {
      const std::string t =
          absl::StrCat("x-amz-security-token: ", config_.credentials->session_token);
      headers = curl_slist_append(headers, t.c_str());
    }
    sigv4 = absl::StrCat("aws:amz:", config_.region, ":s3");
    userpwd = absl::StrCat(config_.credentials->access_key_id, ":",
                           config_.credentials->secret_access_key);
    curl_easy_setopt(c, CURLOPT_AWS_SIGV4, sigv4.c_str());
    curl_easy_setopt(c, CURLOPT_USERPWD, userpwd.c_str());
  }
  UploadCursor cursor{r.body};
  if (r.method == "HEAD") {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (r.method == "PUT") {
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, OnRead);
    curl_easy_setopt(c, CURLOPT_READDATA, &cursor);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
    headers = curl_slist_append(headers, "Expect:");
  } else if (r.method == "POST") {
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, reinterpret_cast<const char*>(r.body.data()));
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
  } else if (r.method != "GET") {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r.method.c_str());
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  const CURLcode rc = curl_easy_perform(c);
  curl_slist_free_all(headers);
  ++stats_.requests;
  ++g_requests;
  if (r.has_body) {
    stats_.bytes_up += r.body.size();
    g_up += r.body.size();
  }
  curl_off_t down = 0;
  curl_easy_getinfo(c, CURLINFO_SIZE_DOWNLOAD_T, &down);
  stats_.bytes_down += static_cast<uint64_t>(down);
  g_down += static_cast<uint64_t>(down);
  if (rc != CURLE_OK) {
    if (rc == CURLE_WRITE_ERROR && r.want_into && resp.status / 100 == 2) {
      return absl::DataLossError(absl::StrCat("objstore: ", r.url.ToString(), ": ", r.method,
                                              ": the server sent more bytes than asked for"));
    }
    *transport_error = curl_easy_strerror(rc);
    if (rc == CURLE_OPERATION_TIMEDOUT) {
      curl_off_t connected_us = 0;
      curl_easy_getinfo(c, CURLINFO_CONNECT_TIME_T, &connected_us);
      *transport_error = connected_us > 0
          ? absl::StrCat("connected, but no byte for ", config_.stall_seconds,
                         " s (FLINKSTATE_S3_STALL_SECONDS)")
          : absl::StrCat("no connection within ", config_.connect_timeout_ms,
                         " ms (FLINKSTATE_S3_CONNECT_TIMEOUT_MS)");
    }
    return resp;
  }
  long code = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  resp.status = code;
  if (r.want_into && code / 100 == 2 && !into.empty()) {
    return absl::DataLossError(absl::StrCat(
        "objstore: ", r.url.ToString(), ": ", r.method, ": the server sent ",
        r.into.size() - into.size(), " of the ", r.into.size(), " bytes asked for"));
  }
  return resp;
}

absl::StatusOr<S3Client::Response> S3Client::Send(const Request& r) {
  if (!r.unsigned_request) {
    if (absl::Status s = ResolveCredentials(); !s.ok()) return s;
  }
  std::mt19937_64 rng(std::random_device{}());
  for (int attempt = 1;; ++attempt) {
    std::string transport_error;
    absl::StatusOr<Response> resp = SendOnce(r, &transport_error);
    if (!resp.ok()) return resp.status();
    std::string code;
    if (transport_error.empty() && resp->status / 100 != 2) {
      if (absl::StatusOr<S3Error> e = ParseS3Error(resp->body); e.ok()) code = e->code;
    }
    // CompleteMultipartUpload and copies may answer 200 with an Error body.
    if (transport_error.empty() && resp->status == 200 && r.method != "GET" &&
        absl::StrContains(resp->body, "<Error>")) {
      if (absl::StatusOr<S3Error> e = ParseS3Error(resp->body); e.ok()) {
        code = e->code;
        resp->status = Retryable(500, code) ? 500 : 400;
      }
    }
    const bool retry = !transport_error.empty() || Retryable(resp->status, code);
    if (!retry || attempt >= config_.max_attempts || r.single_attempt) {
      if (!transport_error.empty()) {
        return absl::UnavailableError(absl::StrCat(
            "objstore: ", r.full_url.empty() ? r.url.ToString() : r.full_url, ": ", r.method,
            ": ", transport_error, " (endpoint ",
            r.full_url.empty() ? UrlFor(r.url, {}) : r.full_url, ", after ", attempt,
            attempt == 1 ? " attempt" : " attempts",
            attempt > 1 ? absl::StrCat(" with exponential backoff from ", config_.retry_base_ms,
                                       " ms, at most ", config_.retry_max_ms, " ms")
                        : std::string(),
            "; AWS_MAX_ATTEMPTS=", config_.max_attempts, ")"));
      }
      resp->headers["x-flinkstate-attempts"] = absl::StrCat(attempt);
      return resp;
    }
    ++stats_.retries;
    ++g_retries;
    // Exponential backoff with full jitter (AWS's recommended policy).
    const int64_t cap = std::min<int64_t>(config_.retry_max_ms,
                                          int64_t{config_.retry_base_ms} << (attempt - 1));
    const int64_t wait = cap > 0 ? static_cast<int64_t>(rng() % static_cast<uint64_t>(cap + 1)) : 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(wait));
  }
}

absl::Status S3Client::ErrorFor(const ObjectUrl& u, absl::string_view method, const Response& r,
                                int attempts) {
  std::string detail;
  std::string code;
  if (absl::StatusOr<S3Error> e = ParseS3Error(r.body); e.ok()) {
    code = e->code;
    detail = absl::StrCat(" ", e->code, ": ", e->message);
    if (!e->request_id.empty()) absl::StrAppend(&detail, " (request id ", e->request_id, ")");
  } else if (method == "HEAD") {
    detail = r.status == 404 ? " (no such key or bucket; HEAD answers carry no error code)"
                             : " (HEAD answers carry no error code)";
  } else if (!r.body.empty()) {
    detail = absl::StrCat(" (a body that is not an S3 error: ",
                          absl::CEscape(r.body.substr(0, 200)),
                          r.body.size() > 200 ? absl::StrCat("... ", r.body.size(), " bytes") : "",
                          ")");
  }
  std::string msg = absl::StrCat("objstore: ", u.ToString(), ": ", method, ": HTTP ", r.status,
                                 detail);
  if (attempts > 1) absl::StrAppend(&msg, " (after ", attempts, " attempts)");
  switch (r.status) {
    case 404:
      return absl::NotFoundError(msg);
    case 401:
    case 403:
      absl::StrAppend(&msg, "; credentials: ",
                      config_.credentials ? config_.credentials->source
                                          : absl::StrCat("none found (searched ",
                                                         config_.credential_search, ")"));
      return absl::PermissionDeniedError(msg);
    case 412:
      return absl::FailedPreconditionError(msg);
    case 409:
      // A conditional write that raced another write of the key.
      if (code == "ConditionalRequestConflict") return absl::FailedPreconditionError(msg);
      break;
    default:
      break;
  }
  if (r.status >= 500 || Retryable(r.status, code)) return absl::UnavailableError(msg);
  return absl::InvalidArgumentError(msg);
}

namespace {
int Attempts(const S3Client::Response& r) {
  auto it = r.headers.find("x-flinkstate-attempts");
  int n = 1;
  if (it != r.headers.end()) (void)absl::SimpleAtoi(it->second, &n);
  return n;
}
}  // namespace

absl::StatusOr<ObjectInfo> S3Client::Head(const ObjectUrl& url) {
  Request r;
  r.method = "HEAD";
  r.url = url;
  absl::StatusOr<Response> resp = Send(r);
  if (!resp.ok()) return resp.status();
  if (resp->status != 200) {
    // A HEAD answer has no body: ask again with a one-byte GET for the S3
    // error code (NoSuchKey or NoSuchBucket, InvalidAccessKeyId, ...).
    if (resp->status >= 400) {
      Request g;
      g.url = url;
      g.single_attempt = true;  // the HEAD was retried already
      g.headers.push_back("Range: bytes=0-0");
      absl::StatusOr<Response> again = Send(g);
      if (again.ok() && again->status == resp->status && ParseS3Error(again->body).ok()) {
        return ErrorFor(url, "HEAD", *again, Attempts(*resp));
      }
    }
    return ErrorFor(url, "HEAD", *resp, Attempts(*resp));
  }
  ObjectInfo info;
  if (!absl::SimpleAtoi(resp->headers["content-length"], &info.size)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "objstore: ", url.ToString(), ": HEAD: no Content-Length in the answer"));
  }
  info.etag = resp->headers["etag"];
  info.last_modified = resp->headers["last-modified"];
  info.txn_tag = resp->headers["x-amz-meta-flinkstate-txn"];
  return info;
}

absl::Status S3Client::GetRange(const ObjectUrl& url, uint64_t offset, absl::Span<uint8_t> out,
                                const std::string& etag) {
  if (out.empty()) return absl::OkStatus();
  Request r;
  r.url = url;
  r.headers.push_back(absl::StrCat("Range: bytes=", offset, "-", offset + out.size() - 1));
  if (!etag.empty()) r.headers.push_back(absl::StrCat("If-Match: ", etag));
  r.into = out;
  r.want_into = true;
  absl::StatusOr<Response> resp = Send(r);
  if (!resp.ok()) return resp.status();
  if (resp->status == 412) {
    return absl::FailedPreconditionError(absl::StrCat(
        "objstore: ", url.ToString(), ": GET: HTTP 412: the object changed since it was opened "
        "(ETag ", etag, " no longer matches); read it again"));
  }
  if (resp->status != 206 && !(resp->status == 200 && offset == 0)) {
    if (resp->status / 100 == 2) {
      return absl::InvalidArgumentError(absl::StrCat("objstore: ", url.ToString(),
                                                     ": GET: HTTP ", resp->status,
                                                     " to a Range request"));
    }
    return ErrorFor(url, absl::StrCat("GET bytes ", offset, "+", out.size()), *resp,
                    Attempts(*resp));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> S3Client::GetSmall(const ObjectUrl& url, uint64_t max_bytes) {
  absl::StatusOr<ObjectInfo> info = Head(url);
  if (!info.ok()) return info.status();
  if (info->size > max_bytes) {
    return absl::OutOfRangeError(absl::StrCat("objstore: ", url.ToString(), " has ", info->size,
                                              " bytes, more than the ", max_bytes, " expected"));
  }
  std::string out(info->size, '\0');
  absl::Status s = GetRange(
      url, 0, absl::Span<uint8_t>(reinterpret_cast<uint8_t*>(out.data()), out.size()),
      info->etag);
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<std::string> S3Client::Put(const ObjectUrl& url, serde::ByteView data,
                                          const WriteConditions& when) {
  if (data.size() > config_.multipart_threshold) return PutMultipart(url, data, when);
  Request r;
  r.method = "PUT";
  r.url = url;
  r.body = data;
  r.has_body = true;
  if (!when.if_match.empty()) r.headers.push_back(absl::StrCat("If-Match: ", when.if_match));
  if (when.if_none_match) r.headers.push_back("If-None-Match: *");
  if (!when.txn_tag.empty()) {
    r.headers.push_back(absl::StrCat("x-amz-meta-flinkstate-txn: ", when.txn_tag));
  }
  absl::StatusOr<Response> resp = Send(r);
  if (!resp.ok()) return resp.status();
  if (resp->status != 200) return ErrorFor(url, "PUT", *resp, Attempts(*resp));
  return resp->headers["etag"];
}

absl::StatusOr<std::string> S3Client::CreateMultipartUpload(const ObjectUrl& url,
                                                            const WriteConditions& when) {
  Request init;
  init.method = "POST";
  init.url = url;
  init.query = {{"uploads", ""}};
  init.has_body = true;
  // (curl would send a POST as a form; the type is the object's.)
  init.headers.push_back("Content-Type: application/octet-stream");
  if (!when.txn_tag.empty()) {
    init.headers.push_back(absl::StrCat("x-amz-meta-flinkstate-txn: ", when.txn_tag));
  }
  absl::StatusOr<Response> resp = Send(init);
  if (!resp.ok()) return resp.status();
  if (resp->status != 200) {
    return ErrorFor(url, "POST (CreateMultipartUpload)", *resp, Attempts(*resp));
  }
  return XmlText(resp->body, "InitiateMultipartUploadResult/UploadId");
}

void S3Client::AbortMultipartUpload(const ObjectUrl& url, const std::string& upload_id) {
  Request a;
  a.method = "DELETE";
  a.url = url;
  a.query = {{"uploadId", upload_id}};
  (void)Send(a);  // best effort; a bucket lifecycle rule reaps the rest
}

absl::StatusOr<std::string> S3Client::UploadPart(const ObjectUrl& url,
                                                 const std::string& upload_id, int number,
                                                 serde::ByteView data) {
  Request p;
  p.method = "PUT";
  p.url = url;
  p.query = {{"partNumber", absl::StrCat(number)}, {"uploadId", upload_id}};
  p.body = data;
  p.has_body = true;
  absl::StatusOr<Response> pr = Send(p);
  if (!pr.ok()) return pr.status();
  if (pr->status != 200) return ErrorFor(url, absl::StrCat("PUT part ", number), *pr, Attempts(*pr));
  return pr->headers["etag"];
}

absl::StatusOr<std::string> S3Client::UploadPartCopy(const ObjectUrl& url,
                                                     const std::string& upload_id, int number,
                                                     const ObjectUrl& source, uint64_t offset,
                                                     uint64_t size,
                                                     const std::string& source_etag) {
  const std::string range = absl::StrCat("bytes=", offset, "-", offset + size - 1);
  Request p;
  p.method = "PUT";
  p.url = url;
  p.query = {{"partNumber", absl::StrCat(number)}, {"uploadId", upload_id}};
  p.has_body = true;  // empty
  p.headers.push_back(absl::StrCat("x-amz-copy-source: /", UriEncode(source.bucket, false), "/",
                                   UriEncode(source.key, true)));
  p.headers.push_back(absl::StrCat("x-amz-copy-source-range: ", range));
  if (!source_etag.empty()) {
    p.headers.push_back(absl::StrCat("x-amz-copy-source-if-match: ", source_etag));
  }
  absl::StatusOr<Response> pr = Send(p);
  if (!pr.ok()) return pr.status();
  const std::string what =
      absl::StrCat("PUT part ", number, " (UploadPartCopy from ", source.ToString(), " ", range, ")");
  if (pr->status != 200) {
    absl::Status e = ErrorFor(url, what, *pr, Attempts(*pr));
    std::string code;
    if (absl::StatusOr<S3Error> se = ParseS3Error(pr->body); se.ok()) code = se->code;
    if (pr->status == 501 || code == "NotImplemented" || code == "InvalidRequest") {
      return absl::UnimplementedError(absl::StrCat(
          e.message(), "; the server does not do server-side part copies (uploading in full)"));
    }
    if (absl::IsFailedPrecondition(e)) {
      return absl::FailedPreconditionError(
          absl::StrCat(e.message(), "; ", source.ToString(),
                       " was changed by someone else since it was read (ETag ", source_etag, ")"));
    }
    return e;
  }
  absl::StatusOr<std::string> etag = XmlText(pr->body, "CopyPartResult/ETag");
  if (!etag.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("objstore: ", url.ToString(), ": ", what,
                                                   ": no CopyPartResult/ETag in the answer (",
                                                   etag.status().message(), ")"));
  }
  stats_.bytes_part_copied += size;
  g_part_copied += size;
  return *etag;
}

absl::StatusOr<std::string> S3Client::CompleteMultipartUpload(
    const ObjectUrl& url, const std::string& upload_id,
    const std::vector<std::string>& part_etags, const WriteConditions& when) {
  std::string complete = "<CompleteMultipartUpload>";
  for (size_t i = 0; i < part_etags.size(); ++i) {
    absl::StrAppend(&complete, "<Part><PartNumber>", i + 1, "</PartNumber><ETag>", part_etags[i],
                    "</ETag></Part>");
  }
  complete += "</CompleteMultipartUpload>";
  Request done;
  done.method = "POST";
  done.url = url;
  done.query = {{"uploadId", upload_id}};
  done.body = serde::ByteView(reinterpret_cast<const uint8_t*>(complete.data()), complete.size());
  done.has_body = true;
  done.headers.push_back("Content-Type: application/xml");
  if (!when.if_match.empty()) done.headers.push_back(absl::StrCat("If-Match: ", when.if_match));
  if (when.if_none_match) done.headers.push_back("If-None-Match: *");
  absl::StatusOr<Response> dr = Send(done);
  if (!dr.ok()) return dr.status();
  if (dr->status != 200) {
    absl::Status s = ErrorFor(url, "POST (CompleteMultipartUpload)", *dr, Attempts(*dr));
    AbortMultipartUpload(url, upload_id);
    return s;
  }
  // S3 answers a CompleteMultipartUploadResult; some compatible servers name
  // the root otherwise: any ETag element, else the object's HEAD.
  absl::StatusOr<std::string> etag = XmlText(dr->body, "ETag");
  if (etag.ok()) return *etag;
  absl::StatusOr<ObjectInfo> info = Head(url);
  if (!info.ok()) return info.status();
  return info->etag;
}

absl::StatusOr<std::string> S3Client::PutMultipart(const ObjectUrl& url, serde::ByteView data,
                                                   const WriteConditions& when) {
  absl::StatusOr<std::string> upload_id = CreateMultipartUpload(url, when);
  if (!upload_id.ok()) return upload_id.status();
  std::vector<std::string> etags;
  const uint64_t part = std::max<uint64_t>(config_.part_size, uint64_t{5} << 20);
  for (uint64_t off = 0; off < data.size(); off += part) {
    absl::StatusOr<std::string> e =
        UploadPart(url, *upload_id, static_cast<int>(etags.size()) + 1,
                   data.subspan(off, std::min<uint64_t>(part, data.size() - off)));
    if (!e.ok()) {
      AbortMultipartUpload(url, *upload_id);
      return e.status();
    }
    etags.push_back(*std::move(e));
  }
  return CompleteMultipartUpload(url, *upload_id, etags, when);
}

std::optional<ObjectClient::PartCopyConfig> S3Client::part_copy() const {
  if (!config_.part_copy || g_part_copy_refused.load()) return std::nullopt;
  PartCopyConfig c;
  c.threshold = config_.multipart_threshold;
  c.limits.upload_part_size =
      std::max<uint64_t>(config_.part_size, c.limits.min_part);
  c.limits.upload_part_size = std::min<uint64_t>(c.limits.upload_part_size, c.limits.max_part / 2);
  return c;
}

absl::StatusOr<std::string> ObjectClient::PutComposed(const ObjectUrl& url, serde::ByteView,
                                                      const ObjectUrl&, const std::string&,
                                                      absl::Span<const MultipartPart>,
                                                      const WriteConditions&) {
  return absl::UnimplementedError(
      absl::StrCat("objstore: ", url.ToString(), ": this client makes no server-side part copies"));
}

absl::StatusOr<std::string> S3Client::PutComposed(const ObjectUrl& url, serde::ByteView data,
                                                  const ObjectUrl& source,
                                                  const std::string& source_etag,
                                                  absl::Span<const MultipartPart> parts,
                                                  const WriteConditions& when) {
  if (g_part_copy_refused.load()) {
    return absl::UnimplementedError(absl::StrCat(
        "objstore: ", url.ToString(), ": the server refused server-side part copies before"));
  }
  uint64_t end = 0;
  for (const MultipartPart& p : parts) {
    if (p.output_offset != end || p.size == 0) break;
    end += p.size;
  }
  if (parts.empty() || end != data.size()) {
    return absl::InternalError(absl::StrCat("objstore: ", url.ToString(),
                                            ": PutComposed: the parts do not tile the ",
                                            data.size(), " bytes"));
  }
  absl::StatusOr<std::string> upload_id = CreateMultipartUpload(url, when);
  if (!upload_id.ok()) return upload_id.status();
  std::vector<std::string> etags;
  etags.reserve(parts.size());
  for (const MultipartPart& p : parts) {
    const int number = static_cast<int>(etags.size()) + 1;
    absl::StatusOr<std::string> e =
        p.kind == MultipartPart::Kind::kCopy
            ? UploadPartCopy(url, *upload_id, number, source, p.source_offset, p.size,
                             source_etag)
            : UploadPart(url, *upload_id, number, data.subspan(p.output_offset, p.size));
    if (!e.ok()) {
      AbortMultipartUpload(url, *upload_id);
      if (absl::IsUnimplemented(e.status())) g_part_copy_refused = true;
      return e.status();
    }
    etags.push_back(*std::move(e));
  }
  return CompleteMultipartUpload(url, *upload_id, etags, when);
}

absl::StatusOr<std::string> S3Client::Copy(const ObjectUrl& from, const ObjectUrl& to,
                                           const WriteConditions& when) {
  Request r;
  r.method = "PUT";
  r.url = to;
  r.has_body = true;
  r.headers.push_back(absl::StrCat("x-amz-copy-source: /", UriEncode(from.bucket, false), "/",
                                   UriEncode(from.key, true)));
  if (!when.source_if_match.empty()) {
    r.headers.push_back(absl::StrCat("x-amz-copy-source-if-match: ", when.source_if_match));
  }
  if (!when.if_match.empty()) r.headers.push_back(absl::StrCat("If-Match: ", when.if_match));
  if (when.if_none_match) r.headers.push_back("If-None-Match: *");
  if (!when.txn_tag.empty()) {
    // The copy gets this tag instead of the source's metadata.
    r.headers.push_back("x-amz-metadata-directive: REPLACE");
    r.headers.push_back(absl::StrCat("x-amz-meta-flinkstate-txn: ", when.txn_tag));
  }
  absl::StatusOr<Response> resp = Send(r);
  if (!resp.ok()) return resp.status();
  if (resp->status != 200) {
    return ErrorFor(to, absl::StrCat("PUT (CopyObject from ", from.ToString(), ")"), *resp,
                    Attempts(*resp));
  }
  absl::StatusOr<std::string> etag = XmlText(resp->body, "CopyObjectResult/ETag");
  if (!etag.ok()) return etag.status();
  return *etag;
}

absl::Status S3Client::Delete(const ObjectUrl& url) {
  Request r;
  r.method = "DELETE";
  r.url = url;
  absl::StatusOr<Response> resp = Send(r);
  if (!resp.ok()) return resp.status();
  if (resp->status != 204 && resp->status != 200) {
    return ErrorFor(url, "DELETE", *resp, Attempts(*resp));
  }
  return absl::OkStatus();
}

absl::StatusOr<S3Client::Listing> S3Client::List(const ObjectUrl& prefix,
                                                 absl::string_view delimiter) {
  Listing out;
  std::string token;
  for (int page = 0;; ++page) {
    Request r;
    r.url = ObjectUrl{prefix.bucket, "", prefix.scheme};
    r.query = {{"list-type", "2"}, {"prefix", prefix.key}};
    if (!delimiter.empty()) r.query.emplace_back("delimiter", std::string(delimiter));
    if (!token.empty()) r.query.emplace_back("continuation-token", token);
    absl::StatusOr<Response> resp = Send(r);
    if (!resp.ok()) return resp.status();
    if (resp->status != 200) return ErrorFor(prefix, "GET (ListObjectsV2)", *resp, Attempts(*resp));
    absl::StatusOr<ListResult> l = ParseListBucketResult(resp->body);
    if (!l.ok()) {
      return serde::WithMessage(l.status(), absl::StrCat("objstore: ", prefix.ToString(),
                                                          ": listing: ", l.status().message()));
    }
    for (ListedObject& o : l->objects) out.objects.emplace_back(std::move(o.key), o.size);
    for (std::string& p : l->common_prefixes) out.common_prefixes.push_back(std::move(p));
    if (!l->is_truncated) break;
    if (l->next_continuation_token == token) {
      return absl::InvalidArgumentError(absl::StrCat(
          "objstore: ", prefix.ToString(), ": listing: the same continuation token twice"));
    }
    token = l->next_continuation_token;
  }
  return out;
}

}  // namespace flinkstate::objstore
