// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: checkpoint_metadata.h
// -----------------------------------------------------------------------------
// The lazy model of a Flink checkpoint/savepoint `_metadata` file (format
// versions 1-7) and of an `OperatorSnapshotUtil` operator-snapshot file.
//
//   ```c++ (const std::string& p)
//   FLINKSTATE_ASSIGN_OR_RETURN(serde::MappedFile f, serde::MappedFile::Open(p));
//   FLINKSTATE_ASSIGN_OR_RETURN(StateFile file, ReadStateFile(f.bytes()));
//   for (const OperatorState& op : file.metadata.operators) std::cout << op.IdHex() << "\n";
//   ```
//
// Every item records the input range it was decoded from. Large parts are
// never copied: offset arrays (`OffsetsArray`) and inline state bytes are
// described by range and count. Names mirror Flink's classes
// (`CheckpointMetadata`, `OperatorState`, `OperatorSubtaskState`,
// `OperatorStateHandle.StateMetaInfo`, `KeyGroupRangeOffsets`, ...).
//
// Lifetime: a model holds no pointers into the input, only ranges; resolving
// a range needs the same bytes the model was read from.
//
// Wire format: see docs/formats/metadata.md (derived from Flink's
// `MetadataV2V3SerializerBase` and `MetadataV1`..`V7Serializer`).
//
// Thread safety: a decoded model (`StateFile` and everything in it) is a plain
// value that nothing changes after decoding: any number of threads may read one
// concurrently. The free functions are pure.

#ifndef FLINKSTATE_FLINKSTATE_CHECKPOINT_METADATA_H_
#define FLINKSTATE_FLINKSTATE_CHECKPOINT_METADATA_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flinkstate/format_constants.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate {

using serde::SourceRange;

// kMetadataMagic, kMasterStateMagic, the version bounds and kMaxHandleTag:
// format_constants.h.

// Handle type bytes of `MetadataV2V3SerializerBase` (Flink 1.2-2.x).
enum class HandleTag : uint8_t {
  kNull = 0,
  kByteStream = 1,              // ByteStreamStateHandle (inline bytes)
  kFileStream = 2,              // FileStateHandle (absolute path)
  kKeyGroups = 3,               // KeyGroupsStateHandle
  kPartitionableOperator = 4,   // OperatorStreamStateHandle
  kIncrementalKeyGroups = 5,    // IncrementalRemoteKeyedStateHandle (<=1.14)
  kRelativeStream = 6,          // RelativeFileStateHandle
  kSavepointKeyGroups = 7,      // KeyGroupsSavepointStateHandle
  kChangelog = 8,               // ChangelogStateBackendHandle (1.15 layout)
  kChangelogByteIncrement = 9,  // InMemoryChangelogStateHandle
  kChangelogFileIncrement = 10, // ChangelogStateHandleStreamImpl (1.15)
  kIncrementalKeyGroupsV2 = 11, // IncrementalRemoteKeyedStateHandle
  kKeyGroupsV2 = 12,            // KeyGroupsStateHandle with id
  kChangelogFileIncrementV2 = 13,
  kChangelogV2 = 14,
  kSegmentFile = 15,            // SegmentFileStateHandle (file merging)
  kEmptySegmentFile = 16,       // EmptySegmentFileStateHandle
  kSegmentPartitionableOperator = 17,  // FileMergingOperatorStreamStateHandle
};

// Human name of a tag ("FILE_STREAM_STATE_HANDLE", ...), "UNKNOWN" if none.
const char* HandleTagName(uint8_t tag);

// `OperatorStateHandle.Mode` ordinals (1.5+ names).
enum class DistributionMode : uint8_t {
  kSplitDistribute = 0,
  kUnion = 1,
  kBroadcast = 2,
};
const char* DistributionModeName(uint8_t mode);

// A `writeUTF` string: `range` covers the u2 length and the body; `value` is
// the text in standard UTF-8.
struct Utf {
  SourceRange range;
  std::string value;
};

// An `i64[]` written as `i32 count` + count x `i64`, not materialised.
// `range` covers only the elements (8 * count bytes).
struct OffsetsArray {
  SourceRange range;
  uint32_t count = 0;
};

