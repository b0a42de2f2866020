// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: ha_pointer.h
// -----------------------------------------------------------------------------
// The small Java-serialized pointers that Flink's HA services keep for every
// retained checkpoint, and what they point to.
//
//   ```c++ (serde::ByteView text)
//   FLINKSTATE_ASSIGN_OR_RETURN(std::string raw, DecodeBase64JavaStream(text));
//   FLINKSTATE_ASSIGN_OR_RETURN(HaPointer p, DecodeHaPointer(serde::AsBytes(raw)));
//   // p.path == "hdfs://nn:8020/flink/ha/default/completedCheckpoint3c9a1f0b2e7d"
//   ```
//
// Java (spec/completed-checkpoint.md §1.3-§1.4), Flink 1.13-2.x:
//   * ZooKeeper znode data, and Kubernetes ConfigMap values of 1.13/1.14:
//     `org.apache.flink.runtime.state.RetrievableStreamStateHandle`
//     { wrappedStreamStateHandle: FileStateHandle { J stateSize, filePath: Path } }
//   * Kubernetes ConfigMap values of 1.15+: standard Base64 (with padding) of
//     `org.apache.flink.kubernetes.highavailability.KubernetesStateHandleStore$
//     StateHandleWithDeleteMarker` { Z markedForDeletion, inner: the above };
//     its computed SUID tells 1.15-1.18 from 1.19+.
//
// Thread safety: the functions keep no state and only read their inputs;
// concurrent calls are safe, also on the same model and input. Results belong
// to the caller.

#ifndef FLINKSTATE_FLINKSTATE_HA_POINTER_H_
#define FLINKSTATE_FLINKSTATE_HA_POINTER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "flinkstate/javaobj/object_model.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate {

inline constexpr char kRetrievableStreamStateHandleClass[] =
    "org.apache.flink.runtime.state.RetrievableStreamStateHandle";
inline constexpr char kStateHandleWithDeleteMarkerClass[] =
    "org.apache.flink.kubernetes.highavailability."
    "KubernetesStateHandleStore$StateHandleWithDeleteMarker";

struct HaPointer {
  // "zookeeper" for a bare RetrievableStreamStateHandle (also Kubernetes
  // 1.13/1.14), "kubernetes" for the delete-marker wrapper.
  std::string format;
  std::string root_class;
  bool marked_for_deletion = false;
  // Flink releases the wrapper's SUID belongs to ("1.15-1.18", "1.19+"), or
  // "" for the bare handle (same in every release).
  std::string flink_versions;
  // The `Path` URI string of the completedCheckpoint file and the size the
  // JobManager recorded for it (the file length at write time).
  std::string path;
  int64_t state_size = 0;
};

// True if `text` (optionally surrounded by whitespace) starts like the Base64
// of a Java stream ("rO0AB").
bool LooksLikeBase64JavaStream(serde::ByteView text);

// Decodes standard Base64 text (whitespace around it ignored, padding
// required as `java.util.Base64.getEncoder()` writes it).
// Return values: `InvalidArgument` naming the first bad character and its byte
// offset, a bad length or padding, or a result that is not a Java stream
// (`AC ED 00 05`).
[[nodiscard]] absl::StatusOr<std::string> DecodeBase64JavaStream(serde::ByteView text);

// Reads a pointer from a Java stream (already Base64-decoded).
// Return values: the javaobj decoder's errors (`OutOfRange` truncated,
// `InvalidArgument` malformed); `InvalidArgument` "ha-pointer: <path>:
// expected ..., found <class> at byte <n>" for another object graph.
[[nodiscard]] absl::StatusOr<HaPointer> DecodeHaPointer(serde::ByteView java_stream);

inline constexpr char kFlinkPathClass[] = "org.apache.flink.core.fs.Path";

// The one way the HA code reads a Flink `Path` (flink-core
// `org.apache.flink.core.fs.Path`, 1.13-2.x: one field `uri` of the final
// class `java.net.URI`, whose serialized form is its `string` field): the
// defining string item of `path.uri.string`, or `javaobj::kNoItem` if `path`
// is null, no `Path` (or subclass), its `uri` no `java.net.URI`, or the
// string missing. The pointer decoder, the CompletedCheckpoint mapping and
// the relocation (which rewrites every `java.net.URI` string) all agree on
// it: a path the readers report is always one relocation can rewrite.
javaobj::ItemId FlinkPathUriString(const javaobj::Stream& s, javaobj::ItemId path);

// The local file-system path of a Flink path URI: "file:/a/b", "file:///a/b"
// and "/a/b" give "/a/b"; any other scheme, and any string with a NUL in it,
// gives "".
std::string LocalPathOfUri(const std::string& uri);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_HA_POINTER_H_
