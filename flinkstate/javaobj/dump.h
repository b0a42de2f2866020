// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: dump.h
// -----------------------------------------------------------------------------
// An annotated tree of any Java serialization stream, for `flinkstate dump`:
// offset, handle, type code, class and field names and values; references
// show what they point to; large arrays, strings and block data are
// summarised with their size (a 50M-element `long[]` prints a few elements).
//
//   ```c++ (const serde::MappedFile& file)
//   std::string text;
//   FLINKSTATE_RETURN_IF_ERROR(javaobj::DumpStream(file.bytes(), {}, &text));
//   ```
//
// Text mode, one line per construct:
//   <offset, 8 hex digits>  <indentation><construct> [handle 0x7e....]
// JSON mode (schema: flinkstate/javaobj/dump.schema.json, described in
// docs/formats/java-serialization.md "dump --json"): one object
// {"magic", "version", "contents":[item...], "aborted"?, "trailing"?} where
// each item has "offset", "size", "kind", optional "handle" and
// kind-specific members. Values are the values Java reads:
//   * strings: "value" is the Java string as a JSON string (a surrogate pair
//     is its character; an unpaired surrogate is the escape `\uDXXX` and the
//     item says "unpaired_surrogates":true); the whole value unless
//     `max_json_string_bytes` cuts it (then "truncated":true); "length" is the
//     encoded (modified UTF-8) size, "utf16_length" the Java `length()`;
//   * byte/short/int: numbers; long: a number if |v| <= 2^53, else a decimal
//     string; boolean: true/false; char: a one-character string;
//   * float/double: the shortest decimal that reads back to the same bits
//     (`std::to_chars`; integral values end in ".0", so -0.0 stays -0.0);
//     NaN, Infinity, -Infinity, and non-canonical NaNs as "NaN(0x<bits>)",
//     are JSON strings.
// Text mode prints floats and doubles the same way. Output is deterministic.
// Summary mode (`summary`): a class histogram like `jmap -histo` (instances
// and the bytes each item takes itself, without nested items) and item-kind,
// handle and depth statistics; the shallow bytes of all rows add up to the
// stream size minus the 4-byte header and any trailing bytes.
//
// Thread safety: `DumpStream` keeps no state; concurrent calls are safe, also
// on the same input. Each call's output string or stream belongs to it.

#ifndef FLINKSTATE_JAVAOBJ_DUMP_H_
#define FLINKSTATE_JAVAOBJ_DUMP_H_

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate::javaobj {

struct DumpOptions {
  bool json = false;
  // Primitive array elements shown before "... (n more)".
  uint64_t max_array_elements = 8;
  // Block-data bytes shown in hex.
  uint64_t max_block_bytes = 32;
  // Text mode: string characters (bytes of the UTF-8 text) shown.
  uint64_t max_string_bytes = 120;
  // JSON mode: bytes of the UTF-8 text of a string value written (whole
  // characters); a cut value carries "truncated":true. Default: all.
  uint64_t max_json_string_bytes = std::numeric_limits<uint64_t>::max();
  // A summary instead of the tree (see above).
  bool summary = false;
  // Upper bound of the text appended, in bytes. Every object line repeats its
  // class name, so the text can be far larger than the stream (a 64 KiB
  // class name and 1-byte back-references); past this bound the dump stops.
  uint64_t max_output_bytes = uint64_t{1} << 30;
  DecodeOptions decode;
};

// One row of the class histogram: a class (descriptor name; "java.lang.String",
// "java.lang.Class"; "(class descriptors)", "(field type strings)" (the
// TC_STRINGs of a descriptor's object field types), "(enum constant names)"
// (the TC_STRING of each TC_ENUM): neither is a String value the JDK's
// `readObject` returns, "(references)", "(nulls)", "(block data)", "(resets)",
// "(exceptions)" for the other items), its
// instances (items) and the bytes they take themselves (each item's range
// minus its nested items' ranges).
struct ClassHistogramRow {
  std::string class_name;
  uint64_t instances = 0;
  uint64_t bytes = 0;
};

// What `dump --summary` shows, computed in one streaming pass (`ScanStream`):
// memory is the handle table of the current epoch (8 bytes per handle), the
// class descriptors and one row per class, never the item tree.
struct StreamSummary {
  uint64_t bytes = 0;      // input size
  uint64_t items = 0;      // grammar occurrences, as `Stream::num_items`
  uint64_t top_level = 0;  // as `Stream::top_level().size()`
  // Items per `ItemKind` (index = the enumerator's value).
  uint64_t kinds[static_cast<int>(ItemKind::kException) + 1] = {};
  uint64_t handles_assigned = 0;
  uint32_t epochs = 0;  // as `Stream::num_epochs`
  uint64_t max_handles_per_epoch = 0;
  uint64_t references = 0;  // TC_REFERENCE items
  // Value depth: for every value (not a descriptor, not inside one, not the
  // class descriptor reference of an object/array/enum/class), the number of
  // items it is nested in; the maximum, the sum and the number of values.
  uint64_t max_depth = 0;
  uint64_t depth_sum = 0;
  uint64_t values = 0;
  // By bytes (descending), then name; the bytes of all rows add up to
  // `bytes` - 4 - `trailing.size`.
  std::vector<ClassHistogramRow> classes;
  bool aborted = false;
  serde::SourceRange trailing;
};

// Return values: as `DecodeStream` (the same inputs are accepted).
[[nodiscard]] absl::StatusOr<StreamSummary> SummarizeStream(serde::ByteView input,
                                                            const DecodeOptions& options = {});

// Decodes `input` and appends the dump to `*out`. With `options.summary` the
// input is scanned (`SummarizeStream`), not decoded into a model.
// Return values: the decoder's error; `ResourceExhausted` if the dump would
// exceed `options.max_output_bytes` (nothing is appended in either case).
[[nodiscard]] absl::Status DumpStream(serde::ByteView input,
                                      const DumpOptions& options,
                                      std::string* out);

// As above for a stream already decoded (`options.decode` is not used).
[[nodiscard]] absl::Status DumpDecodedStream(const Stream& stream, const DumpOptions& options,
                                             std::string* out);

// The same text written to `out` as it is made, in pieces of about 1 MiB at
// item boundaries, so memory stays bounded by the decoded model whatever the
// size of the text. Return values as above, and `DataLoss` if `out` fails;
// on `ResourceExhausted` the text written so far stays written.
[[nodiscard]] absl::Status DumpStream(serde::ByteView input,
                                      const DumpOptions& options,
                                      std::ostream& out);

// The shortest decimal text that reads back to the same float / double
// (at most 9 / 17 significant digits), "NaN", "Infinity", "-Infinity", and
// "NaN(0x<bits>)" for a NaN other than Java's canonical one
// (`Float.floatToRawIntBits` 0x7fc00000, `Double` 0x7ff8000000000000).
std::string FormatJavaFloat(float f);
std::string FormatJavaDouble(double d);

// "N trailing bytes after the last object at byte B" for `s.trailing()`.
std::string TrailingDataMessage(const Stream& s);

}  // namespace flinkstate::javaobj

#endif  // FLINKSTATE_JAVAOBJ_DUMP_H_
