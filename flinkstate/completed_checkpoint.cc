// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/completed_checkpoint.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "flinkstate/ha_pointer.h"
#include "flinkstate/internal/completed_checkpoint_shapes.h"
#include "flinkstate/javaobj/layouts.h"
#include "flinkstate/javaobj/stream_constants.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate {
namespace {

using javaobj::ItemId;
using javaobj::ItemKind;
using javaobj::kNoItem;

using internal::kKeyedClasses;
using internal::kOperatorHandleClasses;
using internal::kStreamClasses;
using internal::ShortClassName;

}  // namespace

const std::vector<KnownClassShape>& KnownClassShapes() {
  // serialVersionUIDs and declared fields as the class descriptors of real
  // Flink releases' completedCheckpoint files show them (tests/testdata,
  // written by the harness with 1.13.6 ... 2.3.0); `fields`: the ones this
  // reader needs, by the names Flink gives them.
  // (Static: the table keeps pointers to these names.)
  static constexpr char kCc[] = "org.apache.flink.runtime.checkpoint.CompletedCheckpoint";
  static constexpr char kOs[] = "org.apache.flink.runtime.checkpoint.OperatorState";
  static constexpr char kOss[] = "org.apache.flink.runtime.checkpoint.OperatorSubtaskState";
  static constexpr char kKg[] = "org.apache.flink.runtime.state.KeyGroupsStateHandle";
  static constexpr char kProps[] = "org.apache.flink.runtime.checkpoint.CheckpointProperties";
  static const auto* shapes = new std::vector<KnownClassShape>{
      {"CompletedCheckpoint", kCc, "1.13", -8360248179615702014LL,
       {"checkpointID", "job", "operatorStates"},
       {"checkpointID", "duration", "timestamp", "externalPointer", "job", "masterHookStates",
        "metadataHandle", "operatorStates", "props", "storageLocation"}},
      {"CompletedCheckpoint", kCc, "1.14-1.15", -8360248179615702014LL,
       {"checkpointID", "job", "operatorStates"},
       {"checkpointID", "completionTimestamp", "timestamp", "externalPointer", "job",
        "masterHookStates", "metadataHandle", "operatorStates", "props", "storageLocation"}},
      {"CompletedCheckpoint", kCc, "1.16-2.x", -8360248179615702014LL,
       {"checkpointID", "job", "operatorStates"},
       {"checkpointID", "completionTimestamp", "timestamp", "externalPointer", "job",
        "masterHookStates", "metadataHandle", "operatorStates", "props", "restoredProps",
        "storageLocation"}},
      {"OperatorState", kOs, "1.13-1.20", -4845578005863201810LL,
       {"operatorID", "operatorSubtaskStates", "parallelism", "maxParallelism"},
       {"maxParallelism", "parallelism", "coordinatorState", "operatorID",
        "operatorSubtaskStates"}},
      {"OperatorState", kOs, "2.x", -4845578005863201810LL,
       {"operatorID", "operatorSubtaskStates", "parallelism", "maxParallelism"},
       {"maxParallelism", "parallelism", "coordinatorState", "operatorID", "operatorName",
        "operatorSubtaskStates", "operatorUid"}},
      {"OperatorState", "org.apache.flink.runtime.checkpoint.FullyFinishedOperatorState",
       "1.14-2.x", 1, {"operatorID", "operatorSubtaskStates"}},
      {"OperatorSubtaskState", kOss, "1.13", -2394696997971923995LL,
       {"managedOperatorState", "rawOperatorState", "managedKeyedState", "rawKeyedState"},
       {"stateSize", "inputChannelState", "inputRescalingDescriptor", "managedKeyedState",
        "managedOperatorState", "outputRescalingDescriptor", "rawKeyedState",
        "rawOperatorState", "resultSubpartitionState"}},
      {"OperatorSubtaskState", kOss, "1.14-2.2", -2394696997971923995LL,
       {"managedOperatorState", "rawOperatorState", "managedKeyedState", "rawKeyedState"},
       {"checkpointedSize", "stateSize", "inputChannelState", "inputRescalingDescriptor",
        "managedKeyedState", "managedOperatorState", "outputRescalingDescriptor",
        "rawKeyedState", "rawOperatorState", "resultSubpartitionState"}},
      {"OperatorSubtaskState", kOss, "2.3", -2394696997971923995LL,
       {"managedOperatorState", "rawOperatorState", "managedKeyedState", "rawKeyedState"},
       {"checkpointedSize", "stateSize", "inputChannelState", "inputRescalingDescriptor",
        "managedKeyedState", "managedOperatorState", "outputRescalingDescriptor",
        "rawKeyedState", "rawOperatorState", "resultSubpartitionState",
        "upstreamOutputBufferState"}},
      {"OperatorSubtaskState",
       "org.apache.flink.runtime.checkpoint.FinishedOperatorSubtaskState", "1.14-2.x", 1,
       {"managedOperatorState", "rawOperatorState"}},
      {"StateObjectCollection", "org.apache.flink.runtime.checkpoint.StateObjectCollection",
       "1.13-2.x", 1, {"stateObjects"}, {"stateObjects"}},
      {"CheckpointProperties", kProps, "1.13", 2, {"forced", "checkpointType"},
       {"discardCancelled", "discardFailed", "discardFinished", "discardSubsumed",
        "discardSuspended", "forced", "checkpointType"}},
      {"CheckpointProperties", kProps, "1.15-2.x", 2, {"forced", "checkpointType"},
       {"discardCancelled", "discardFailed", "discardFinished", "discardSubsumed",
        "discardSuspended", "forced", "unclaimed", "checkpointType"}},
      {"KeyedStateHandle", kKg, "1.13", -8070326169926626355LL,
       {"groupRangeOffsets", "stateHandle"}, {"groupRangeOffsets", "stateHandle"}},
      {"KeyedStateHandle", kKg, "1.14-2.x", -8070326169926626355LL,
       {"groupRangeOffsets", "stateHandle"},
       {"groupRangeOffsets", "stateHandle", "stateHandleId"}},
      {"KeyedStateHandle", "org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle",
       "1.13-2.x", 0,
       {"backendIdentifier", "keyGroupRange", "metaStateHandle", "sharedState",
        "privateState"}},
      {"OperatorStateHandle", "org.apache.flink.runtime.state.OperatorStreamStateHandle",
       "1.13-2.x", 35876522969227335LL, {"delegateStateHandle", "stateNameToPartitionOffsets"},
       {"delegateStateHandle", "stateNameToPartitionOffsets"}},
      {"StreamStateHandle", "org.apache.flink.runtime.state.filesystem.FileStateHandle",
       "1.13-2.x", 350284443258002355LL, {"filePath", "stateSize"}, {"stateSize", "filePath"}},
      {"StreamStateHandle", "org.apache.flink.runtime.state.memory.ByteStreamStateHandle",
       "1.13-2.x", -5280226231202517594LL, {"handleName", "data"}, {"data", "handleName"}},
  };
  return *shapes;
}

