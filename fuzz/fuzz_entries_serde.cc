// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// Fuzz entries of the byte layer (fuzz_entries.h): modified UTF-8.

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "flinkstate/serde/byte_view.h"
#include "flinkstate/serde/modified_utf8.h"
#include "fuzz/fuzz_common.h"
#include "fuzz/fuzz_entries.h"

namespace flinkstate::fuzz {
namespace {

using serde::ByteView;

// True if `s` is valid standard UTF-8 (shortest forms, no surrogates, at most
// U+10FFFF): the strict definition, written independently of the library.
bool IsValidUtf8(absl::string_view s) {
  size_t i = 0;
  const auto* b = reinterpret_cast<const uint8_t*>(s.data());
  while (i < s.size()) {
    uint8_t c = b[i];
    size_t len;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i < len) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((b[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b[i + k] & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

}  // namespace

absl::Status FuzzModifiedUtf8(ByteView input) {
  constexpr absl::string_view kT = "serde_modified_utf8";
  // 1. The input as a modified UTF-8 body.
  absl::StatusOr<std::string> utf8 = serde::ModifiedUtf8ToUtf8(input);
  if (utf8.ok()) {
    absl::StatusOr<std::string> back = serde::Utf8ToModifiedUtf8(*utf8);
    FUZZ_CHECK(kT, back.ok(), "decoded text does not re-encode: ",
               back.status().ToString(), " input ", Hex(input));
    // The encoder's output is canonical: no raw NUL, no 4-byte sequence.
    for (char c : *back) {
      const uint8_t b = static_cast<uint8_t>(c);
      FUZZ_CHECK(kT, b != 0 && (b & 0xF8) != 0xF0,
                 "encoder emitted byte ", b, " for input ", Hex(input));
    }
    // Only a raw NUL (1 byte -> C0 80) grows; everything else keeps or
    // shrinks its size (non-shortest forms and split surrogate pairs).
    FUZZ_CHECK(kT, back->size() <= 2 * input.size(), "re-encoding grew more than 2x");
    absl::StatusOr<std::string> again =
        serde::ModifiedUtf8ToUtf8(serde::AsBytes(*back));
    FUZZ_CHECK(kT, again.ok() && *again == *utf8,
               "decode(encode(decode(x))) != decode(x) for ", Hex(input));
    // The encoder's output is a fixed point: encode(decode(y)) == y.
    absl::StatusOr<std::string> back2 = serde::Utf8ToModifiedUtf8(*again);
    FUZZ_CHECK(kT, back2.ok() && *back2 == *back, "encoding is not a fixed point for ",
               Hex(input));
    CountOutcome("mutf8: decoded, re-encoded, stable");
    // Plain ASCII is the identity both ways.
    if (serde::IsPlainAscii(input)) {
      FUZZ_CHECK(kT, *utf8 == serde::AsStringView(input) &&
                         *back == serde::AsStringView(input),
                 "plain ASCII changed");
    }
  }
  // 2. The input as standard UTF-8.
  const absl::string_view text = serde::AsStringView(input);
  absl::StatusOr<std::string> mutf8 = serde::Utf8ToModifiedUtf8(text);
  if (IsValidUtf8(text)) {
    FUZZ_CHECK(kT, mutf8.ok(), "valid UTF-8 rejected: ",
               mutf8.status().ToString(), " input ", Hex(input));
    absl::StatusOr<std::string> round =
        serde::ModifiedUtf8ToUtf8(serde::AsBytes(*mutf8));
    FUZZ_CHECK(kT, round.ok() && *round == text,
               "UTF-8 -> MUTF-8 -> UTF-8 is not the identity for ", Hex(input));
    CountOutcome("mutf8: valid UTF-8 round trip");
  }
  return absl::OkStatus();
}

}  // namespace flinkstate::fuzz
