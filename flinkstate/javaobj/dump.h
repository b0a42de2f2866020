// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: dump.h
// -----------------------------------------------------------------------------
// An annotated tree of any Java serialization stream, for `flinkstate dump`:
// offset, handle, type code, class and field names and values; references
// show what they point to; large arrays, strings and block data are
// summarised with their size (a 50M-element `long[]` prints a few elements).
//
//   std::string text;
//   FLINKSTATE_RETURN_IF_ERROR(javaobj::DumpStream(file.bytes(), {}, &text));
//
// Text mode, one line per construct:
//   <offset, 8 hex digits>  <indentation><construct> [handle 0x7e....]
// JSON mode: one object {"header":..., "contents":[item...]} where each item
// has "offset", "size", "kind", optional "handle" and kind-specific members
// ("class", "fields", "classdata", "annotation", "elements", "value",
// "target"). Output is deterministic.

#ifndef FLINKSTATE_JAVAOBJ_DUMP_H_
#define FLINKSTATE_JAVAOBJ_DUMP_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate::javaobj {

struct DumpOptions {
  bool json = false;
  // Primitive array elements shown before "... (n more)".
  uint64_t max_array_elements = 8;
  // Block-data bytes shown in hex.
  uint64_t max_block_bytes = 32;
  // String characters (bytes of the UTF-8 text) shown.
  uint64_t max_string_bytes = 120;
  // Upper bound of the text appended, in bytes. Every object line repeats its
  // class name, so the text can be far larger than the stream (a 64 KiB
  // class name and 1-byte back-references); past this bound the dump stops.
  uint64_t max_output_bytes = uint64_t{1} << 30;
  DecodeOptions decode;
};

// Decodes `input` and appends the dump to `*out`.
// Return values: the decoder's error; `ResourceExhausted` if the dump would
// exceed `options.max_output_bytes` (nothing is appended in either case).
[[nodiscard]] absl::Status DumpStream(serde::ByteView input,
                                      const DumpOptions& options,
                                      std::string* out);

// The same text written to `out` as it is made, in pieces of about 1 MiB at
// item boundaries, so memory stays bounded by the decoded model whatever the
// size of the text. Return values as above, and `DataLoss` if `out` fails;
// on `ResourceExhausted` the text written so far stays written.
[[nodiscard]] absl::Status DumpStream(serde::ByteView input,
                                      const DumpOptions& options,
                                      std::ostream& out);

}  // namespace flinkstate::javaobj

#endif  // FLINKSTATE_JAVAOBJ_DUMP_H_