// A stream state handle (context "S" in the spec).
struct StreamStateHandle {
  uint8_t tag = 0;
  SourceRange range;  // the whole handle, tag byte included

  // kByteStream: handle name and the inline bytes (without the i32 length).
  Utf name;
  SourceRange data;
  // kFileStream (size then path), kRelativeStream (path then size),
  // kSegmentFile (physical file path).
  Utf path;
  int64_t state_size = 0;
  // kKeyGroups in stream context.
  int32_t start_key_group = 0;
  int32_t num_key_groups = 0;
  OffsetsArray key_group_offsets;
  std::unique_ptr<StreamStateHandle> delegate;
  // kSegmentFile.
  int64_t start_pos = 0;
  int32_t scope_ordinal = 0;
  Utf logical_file_id;
};

// (local file name, handle) of an incremental RocksDB handle.
struct NamedStreamHandle {
  Utf local_path;
  StreamStateHandle handle;
};

// (offset, handle) of a changelog file-increment handle.
struct OffsetStreamHandle {
  int64_t offset = 0;
  StreamStateHandle handle;
};

// A keyed state handle (context "K").
struct KeyedStateHandle {
  uint8_t tag = 0;
  SourceRange range;

  int32_t start_key_group = 0;
  int32_t num_key_groups = 0;
  // kKeyGroups, kSavepointKeyGroups, kKeyGroupsV2: `KeyGroupRangeOffsets`.
  OffsetsArray key_group_offsets;
  std::unique_ptr<StreamStateHandle> delegate;
  Utf state_handle_id;  // tags 8, 9, 10, 11, 12, 13, 14

  // kIncrementalKeyGroups / V2.
  int64_t checkpoint_id = 0;
  Utf backend_identifier;
  int64_t checkpointed_size = -1;
  std::unique_ptr<StreamStateHandle> meta_data;
  std::vector<NamedStreamHandle> shared_state;
  std::vector<NamedStreamHandle> private_state;

  // kChangelog / V2.
  std::vector<KeyedStateHandle> materialized;
  std::vector<KeyedStateHandle> non_materialized;
  int64_t materialization_id = 0;

  // kChangelogByteIncrement: sequence numbers and the change list, skipped.
  int64_t from = 0;
  int64_t to = 0;
  uint32_t num_changes = 0;
  SourceRange changes;

  // kChangelogFileIncrement / V2.
  std::vector<OffsetStreamHandle> increments;
  int64_t state_size = 0;
  Utf storage_identifier;
};

// One entry of `OperatorStateHandle.stateNameToPartitionOffsets`: a state
// name, its `StateMetaInfo` distribution mode and element offsets.
struct StateNameEntry {
  SourceRange range;  // name through the last offset
  Utf name;
  uint8_t mode = 0;
  OffsetsArray offsets;
};

// An operator state handle (context "O"): tag 4 or 17.
struct OperatorStateHandle {
  uint8_t tag = 0;
  SourceRange range;
  SourceRange count_range;  // the i32 number of entries
  std::vector<StateNameEntry> states;
  // kSegmentPartitionableOperator only.
  Utf task_owned_directory;
  Utf shared_directory;
  bool is_empty = false;
  std::unique_ptr<StreamStateHandle> delegate;
};

// An unaligned-checkpoint channel handle (`InputChannelStateHandle`,
// `ResultSubpartitionStateHandle`, or the merged forms of metadata v6+).
struct ChannelStateHandle {
  // 0 = untyped "serializer V1" layout (metadata v3-v5); 1..4 = V2 type byte:
  // 1 input channel, 2 result subpartition, 3/4 merged input/output.
  uint8_t type = 0;
  SourceRange range;
  int32_t subtask_index = 0;
  int32_t info_a = 0;  // gate index / partition index
  int32_t info_b = 0;  // input channel index / subpartition index
  OffsetsArray offsets;
  int64_t state_size = 0;
  StreamStateHandle delegate;
  // Merged forms: the serialized per-channel offset table (blob body).
  SourceRange serialized_channel_offsets;
  uint32_t merged_channels = 0;
};

