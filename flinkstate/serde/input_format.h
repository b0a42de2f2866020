// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: input_format.h
// -----------------------------------------------------------------------------
// Recognises the forms in which people hand over a binary file (a Java
// serialization stream, usually) and decodes them to the raw bytes: gzip,
// hex dumps (`xxd -p`, with or without whitespace), Base64 (wrapped or not,
// with a UTF-8 BOM or trailing newline), and the Base64 value inside
// `kubectl get configmap -o json|yaml` output.
//
//   ```c++ (const serde::MappedFile& file)
//   FLINKSTATE_ASSIGN_OR_RETURN(serde::DecodedInput d,
//                               serde::DecodeInputFormat(file.bytes()));
//   serde::ByteView raw = d.bytes(file.bytes());
//   ```
//
// Detection (`InputFormat::kAuto`), in order:
//   0 bytes (or only whitespace and a BOM)   -> `InvalidArgument` "empty file"
//   0xAC 0xED (Java stream magic), or any
//   other binary content                     -> kRaw (no copy)
//   0x1F 0x8B (gzip magic)                   -> kGzip, inflated with zlib
//   text of hex digits (and whitespace),
//   an even number of digits                 -> kHex
//   text of the Base64 alphabet (RFC 4648,
//   '=' padding, whitespace ignored)         -> kBase64 (absl::Base64Unescape)
//   text holding a Base64 value starting
//   "rO0AB" (AC ED 00 05), e.g. a ConfigMap  -> kConfigMapBase64
// A decoded result is detected again (gzip inside Base64, ...), at most 4
// layers deep. A forced format (`--input-format`) decodes exactly that
// layer and names it in any error ("gzip: ...", "hex: ...", "base64: ...").
//
// Thread safety: the functions keep no state; concurrent calls are safe. A
// `DecodedInput` is a plain value.

#ifndef FLINKSTATE_SERDE_INPUT_FORMAT_H_
#define FLINKSTATE_SERDE_INPUT_FORMAT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate::serde {

enum class InputFormat : uint8_t {
  kAuto,
  kRaw,
  kGzip,
  kHex,
  kBase64,
  kConfigMapBase64,  // the Base64 value inside kubectl JSON/YAML output
};

// "auto", "raw", "gzip", "hex", "base64", "configmap".
const char* InputFormatName(InputFormat format);

// Parses a `--input-format` value: auto|raw|base64|hex|gzip.
// Return values: `InvalidArgument` naming the accepted values.
[[nodiscard]] absl::StatusOr<InputFormat> ParseInputFormat(absl::string_view name);

struct DecodedInput {
  // The layers removed, outermost first (empty: the input is raw).
  std::vector<InputFormat> layers;
  // The decoded bytes when `layers` is not empty.
  std::string decoded;
  // The raw bytes: `decoded`, or `input` itself when nothing was decoded.
  // Lifetime: valid while `input` and this object are alive.
  ByteView bytes(ByteView input) const {
    return layers.empty() ? input : AsBytes(decoded);
  }
  // "gzip", "base64 > gzip", ... or "raw".
  std::string Description() const;
};

struct InputFormatLimits {
  // Bytes one decoded layer may produce: `max_decoded_multiple` times the
  // size of the input handed in plus `max_decoded_floor`, so that decoding
  // costs a small multiple of the input (a gzip bomb inflates ~1032x and
  // stops here). A larger file is decompressed by the caller (`gunzip -k`):
  // raw files are mapped, never decoded into memory.
  uint64_t max_decoded_multiple = 64;
  uint64_t max_decoded_floor = uint64_t{64} << 20;
  // When not 0, the bound in bytes instead of the two above.
  uint64_t max_decoded_bytes = 0;

  // The bound for an input of `input_size` bytes (saturating).
  uint64_t MaxDecodedBytes(uint64_t input_size) const;
};

// Decodes `input` as `format` (kAuto: detect, see the file comment).
// Return values: `InvalidArgument` "empty file", or naming the format and the
// byte offset of the first bad character / the zlib error;
// `ResourceExhausted` if a layer would exceed
// `limits.MaxDecodedBytes(input.size())`, naming the bound.
[[nodiscard]] absl::StatusOr<DecodedInput> DecodeInputFormat(
    ByteView input, InputFormat format = InputFormat::kAuto,
    const InputFormatLimits& limits = {});

}  // namespace flinkstate::serde

#endif  // FLINKSTATE_SERDE_INPUT_FORMAT_H_