namespace {

// An item path built only when a message needs it: `base`, then `[index]`
// when `index` >= 0 (the paths of the ~50 file handles of every keyed handle
// are never built unless one is unknown or drifted).
struct LazyPath {
  LazyPath(absl::string_view b) : base(b) {}  // NOLINT: a plain path converts
  LazyPath(const std::string& b) : base(b) {}  // NOLINT
  LazyPath(const char* b) : base(b) {}         // NOLINT
  LazyPath(absl::string_view b, int64_t i) : base(b), index(i) {}
  absl::string_view base;
  int64_t index = -1;
  std::string str() const {
    return index < 0 ? std::string(base) : absl::StrCat(base, "[", index, "]");
  }
};

class GraphReader {
 public:
  GraphReader(const javaobj::Stream& s, const CompletedOperatorSink* sink)
      : s_(s), sink_(sink) {
    // Per descriptor: its class name without the common prefix (the reader
    // compares it at every handle).
    short_names_.reserve(s_.num_descs());
    for (size_t d = 0; d < s_.num_descs(); ++d) {
      short_names_.push_back(ShortClassName(s_.desc(static_cast<javaobj::DescId>(d)).DisplayName()));
    }
  }

  absl::StatusOr<StateFile> Read() {
    if (s_.aborted()) {
      uint64_t at = 0;
      for (ItemId i = 0; i < s_.num_items(); ++i) {
        if (s_.item(i).kind == ItemKind::kException) {
          at = s_.item(i).range.offset;
          break;
        }
      }
      return serde::DecodeError(absl::StatusCode::kDataLoss, "completedCheckpoint", "",
                                "writing aborted: the stream ends in TC_EXCEPTION (a partial "
                                "file Flink left after a failed write)",
                                at);
    }
    ItemId root = kNoItem;
    for (ItemId id : s_.top_level()) {
      if (s_.item(id).kind == ItemKind::kObject) {
        root = id;
        break;
      }
    }
    auto info = std::make_shared<CompletedCheckpointInfo>();
    info_ = info.get();
    if (root == kNoItem || !Matches(root, "CompletedCheckpoint", "top level", /*root=*/true)) {
      return serde::DecodeError(
          absl::StatusCode::kInvalidArgument, "completedCheckpoint", "top level",
          absl::StrCat("expected ", kCompletedCheckpointClass, ", found ",
                       root == kNoItem ? "no object" : s_.ClassNameOf(root),
                       root == kNoItem ? "" : Nearest(root)),
          root == kNoItem ? 4 : s_.item(root).range.offset);
    }
    internal::CheckDescriptorShapes(
        s_, [&](javaobj::DescId d) { return s_.item(s_.desc(d).item).range.offset; },
        &info_->shape_warnings);
    StateFile file;
    file.kind = StateFileKind::kCompletedCheckpoint;
    file.size = s_.input().size();
    file.metadata.version = 0;
    FLINKSTATE_ASSIGN_OR_RETURN(file.metadata.checkpoint_id,
                                Long(root, "checkpointID", "checkpoint"));
    info_->timestamp = s_.PrimFieldInt(root, "timestamp").value_or(0);
    if (absl::StatusOr<int64_t> d = s_.PrimFieldInt(root, "duration"); d.ok()) {
      info_->has_duration = true;
      info_->duration = *d;
    }
    info_->completion_timestamp =
        s_.PrimFieldInt(root, "completionTimestamp").value_or(0);
    info_->external_pointer = Str(s_.FieldValue(root, "externalPointer"));
    info_->job_id = IdHex(s_.FieldValue(root, "job"));
    const ItemId hooks = s_.FieldValue(root, "masterHookStates");
    if (hooks != kNoItem && s_.item(s_.Resolve(hooks)).kind == ItemKind::kObject) {
      absl::StatusOr<javaobj::ContainerView> v =
          javaobj::ViewContainer(s_, javaobj::UnwrapCollection(s_, hooks));
      if (v.ok()) info_->master_hook_states = static_cast<int>(v->entries.size());
    }
    const ItemId props = s_.FieldValue(root, "props");
    if (props != kNoItem) info_->properties = Properties(props, "props");
    const ItemId restored = s_.FieldValue(root, "restoredProps");
    if (restored != kNoItem && s_.item(s_.Resolve(restored)).kind != ItemKind::kNull) {
      info_->has_restored_properties = true;
      info_->restored_properties = Properties(restored, "restoredProps");
    }
    const ItemId loc = R(s_.FieldValue(root, "storageLocation"));
    if (loc != kNoItem && s_.item(loc).kind == ItemKind::kObject) {
      info_->storage_location_class = s_.ClassNameOf(loc);
      info_->exclusive_checkpoint_dir =
          PathString(s_.FieldValue(loc, "exclusiveCheckpointDir"));
    }
    const ItemId meta = R(s_.FieldValue(root, "metadataHandle"));
    if (meta != kNoItem && s_.item(meta).kind == ItemKind::kObject) {
      const ItemId fp = s_.FieldValue(meta, "filePath");
      info_->metadata_path = fp != kNoItem ? PathString(fp)
                                           : Str(s_.FieldValue(meta, "handleName"));
    }

    const ItemId ops = s_.FieldValue(root, "operatorStates");
    FLINKSTATE_ASSIGN_OR_RETURN(javaobj::ContainerView map,
                                View(ops, "operatorStates"));
    for (size_t i = 0; i < map.entries.size(); ++i) {
      const javaobj::ContainerEntry& e = map.entries[i];
      OperatorState op;
      op.range = e.range;
      FLINKSTATE_RETURN_IF_ERROR(ReadOperator(e.value, static_cast<int>(i), &op));
      if (sink_ != nullptr) {
        FLINKSTATE_RETURN_IF_ERROR((*sink_)(static_cast<int>(i), std::move(op)));
      } else {
        file.metadata.operators.push_back(std::move(op));
      }
    }
    // Handle refs were recorded in map order; keep them in model order too.
    internal::SortOperatorHandles(&info_->operator_handles);
    walk_.MoveTo(info_);
    info_->flink_versions = internal::ReleaseHint(s_);
    file.completed = std::move(info);
    return file;
  }

