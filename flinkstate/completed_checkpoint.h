// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: completed_checkpoint.h
// -----------------------------------------------------------------------------
// Reads a Flink HA `completedCheckpoint<hex>` file (a Java-serialized
// `org.apache.flink.runtime.checkpoint.CompletedCheckpoint` object graph) into
// the same `StateFile` model that `_metadata` files use, so that inspect,
// diff, verify-style checks and strip-state work unchanged on both.
//
//   ```c++ (serde::ByteView bytes)
//   FLINKSTATE_ASSIGN_OR_RETURN(javaobj::Stream s, javaobj::DecodeStream(bytes));
//   FLINKSTATE_ASSIGN_OR_RETURN(StateFile f, ReadCompletedCheckpoint(s));
//   report::Report r = BuildReport(f, bytes, {});   // same schema as _metadata
//   ```
//
// Mapping (Flink 1.13-2.x; spec/completed-checkpoint.md §2-§4). Every field is
// found by its name in the stream's own class descriptors, never by version:
//   CompletedCheckpoint.checkpointID            -> metadata.checkpoint_id
//   operatorStates HashMap<OperatorID, OperatorState|FullyFinishedOperatorState>
//                                               -> metadata.operators (map order)
//   OperatorState.operatorSubtaskStates HashMap<Integer, OperatorSubtaskState|
//     FinishedOperatorSubtaskState>             -> subtasks (sorted by index)
//   StateObjectCollection.stateObjects          -> the handle vectors
//   OperatorStreamStateHandle / FileMerging...  -> OperatorStateHandle tag 4 / 17;
//     stateNameToPartitionOffsets entries       -> StateNameEntry; the `[J`
//     payload is packed big-endian i64, so `OffsetsArray{payload, count}`
//     means the same as for `_metadata`
//   KeyGroupsStateHandle (3 before 1.15, 12 with stateHandleId),
//   KeyGroupsSavepointStateHandle (7), IncrementalRemoteKeyedStateHandle
//   (5 / 11; Map shape <=1.17 and List<HandleAndLocalPath> shape >=1.18),
//   ChangelogStateBackendHandleImpl (8 / 14), ChangelogStateHandleStreamImpl
//   (10 / 13), InMemoryChangelogStateHandle (9)  -> KeyedStateHandle
//   ByteStreamStateHandle (1), FileStateHandle (2), RelativeFileStateHandle
//   (6), SegmentFileStateHandle (15), EmptySegmentFileStateHandle (16)
//                                               -> StreamStateHandle
//   InputChannelStateHandle / ResultSubpartitionStateHandle (and the merged
//   forms of later 2.x)                          -> ChannelStateHandle
// Ranges point into the Java stream: an operator is its map entry (key and
// value), a subtask its map entry, a handle its defining object item, a state
// name entry its map entry. A handle of an unknown class is kept as tag 0
// and listed in `CompletedCheckpointInfo::unknown_classes`.
//
// Lifetime: the model holds ranges and item ids of the `javaobj::Stream` it
// was read from; both need the same input bytes.
//
// Thread safety: the readers keep no state and only read the stream;
// concurrent calls are safe. The `StateFile` they return is immutable like any
// decoded model (checkpoint_metadata.h).

#ifndef FLINKSTATE_FLINKSTATE_COMPLETED_CHECKPOINT_H_
#define FLINKSTATE_FLINKSTATE_COMPLETED_CHECKPOINT_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/checkpoint_properties.h"
#include "flinkstate/javaobj/object_model.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate {

inline constexpr char kCompletedCheckpointClass[] =
    "org.apache.flink.runtime.checkpoint.CompletedCheckpoint";

