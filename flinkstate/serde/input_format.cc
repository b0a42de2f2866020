// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/serde/input_format.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "flinkstate/serde/error_location.h"

namespace flinkstate::serde {
namespace {

constexpr int kMaxLayers = 4;

bool IsBase64Char(uint8_t c) {
  return absl::ascii_isalnum(c) || c == '+' || c == '/' || c == '=';
}

// The text without a UTF-8 BOM and surrounding whitespace.
absl::string_view Trimmed(ByteView in) {
  absl::string_view t = AsStringView(in);
  if (t.size() >= 3 && static_cast<uint8_t>(t[0]) == 0xEF &&
      static_cast<uint8_t>(t[1]) == 0xBB && static_cast<uint8_t>(t[2]) == 0xBF) {
    t.remove_prefix(3);
  }
  return absl::StripAsciiWhitespace(t);
}

bool IsText(absl::string_view t) {
  for (unsigned char c : t) {
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') return false;
    if (c == 0x7F) return false;
  }
  return true;
}

// Inflates every member of `in` (RFC 1952 2.2: a gzip file is a series of
// members; gunzip writes their concatenation). Bytes after the last member
// that start no other member are an error, not ignored. At most
// `max_decoded_bytes` are produced; `input_size` is the size of what the
// user handed in (for the message; the bound derives from it). Inflated in
// 1 MiB chunks joined once at the end: a refused bomb peaks at the bound plus
// one chunk, a decoded result at twice its size while the chunks are joined
// (a growing string peaked at up to three times).
absl::StatusOr<std::string> Gunzip(ByteView in, uint64_t max_decoded_bytes,
                                   uint64_t input_size) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
    return absl::InternalError("gzip: inflateInit2 failed");
  }
  constexpr size_t kChunk = size_t{1} << 20;
  std::vector<std::string> chunks;
  uint64_t total = 0;
  size_t fed = 0;  // bytes of `in` handed to zlib so far
  auto fail = [&](absl::Status s) {
    inflateEnd(&z);
    return s;
  };
  for (;;) {
    if (z.avail_in == 0 && fed < in.size()) {
      const size_t more = std::min<size_t>(in.size() - fed, 1u << 30);
      z.next_in = const_cast<Bytef*>(in.data() + fed);
      z.avail_in = static_cast<uInt>(more);
      fed += more;
    }
    if (chunks.empty() || z.avail_out == 0) {
      if (total >= max_decoded_bytes) {
        return fail(absl::ResourceExhaustedError(absl::StrCat(
            "gzip: the data inflates to more than ", max_decoded_bytes,
            " bytes, the bound for an input of ", input_size,
            " bytes; decompress it first (gunzip -k) and pass the raw file")));
      }
      chunks.emplace_back(std::min<uint64_t>(kChunk, max_decoded_bytes - total), '\0');
      z.next_out = reinterpret_cast<Bytef*>(chunks.back().data());
      z.avail_out = static_cast<uInt>(chunks.back().size());
    }
    const uInt out_before = z.avail_out;
    const int rc = inflate(&z, Z_NO_FLUSH);
    total += out_before - z.avail_out;
    const uint64_t at = fed - z.avail_in;  // bytes of `in` consumed
    if (rc == Z_STREAM_END) {
      if (at == in.size()) break;
      if (in.size() - at >= 2 && in[at] == 0x1F && in[at + 1] == 0x8B) {
        inflateReset(&z);  // the next member
        continue;
      }
      return fail(WithLocation(
          absl::InvalidArgumentError(absl::StrCat(
              "gzip: ", in.size() - at, " bytes after the gzip data at byte ", at,
              " start no other gzip member (gunzip would warn 'trailing garbage ignored')")),
          "gzip", "", at));
    }
    if (rc == Z_BUF_ERROR && z.avail_in == 0 && fed == in.size() && z.avail_out != 0) {
      return fail(DecodeError(absl::StatusCode::kInvalidArgument, "gzip", "",
                              "gzip-compressed data ends early (truncated)", at));
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      std::string msg = z.msg ? z.msg : zError(rc);
      return fail(DecodeError(absl::StatusCode::kInvalidArgument, "gzip", "",
                              absl::StrCat("gzip-compressed data is corrupt (", msg, ")"), at));
    }
  }
  inflateEnd(&z);
  chunks.back().resize(chunks.back().size() - z.avail_out);
  std::string out;
  out.reserve(total);
  for (std::string& c : chunks) {
    out += c;
    std::string().swap(c);
  }
  return out;
}

int HexValue(uint8_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

absl::StatusOr<std::string> Unhex(absl::string_view t, uint64_t base) {
  std::string out;
  out.reserve(t.size() / 2);
  int hi = -1;
  for (size_t i = 0; i < t.size(); ++i) {
    const uint8_t c = static_cast<uint8_t>(t[i]);
    if (absl::ascii_isspace(c)) continue;
    const int v = HexValue(c);
    if (v < 0) {
      return DecodeError(absl::StatusCode::kInvalidArgument, "hex", "",
                         absl::StrFormat("invalid character 0x%02X", c), base + i);
    }
    if (hi < 0) {
      hi = v;
    } else {
      out.push_back(static_cast<char>((hi << 4) | v));
      hi = -1;
    }
  }
  if (hi >= 0) return absl::InvalidArgumentError("hex: an odd number of hex digits");
  return out;
}

absl::StatusOr<std::string> UnBase64(absl::string_view t, uint64_t base) {
  std::string compact;
  compact.reserve(t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    const uint8_t c = static_cast<uint8_t>(t[i]);
    if (absl::ascii_isspace(c)) continue;
    if (!IsBase64Char(c)) {
      return DecodeError(absl::StatusCode::kInvalidArgument, "base64", "",
                         absl::StrFormat("invalid character 0x%02X", c), base + i);
    }
    compact.push_back(static_cast<char>(c));
  }
  std::string out;
  if (compact.empty() || !absl::Base64Unescape(compact, &out)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "base64: ", compact.size(), " characters that are not valid padded Base64"));
  }
  return out;
}