 private:
  absl::Status Fail(absl::string_view path, absl::string_view problem, ItemId at) {
    return serde::DecodeError(absl::StatusCode::kInvalidArgument, "completedCheckpoint", path,
                              problem, at == kNoItem ? 0 : s_.item(at).range.offset);
  }

  absl::StatusOr<int64_t> Long(ItemId obj, const char* field, absl::string_view path) {
    absl::StatusOr<int64_t> v = s_.PrimFieldInt(obj, field);
    if (!v.ok()) {
      return Fail(path, absl::StrCat(s_.ClassNameOf(obj), " has no field '", field, "'"),
                  obj);
    }
    return *v;
  }

  // A CheckpointProperties value, by structure if its class is renamed.
  CheckpointPropertiesSummary Properties(ItemId id, absl::string_view path) {
    const ItemId obj = s_.Resolve(id);
    const bool by_structure = s_.item(obj).kind == ItemKind::kObject &&
                              !s_.IsInstanceOf(obj, "org.apache.flink.runtime.checkpoint.CheckpointProperties") &&
                              Matches(obj, "CheckpointProperties", path);
    return SummarizeCheckpointPropertiesObject(s_, id, /*check_class=*/!by_structure);
  }

  // `Resolve` that passes `kNoItem` (a missing field) through.
  ItemId R(ItemId id) const { return id == kNoItem ? kNoItem : s_.Resolve(id); }

  bool IsNull(ItemId id) const {
    return id == kNoItem || s_.item(s_.Resolve(id)).kind == ItemKind::kNull;
  }

  std::string Str(ItemId id) const {
    if (IsNull(id)) return "";
    absl::StatusOr<std::string> v = s_.StringValue(id);
    return v.ok() ? *std::move(v) : std::string();
  }

  // `org.apache.flink.core.fs.Path` -> `java.net.URI.string`
  // (`FlinkPathUriString`); "" for null or anything else.
  std::string PathString(ItemId path) const {
    if (IsNull(path)) return "";
    const ItemId str = FlinkPathUriString(s_, path);
    return str == kNoItem ? "" : Str(str);
  }

  // `AbstractID`: lowerPart then upperPart, each big-endian.
  std::array<uint8_t, 16> IdBytes(ItemId id) const {
    std::array<uint8_t, 16> out{};
    if (IsNull(id)) return out;
    const int64_t lo = s_.PrimFieldInt(id, "lowerPart").value_or(0);
    const int64_t hi = s_.PrimFieldInt(id, "upperPart").value_or(0);
    for (int i = 0; i < 8; ++i) {
      out[i] = static_cast<uint8_t>(static_cast<uint64_t>(lo) >> (56 - 8 * i));
      out[8 + i] = static_cast<uint8_t>(static_cast<uint64_t>(hi) >> (56 - 8 * i));
    }
    return out;
  }
  std::string IdHex(ItemId id) const {
    std::string s;
    for (uint8_t b : IdBytes(id)) absl::StrAppend(&s, absl::Hex(b, absl::kZeroPad2));
    return s;
  }

  std::string StringId(ItemId id) const {
    return IsNull(id) ? "" : Str(s_.FieldValue(id, "keyString"));
  }

  Utf MakeUtf(std::string v) const {
    Utf u;
    u.value = std::move(v);
    return u;
  }

  absl::StatusOr<javaobj::ContainerView> View(ItemId id, absl::string_view path) {
    if (IsNull(id)) {
      javaobj::ContainerView empty;
      return empty;
    }
    absl::StatusOr<javaobj::ContainerView> v =
        javaobj::ViewContainer(s_, javaobj::UnwrapCollection(s_, id));
    if (!v.ok()) {
      return Fail(path, absl::StrCat("not a readable collection (",
                                     v.status().message(), ")"),
                  s_.Resolve(id));
    }
    return v;
  }

  void KeyGroupRange(ItemId kgr, int32_t* start, int32_t* num) const {
    if (IsNull(kgr)) return;
    const int64_t a = s_.PrimFieldInt(kgr, "startKeyGroup").value_or(0);
    const int64_t b = s_.PrimFieldInt(kgr, "endKeyGroup").value_or(-1);
    *start = static_cast<int32_t>(a);
    *num = static_cast<int32_t>(std::max<int64_t>(0, b - a + 1));
  }

  OffsetsArray LongArray(ItemId id) const {
    OffsetsArray o;
    if (IsNull(id)) return o;
    const javaobj::Item& it = s_.item(s_.Resolve(id));
    if (it.kind == ItemKind::kArray && it.element_type == 'J') {
      o.range = it.payload;
      o.count = static_cast<uint32_t>(it.count);
    }
    return o;
  }

