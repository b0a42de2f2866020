// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: fuzz_entries.h
// -----------------------------------------------------------------------------
// Fuzz entry points: one function per fuzz target, each a property check over
// the library (not only "does not crash"). The `<target>_fuzzer.cc` files are
// three-line shims that call them; the same functions are replayed over the
// seed corpus and the saved crashers by `fuzz/standalone_main.cc` in every
// ordinary build (ctest label `fuzz_regression`).
//
//   extern "C" int LLVMFuzzerTestOneInput(const uint8_t* d, size_t n) {
//     return flinkstate::fuzz::RunTarget(flinkstate::fuzz::FuzzJavaObjStream, d, n);
//   }
//
// Return values of the entry functions: OK when the input was rejected
// cleanly or accepted and every property held. A violated property is not
// returned: it is reported on stderr and the process aborts (`PropertyFailed`),
// so that libFuzzer and the standalone driver both record it as a crash.
//
// Memory: `RunTarget` arms the allocation guard of `alloc_guard.h` for the
// duration of one input: a single allocation or the live total above
// `64 * input size + 1 MiB` aborts with a report.

#ifndef FLINKSTATE_FUZZ_FUZZ_ENTRIES_H_
#define FLINKSTATE_FUZZ_FUZZ_ENTRIES_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate::fuzz {

using EntryFn = absl::Status (*)(serde::ByteView);

// Arms the allocation guard for `size`, calls `fn`, disarms it. Returns 0
// (libFuzzer's "keep going").
int RunTarget(EntryFn fn, const uint8_t* data, size_t size);

// Counts that a property check ran to completion on an input ("rewriter:
// remove entry checked"); `PrintStats` lists the counts on stderr, so a replay
// shows which properties the seeds actually reach.
void CountOutcome(const char* what);
void PrintStats();

// Prints `what` (with the target name) and aborts.
[[noreturn]] void PropertyFailed(absl::string_view target,
                                 absl::string_view what);

// MUTF-8 <-> UTF-8: decode -> encode -> decode is stable; valid UTF-8 ->
// MUTF-8 -> UTF-8 is the identity; the encoder never emits a 0x00 byte or a
// 4-byte sequence.
[[nodiscard]] absl::Status FuzzModifiedUtf8(serde::ByteView input);

// S3/STS XML bodies (objstore/s3_xml.h): every parser accepts or fails with
// an "objstore: xml:" InvalidArgument; an accepted listing page, error body
// re-rendered as XML parses to the same fields; a truncated page has a token;
// accepted credentials have a key id and secret.
[[nodiscard]] absl::Status FuzzS3Xml(serde::ByteView input);

// Java stream decoder: accepts or fails with a `javaobj:` status; an accepted
// stream describes (canonical.h) and views every container it can; trailing
// data is the tail after the last item; the `dump --summary` counts equal the
// dump's. Input that `serde::DecodeInputFormat` decodes (gzip, hex, Base64,
// ConfigMap text) is decoded within its bound and must round-trip.
[[nodiscard]] absl::Status FuzzJavaObjStream(serde::ByteView input);

// Decode -> encode reproduces the input byte for byte; an empty rewriter plan
// is the identity and applies to the input.
[[nodiscard]] absl::Status FuzzJavaObjRoundTrip(serde::ByteView input);

// Decode, apply one edit chosen by the last bytes of the input (remove a
// container entry, remove a top-level item, replace a string), apply the plan
// and decode again: the edit took effect and nothing else changed (canonical
// descriptions compared item by item).
[[nodiscard]] absl::Status FuzzJavaObjRewriter(serde::ByteView input);

// Metadata reader on the input as a whole file and, behind a valid header of
// version `1 + input[0] % 7`, on `input[1:]`. Accepted files re-encode byte
// for byte (EncodeStateFile + CheckReproducesInput + ApplyToString).
[[nodiscard]] absl::Status FuzzMetadataReader(serde::ByteView input);

// Operator-snapshot reader (and ReadStateFile's sniffing) with the same
// re-encoding property.
[[nodiscard]] absl::Status FuzzOperatorSnapshotReader(serde::ByteView input);

// On accepted files: the identity plan reproduces the input; strip-state of a
// state name present in the file (chosen by the last input byte) and relocate
// of a path prefix present in the file produce outputs that decode, pass
// `VerifyStripped` / `VerifyRelocated`, and whose copy pieces hold exactly
// the input's bytes in input order.
[[nodiscard]] absl::Status FuzzMetadataStripRelocate(serde::ByteView input);

// The high-availability files, every input through all three decoders:
//  1. Kubernetes ConfigMap value: if the input looks like Base64 of a Java
//     stream, `DecodeBase64JavaStream`; an accepted value re-encodes to the
//     same text (whitespace around it aside) and the rest of the checks run on
//     the decoded bytes;
//  2. ZooKeeper / Kubernetes pointer (`DecodeHaPointer`): an accepted pointer
//     round-trips through javaobj byte for byte, its `format` agrees with its
//     root class, and relocating a prefix of its path gives a pointer whose
//     path is the new prefix + the rest;
//  3. CompletedCheckpoint mapping (`ReadCompletedCheckpointBytes`): an
//     accepted file round-trips through javaobj, builds a report, and
//     strip-state of a state name present in it (chosen by the last input
//     byte) and relocate of a prefix of a present path give outputs that pass
//     `VerifyStrippedCompletedCheckpoint` / `VerifyRelocatedCompletedCheckpoint`.
// Errors are never `Internal` and never empty.
[[nodiscard]] absl::Status FuzzHaFiles(serde::ByteView input);

// fuzz_entries_opstate.cc: the operator-state stream header and element
// extents (properties: see the definition).
[[nodiscard]] absl::Status FuzzOperatorStateStream(serde::ByteView input);

}  // namespace flinkstate::fuzz

#endif  // FLINKSTATE_FUZZ_FUZZ_ENTRIES_H_
