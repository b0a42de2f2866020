// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: fault_object_client.h
// -----------------------------------------------------------------------------
// An in-memory object store with S3's conditional-request semantics, and an
// objstore::ObjectClient over it that fails one call or "crashes" there, to
// check the object-store write protocols (object_transaction.h) after every
// request without a server and without timing.
//
//   ```c++
//   flinkstate::testing::MemoryObjectStore store;
//   flinkstate::testing::FaultObjectClient client(&store, /*fail_at=*/3,
//       flinkstate::testing::FaultObjectClient::kCrashBefore);
//   ```
//
// The store: ETags are a hash of the content (as S3's for single-part
// objects, so a copy has its source's ETag); `If-None-Match: *` refuses an
// existing key, `If-Match` and `x-amz-copy-source-if-match` a different
// ETag (412, `FailedPrecondition`; `If-Match` on a missing key: 404,
// `NotFound`); a copy keeps its source's `x-amz-meta-flinkstate-txn` unless it
// is given one; DELETE of a missing key succeeds, as on S3.
// `honour_if_match = false` models servers that ignore `If-Match` on
// PUT/copy, `honour_if_none_match_on_copy = false` those that ignore
// `If-None-Match` on a copy (moto 5; the protocols probe for both).
// `FaultObjectClient::before` runs before every call (e.g. another writer
// changing the store at a chosen request).

#ifndef FLINKSTATE_TESTS_TESTING_FAULT_OBJECT_CLIENT_H_
#define FLINKSTATE_TESTS_TESTING_FAULT_OBJECT_CLIENT_H_

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "flinkstate/objstore/s3_client.h"

namespace flinkstate::testing {

struct StoredObject {
  std::string data;
  std::string etag;
  std::string txn_tag;
};

class MemoryObjectStore {
 public:
  // Keyed "bucket/key".
  std::map<std::string, StoredObject> objects;
  bool honour_if_match = true;
  bool honour_if_none_match_on_copy = true;
  // Every PUT that took effect: name and body, in order.
  std::vector<std::pair<std::string, std::string>> puts;

  static std::string Name(const objstore::ObjectUrl& u) { return u.bucket + "/" + u.key; }
  static std::string EtagOf(const std::string& data) {
    // FNV-1a 64: distinct contents get distinct ETags in these tests.
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : data) h = (h ^ c) * 1099511628211ull;
    char buf[24];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return absl::StrCat("\"", buf, "\"");
  }
  void Set(const std::string& name, std::string data, std::string tag = "") {
    StoredObject o;
    o.etag = EtagOf(data);
    o.data = std::move(data);
    o.txn_tag = std::move(tag);
    objects[name] = std::move(o);
  }
};

class FaultObjectClient : public objstore::ObjectClient {
 public:
  // kCrashBefore: call `fail_at` and every later one fail without effect (the
  // process died before sending it). kCrashAfter: call `fail_at` takes effect,
  // then it and every later one fail (died before the answer arrived).
  // kError: only call `fail_at` fails, without effect. kLostAnswer: only
  // call `fail_at` fails, after taking effect (the answer was lost).
  enum Mode { kCrashBefore, kCrashAfter, kError, kLostAnswer };

  // `fail_at` is 1-based; 0 never fails (to count the calls of a clean run).
  FaultObjectClient(MemoryObjectStore* store, int fail_at, Mode mode)
      : store_(store), fail_at_(fail_at), mode_(mode) {}

  // Called with "METHOD bucket/key" before each call is made (and before a
  // failure is injected at it).
  std::function<void(const std::string& what)> before;

  int calls() const { return n_; }
  // "PUT bucket/key" of the call that failed, "" if none did.
  const std::string& failed_call() const { return failed_; }
  bool crashed() const { return dead_; }

