// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/serde/modified_utf8.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "flinkstate/serde/error_location.h"

namespace flinkstate::serde {
namespace {

absl::Status Malformed(absl::string_view what, size_t at) {
  // The offset is the string's: a reader that knows where the string starts
  // in its input reports its own (`DataInput::ReadModifiedUtf8`).
  return WithLocation(absl::InvalidArgumentError(absl::StrCat("serde: malformed modified UTF-8: ",
                                                              what, " at byte ", at,
                                                              " of the string")),
                      "serde", "", at);
}


// Appends one UTF-16 code unit in modified UTF-8.
void AppendJavaChar(uint32_t unit, std::string* out) {
  if (unit != 0 && unit < 0x80) {
    out->push_back(static_cast<char>(unit));
  } else if (unit < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (unit >> 6)));
    out->push_back(static_cast<char>(0x80 | (unit & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xE0 | (unit >> 12)));
    out->push_back(static_cast<char>(0x80 | ((unit >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (unit & 0x3F)));
  }
}

bool IsHighSurrogate(uint32_t u) { return u >= 0xD800 && u <= 0xDBFF; }
bool IsLowSurrogate(uint32_t u) { return u >= 0xDC00 && u <= 0xDFFF; }

// Decodes one Java char (UTF-16 code unit) at `*i`, advancing `*i`.
absl::Status DecodeJavaChar(ByteView b, size_t* i, uint32_t* unit) {
  const size_t at = *i;
  const uint8_t c = b[at];
  if (c < 0x80) {
    *unit = c;
    *i += 1;
    return absl::OkStatus();
  }
  switch (c >> 4) {
    case 0xC:
    case 0xD: {
      if (b.size() - at < 2) return Malformed("truncated 2-byte sequence", at);
      const uint8_t c2 = b[at + 1];
      if ((c2 & 0xC0) != 0x80) return Malformed("bad continuation byte", at + 1);
      *unit = ((c & 0x1Fu) << 6) | (c2 & 0x3Fu);
      *i += 2;
      return absl::OkStatus();
    }
    case 0xE: {
      if (b.size() - at < 3) return Malformed("truncated 3-byte sequence", at);
      const uint8_t c2 = b[at + 1];
      const uint8_t c3 = b[at + 2];
      if ((c2 & 0xC0) != 0x80) return Malformed("bad continuation byte", at + 1);
      if ((c3 & 0xC0) != 0x80) return Malformed("bad continuation byte", at + 2);
      *unit = ((c & 0x0Fu) << 12) | ((c2 & 0x3Fu) << 6) | (c3 & 0x3Fu);
      *i += 3;
      return absl::OkStatus();
    }
    default:
      return Malformed("invalid lead byte", at);
  }
}

}  // namespace

void AppendCodePoint(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

Utf8Char DecodeUtf8Char(absl::string_view text, size_t at) {
  const auto* b = reinterpret_cast<const uint8_t*>(text.data());
  const uint8_t c = b[at];
  Utf8Char r;
  r.error_at = at;
  if (c < 0x80) {
    r.code_point = c;
    return r;
  }
  uint32_t len;
  if ((c & 0xE0) == 0xC0) {
    r.code_point = c & 0x1F;
    len = 2;
  } else if ((c & 0xF0) == 0xE0) {
    r.code_point = c & 0x0F;
    len = 3;
  } else if ((c & 0xF8) == 0xF0) {
    r.code_point = c & 0x07;
    len = 4;
  } else {
    r.error = "invalid lead byte";
    return r;
  }
  if (text.size() - at < len) {
    r.error = "truncated sequence";
    return r;
  }
  for (uint32_t k = 1; k < len; ++k) {
    if ((b[at + k] & 0xC0) != 0x80) {
      r.error = "bad continuation byte";
      r.error_at = at + k;
      return r;
    }
    r.code_point = (r.code_point << 6) | (b[at + k] & 0x3F);
  }
  static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (r.code_point < kMin[len]) {
    r.error = "overlong sequence";
  } else if (r.code_point > 0x10FFFF) {
    r.error = "code point above U+10FFFF";
  } else {
    r.length = len;
  }
  return r;
}

size_t FindInvalidModifiedUtf8(ByteView body) {
  size_t i = 0;
  while (i < body.size()) {
    if (body[i] < 0x80) {
      ++i;
      continue;
    }
    const size_t at = i;
    uint32_t unit;
    if (!DecodeJavaChar(body, &i, &unit).ok()) return at;
  }
  return body.size();
}

size_t Utf8PrefixLength(absl::string_view text, size_t max) {
  if (text.size() <= max) return text.size();
  size_t cut = max;
  while (cut > 0 && (static_cast<uint8_t>(text[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

bool IsPlainAscii(ByteView body) {
  // Eight bytes at a time: a word is plain ASCII iff no byte has its high bit
  // set and none is zero. `w - 0x01..01` sets the high bit of the lowest zero
  // byte (bytes below it are non-zero, so no borrow reaches it), and of no
  // byte when all are 1..0x7F.
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHighs = 0x8080808080808080ULL;
  const uint8_t* p = body.data();
  size_t n = body.size();
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    if (((w | (w - kOnes)) & kHighs) != 0) return false;
  }
  for (; n > 0; ++p, --n) {
    if (*p == 0 || *p >= 0x80) return false;
  }
  return true;
}

bool IsShortestModifiedUtf8(ByteView body) {
  if (IsPlainAscii(body)) return true;
  // Continuation bytes are 0x80..0xBF, so a lead byte is recognised wherever
  // it stands.
  for (size_t i = 0; i < body.size(); ++i) {
    const uint8_t b = body[i];
    if (b == 0) return false;                                        // raw U+0000
    if (b == 0xC1) return false;                                     // 2-byte form of 0x40..0x7F
    if (b == 0xC0 && (i + 1 >= body.size() || body[i + 1] != 0x80)) return false;
    if (b == 0xE0 && i + 1 < body.size() && body[i + 1] < 0xA0) return false;  // 3-byte form < U+0800
  }
  return true;
}

absl::StatusOr<std::string> ModifiedUtf8ToUtf8(ByteView body) {
  std::string out;
  if (IsPlainAscii(body)) {
    out.assign(reinterpret_cast<const char*>(body.data()), body.size());
    return out;
  }
  out.reserve(body.size());
  size_t i = 0;
  while (i < body.size()) {
    uint32_t unit;
    absl::Status s = DecodeJavaChar(body, &i, &unit);
    if (!s.ok()) return s;
    if (IsHighSurrogate(unit) && i < body.size()) {
      size_t j = i;
      uint32_t next;
      if (DecodeJavaChar(body, &j, &next).ok() && IsLowSurrogate(next)) {
        AppendCodePoint(0x10000 + ((unit - 0xD800) << 10) + (next - 0xDC00),
                        &out);
        i = j;
        continue;
      }
    }
    AppendCodePoint(unit, &out);  // lone surrogates become 3-byte WTF-8
  }
  return out;
}

absl::StatusOr<std::string> Utf8ToModifiedUtf8(absl::string_view utf8) {
  if (IsPlainAscii(AsBytes(utf8))) return std::string(utf8);  // the same bytes
  std::string out;
  out.reserve(utf8.size() + 8);
  size_t i = 0;
  while (i < utf8.size()) {
    const Utf8Char ch = DecodeUtf8Char(utf8, i);
    if (ch.error != nullptr) {
      return WithLocation(absl::InvalidArgumentError(absl::StrCat("serde: invalid UTF-8: ",
                                                                  ch.error, " at byte ",
                                                                  ch.error_at, " of the string")),
                          "serde", "", ch.error_at);
    }
    const uint32_t cp = ch.code_point;
    i += ch.length;
    if (cp >= 0x10000) {
      const uint32_t v = cp - 0x10000;
      AppendJavaChar(0xD800 + (v >> 10), &out);
      AppendJavaChar(0xDC00 + (v & 0x3FF), &out);
    } else {
      AppendJavaChar(cp, &out);  // includes 3-byte surrogates (WTF-8 input)
    }
  }
  return out;
}

}  // namespace flinkstate::serde