  void Unknown(absl::string_view path, ItemId id) {
    walk_.Unknown(s_.item(s_.Resolve(id)).range.offset,
                  absl::StrCat(path, ": ", s_.ClassNameOf(id)));
  }

  bool HasField(ItemId obj, absl::string_view field) const {
    if (obj == kNoItem) return false;
    const javaobj::Item& it = s_.item(s_.Resolve(obj));
    if (it.kind != ItemKind::kObject || it.desc == javaobj::kNoDesc) return false;
    for (javaobj::DescId d : s_.desc(it.desc).chain) {
      if (s_.desc(d).FindField(field) >= 0) return true;
    }
    return false;
  }

  // The class name of value `id` without the "org.apache.flink.runtime."
  // prefix (cached per descriptor for objects).
  std::string ShortName(ItemId id) const {
    const ItemId r = s_.Resolve(id);
    const ItemKind k = s_.kind(r);
    if (k == ItemKind::kObject || k == ItemKind::kArray || k == ItemKind::kEnum) {
      const javaobj::DescId d = s_.desc_of(r);
      if (d < short_names_.size()) return short_names_[d];
    }
    return ShortClassName(s_.ClassNameOf(r));
  }

  // A StreamStateHandle value; leaves tag 0 for null and unknown classes.
  absl::Status ReadStream(ItemId id, const LazyPath& path, StreamStateHandle* h) {
    if (IsNull(id)) return absl::OkStatus();
    id = s_.Resolve(id);
    h->range = s_.range(id);
    std::string cls = ShortName(id);
    if (!absl::c_linear_search(kStreamClasses, cls)) {
      cls = ShortClassName(HandleClass(id, "StreamStateHandle", path.str()));
    }
    if (cls == "state.memory.ByteStreamStateHandle") {
      h->tag = static_cast<uint8_t>(HandleTag::kByteStream);
      h->name = MakeUtf(Str(s_.FieldValue(id, "handleName")));
      const ItemId data = s_.FieldValue(id, "data");
      if (!IsNull(data)) h->data = s_.item(s_.Resolve(data)).payload;
    } else if (cls == "state.filesystem.RelativeFileStateHandle") {
      h->tag = static_cast<uint8_t>(HandleTag::kRelativeStream);
      h->path = MakeUtf(Str(s_.FieldValue(id, "relativePath")));
      h->state_size = s_.PrimFieldInt(id, "stateSize").value_or(0);
    } else if (cls == "state.filesystem.FileStateHandle") {
      h->tag = static_cast<uint8_t>(HandleTag::kFileStream);
      h->path = MakeUtf(PathString(s_.FieldValue(id, "filePath")));
      h->state_size = s_.PrimFieldInt(id, "stateSize").value_or(0);
    } else if (cls == "state.filemerging.SegmentFileStateHandle" ||
               cls == "state.filemerging.EmptySegmentFileStateHandle") {
      h->tag = static_cast<uint8_t>(cls == "state.filemerging.SegmentFileStateHandle"
                                        ? HandleTag::kSegmentFile
                                        : HandleTag::kEmptySegmentFile);
      h->path = MakeUtf(PathString(s_.FieldValue(id, "filePath")));
      h->state_size = s_.PrimFieldInt(id, "stateSize").value_or(0);
      h->start_pos = s_.PrimFieldInt(id, "startPos").value_or(0);
      h->logical_file_id = MakeUtf(StringId(s_.FieldValue(id, "logicalFileId")));
      const ItemId scope = s_.FieldValue(id, "scope");
      if (!IsNull(scope)) {
        h->scope_ordinal = s_.EnumName(scope).value_or("") == "SHARED" ? 1 : 0;
      }
    } else if (cls == "state.PlaceholderStreamStateHandle" ||
               cls == "state.filemerging.DirectoryStreamStateHandle" ||
               cls == "state.changelog.inmemory.InMemoryChangelogStateHandle") {
      // Known, but without a `_metadata` counterpart in stream position.
    } else {
      Unknown(path.str(), id);
    }
    return absl::OkStatus();
  }

  absl::Status ReadNamedHandles(ItemId coll, absl::string_view path,
                                std::vector<NamedStreamHandle>* out) {
    if (IsNull(coll)) return absl::OkStatus();
    FLINKSTATE_ASSIGN_OR_RETURN(javaobj::ContainerView v, View(coll, path));
    out->reserve(out->size() + v.entries.size());
    for (size_t i = 0; i < v.entries.size(); ++i) {
      const javaobj::ContainerEntry& e = v.entries[i];
      NamedStreamHandle n;
      const LazyPath p(path, static_cast<int64_t>(i));
      if (v.kind == javaobj::ContainerKind::kMap) {  // <= 1.17
        n.local_path = MakeUtf(StringId(e.key));
        FLINKSTATE_RETURN_IF_ERROR(ReadStream(e.value, p, &n.handle));
      } else {  // >= 1.18: HandleAndLocalPath
        n.local_path = MakeUtf(Str(s_.FieldValue(e.value, "localPath")));
        FLINKSTATE_RETURN_IF_ERROR(
            ReadStream(s_.FieldValue(e.value, "handle"), p, &n.handle));
      }
      out->push_back(std::move(n));
    }
    return absl::OkStatus();
  }

