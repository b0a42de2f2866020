// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: canonical.h
// -----------------------------------------------------------------------------
// A deterministic text description of the object graph in a stream, defined
// so that a Java program can print the same text from the live objects it
// serialized (tests/conformance/jdk/Conformance.java does). The JDK is thereby
// the referee of the decoder: equal text = same graph, same sharing.
//
//   ```c++ (const javaobj::Stream& stream)
//   FLINKSTATE_ASSIGN_OR_RETURN(std::string text, DescribeStream(stream));
//   ```
//
// Format (one construct per line, two spaces of indentation per level; the
// format is specified in docs/formats/java-serialization.md, "Canonical graph
// description"):
//   stream
//     top                              a top-level object follows (indented)
//     block <hex>                      top-level block data (consecutive merged)
//     reset
//   null | ref #N
//   #N string "<text>"                 printable ASCII except " and \ as is,
//                                      else \uXXXX per UTF-16 code unit
//   #N enum <class> <NAME>
//   #N class <class>                   (TC_CLASS)
//   #N array <class> length=<n>        then `values v1 v2 ...` (<= 32 primitive
//                                      elements), `fnv64=<hex>` of the packed
//                                      big-endian elements, or element lines
//   #N object <class>                  then per class of the chain, super first:
//     class <class>
//       <field> = <primitive> | <field> = (value on the next lines)
//       entries <n> / elements <n>     known JDK layouts: key/value lines
//       data                           other custom data: `block <hex>` and values
//     external                         Externalizable data: `block <hex>` and values
//   primitives: byte|short|int|long <decimal>, char 0x<4 hex>, boolean
//   true|false, float 0x<8 hex>, double 0x<16 hex> (raw IEEE bits)
// `#N` numbers values (objects, strings, arrays, enums, classes) in order of
// first appearance; `ref #N` is a later appearance of the same instance.
// Class descriptors are not values and are not numbered.
//
// Thread safety: the functions only read the `Stream`; any number of threads
// may describe the same stream at the same time.

#ifndef FLINKSTATE_JAVAOBJ_CANONICAL_H_
#define FLINKSTATE_JAVAOBJ_CANONICAL_H_

#include <string>

#include "absl/status/statusor.h"
#include "flinkstate/javaobj/object_model.h"

namespace flinkstate::javaobj {

struct DescribeOptions {
  // Upper bound of the description, in bytes. Lines repeat class and field
  // names and are indented by depth, so the text of a hostile stream can be
  // hundreds of times its size (a long field name and 1-byte nulls).
  uint64_t max_bytes = uint64_t{1} << 30;
};

// Describes every top-level item of `stream`.
// Return values: `InvalidArgument` for a malformed string body;
// `ResourceExhausted` if the text would exceed `options.max_bytes`.
[[nodiscard]] absl::StatusOr<std::string> DescribeStream(
    const Stream& stream, const DescribeOptions& options = {});

// Describes one value (and everything reachable from it) with fresh numbers.
// Return values as for `DescribeStream`.
[[nodiscard]] absl::StatusOr<std::string> DescribeValue(
    const Stream& stream, ItemId id, const DescribeOptions& options = {});

// Escapes a modified UTF-8 body as the format's string text.
std::string EscapeJavaString(serde::ByteView mutf8_body);

}  // namespace flinkstate::javaobj

#endif  // FLINKSTATE_JAVAOBJ_CANONICAL_H_
