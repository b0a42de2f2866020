// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/serde/error_location.h"

#include <utility>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace flinkstate::serde {
namespace {

// The payload: four fields, each "<decimal length>:<bytes>" (names may hold
// any byte); the offset field is empty when there is none.
std::string Encode(const ErrorLocation& l) {
  std::string out;
  const std::string offset = l.offset.has_value() ? absl::StrCat(*l.offset) : std::string();
  for (absl::string_view f : {absl::string_view(l.file), absl::string_view(l.layer),
                              absl::string_view(l.item_path), absl::string_view(offset)}) {
    absl::StrAppend(&out, f.size(), ":", f);
  }
  return out;
}

std::optional<ErrorLocation> Decode(absl::string_view in) {
  std::vector<std::string> fields;
  while (!in.empty() && fields.size() < 4) {
    const size_t colon = in.find(':');
    size_t n = 0;
    if (colon == absl::string_view::npos || !absl::SimpleAtoi(in.substr(0, colon), &n) ||
        n > in.size() - colon - 1) {
      return std::nullopt;
    }
    fields.emplace_back(in.substr(colon + 1, n));
    in.remove_prefix(colon + 1 + n);
  }
  if (fields.size() != 4 || !in.empty()) return std::nullopt;
  ErrorLocation l;
  l.file = std::move(fields[0]);
  l.layer = std::move(fields[1]);
  l.item_path = std::move(fields[2]);
  if (!fields[3].empty()) {
    uint64_t offset = 0;
    if (!absl::SimpleAtoi(fields[3], &offset)) return std::nullopt;
    l.offset = offset;
  }
  return l;
}

void Attach(absl::Status* s, const ErrorLocation& l) {
  s->SetPayload(kErrorLocationTypeUrl, absl::Cord(Encode(l)));
}

}  // namespace

absl::Status DecodeError(absl::StatusCode code, absl::string_view layer,
                         absl::string_view item_path, absl::string_view problem,
                         std::optional<uint64_t> offset) {
  std::string message(layer);
  if (!item_path.empty()) absl::StrAppend(&message, ": ", item_path);
  absl::StrAppend(&message, ": ", problem);
  if (offset.has_value()) absl::StrAppend(&message, " at byte ", *offset);
  absl::Status s(code, message);
  ErrorLocation l;
  l.layer = std::string(layer);
  l.item_path = std::string(item_path);
  l.offset = offset;
  Attach(&s, l);
  return s;
}

absl::Status WithMessage(const absl::Status& s, absl::string_view message) {
  if (s.ok()) return s;
  absl::Status out(s.code(), message);
  s.ForEachPayload([&out](absl::string_view url, const absl::Cord& payload) {
    out.SetPayload(url, payload);
  });
  return out;
}

absl::Status WithLocation(const absl::Status& s, absl::string_view layer,
                          absl::string_view item_path, std::optional<uint64_t> offset) {
  if (s.ok()) return s;
  absl::Status out = s;
  ErrorLocation l;
  l.file = LocationOf(s).value_or(ErrorLocation()).file;
  l.layer = std::string(layer);
  l.item_path = std::string(item_path);
  l.offset = offset;
  Attach(&out, l);
  return out;
}

absl::Status Relabel(const absl::Status& s, absl::string_view layer,
                     absl::string_view item_path) {
  if (s.ok()) return s;
  absl::string_view msg = s.message();
  absl::ConsumePrefix(&msg, "serde: ");
  std::string message(layer);
  if (!item_path.empty()) absl::StrAppend(&message, ": ", item_path);
  absl::StrAppend(&message, ": ", msg);
  absl::Status out = WithMessage(s, message);
  ErrorLocation l = LocationOf(s).value_or(ErrorLocation());
  l.layer = std::string(layer);
  l.item_path = std::string(item_path);
  Attach(&out, l);
  return out;
}

absl::Status InFile(const absl::Status& s, absl::string_view file) {
  if (s.ok()) return s;
  absl::Status out = WithMessage(s, absl::StrCat(file, ": ", s.message()));
  ErrorLocation l = LocationOf(s).value_or(ErrorLocation());
  l.file = std::string(file);
  Attach(&out, l);
  return out;
}

absl::Status LocatedIn(const absl::Status& s, absl::string_view layer, absl::string_view file) {
  if (s.ok()) return s;
  absl::Status out = s;
  ErrorLocation l = LocationOf(s).value_or(ErrorLocation());
  if (l.layer.empty()) l.layer = std::string(layer);
  if (l.file.empty()) l.file = std::string(file);
  Attach(&out, l);
  return out;
}

std::optional<ErrorLocation> LocationOf(const absl::Status& s) {
  const auto payload = s.GetPayload(kErrorLocationTypeUrl);
  if (!payload.has_value()) return std::nullopt;
  return Decode(std::string(*payload));
}

}  // namespace flinkstate::serde