  absl::Status ReadKeyed(ItemId id, absl::string_view path, KeyedStateHandle* h) {
    const internal::KeyedNesting nesting(keyed_depth_);
    if (nesting.too_deep()) return Fail(path, internal::kKeyedTooDeep, R(id));
    id = s_.Resolve(id);
    h->range = s_.range(id);
    std::string cls = ShortName(id);
    if (!absl::c_linear_search(kKeyedClasses, cls)) {
      cls = ShortClassName(HandleClass(id, "KeyedStateHandle", path));
    }
    const bool with_id = HasField(id, "stateHandleId") || HasField(id, "stateHandleID");
    if (cls == "state.KeyGroupsStateHandle" || cls == "state.KeyGroupsSavepointStateHandle") {
      h->tag = static_cast<uint8_t>(cls == "state.KeyGroupsSavepointStateHandle"
                                        ? HandleTag::kSavepointKeyGroups
                                    : with_id ? HandleTag::kKeyGroupsV2
                                              : HandleTag::kKeyGroups);
      const ItemId offs = s_.FieldValue(id, "groupRangeOffsets");
      if (!IsNull(offs)) {
        KeyGroupRange(s_.FieldValue(offs, "keyGroupRange"), &h->start_key_group,
                      &h->num_key_groups);
        h->key_group_offsets = LongArray(s_.FieldValue(offs, "offsets"));
      }
      h->delegate = std::make_unique<StreamStateHandle>();
      FLINKSTATE_RETURN_IF_ERROR(ReadStream(s_.FieldValue(id, "stateHandle"),
                                            absl::StrCat(path, ".stateHandle"),
                                            h->delegate.get()));
      h->state_handle_id = MakeUtf(StringId(s_.FieldValue(id, "stateHandleId")));
    } else if (cls == "state.IncrementalRemoteKeyedStateHandle") {
      h->tag = static_cast<uint8_t>(with_id ? HandleTag::kIncrementalKeyGroupsV2
                                            : HandleTag::kIncrementalKeyGroups);
      h->checkpoint_id = s_.PrimFieldInt(id, "checkpointId").value_or(0);
      h->checkpointed_size =
          s_.PrimFieldInt(id, "persistedSizeOfThisCheckpoint").value_or(-1);
      const ItemId uuid = s_.FieldValue(id, "backendIdentifier");
      if (!IsNull(uuid)) {
        // `UUID.toString()`: 8-4-4-4-12 lowercase hex digits.
        const uint64_t hi =
            static_cast<uint64_t>(s_.PrimFieldInt(uuid, "mostSigBits").value_or(0));
        const uint64_t lo =
            static_cast<uint64_t>(s_.PrimFieldInt(uuid, "leastSigBits").value_or(0));
        h->backend_identifier = MakeUtf(absl::StrCat(
            absl::Hex(hi >> 32, absl::kZeroPad8), "-",
            absl::Hex((hi >> 16) & 0xFFFF, absl::kZeroPad4), "-",
            absl::Hex(hi & 0xFFFF, absl::kZeroPad4), "-",
            absl::Hex(lo >> 48, absl::kZeroPad4), "-",
            absl::Hex(lo & 0xFFFFFFFFFFFFULL, absl::kZeroPad12)));
      }
      KeyGroupRange(s_.FieldValue(id, "keyGroupRange"), &h->start_key_group,
                    &h->num_key_groups);
      h->meta_data = std::make_unique<StreamStateHandle>();
      FLINKSTATE_RETURN_IF_ERROR(ReadStream(s_.FieldValue(id, "metaStateHandle"),
                                            absl::StrCat(path, ".metaStateHandle"),
                                            h->meta_data.get()));
      FLINKSTATE_RETURN_IF_ERROR(ReadNamedHandles(s_.FieldValue(id, "sharedState"),
                                                  absl::StrCat(path, ".sharedState"),
                                                  &h->shared_state));
      FLINKSTATE_RETURN_IF_ERROR(ReadNamedHandles(s_.FieldValue(id, "privateState"),
                                                  absl::StrCat(path, ".privateState"),
                                                  &h->private_state));
      h->state_handle_id = MakeUtf(StringId(s_.FieldValue(id, "stateHandleId")));
    } else if (cls == "state.changelog.ChangelogStateBackendHandle$"
                      "ChangelogStateBackendHandleImpl") {
      h->tag = static_cast<uint8_t>(HasField(id, "checkpointId") ? HandleTag::kChangelogV2
                                                                 : HandleTag::kChangelog);
      h->checkpoint_id = s_.PrimFieldInt(id, "checkpointId").value_or(0);
      h->materialization_id = s_.PrimFieldInt(id, "materializationID").value_or(0);
      h->checkpointed_size =
          s_.PrimFieldInt(id, "persistedSizeOfThisCheckpoint").value_or(-1);
      KeyGroupRange(s_.FieldValue(id, "keyGroupRange"), &h->start_key_group,
                    &h->num_key_groups);
      h->state_handle_id = MakeUtf(StringId(s_.FieldValue(id, "stateHandleID")));
      for (const auto& [field, out] :
           {std::pair{"materialized", &h->materialized},
            std::pair{"nonMaterialized", &h->non_materialized}}) {
        const std::string p = absl::StrCat(path, ".", field);
        FLINKSTATE_ASSIGN_OR_RETURN(javaobj::ContainerView v,
                                    View(s_.FieldValue(id, field), p));
        for (size_t i = 0; i < v.entries.size(); ++i) {
          if (IsNull(v.entries[i].value)) continue;
          KeyedStateHandle k;
          FLINKSTATE_RETURN_IF_ERROR(
              ReadKeyed(v.entries[i].value, absl::StrCat(p, "[", i, "]"), &k));
          out->push_back(std::move(k));
        }
      }
    } else if (cls == "state.changelog.ChangelogStateHandleStreamImpl") {
      h->tag = static_cast<uint8_t>(HasField(id, "storageIdentifier")
                                        ? HandleTag::kChangelogFileIncrementV2
                                        : HandleTag::kChangelogFileIncrement);
      h->state_size = s_.PrimFieldInt(id, "size").value_or(0);
      h->checkpointed_size = s_.PrimFieldInt(id, "incrementalSize").value_or(-1);
      KeyGroupRange(s_.FieldValue(id, "keyGroupRange"), &h->start_key_group,
                    &h->num_key_groups);
      h->state_handle_id = MakeUtf(StringId(s_.FieldValue(id, "stateHandleID")));
      h->storage_identifier = MakeUtf(Str(s_.FieldValue(id, "storageIdentifier")));
      const std::string p = absl::StrCat(path, ".handlesAndOffsets");
      FLINKSTATE_ASSIGN_OR_RETURN(javaobj::ContainerView v,
                                  View(s_.FieldValue(id, "handlesAndOffsets"), p));
      for (size_t i = 0; i < v.entries.size(); ++i) {
        OffsetStreamHandle o;
        const ItemId t = v.entries[i].value;
        if (IsNull(t)) continue;
        const ItemId f1 = s_.FieldValue(t, "f1");
        if (!IsNull(f1)) o.offset = s_.PrimFieldInt(f1, "value").value_or(0);
        FLINKSTATE_RETURN_IF_ERROR(ReadStream(s_.FieldValue(t, "f0"),
                                              absl::StrCat(p, "[", i, "]"), &o.handle));
        h->increments.push_back(std::move(o));
      }
    } else if (cls == "state.changelog.inmemory.InMemoryChangelogStateHandle") {
      h->tag = static_cast<uint8_t>(HandleTag::kChangelogByteIncrement);
      KeyGroupRange(s_.FieldValue(id, "keyGroupRange"), &h->start_key_group,
                    &h->num_key_groups);
      h->state_handle_id = MakeUtf(StringId(s_.FieldValue(id, "stateHandleID")));
      const ItemId from = s_.FieldValue(id, "from");
      const ItemId to = s_.FieldValue(id, "to");
      if (!IsNull(from)) h->from = s_.PrimFieldInt(from, "number").value_or(0);
      if (!IsNull(to)) h->to = s_.PrimFieldInt(to, "number").value_or(0);
      FLINKSTATE_ASSIGN_OR_RETURN(
          javaobj::ContainerView v,
          View(s_.FieldValue(id, "changes"), absl::StrCat(path, ".changes")));
      h->num_changes = static_cast<uint32_t>(v.entries.size());
    } else {
      Unknown(path, id);
    }
    return absl::OkStatus();
  }