  absl::StatusOr<objstore::ObjectInfo> Head(const objstore::ObjectUrl& u) override {
    return Call<objstore::ObjectInfo>("HEAD", u, [&]() -> absl::StatusOr<objstore::ObjectInfo> {
      const StoredObject* o = Find(u);
      if (o == nullptr) return Missing(u);
      objstore::ObjectInfo info;
      info.size = o->data.size();
      info.etag = o->etag;
      info.txn_tag = o->txn_tag;
      return info;
    });
  }
  absl::Status GetRange(const objstore::ObjectUrl& u, uint64_t offset, absl::Span<uint8_t> out,
                        const std::string& etag) override {
    return Call<bool>("GET", u,
                      [&]() -> absl::StatusOr<bool> {
                        const StoredObject* o = Find(u);
                        if (o == nullptr) return Missing(u);
                        if (!etag.empty() && etag != o->etag) return Precondition(u);
                        if (offset > o->data.size() || out.size() > o->data.size() - offset) {
                          return absl::OutOfRangeError(absl::StrCat("fake: ", Name(u), ": range"));
                        }
                        if (!out.empty()) std::memcpy(out.data(), o->data.data() + offset, out.size());
                        return true;
                      })
        .status();
  }
  absl::StatusOr<std::string> GetSmall(const objstore::ObjectUrl& u, uint64_t max) override {
    return Call<std::string>("GET", u, [&]() -> absl::StatusOr<std::string> {
      const StoredObject* o = Find(u);
      if (o == nullptr) return Missing(u);
      if (o->data.size() > max) return absl::OutOfRangeError("fake: too large");
      return o->data;
    });
  }
  absl::StatusOr<std::string> Put(const objstore::ObjectUrl& u, serde::ByteView data,
                                  const objstore::WriteConditions& when) override {
    return Call<std::string>("PUT", u, [&]() -> absl::StatusOr<std::string> {
      if (absl::Status s = Check(u, when); !s.ok()) return s;
      std::string body(reinterpret_cast<const char*>(data.data()), data.size());
      store_->puts.emplace_back(Name(u), body);
      store_->Set(Name(u), std::move(body), when.txn_tag);
      return store_->objects[Name(u)].etag;
    });
  }
  absl::StatusOr<std::string> Copy(const objstore::ObjectUrl& from, const objstore::ObjectUrl& to,
                                   const objstore::WriteConditions& when) override {
    return Call<std::string>("COPY", to, [&]() -> absl::StatusOr<std::string> {
      const StoredObject* src = Find(from);
      if (src == nullptr) return Missing(from);
      if (!when.source_if_match.empty() && when.source_if_match != src->etag) {
        return Precondition(from);
      }
      objstore::WriteConditions dest = when;
      if (!store_->honour_if_none_match_on_copy) dest.if_none_match = false;
      if (absl::Status s = Check(to, dest); !s.ok()) return s;
      StoredObject copy = *src;
      if (!when.txn_tag.empty()) copy.txn_tag = when.txn_tag;
      store_->objects[Name(to)] = copy;
      return copy.etag;
    });
  }
  absl::Status Delete(const objstore::ObjectUrl& u) override {
    return Call<bool>("DELETE", u,
                      [&]() -> absl::StatusOr<bool> {
                        store_->objects.erase(Name(u));
                        return true;
                      })
        .status();
  }
  absl::StatusOr<Listing> List(const objstore::ObjectUrl& prefix,
                               absl::string_view delimiter) override {
    return Call<Listing>("LIST", prefix, [&]() -> absl::StatusOr<Listing> {
      Listing l;
      for (const auto& [name, o] : store_->objects) {
        if (!absl::StartsWith(name, prefix.bucket + "/")) continue;
        const std::string key = name.substr(prefix.bucket.size() + 1);
        if (!absl::StartsWith(key, prefix.key)) continue;
        const size_t d = delimiter.empty() ? std::string::npos
                                           : key.find(std::string(delimiter), prefix.key.size());
        if (d != std::string::npos) {
          const std::string cp = key.substr(0, d + delimiter.size());
          if (l.common_prefixes.empty() || l.common_prefixes.back() != cp) {
            l.common_prefixes.push_back(cp);
          }
          continue;
        }
        l.objects.emplace_back(key, o.data.size());
      }
      return l;
    });
  }

 private:
  static std::string Name(const objstore::ObjectUrl& u) { return MemoryObjectStore::Name(u); }
  const StoredObject* Find(const objstore::ObjectUrl& u) const {
    auto it = store_->objects.find(Name(u));
    return it == store_->objects.end() ? nullptr : &it->second;
  }
  static absl::Status Missing(const objstore::ObjectUrl& u) {
    return absl::NotFoundError(absl::StrCat("fake: ", u.ToString(), ": HTTP 404 NoSuchKey"));
  }
  static absl::Status Precondition(const objstore::ObjectUrl& u) {
    return absl::FailedPreconditionError(
        absl::StrCat("fake: ", u.ToString(), ": HTTP 412 PreconditionFailed"));
  }
  // The destination's conditions of a PUT or copy.
  absl::Status Check(const objstore::ObjectUrl& u, const objstore::WriteConditions& when) const {
    const StoredObject* o = Find(u);
    if (when.if_none_match && o != nullptr) return Precondition(u);
    if (!when.if_match.empty() && store_->honour_if_match) {
      if (o == nullptr) return Missing(u);
      if (o->etag != when.if_match) return Precondition(u);
    }
    return absl::OkStatus();
  }

  template <typename T, typename F>
  absl::StatusOr<T> Call(const char* method, const objstore::ObjectUrl& u, F apply) {
    ++n_;
    const std::string what = absl::StrCat(method, " ", Name(u));
    if (before) before(what);
    const absl::Status injected = absl::UnavailableError(absl::StrCat("injected failure: ", what));
    if (dead_) return injected;
    if (n_ != fail_at_) return apply();
    failed_ = what;
    switch (mode_) {
      case kCrashBefore:
        dead_ = true;
        return injected;
      case kCrashAfter:
        apply().status().IgnoreError();  // its effect, whatever it was
        dead_ = true;
        return injected;
      case kError:
        return injected;
      case kLostAnswer:
        apply().status().IgnoreError();
        return injected;
    }
    return injected;
  }

  MemoryObjectStore* store_;
  int fail_at_;
  Mode mode_;
  int n_ = 0;
  bool dead_ = false;
  std::string failed_;
};

}  // namespace flinkstate::testing

#endif  // FLINKSTATE_TESTS_TESTING_FAULT_OBJECT_CLIENT_H_