// One known shape of a Flink class at a position of the CompletedCheckpoint
// graph: the table the reader consults (a new release's shape is one entry).
// The shapes are those of the class descriptors real Flink releases write
// (tests/testdata/flink-*/…completedCheckpoint*).
//
// How the reader uses the table at a position that plays `role`:
//   * a class named in an entry of the role is read by name; if its own
//     descriptor's fields are those of no entry for that name, a
//     `CLASS_FIELDS_DRIFT` warning names the nearest entry and the fields
//     added and missing (entries with an empty `declared` list are not
//     compared);
//   * a class named in no entry of the role is read by structure as the
//     nearest entry (fewest `fields` missing from its descriptor chain; at
//     least one present) with a `CLASS_SHAPE_DRIFT` warning;
//   * a class named in an entry with a non-zero `suid` but another
//     serialVersionUID gets a `SERIAL_VERSION_UID_CHANGED` warning.
struct KnownClassShape {
  const char* role;        // "CompletedCheckpoint", "OperatorState", ...
  const char* class_name;  // the Java class
  const char* releases;    // Flink releases with this shape, "1.13-2.x"
  int64_t suid;            // declared serialVersionUID; 0: not checked
  std::vector<const char*> fields;  // fields the reader needs
  // Every field the class's own descriptor declares in these releases, in
  // wire order; empty: not compared.
  std::vector<const char*> declared = {};
};
const std::vector<KnownClassShape>& KnownClassShapes();

// An operator-state handle of the graph and where it sits; `map` is the
// `stateNameToPartitionOffsets` map object (definition item), the key of
// every strip edit.
struct OperatorHandleRef {
  int operator_index = -1;
  int subtask_index = -1;
  std::string slot;  // "managedOperatorState" / "rawOperatorState"
  javaobj::ItemId handle = javaobj::kNoItem;
  javaobj::ItemId map = javaobj::kNoItem;
  // `ScanCompletedCheckpoint` (no item ids): the first byte of the handle's
  // definition and of the map's (0 for a null map).
  uint64_t handle_offset = 0;
  uint64_t map_offset = 0;
};

// What a CompletedCheckpoint carries beyond the `_metadata` model.
struct CompletedCheckpointInfo {
  // `JobID.toString()`: lowerPart then upperPart, 32 lowercase hex digits.
  std::string job_id;
  int64_t timestamp = 0;
  // 1.14+: `completionTimestamp`; 1.13: `duration` (then `has_duration`).
  int64_t completion_timestamp = 0;
  bool has_duration = false;
  int64_t duration = 0;
  std::string external_pointer;
  // Class of `storageLocation`, its `exclusiveCheckpointDir` and the path (or
  // inline handle name) of `metadataHandle`.
  std::string storage_location_class;
  std::string exclusive_checkpoint_dir;
  std::string metadata_path;
  CheckpointPropertiesSummary properties;
  bool has_restored_properties = false;
  CheckpointPropertiesSummary restored_properties;
  int master_hook_states = 0;
  // Flink releases whose class shapes match the descriptors ("1.13",
  // "1.14-1.15", "1.16-1.17", "1.18", "1.19-1.20", "2.x").
  std::string flink_versions;
  // "<path>: <class>" for every handle whose class is not known.
  std::vector<std::string> unknown_classes;
  // Drifted class shapes (see `KnownClassShapes`).
  struct ShapeWarning {
    // CLASS_SHAPE_DRIFT, CLASS_FIELDS_DRIFT or SERIAL_VERSION_UID_CHANGED.
    std::string code;
    std::string path;        // item path in the graph ("" for descriptors)
    std::string class_name;  // the class as the stream names it
    // The table entry compared with: "<class> (Flink <releases>)".
    std::string nearest_shape;
    uint64_t offset = 0;     // the object's (or descriptor's) first byte
    std::string message;     // the same in prose
  };
  std::vector<ShapeWarning> shape_warnings;
  std::vector<OperatorHandleRef> operator_handles;
};

// Maps the decoded stream onto the model. `file.kind` is
// `StateFileKind::kCompletedCheckpoint`, `file.completed` is set and
// `file.metadata.version` is 0.
//
// Return values (message "completedCheckpoint: <path>: <problem> at byte <n>"):
//   `InvalidArgument` if the top-level object is not a CompletedCheckpoint,
//     or a known position holds a value of an unexpected class (e.g. an
//     `operatorStates` value that is no OperatorState) or a container whose
//     custom data does not match its layout;
//   `DataLoss` if the writer aborted the stream (TC_EXCEPTION: Flink leaves
//     such partial files behind when serialization fails).
[[nodiscard]] absl::StatusOr<StateFile> ReadCompletedCheckpoint(
    const javaobj::Stream& stream);