  absl::Status ReadOperatorHandle(ItemId id, const std::string& path, int op_index,
                                  int subtask, const char* slot,
                                  OperatorStateHandle* h) {
    id = s_.Resolve(id);
    h->range = s_.range(id);
    std::string cls = ShortName(id);
    if (!absl::c_linear_search(kOperatorHandleClasses, cls)) {
      cls = ShortClassName(HandleClass(id, "OperatorStateHandle", path));
    }
    const bool merging =
        cls == "state.filemerging.FileMergingOperatorStreamStateHandle" ||
        cls == "state.filemerging.EmptyFileMergingOperatorStreamStateHandle";
    if (cls != "state.OperatorStreamStateHandle" && !merging) {
      Unknown(path, id);
      return absl::OkStatus();
    }
    h->tag = static_cast<uint8_t>(merging ? HandleTag::kSegmentPartitionableOperator
                                          : HandleTag::kPartitionableOperator);
    if (merging) {
      h->is_empty = cls == "state.filemerging.EmptyFileMergingOperatorStreamStateHandle";
      for (const auto& [field, out] :
           {std::pair{"taskOwnedDirHandle", &h->task_owned_directory},
            std::pair{"sharedDirHandle", &h->shared_directory}}) {
        const ItemId d = s_.FieldValue(id, field);
        if (!IsNull(d)) *out = MakeUtf(PathString(s_.FieldValue(d, "directory")));
      }
    }
    h->delegate = std::make_unique<StreamStateHandle>();
    FLINKSTATE_RETURN_IF_ERROR(ReadStream(s_.FieldValue(id, "delegateStateHandle"),
                                          path + ".delegateStateHandle",
                                          h->delegate.get()));
    const ItemId map_field = s_.FieldValue(id, "stateNameToPartitionOffsets");
    const std::string mp = path + ".stateNameToPartitionOffsets";
    FLINKSTATE_ASSIGN_OR_RETURN(javaobj::ContainerView map, View(map_field, mp));
    if (!IsNull(map_field) && map.kind != javaobj::ContainerKind::kMap) {
      return Fail(mp, absl::StrCat("expected a map, found ", map.class_name),
                  s_.Resolve(map_field));
    }
    for (size_t i = 0; i < map.entries.size(); ++i) {
      const javaobj::ContainerEntry& e = map.entries[i];
      StateNameEntry entry;
      entry.range = e.range;
      absl::StatusOr<std::string> name = s_.StringValue(e.key);
      if (!name.ok()) return Fail(mp, "a key that is not a string", s_.Resolve(e.key));
      entry.name = MakeUtf(*name);
      const ItemId meta = s_.Resolve(e.value);
      if (!s_.IsInstanceOf(meta, "org.apache.flink.runtime.state."
                                 "OperatorStateHandle$StateMetaInfo")) {
        return Fail(absl::StrCat(mp, "[", *name, "]"),
                    absl::StrCat("expected OperatorStateHandle$StateMetaInfo, found ",
                                 s_.ClassNameOf(meta)),
                    meta);
      }
      const ItemId mode_item = s_.FieldValue(meta, "distributionMode");
      const std::string mode =
          IsNull(mode_item) ? "" : s_.EnumName(mode_item).value_or("");
      entry.mode = mode == "UNION" ? 1 : mode == "BROADCAST" ? 2 : 0;
      entry.offsets = LongArray(s_.FieldValue(meta, "offsets"));
      h->states.push_back(std::move(entry));
    }
    OperatorHandleRef ref;
    ref.operator_index = op_index;
    ref.subtask_index = subtask;
    ref.slot = slot;
    ref.handle = id;
    ref.map = IsNull(map_field) ? kNoItem : map.object;
    info_->operator_handles.push_back(std::move(ref));
    return absl::OkStatus();
  }

