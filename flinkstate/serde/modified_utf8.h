// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: modified_utf8.h
// -----------------------------------------------------------------------------
// Conversion between Java's "modified UTF-8" (the string body written by
// `java.io.DataOutput.writeUTF` and by Java serialization's TC_STRING /
// TC_LONGSTRING) and standard UTF-8.
//
//   ```c++ (serde::ByteView raw_body)
//   FLINKSTATE_ASSIGN_OR_RETURN(std::string s, ModifiedUtf8ToUtf8(raw_body));
//   FLINKSTATE_ASSIGN_OR_RETURN(std::string m, Utf8ToModifiedUtf8("caf\u00e9"));
//   ```
//
// Encoding rules (java.io.DataInput class documentation, "Modified UTF-8"):
//   * U+0001..U+007F        -> 1 byte  0xxxxxxx
//   * U+0000, U+0080..U+07FF -> 2 bytes 110xxxxx 10xxxxxx  (NUL is C0 80)
//   * U+0800..U+FFFF        -> 3 bytes 1110xxxx 10xxxxxx 10xxxxxx
//   * U+10000..U+10FFFF     -> the two UTF-16 surrogates, 3 bytes each (6 bytes)
//
// Decoding accepts exactly what `DataInputStream.readUTF` accepts: a raw 0x00
// byte (as U+0000), and non-shortest 2- and 3-byte forms (decoded to their code
// unit), since Java does. A high surrogate followed by a low surrogate becomes
// one 4-byte UTF-8 sequence. A lone surrogate (legal in a Java String, not in
// Unicode) is emitted as its 3-byte generalized form ("WTF-8") so that the
// conversion back reproduces it; such output is not valid UTF-8.
//
// The byte-exact original is never reconstructed from the decoded text: callers
// that must round-trip keep the raw range (see `DataInput::ReadModifiedUtf8Raw`).
//
// Thread safety: pure functions; safe from any thread.

#ifndef FLINKSTATE_SERDE_MODIFIED_UTF8_H_
#define FLINKSTATE_SERDE_MODIFIED_UTF8_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate::serde {

// Largest body `DataOutput.writeUTF` can frame (its u2 length prefix).
inline constexpr size_t kMaxWriteUtfBytes = 65535;

// Decodes a modified UTF-8 body (without its length prefix) into UTF-8.
//
// Return values:
//   `InvalidArgument` on a malformed sequence (a continuation byte where a
//   character must start, a lead byte 0xF0..0xFF, a truncated sequence, a bad
//   continuation byte); the message gives the offset inside `body`.
[[nodiscard]] absl::StatusOr<std::string> ModifiedUtf8ToUtf8(ByteView body);

// Encodes UTF-8 text as a modified UTF-8 body (no length prefix).
//
// Return values:
//   `InvalidArgument` if `utf8` is not valid UTF-8 (generalized 3-byte
//   surrogates, as produced by `ModifiedUtf8ToUtf8`, are accepted).
[[nodiscard]] absl::StatusOr<std::string> Utf8ToModifiedUtf8(
    absl::string_view utf8);

// One character of standard UTF-8, as `DecodeUtf8Char` found it.
struct Utf8Char {
  // The code point; meaningful only when `error` is null.
  uint32_t code_point = 0;
  // Bytes the character occupies (1 on error, so that a scanner can resync).
  uint32_t length = 1;
  // Null, or what is wrong: "invalid lead byte", "truncated sequence", "bad
  // continuation byte", "overlong sequence", "code point above U+10FFFF".
  const char* error = nullptr;
  // Offset in the text of the byte `error` is about.
  size_t error_at = 0;

  // A surrogate code point U+D800..U+DFFF (the generalized 3-byte form that
  // `ModifiedUtf8ToUtf8` emits for a lone surrogate; not valid UTF-8).
  bool is_surrogate() const { return code_point >= 0xD800 && code_point <= 0xDFFF; }
  // Valid, and allowed in strict UTF-8 (no surrogate).
  bool is_strict() const { return error == nullptr && !is_surrogate(); }
};

// Decodes the UTF-8 character that starts at byte `at` of `text`: the one
// UTF-8 validator of the project (Utf8ToModifiedUtf8, the CLI's JSON
// quoting). Shortest forms only, at most U+10FFFF; surrogates are decoded
// (check `is_strict()` where they are not allowed).
// Precondition: `at < text.size()`.
Utf8Char DecodeUtf8Char(absl::string_view text, size_t at);

// The offset of the first byte of `body` at which Java's
// `DataInputStream.readUTF` would fail (see the decoding rules above), or
// `body.size()` if the whole body is valid modified UTF-8. The same check
// `ModifiedUtf8ToUtf8` makes, without producing the text.
size_t FindInvalidModifiedUtf8(ByteView body);

// The length of the longest prefix of UTF-8 `text` that is at most `max` bytes
// and does not end inside a multi-byte character (for shortening names in
// messages and dumps without breaking a character).
size_t Utf8PrefixLength(absl::string_view text, size_t max);

// Appends the standard UTF-8 form of code point `cp` (<= U+10FFFF; a
// surrogate code point gets the generalized 3-byte form) to `*out`.
void AppendCodePoint(uint32_t cp, std::string* out);

// True if `body` is 7-bit ASCII without NUL, i.e. identical in both encodings.
// Lets hot paths skip conversion.
bool IsPlainAscii(ByteView body);

// True if `body` is in the form `DataOutputStream.writeUTF` writes: every
// character in its shortest encoding, U+0000 as C0 80. False for the forms
// only `readUTF` accepts (a raw 0x00 byte, a longer 2- or 3-byte form), which
// spell a text in other bytes than its encoding: byte comparisons with an
// encoded text do not hold for such a body. Precondition: `body` is valid
// modified UTF-8 (`FindInvalidModifiedUtf8(body) == body.size()`). ASCII
// bodies are checked eight bytes at a time.
bool IsShortestModifiedUtf8(ByteView body);

}  // namespace flinkstate::serde

#endif  // FLINKSTATE_SERDE_MODIFIED_UTF8_H_
