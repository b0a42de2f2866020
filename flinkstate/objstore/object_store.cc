// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/objstore/object_store.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "flinkstate/serde/sparse_mapping.h"

namespace flinkstate::objstore {
namespace {

std::mutex g_mu;
std::string* g_endpoint = new std::string();

absl::StatusOr<serde::MappedFile> Opener(absl::string_view url) { return OpenObject(url); }

// The process's small block cache: ranges fetched lately, by object version,
// so that a command that opens the same object twice (sniff, then decode)
// downloads it once. FIFO-evicted beyond kCacheBytes.
constexpr uint64_t kCacheBytes = uint64_t{32} << 20;
struct CachedRange {
  std::string object;  // url + " " + etag
  uint64_t offset;
  std::string bytes;
};
std::mutex g_cache_mu;
std::deque<CachedRange>* g_cache = new std::deque<CachedRange>();
uint64_t g_cache_bytes = 0;

bool FromCache(const std::string& object, uint64_t offset, absl::Span<uint8_t> out) {
  std::lock_guard<std::mutex> lock(g_cache_mu);
  for (const CachedRange& r : *g_cache) {
    if (r.object == object && r.offset <= offset &&
        offset + out.size() <= r.offset + r.bytes.size()) {
      std::memcpy(out.data(), r.bytes.data() + (offset - r.offset), out.size());
      return true;
    }
  }
  return false;
}

void ToCache(const std::string& object, uint64_t offset, absl::Span<const uint8_t> bytes) {
  if (bytes.size() > kCacheBytes / 4) return;
  std::lock_guard<std::mutex> lock(g_cache_mu);
  g_cache->push_back(
      CachedRange{object, offset, std::string(reinterpret_cast<const char*>(bytes.data()),
                                              bytes.size())});
  g_cache_bytes += bytes.size();
  while (g_cache_bytes > kCacheBytes) {
    g_cache_bytes -= g_cache->front().bytes.size();
    g_cache->pop_front();
  }
}

}  // namespace

void InstallObjectStore() { serde::MappedFile::SetUrlOpener(&Opener); }

void SetS3Endpoint(std::string endpoint) {
  std::lock_guard<std::mutex> lock(g_mu);
  *g_endpoint = std::move(endpoint);
}

absl::StatusOr<S3Config> CurrentS3Config() {
  std::string endpoint;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    endpoint = *g_endpoint;
  }
  return S3Config::FromEnvironment(endpoint);
}

S3Source::S3Source(std::unique_ptr<S3Client> client, ObjectUrl url, ObjectInfo info)
    : client_(std::move(client)), url_(std::move(url)), info_(std::move(info)),
      name_(url_.ToString()) {}

absl::Status S3Source::ReadAt(uint64_t offset, absl::Span<uint8_t> out) {
  const std::string object = absl::StrCat(name_, " ", info_.etag);
  if (!info_.etag.empty() && FromCache(object, offset, out)) return absl::OkStatus();
  if (absl::Status s = client_->GetRange(url_, offset, out, info_.etag); !s.ok()) return s;
  if (!info_.etag.empty()) ToCache(object, offset, out);
  return absl::OkStatus();
}

namespace {

// The object `url` names (a prefix: its _metadata), with its HEAD.
absl::StatusOr<std::pair<ObjectUrl, ObjectInfo>> Resolve(S3Client& client, ObjectUrl target) {
  absl::StatusOr<ObjectInfo> info = absl::NotFoundError("");
  const bool dir_like = target.key.empty() || absl::EndsWith(target.key, "/");
  const bool is_metadata =
      target.key == "_metadata" || absl::EndsWith(target.key, "/_metadata");
  if (!dir_like) info = client.Head(target);
  if (dir_like || (absl::IsNotFound(info.status()) && !is_metadata)) {
    ObjectUrl meta = target;
    if (!meta.key.empty() && !absl::EndsWith(meta.key, "/")) meta.key += '/';
    meta.key += "_metadata";
    absl::StatusOr<ObjectInfo> m = client.Head(meta);
    if (m.ok()) {
      target = meta;
      info = std::move(m);
    } else if (absl::IsNotFound(m.status())) {
      if (dir_like) return m.status();
      return absl::NotFoundError(absl::StrCat(info.status().message(), "; nor is there a ",
                                              meta.ToString()));
    } else {
      return m.status();
    }
  }
  if (!info.ok()) return info.status();
  return std::make_pair(std::move(target), *std::move(info));
}

}  // namespace

absl::StatusOr<std::string> ResolveObjectUrl(absl::string_view url) {
  absl::StatusOr<ObjectUrl> u = ParseObjectUrl(url);
  if (!u.ok()) return u.status();
  absl::StatusOr<S3Config> config = CurrentS3Config();
  if (!config.ok()) return config.status();
  S3Client client(*std::move(config));
  absl::StatusOr<std::pair<ObjectUrl, ObjectInfo>> r = Resolve(client, *u);
  if (!r.ok()) return r.status();
  return r->first.ToString();
}

absl::StatusOr<serde::MappedFile> OpenObject(absl::string_view url) {
  absl::StatusOr<ObjectUrl> u = ParseObjectUrl(url);
  if (!u.ok()) return u.status();
  absl::StatusOr<S3Config> config = CurrentS3Config();
  if (!config.ok()) return config.status();
  auto client = std::make_unique<S3Client>(*std::move(config));
  absl::StatusOr<std::pair<ObjectUrl, ObjectInfo>> r = Resolve(*client, *u);
  if (!r.ok()) return r.status();
  const std::string resolved = r->first.ToString();
  auto source = std::make_unique<S3Source>(std::move(client), r->first, r->second);
  absl::StatusOr<std::unique_ptr<serde::SparseMapping>> m =
      serde::SparseMapping::Create(std::move(source));
  if (!m.ok()) return m.status();
  return serde::MappedFile::FromSparse(*std::move(m), resolved);
}

absl::StatusOr<uint64_t> ObjectSize(absl::string_view url) {
  absl::StatusOr<ObjectUrl> u = ParseObjectUrl(url);
  if (!u.ok()) return u.status();
  absl::StatusOr<S3Config> config = CurrentS3Config();
  if (!config.ok()) return config.status();
  S3Client client(*std::move(config));
  absl::StatusOr<ObjectInfo> info = client.Head(*u);
  if (!info.ok()) return info.status();
  return info->size;
}

absl::StatusOr<DirectoryListing> ListDirectory(absl::string_view url) {
  absl::StatusOr<ObjectUrl> u = ParseObjectUrl(url);
  if (!u.ok()) return u.status();
  if (!u->key.empty() && !absl::EndsWith(u->key, "/")) u->key += '/';
  absl::StatusOr<S3Config> config = CurrentS3Config();
  if (!config.ok()) return config.status();
  S3Client client(*std::move(config));
  absl::StatusOr<S3Client::Listing> l = client.List(*u, "/");
  if (!l.ok()) return l.status();
  DirectoryListing out;
  for (const auto& [key, size] : l->objects) {
    ObjectUrl o{u->bucket, key, u->scheme};
    out.files.emplace_back(o.ToString(), size);
  }
  for (const std::string& p : l->common_prefixes) {
    out.dirs.push_back(ObjectUrl{u->bucket, p, u->scheme}.ToString());
  }
  std::sort(out.files.begin(), out.files.end());
  std::sort(out.dirs.begin(), out.dirs.end());
  return out;
}

}  // namespace flinkstate::objstore
