// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: stream_writer.h
// -----------------------------------------------------------------------------
// Writes Java Object Serialization streams: the whole model of a decoded
// `Stream` (lossless: decode -> encode reproduces every JDK-written stream
// byte for byte), and the small building blocks the rewriter uses for new
// content (strings, references, JDK-style block data chunking).
//
//   ```c++ (const javaobj::Stream& s, const serde::MappedFile& file)
//   FLINKSTATE_ASSIGN_OR_RETURN(std::string bytes, javaobj::EncodeStream(s));
//   FLINKSTATE_RETURN_IF_ERROR(javaobj::VerifyRoundTrip(file.bytes()));
//   ```
//
// Identity: the encoder writes every construct from the model (type codes,
// names, flags, field lists, handles of references recomputed from the
// referenced item, the recorded block-data framing and string forms); payload
// bytes (strings, primitive arrays, block data, primitive field values) are
// written from their input views.
//
// Thread safety: the functions keep no state and only read the `Stream`;
// concurrent calls are safe. The `Append*` helpers write to the caller's string,
// which belongs to one thread while they do; `EncodeStreamTo` calls its sink
// from the calling thread only.

#ifndef FLINKSTATE_JAVAOBJ_STREAM_WRITER_H_
#define FLINKSTATE_JAVAOBJ_STREAM_WRITER_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "flinkstate/javaobj/object_model.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate::javaobj {

// Receives encoded output in order. Lifetime: the view is valid only during
// the call (it may point into the input or into an internal buffer).
using ByteSink = std::function<absl::Status(serde::ByteView)>;

// Encodes `stream` (header and every top-level item) into `sink`, in pieces
// of at most ~1 MiB plus whole payload views (a 400 MB `long[]` is passed as
// one view of the input, never copied).
// Return values: the sink's first error; `Internal` for an inconsistent model.
[[nodiscard]] absl::Status EncodeStreamTo(const Stream& stream,
                                          const ByteSink& sink);

// Encodes `stream` into a string (for tests and small streams).
[[nodiscard]] absl::StatusOr<std::string> EncodeStream(const Stream& stream);

// Encodes one item (and everything nested in it) as it appears in the stream.
[[nodiscard]] absl::StatusOr<std::string> EncodeItem(const Stream& stream,
                                                     ItemId id);

// Decodes `input`, re-encodes it and compares byte for byte.
// Return values: the decoder's error; `DataLoss` "javaobj: re-encoded stream
// differs from the input at byte <n>" (or names the length difference).
[[nodiscard]] absl::Status VerifyRoundTrip(serde::ByteView input,
                                           const DecodeOptions& options = {});
// The same check on a stream already decoded from its input (`s.input()`,
// with `options`): re-encodes `s` and compares, without decoding again.
// Return values: the `DataLoss` errors above.
[[nodiscard]] absl::Status VerifyRoundTrip(const Stream& s);

// Appends a new string item as `ObjectOutputStream.writeString` does:
// TC_STRING + u2 length when the modified UTF-8 encoding of `utf8` is at most
// 65535 bytes, else TC_LONGSTRING + i8 length (spec §8).
// Return values: `InvalidArgument` if `utf8` is not valid UTF-8.
[[nodiscard]] absl::Status AppendNewString(absl::string_view utf8,
                                           std::string* out);

// Appends `TC_REFERENCE (0x7E0000 + handle)`.
void AppendReference(uint32_t handle, std::string* out);

// Frames `data` as block data exactly as `ObjectOutputStream`'s block-data
// mode does for bytes written at the start of an empty buffer (§10.2): full
// 1024-byte TC_BLOCKDATALONG blocks, then the rest as one TC_BLOCKDATA
// (<= 255 bytes) or TC_BLOCKDATALONG block. Empty `data` appends nothing.
void AppendBlockData(serde::ByteView data, std::string* out);

}  // namespace flinkstate::javaobj

#endif  // FLINKSTATE_JAVAOBJ_STREAM_WRITER_H_