// The first Base64 run starting "rO0AB" inside `t` (a kubectl JSON/YAML
// document: the run ends at the closing quote or the end of the line).
absl::string_view ConfigMapValue(absl::string_view t) {
  const size_t at = t.find("rO0AB");
  if (at == absl::string_view::npos) return {};
  size_t end = at;
  while (end < t.size() && IsBase64Char(static_cast<uint8_t>(t[end]))) ++end;
  return t.substr(at, end - at);
}

absl::Status Empty() { return absl::InvalidArgumentError("empty file"); }

}  // namespace

const char* InputFormatName(InputFormat f) {
  switch (f) {
    case InputFormat::kAuto: return "auto";
    case InputFormat::kRaw: return "raw";
    case InputFormat::kGzip: return "gzip";
    case InputFormat::kHex: return "hex";
    case InputFormat::kBase64: return "base64";
    case InputFormat::kConfigMapBase64: return "configmap";
  }
  return "?";
}

absl::StatusOr<InputFormat> ParseInputFormat(absl::string_view name) {
  for (InputFormat f : {InputFormat::kAuto, InputFormat::kRaw, InputFormat::kGzip,
                        InputFormat::kHex, InputFormat::kBase64}) {
    if (name == InputFormatName(f)) return f;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown input format '", name, "' (expected auto, raw, base64, hex or gzip)"));
}

std::string DecodedInput::Description() const {
  if (layers.empty()) return "raw";
  std::string s;
  for (InputFormat f : layers) absl::StrAppend(&s, s.empty() ? "" : " > ", InputFormatName(f));
  return s;
}

uint64_t InputFormatLimits::MaxDecodedBytes(uint64_t input_size) const {
  if (max_decoded_bytes != 0) return max_decoded_bytes;
  const uint64_t cap = std::numeric_limits<uint64_t>::max();
  const uint64_t scaled = max_decoded_multiple != 0 && input_size > cap / max_decoded_multiple
                              ? cap
                              : input_size * max_decoded_multiple;
  return scaled > cap - max_decoded_floor ? cap : scaled + max_decoded_floor;
}

absl::StatusOr<DecodedInput> DecodeInputFormat(ByteView input, InputFormat format,
                                               const InputFormatLimits& limits) {
  // Every layer is bounded relative to what was handed in, not to the layer
  // above it: Base64 of gzip of gzip inflates no further than gzip alone.
  const uint64_t max_decoded_bytes = limits.MaxDecodedBytes(input.size());
  DecodedInput d;
  if (Trimmed(input).empty() && (input.empty() || IsText(AsStringView(input)))) return Empty();
  ByteView cur = input;
  for (int layer = 0; layer < kMaxLayers; ++layer) {
    InputFormat f = format;
    absl::string_view text = Trimmed(cur);
    const uint64_t base = text.empty() ? 0 : static_cast<uint64_t>(text.data() -
                                                  reinterpret_cast<const char*>(cur.data()));
    if (f == InputFormat::kAuto) {
      if (cur.size() >= 2 && cur[0] == 0xAC && cur[1] == 0xED) break;
      if (cur.size() >= 2 && cur[0] == 0x1F && cur[1] == 0x8B) {
        f = InputFormat::kGzip;
      } else if (!text.empty() && IsText(text)) {
        bool hex = true, b64 = true;
        size_t digits = 0;
        for (unsigned char c : text) {
          if (absl::ascii_isspace(c)) continue;
          ++digits;
          if (HexValue(c) < 0) hex = false;
          if (!IsBase64Char(c)) b64 = false;
        }
        if (hex && digits % 2 == 0) {
          f = InputFormat::kHex;
        } else if (b64 || absl::StartsWith(text, "rO0AB")) {
          // Base64 of a Java stream; a bad character is named at its byte.
          f = InputFormat::kBase64;
        } else if (!ConfigMapValue(text).empty()) {
          f = InputFormat::kConfigMapBase64;
        } else {
          break;  // text of some other kind: the caller says what it is not
        }
      } else {
        break;  // binary: raw
      }
    }
    absl::StatusOr<std::string> next;
    switch (f) {
      case InputFormat::kRaw:
      case InputFormat::kAuto:
        return d;
      case InputFormat::kGzip:
        next = Gunzip(cur, max_decoded_bytes, input.size());
        break;
      case InputFormat::kHex:
        next = Unhex(text, base);
        break;
      case InputFormat::kBase64:
        next = UnBase64(text, base);
        break;
      case InputFormat::kConfigMapBase64: {
        absl::string_view v = ConfigMapValue(text);
        next = UnBase64(v, base + static_cast<uint64_t>(v.data() - text.data()));
        break;
      }
    }
    if (!next.ok()) return next.status();
    if (next->size() > max_decoded_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(InputFormatName(f),
                                                       ": decoded data larger than ",
                                                       max_decoded_bytes, " bytes"));
    }
    if (next->empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(InputFormatName(f), ": ", InputFormatName(f), " data of an empty file"));
    }
    d.layers.push_back(f);
    d.decoded = *std::move(next);
    cur = AsBytes(d.decoded);
    format = InputFormat::kAuto;  // inner layers are detected
  }
  return d;
}

}  // namespace flinkstate::serde
