// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: error_location.h
// -----------------------------------------------------------------------------
// Where a decode error happened, as fields that travel with the error: the
// file, the layer that found it ("serde", "metadata", "javaobj", ...), the
// item path inside the format ("operators[2].subtaskStates[0]") and the byte
// offset. They ride on the `absl::Status` as a payload (absl::Status payloads
// are the Abseil way to attach structured detail), so a report takes them
// from the error instead of taking the message apart; the message stays
// what people read:
//
//   FILE: LAYER: ITEM_PATH: PROBLEM at byte OFFSET
//
//   ```c++ (serde::DataInput& in)
//   absl::Status s = serde::DecodeError(absl::StatusCode::kInvalidArgument, "metadata",
//                                       "operators[2]", "negative count -1", in.position());
//   s = serde::InFile(s, "chk-7/_metadata");
//   std::optional<serde::ErrorLocation> where = serde::LocationOf(s);
//   // where->file == "chk-7/_metadata", where->layer == "metadata",
//   // where->item_path == "operators[2]", *where->offset == in.position()
//   ```
//
// Rewrapping an error with `absl::Status(code, message)` drops payloads: code
// that re-labels an error uses `Relabel`, `InFile` or `serde::Annotate`,
// which keep them.
//
// Thread safety: free functions over values; no shared state.

#ifndef FLINKSTATE_SERDE_ERROR_LOCATION_H_
#define FLINKSTATE_SERDE_ERROR_LOCATION_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace flinkstate::serde {

// The payload's type URL (`absl::Status::SetPayload`).
inline constexpr absl::string_view kErrorLocationTypeUrl =
    "type.googleapis.com/flinkstate.ErrorLocation";

struct ErrorLocation {
  std::string file;                // "" until `InFile`
  std::string layer;               // "serde", "metadata", "javaobj", ...
  std::string item_path;           // "" for none (e.g. the file header)
  std::optional<uint64_t> offset;  // bytes from the start of the decoded input
};

// A decode error: message "LAYER: ITEM_PATH: PROBLEM at byte OFFSET" (the
// item path and its ": " left out when empty; " at byte N" when `offset` is
// set), with the location attached. `code` must not be OK.
[[nodiscard]] absl::Status DecodeError(absl::StatusCode code, absl::string_view layer,
                                       absl::string_view item_path, absl::string_view problem,
                                       std::optional<uint64_t> offset);

// `s` (code and message kept) with the location `layer`, `item_path` and
// `offset`, the file kept if `s` had one. For an error about a place in the
// input whose message names the offset mid-sentence ("relocate: the handle at
// byte 7 would become ..."), which `DecodeError`'s form cannot say. OK stays
// OK.
[[nodiscard]] absl::Status WithLocation(const absl::Status& s, absl::string_view layer,
                                        absl::string_view item_path,
                                        std::optional<uint64_t> offset);

// `s` re-labelled by an outer decoder: "LAYER: ITEM_PATH: " put in front of
// its message, whose own leading "serde: " (the byte reader's layer) is
// dropped; the location gets `layer` and `item_path` and keeps the offset
// and the file. Code and other payloads kept; OK stays OK.
[[nodiscard]] absl::Status Relabel(const absl::Status& s, absl::string_view layer,
                                   absl::string_view item_path);

// `s` with "FILE: " in front and `file` in its location (a location without
// layer is added when `s` had none). OK stays OK.
[[nodiscard]] absl::Status InFile(const absl::Status& s, absl::string_view file);

// `s` located in `file`, its message unchanged: for an error about a file
// as a whole (it cannot be opened, replaced or written) whose message names
// the file already. A location `s` has keeps its fields and gets `layer` and
// `file` only where they are empty. OK stays OK.
[[nodiscard]] absl::Status LocatedIn(const absl::Status& s, absl::string_view layer,
                                     absl::string_view file);

// `s` with `message` instead of its message, code and payloads kept.
[[nodiscard]] absl::Status WithMessage(const absl::Status& s, absl::string_view message);

// The location `s` carries, if any.
std::optional<ErrorLocation> LocationOf(const absl::Status& s);

}  // namespace flinkstate::serde

#endif  // FLINKSTATE_SERDE_ERROR_LOCATION_H_