  absl::Status ReadChannel(ItemId id, const std::string& path, ChannelStateHandle* h) {
    id = s_.Resolve(id);
    h->range = s_.range(id);
    h->type = static_cast<uint8_t>(internal::ChannelHandleType(ShortName(id)));
    if (h->type == 0) {
      Unknown(path, id);
      return absl::OkStatus();
    }
    h->subtask_index = static_cast<int32_t>(s_.PrimFieldInt(id, "subtaskIndex").value_or(0));
    h->state_size = s_.PrimFieldInt(id, "size").value_or(0);
    const ItemId info = s_.FieldValue(id, "info");
    if (!IsNull(info)) {
      h->info_a = static_cast<int32_t>(
          h->type == 1 ? s_.PrimFieldInt(info, "gateIdx").value_or(0)
                       : s_.PrimFieldInt(info, "partitionIdx").value_or(0));
      h->info_b = static_cast<int32_t>(
          h->type == 1 ? s_.PrimFieldInt(info, "inputChannelIdx").value_or(0)
                       : s_.PrimFieldInt(info, "subPartitionIdx").value_or(0));
    }
    const ItemId offsets = s_.FieldValue(id, "offsets");
    if (!IsNull(offsets)) {
      FLINKSTATE_ASSIGN_OR_RETURN(javaobj::ContainerView v,
                                  View(offsets, path + ".offsets"));
      h->offsets.count = static_cast<uint32_t>(v.entries.size());
    }
    const ItemId blob = s_.FieldValue(id, "serializedChannelOffsets");
    if (!IsNull(blob)) h->serialized_channel_offsets = s_.item(s_.Resolve(blob)).payload;
    return ReadStream(s_.FieldValue(id, "delegate"), path + ".delegate", &h->delegate);
  }

  absl::Status ReadSubtask(ItemId id, const std::string& path, int op_index,
                           OperatorSubtaskState* st) {
    id = s_.Resolve(id);
    const std::string cls = ShortName(id);
    if (!Matches(id, "OperatorSubtaskState", path)) {
      return Fail(path, absl::StrCat("expected OperatorSubtaskState, found ",
                                     s_.ClassNameOf(id), Nearest(id)),
                  id);
    }
    st->finished = cls == "checkpoint.FinishedOperatorSubtaskState";
    for (const char* slot : {"managedOperatorState", "rawOperatorState"}) {
      const bool managed = std::string(slot) == "managedOperatorState";
      size_t n = 0;
      FLINKSTATE_RETURN_IF_ERROR(ReadSlot(
          id, slot, path, managed ? &st->managed_operator_state : &st->raw_operator_state,
          [&](ItemId h, const std::string& p, OperatorStateHandle* out) {
            return ReadOperatorHandle(h, p, op_index, st->subtask_index, slot, out);
          },
          &n));
      (managed ? st->has_managed_operator_state : st->has_raw_operator_state) = n == 0 ? 0 : 1;
    }
    const auto keyed = [this](ItemId h, const std::string& p, KeyedStateHandle* out) {
      return ReadKeyed(h, p, out);
    };
    const auto channel = [this](ItemId h, const std::string& p, ChannelStateHandle* out) {
      return ReadChannel(h, p, out);
    };
    FLINKSTATE_RETURN_IF_ERROR(
        ReadSlot(id, "managedKeyedState", path, &st->managed_keyed_state, keyed));
    FLINKSTATE_RETURN_IF_ERROR(ReadSlot(id, "rawKeyedState", path, &st->raw_keyed_state, keyed));
    FLINKSTATE_RETURN_IF_ERROR(
        ReadSlot(id, "inputChannelState", path, &st->input_channel_state, channel));
    return ReadSlot(id, "resultSubpartitionState", path, &st->result_subpartition_state,
                    channel);
  }

  // The handles in field `slot` of subtask state `id` (`Collection`), each
  // read by `read(item, path, &handle)` at `path.slot[i]` and appended to
  // `*out`; `*count` (if given) how many there were.
  template <typename H, typename Read>
  absl::Status ReadSlot(ItemId id, const char* slot, const std::string& path, std::vector<H>* out,
                        Read&& read, size_t* count = nullptr) {
    FLINKSTATE_ASSIGN_OR_RETURN(std::vector<ItemId> handles, Collection(id, slot, path));
    for (size_t i = 0; i < handles.size(); ++i) {
      H h;
      FLINKSTATE_RETURN_IF_ERROR(read(handles[i], absl::StrCat(path, ".", slot, "[", i, "]"), &h));
      out->push_back(std::move(h));
    }
    if (count != nullptr) *count = handles.size();
    return absl::OkStatus();
  }

  // The non-null elements of `StateObjectCollection` field `slot` of `owner`.
  absl::StatusOr<std::vector<ItemId>> Collection(ItemId owner, const char* slot,
                                                 const std::string& path) {
    std::vector<ItemId> out;
    const ItemId soc = s_.FieldValue(owner, slot);
    if (IsNull(soc)) return out;
    const std::string p = absl::StrCat(path, ".", slot);
    if (!Matches(soc, "StateObjectCollection", p)) {
      return Fail(p, absl::StrCat("expected StateObjectCollection, found ",
                                  s_.ClassNameOf(soc), Nearest(soc)),
                  s_.Resolve(soc));
    }
    FLINKSTATE_ASSIGN_OR_RETURN(javaobj::ContainerView v,
                                View(s_.FieldValue(soc, "stateObjects"), p));
    for (const javaobj::ContainerEntry& e : v.entries) {
      if (!IsNull(e.value)) out.push_back(e.value);
    }
    return out;
  }

