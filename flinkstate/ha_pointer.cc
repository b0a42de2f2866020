// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/ha_pointer.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "flinkstate/javaobj/stream_constants.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate {

bool LooksLikeBase64JavaStream(serde::ByteView text) {
  size_t i = 0;
  while (i < text.size() && absl::ascii_isspace(text[i])) ++i;
  static constexpr char kPrefix[] = "rO0AB";
  if (text.size() - i < sizeof(kPrefix) - 1) return false;
  for (size_t k = 0; k + 1 < sizeof(kPrefix); ++k) {
    if (text[i + k] != static_cast<uint8_t>(kPrefix[k])) return false;
  }
  return true;
}

absl::StatusOr<std::string> DecodeBase64JavaStream(serde::ByteView text) {
  size_t begin = 0, end = text.size();
  while (begin < end && absl::ascii_isspace(text[begin])) ++begin;
  while (end > begin && absl::ascii_isspace(text[end - 1])) --end;
  const size_t n = end - begin;
  if (n == 0 || n % 4 != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "base64: ", n, " characters, not a positive multiple of 4 (padded "
        "java.util.Base64 text expected)"));
  }
  // absl::Base64Unescape also takes unpadded text and whitespace inside it;
  // java.util.Base64's basic decoder does not, and neither do we: the
  // characters are checked first (which also names the offending byte).
  const absl::string_view body(reinterpret_cast<const char*>(text.data()) + begin, n);
  static constexpr absl::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";
  if (const size_t bad = body.find_first_not_of(kAlphabet); bad != absl::string_view::npos) {
    return serde::DecodeError(
        absl::StatusCode::kInvalidArgument, "base64", "",
        absl::StrCat("invalid character 0x",
                     absl::Hex(static_cast<uint8_t>(body[bad]), absl::kZeroPad2)),
        begin + bad);
  }
  // Only '=' can still be wrong: at most two, and only at the very end.
  const size_t pad = body.find('=');
  std::string out;
  if ((pad != absl::string_view::npos && pad < n - 2) || !absl::Base64Unescape(body, &out)) {
    return serde::DecodeError(absl::StatusCode::kInvalidArgument, "base64", "",
                              "misplaced '=' padding",
                              begin + (pad == absl::string_view::npos ? n : pad));
  }
  if (!javaobj::HasStreamHeader(reinterpret_cast<const uint8_t*>(out.data()), out.size())) {
    return absl::InvalidArgumentError(
        "base64: the decoded bytes are not a Java serialization stream (no AC ED 00 05)");
  }
  return out;
}