// `OperatorSubtaskState` as the metadata serializers write it.
struct OperatorSubtaskState {
  SourceRange range;  // from the subtask index to the end of its body
  int32_t subtask_index = 0;
  bool finished = false;  // v3+: written as a negative index, no body

  // v1/v2 only.
  int64_t duration = 0;
  int32_t legacy_count = 0;
  std::vector<StreamStateHandle> legacy;
  // v2+: the i32 presence flags of the two operator-state slots.
  int32_t has_managed_operator_state = 0;
  int32_t has_raw_operator_state = 0;

  std::vector<OperatorStateHandle> managed_operator_state;
  std::vector<OperatorStateHandle> raw_operator_state;
  // Exactly one each in v1+ (a tag-0 handle when empty).
  std::vector<KeyedStateHandle> managed_keyed_state;
  std::vector<KeyedStateHandle> raw_keyed_state;
  std::vector<ChannelStateHandle> input_channel_state;
  std::vector<ChannelStateHandle> result_subpartition_state;

  // v7: regional checkpoint reference.
  bool has_ref_checkpoint_id = false;
  int64_t ref_checkpoint_id = 0;
};

// `OperatorState` (v2+) or `TaskState` (v1, one per job vertex).
struct OperatorState {
  SourceRange range;
  Utf name;  // v5+; empty value when absent
  Utf uid;   // v5+
  // 16 bytes in file order (lowerPart, upperPart); v1: the job vertex id.
  std::array<uint8_t, 16> id{};
  int32_t parallelism = 0;
  int32_t max_parallelism = 0;
  int32_t chain_length = 0;  // v1, v2
  StreamStateHandle coordinator_state;  // v3+
  // As written: -1 marks a fully finished operator (v3+).
  int32_t num_subtasks = 0;
  std::vector<OperatorSubtaskState> subtasks;

  bool fully_finished() const { return num_subtasks == -1; }
  // `OperatorID.toString()`: 32 lowercase hex characters in file order.
  std::string IdHex() const;
};

// A master hook's state (v2+).
struct MasterState {
  SourceRange range;
  int32_t version = 0;
  Utf name;
  SourceRange payload;
};

// `CheckpointMetadata`.
struct CheckpointMetadata {
  uint32_t version = 0;
  int64_t checkpoint_id = 0;
  std::vector<MasterState> master_states;
  // The i32 number of operator (v1: task) records.
  SourceRange operator_count_range;
  std::vector<OperatorState> operators;
  // v4+: the Java-serialized `CheckpointProperties` (to end of file).
  SourceRange properties;
  // v1-v3: bytes after the body (none in files Flink writes).
  SourceRange trailing;
};

// An `OperatorSnapshotUtil` file: one `OperatorSubtaskState`, as Flink's
// connector migration tests write it. Counts of -1 mean "absent".
struct OperatorSnapshot {
  int32_t header = 0;  // 0 (Flink <= 1.10) or 3 (Flink >= 1.11)
  StreamStateHandle legacy;
  int32_t raw_operator_count = -1;
  int32_t managed_operator_count = -1;
  int32_t raw_keyed_count = -1;
  int32_t managed_keyed_count = -1;
  // Handles land in these slots (index, finished and v1/v2 fields unused).
  OperatorSubtaskState state;
  int32_t input_channel_count = 0;
  int32_t result_subpartition_count = 0;  // as written (a writer quirk)
  SourceRange trailing;
};

enum class StateFileKind : uint8_t {
  kMetadata,
  kOperatorSnapshot,
  // An HA `completedCheckpoint<hex>` file read through javaobj
  // (completed_checkpoint.h): `metadata` holds the operators (version 0),
  // `completed` the rest.
  kCompletedCheckpoint,
};

struct CompletedCheckpointInfo;  // completed_checkpoint.h

// What `ReadStateFile` found.
struct StateFile {
  StateFileKind kind = StateFileKind::kMetadata;
  uint64_t size = 0;
  CheckpointMetadata metadata;  // kMetadata
  OperatorSnapshot snapshot;    // kOperatorSnapshot
  // kCompletedCheckpoint only (shared so that the type may stay incomplete).
  std::shared_ptr<const CompletedCheckpointInfo> completed;
};

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_CHECKPOINT_METADATA_H_