  absl::Status ReadOperator(ItemId id, int index, OperatorState* op) {
    id = s_.Resolve(id);
    const std::string cls = ShortName(id);
    const std::string path = absl::StrCat("operatorStates[", index, "]");
    if (!Matches(id, "OperatorState", path)) {
      return Fail(path, absl::StrCat("expected OperatorState, found ", s_.ClassNameOf(id),
                                     Nearest(id)),
                  id);
    }
    op->id = IdBytes(s_.FieldValue(id, "operatorID"));
    op->parallelism = static_cast<int32_t>(s_.PrimFieldInt(id, "parallelism").value_or(0));
    op->max_parallelism =
        static_cast<int32_t>(s_.PrimFieldInt(id, "maxParallelism").value_or(0));
    op->name = MakeUtf(Str(s_.FieldValue(id, "operatorName")));
    op->uid = MakeUtf(Str(s_.FieldValue(id, "operatorUid")));
    FLINKSTATE_RETURN_IF_ERROR(ReadStream(s_.FieldValue(id, "coordinatorState"),
                                          path + ".coordinatorState",
                                          &op->coordinator_state));
    const std::string sp = path + ".operatorSubtaskStates";
    FLINKSTATE_ASSIGN_OR_RETURN(javaobj::ContainerView map,
                                View(s_.FieldValue(id, "operatorSubtaskStates"), sp));
    for (size_t i = 0; i < map.entries.size(); ++i) {
      const javaobj::ContainerEntry& e = map.entries[i];
      OperatorSubtaskState st;
      st.range = e.range;
      absl::StatusOr<int64_t> idx = s_.PrimFieldInt(e.key, "value");
      if (!idx.ok()) return Fail(sp, "a key that is not an Integer", s_.Resolve(e.key));
      st.subtask_index = static_cast<int32_t>(*idx);
      FLINKSTATE_RETURN_IF_ERROR(ReadSubtask(
          e.value, absl::StrCat(sp, "[", *idx, "]"), index, &st));
      op->subtasks.push_back(std::move(st));
    }
    std::stable_sort(op->subtasks.begin(), op->subtasks.end(),
                     [](const OperatorSubtaskState& a, const OperatorSubtaskState& b) {
                       return a.subtask_index < b.subtask_index;
                     });
    op->num_subtasks = cls == "checkpoint.FullyFinishedOperatorState"
                           ? -1
                           : static_cast<int32_t>(op->subtasks.size());
    return absl::OkStatus();
  }

  // True if object `id` plays `role`: its class is a known shape of the
  // role, or (a renamed or relocated class, a newer release) it is read by
  // structure as the nearest known shape of the role, with a
  // CLASS_SHAPE_DRIFT warning (internal/completed_checkpoint_shapes.h).
  bool Matches(ItemId id, absl::string_view role, absl::string_view path, bool root = false) {
    id = s_.Resolve(id);
    if (s_.item(id).kind != ItemKind::kObject) return false;
    const javaobj::DescId d = s_.desc_of(id);
    if (internal::IsKnownForRole(s_.desc(d), role)) return true;
    const KnownClassShape* best = internal::NearestShapeOfRole(s_, d, role);
    if (best == nullptr) return false;
    Drift(d, *best, role, path, s_.item(id).range.offset, root);
    return true;
  }
  void Drift(javaobj::DescId d, const KnownClassShape& best, absl::string_view role,
             absl::string_view path, uint64_t at, bool root = false) {
    CompletedCheckpointInfo::ShapeWarning w = internal::DriftWarning(s_, d, best, role, path, at);
    if (root) {
      info_->shape_warnings.push_back(std::move(w));
    } else {
      walk_.Drift(std::move(w));
    }
  }
  // The class a handle of `role` is read as (internal::HandleClassName).
  std::string HandleClass(ItemId id, absl::string_view role, absl::string_view path) {
    const ItemId r = s_.Resolve(id);
    if (s_.item(r).kind != ItemKind::kObject) return s_.ClassNameOf(id);
    const KnownClassShape* drift = nullptr;
    std::string cls = internal::HandleClassName(s_, s_.desc_of(r), role, &drift);
    if (drift != nullptr) Drift(s_.desc_of(r), *drift, role, path, s_.item(r).range.offset);
    return cls;
  }
  // " (nearest known shape X: missing N of its M fields)" for an error.
  std::string Nearest(ItemId id) const {
    id = s_.Resolve(id);
    if (s_.item(id).kind != ItemKind::kObject) return "";
    return internal::NearestShapeNote(s_, s_.desc_of(id));
  }

  const javaobj::Stream& s_;
  CompletedCheckpointInfo* info_ = nullptr;
  int keyed_depth_ = 0;
  const CompletedOperatorSink* sink_ = nullptr;
  std::vector<std::string> short_names_;
  internal::WalkFindings walk_;
};

}  // namespace

absl::StatusOr<StateFile> ReadCompletedCheckpoint(const javaobj::Stream& stream) {
  return GraphReader(stream, nullptr).Read();
}

absl::StatusOr<StateFile> ReadCompletedCheckpointStreaming(const javaobj::Stream& stream,
                                                           const CompletedOperatorSink& sink) {
  return GraphReader(stream, &sink).Read();
}

absl::StatusOr<StateFile> ReadCompletedCheckpointBytes(serde::ByteView input,
                                                       javaobj::Stream* stream_out) {
  FLINKSTATE_ASSIGN_OR_RETURN(javaobj::Stream s, javaobj::DecodeStream(input));
  absl::StatusOr<StateFile> f = ReadCompletedCheckpoint(s);
  if (stream_out != nullptr) *stream_out = std::move(s);
  return f;
}

bool LooksLikeCompletedCheckpoint(serde::ByteView in) {
  // AC ED 00 05 73 72 <u2 len> <name>
  const std::string name = kCompletedCheckpointClass;
  if (in.size() < 8 + name.size()) return false;
  if (!javaobj::HasStreamHeader(in.data(), in.size()) || in[4] != javaobj::kTcObject ||
      in[5] != javaobj::kTcClassDesc) {
    return false;
  }
  const size_t len = (size_t{in[6]} << 8) | in[7];
  return len == name.size() &&
         std::equal(name.begin(), name.end(), in.begin() + 8);
}

}  // namespace flinkstate