// Receives the operators of a completedCheckpoint one at a time from
// `ReadCompletedCheckpointStreaming`: `index` is the operator's position in
// `operatorStates` (map order, as in `StateFile::metadata.operators`), `op`
// the same value `ReadCompletedCheckpoint` would put there. An error stops
// the reading and is returned as is.
using CompletedOperatorSink = std::function<absl::Status(int index, OperatorState&& op)>;

// `ReadCompletedCheckpoint`, handing each operator to `sink` as soon as it is
// read instead of keeping it, so that memory holds one operator's model (a
// wide job's 100 operators x 512 subtasks of ~60 file handles each are
// ~3 M handles of ~725 B in the whole model). The returned file is the
// whole model's but with `metadata.operators` empty; `completed` is complete
// (its warnings, unknown classes and `operator_handles` cover every
// operator). Errors: as `ReadCompletedCheckpoint`, and the sink's; on an
// error the sink has seen a prefix of the operators.
// Thread safety: `sink` is called on the calling thread.
[[nodiscard]] absl::StatusOr<StateFile> ReadCompletedCheckpointStreaming(
    const javaobj::Stream& stream, const CompletedOperatorSink& sink);

// Decodes `input` with javaobj and reads it. Errors of the decoder pass
// through (`OutOfRange` for truncation, `InvalidArgument` for bad bytes, ...).
// Lifetime: `*stream_out` (if given) borrows `input`.
[[nodiscard]] absl::StatusOr<StateFile> ReadCompletedCheckpointBytes(
    serde::ByteView input, javaobj::Stream* stream_out = nullptr);

struct ScanCompletedCheckpointOptions {
  // Calls `head_sink` with the file's head (the model without operators:
  // checkpoint id, `completed` with everything the graph's own fields give)
  // before the first operator reaches the sink; the graph's fields that
  // follow `operatorStates` in the stream (props, storage location) are read
  // first, by skipping the operators once and reading them again. For
  // writers whose output puts the head first (the JSON report). The head's
  // `completed` lacks what only the whole read knows: shape warnings,
  // unknown classes, operator handles and the release hint.
  bool head_first = false;
  std::function<absl::Status(const StateFile& head)> head_sink;
  // The input is a read-only file mapping whose pages may be released behind
  // the reader (`serde::InputReleaser`), so that resident memory stays flat.
  bool release_consumed_input = false;
  // False: the model's strings (`Utf`: handle names, paths, state names,
  // ids) are left in the input: `value` empty and `range` the string's u2
  // length and body, as `MetadataReadOptions::decode_strings` false leaves
  // them (`UtfBody`, the report's text source read them there). A
  // TC_LONGSTRING is decoded either way.
  bool decode_strings = true;
  // True: the keyed and channel state slots of every subtask are read past
  // (their grammar checked) but not into the model, which holds only the
  // operator state handles: for the edits of operator state, whose plans
  // and verifies look at nothing else, in a fraction of the time.
  bool operator_state_only = false;
};

// `ReadCompletedCheckpointStreaming` in one pass over `input` with
// `javaobj::StreamCursor`, without decoding the stream into a model: the
// same `StateFile` and the same calls of `sink` (a null `sink`: the operators
// are kept in the returned file), at the cost of one pass (two with
// `head_first`) and 4 bytes per stream handle. `OperatorHandleRef` entries
// carry offsets instead of item ids.
// Return values: on any failure, those of `ReadCompletedCheckpointBytes`
// (the model reader is asked, so that the same file fails the same way on
// every path); `Internal` if that reader succeeds where this one failed.
// Lifetime: the returned model refers to `input` by ranges.
[[nodiscard]] absl::StatusOr<StateFile> ScanCompletedCheckpoint(
    serde::ByteView input, const CompletedOperatorSink& sink = nullptr,
    const ScanCompletedCheckpointOptions& options = {});

// The `checkpointID` of the CompletedCheckpoint at the head of `input`, read
// from the root object's primitive fields only (the class descriptors before
// them and nothing after): for a file opened to be edited in streaming
// passes. nullopt if the head cannot be read that far.
std::optional<int64_t> PeekCompletedCheckpointId(serde::ByteView input);

// True if `input` starts a Java stream whose first object's class is
// `CompletedCheckpoint` (cheap: looks only at the first class name).
bool LooksLikeCompletedCheckpoint(serde::ByteView input);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_COMPLETED_CHECKPOINT_H_