absl::StatusOr<HaPointer> DecodeHaPointer(serde::ByteView bytes) {
  using javaobj::ItemId;
  using javaobj::ItemKind;
  // A pointer is a few hundred bytes; any Java stream is asked whether it is
  // one (`Open` sniffs), so a stream whose first object's class is plainly
  // another one is answered from its first bytes, not a decode of the whole
  // (a 28 MB stream would cost its whole model): TC_OBJECT TC_CLASSDESC
  // name. The message is the one the full check gives.
  if (bytes.size() >= 5 && javaobj::HasStreamHeader(bytes.data(), bytes.size()) &&
      bytes[4] >= javaobj::kTcBase && bytes[4] <= javaobj::kTcEnum &&
      bytes[4] != javaobj::kTcObject) {
    // The first item is no object (the first top-level item cannot be a
    // reference: no handle exists yet).
    return serde::DecodeError(
        absl::StatusCode::kInvalidArgument, "ha-pointer", "top level",
        absl::StrCat("expected ", kRetrievableStreamStateHandleClass, ", found ",
                     javaobj::ItemKindName(javaobj::ItemKindOfTag(bytes[4]))),
        4);
  }
  if (bytes.size() >= 8 && bytes[4] == javaobj::kTcObject && bytes[5] == javaobj::kTcClassDesc) {
    const size_t n = (size_t{bytes[6]} << 8) | bytes[7];
    if (bytes.size() >= 8 + n) {
      const absl::string_view name(reinterpret_cast<const char*>(bytes.data()) + 8, n);
      const bool ascii = std::all_of(name.begin(), name.end(), [](char c) {
        return static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x80;
      });
      if (ascii && name != kRetrievableStreamStateHandleClass &&
          name != kStateHandleWithDeleteMarkerClass) {
        return serde::DecodeError(
            absl::StatusCode::kInvalidArgument, "ha-pointer", "top level",
            absl::StrCat("expected ", kRetrievableStreamStateHandleClass, ", found ", name), 4);
      }
    }
  }
  FLINKSTATE_ASSIGN_OR_RETURN(javaobj::Stream s, javaobj::DecodeStream(bytes));
  auto fail = [&](absl::string_view path, absl::string_view expected, ItemId at) {
    const bool none = at == javaobj::kNoItem;
    const std::string found = none                        ? "nothing"
                              : s.ClassNameOf(at).empty() ? std::string(javaobj::ItemKindName(
                                                                s.item(at).kind))
                                                          : s.ClassNameOf(at);
    return serde::DecodeError(absl::StatusCode::kInvalidArgument, "ha-pointer", path,
                              absl::StrCat("expected ", expected, ", found ", found),
                              none ? bytes.size() : s.item(at).range.offset);
  };
  if (s.aborted()) {
    return absl::DataLossError("ha-pointer: writing aborted (the stream ends in TC_EXCEPTION)");
  }
  ItemId root = s.top_level().empty() ? javaobj::kNoItem : s.Resolve(s.top_level()[0]);
  HaPointer p;
  if (root != javaobj::kNoItem && s.IsInstanceOf(root, kStateHandleWithDeleteMarkerClass)) {
    p.format = "kubernetes";
    p.root_class = kStateHandleWithDeleteMarkerClass;
    p.marked_for_deletion = s.PrimFieldInt(root, "markedForDeletion").value_or(0) != 0;
    const int64_t suid = s.desc(s.item(root).desc).suid;
    p.flink_versions = suid == static_cast<int64_t>(0x9F813BF39965437FULL) ? "1.15-1.18"
                       : suid == 0x1BAD4480EF860D7CLL                       ? "1.19+"
                                                                            : "unknown";
    root = s.FieldValue(root, "inner");
    root = root == javaobj::kNoItem ? root : s.Resolve(root);
  } else {
    p.format = "zookeeper";
  }
  if (root == javaobj::kNoItem || !s.IsInstanceOf(root, kRetrievableStreamStateHandleClass)) {
    return fail(p.format == "zookeeper" ? "top level" : "StateHandleWithDeleteMarker.inner",
                kRetrievableStreamStateHandleClass, root);
  }
  if (p.root_class.empty()) p.root_class = kRetrievableStreamStateHandleClass;
  ItemId fh = s.FieldValue(root, "wrappedStreamStateHandle");
  fh = fh == javaobj::kNoItem ? fh : s.Resolve(fh);
  if (fh == javaobj::kNoItem || s.item(fh).kind != ItemKind::kObject) {
    return fail("RetrievableStreamStateHandle.wrappedStreamStateHandle", "a FileStateHandle", fh);
  }
  if (s.FieldValue(fh, "filePath") == javaobj::kNoItem) {
    return fail("RetrievableStreamStateHandle.wrappedStreamStateHandle",
                "a handle with a filePath field", fh);
  }
  p.state_size = s.PrimFieldInt(fh, "stateSize").value_or(0);
  // Step by step for the error message; FlinkPathUriString is the rule.
  const ItemId path = s.Resolve(s.FieldValue(fh, "filePath"));
  if (s.item(path).kind != ItemKind::kObject || !s.IsInstanceOf(path, kFlinkPathClass)) {
    return fail("FileStateHandle.filePath", kFlinkPathClass, path);
  }
  ItemId uri = s.FieldValue(path, "uri");
  if (uri == javaobj::kNoItem) return fail("FileStateHandle.filePath", "a Path with a uri field", path);
  uri = s.Resolve(uri);
  if (s.item(uri).kind != ItemKind::kObject || s.ClassNameOf(uri) != "java.net.URI") {
    return fail("FileStateHandle.filePath.uri", "a java.net.URI", uri);
  }
  const ItemId str = FlinkPathUriString(s, path);
  if (str == javaobj::kNoItem) {
    ItemId field = s.FieldValue(uri, "string");
    return field == javaobj::kNoItem
               ? fail("FileStateHandle.filePath.uri", "a java.net.URI with a string field", uri)
               : fail("FileStateHandle.filePath.uri.string", "a string", s.Resolve(field));
  }
  absl::StatusOr<std::string> v = s.StringValue(str);
  if (!v.ok()) return v.status();
  p.path = *v;
  return p;
}

javaobj::ItemId FlinkPathUriString(const javaobj::Stream& s, javaobj::ItemId path) {
  using javaobj::ItemKind;
  using javaobj::kNoItem;
  if (path == kNoItem) return kNoItem;
  path = s.Resolve(path);
  if (s.item(path).kind != ItemKind::kObject || !s.IsInstanceOf(path, kFlinkPathClass)) {
    return kNoItem;
  }
  javaobj::ItemId uri = s.FieldValue(path, "uri");
  if (uri == kNoItem) return kNoItem;
  uri = s.Resolve(uri);
  if (s.item(uri).kind != ItemKind::kObject || s.ClassNameOf(uri) != "java.net.URI") {
    return kNoItem;
  }
  javaobj::ItemId str = s.FieldValue(uri, "string");
  if (str == kNoItem) return kNoItem;
  str = s.Resolve(str);
  return s.item(str).kind == ItemKind::kString ? str : kNoItem;
}

std::string LocalPathOfUri(const std::string& uri) {
  // No file name holds a NUL; the C calls would silently check a prefix.
  if (uri.find('\0') != std::string::npos) return "";
  if (absl::StartsWith(uri, "/")) return uri;
  if (absl::StartsWith(uri, "file://")) {
    const std::string rest = uri.substr(7);
    // file:///a -> /a; file://localhost/a -> /a
    const size_t slash = rest.find('/');
    return slash == std::string::npos ? "" : rest.substr(slash);
  }
  if (absl::StartsWith(uri, "file:")) return uri.substr(5);
  return "";
}

}  // namespace flinkstate
