// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// The one-pass completedCheckpoint reader (`ScanCompletedCheckpoint`): the
// same model as `ReadCompletedCheckpoint`, read in stream order with a
// `javaobj::StreamCursor` instead of from a decoded `javaobj::Stream`, so
// that its cost is one pass over the bytes and its memory the handle table,
// whatever the size of the graph.
//
// The graph is read where the stream puts it: an object's fields arrive in
// wire order (primitives of each class of the chain, then its object fields
// by name, super-most class first), so each reader below takes the fields it
// needs as they come and finishes or skips the rest. A field reached through
// a TC_REFERENCE is read again at its definition (`AtDefinition`).
//
// Errors: this reader's own messages are not the contract. Whenever it fails
// it hands the input to the model reader (`ReadCompletedCheckpointBytes`),
// whose error is the one returned, so that a file fails the same way on
// every path (and, should that reader succeed, the disagreement is returned
// as an `Internal` error naming both).

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "flinkstate/checkpoint_properties.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/internal/completed_checkpoint_scan.h"
#include "flinkstate/internal/completed_checkpoint_shapes.h"
#include "flinkstate/javaobj/layouts.h"
#include "flinkstate/javaobj/stream_constants.h"
#include "flinkstate/javaobj/stream_cursor.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/input_releaser.h"
#include "flinkstate/serde/modified_utf8.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate {
namespace {

using javaobj::CursorValue;
using javaobj::DescId;
using javaobj::kNoDesc;
using javaobj::StreamCursor;
using internal::kKeyedClasses;
using internal::kOperatorHandleClasses;
using internal::kStreamClasses;

// The field names the reader looks at, interned per descriptor field.
enum Fid : uint8_t {
  kOther = 0,
  // CompletedCheckpoint
  kCheckpointID, kTimestamp, kDuration, kCompletionTimestamp, kExternalPointer, kJob,
  kMasterHookStates, kMetadataHandle, kOperatorStates, kProps, kRestoredProps,
  kStorageLocation, kExclusiveCheckpointDir,
  // IDs, paths, ranges
  kLowerPart, kUpperPart, kUri, kString, kKeyString, kStartKeyGroup, kEndKeyGroup,
  kMostSigBits, kLeastSigBits, kValue, kNumber,
  // OperatorState, OperatorSubtaskState, StateObjectCollection
  kOperatorID, kParallelism, kMaxParallelism, kOperatorName, kOperatorUid, kCoordinatorState,
  kOperatorSubtaskStates, kManagedOperatorState, kRawOperatorState, kManagedKeyedState,
  kRawKeyedState, kInputChannelState, kResultSubpartitionState, kStateObjects,
  // stream handles
  kHandleName, kData, kRelativePath, kFilePath, kStateSize, kStartPos, kLogicalFileId, kScope,
  // keyed handles
  kGroupRangeOffsets, kKeyGroupRange, kOffsets, kStateHandle, kStateHandleId, kStateHandleID,
  kCheckpointId, kPersistedSizeOfThisCheckpoint, kBackendIdentifier, kMetaStateHandle,
  kSharedState, kPrivateState, kLocalPath, kHandle, kMaterializationID, kMaterialized,
  kNonMaterialized, kSize, kIncrementalSize, kStorageIdentifier, kHandlesAndOffsets, kF0, kF1,
  kFrom, kTo, kChanges,
  // operator handles
  kDelegateStateHandle, kStateNameToPartitionOffsets, kDistributionMode, kTaskOwnedDirHandle,
  kSharedDirHandle, kDirectory,
  // channel handles
  kSubtaskIndex, kInfo, kGateIdx, kInputChannelIdx, kPartitionIdx, kSubPartitionIdx,
  kSerializedChannelOffsets, kDelegate,
  // properties
  kForced, kUnclaimed, kDiscardSubsumed, kDiscardFinished, kDiscardCancelled, kDiscardFailed,
  kDiscardSuspended, kCheckpointType, kName, kFormatType, kPostCheckpointAction,
  kSharingFilesStrategy,
  // containers
  kM, kList, kS, kC, kA, kElement, kK, kV, kTag,
  kNumFids
};

const absl::flat_hash_map<absl::string_view, Fid>& FieldNames() {
  static const auto* names = new absl::flat_hash_map<absl::string_view, Fid>{
      {"checkpointID", kCheckpointID}, {"timestamp", kTimestamp}, {"duration", kDuration},
      {"completionTimestamp", kCompletionTimestamp}, {"externalPointer", kExternalPointer},
      {"job", kJob}, {"masterHookStates", kMasterHookStates},
      {"metadataHandle", kMetadataHandle}, {"operatorStates", kOperatorStates},
      {"props", kProps}, {"restoredProps", kRestoredProps},
      {"storageLocation", kStorageLocation}, {"exclusiveCheckpointDir", kExclusiveCheckpointDir},
      {"lowerPart", kLowerPart}, {"upperPart", kUpperPart}, {"uri", kUri}, {"string", kString},
      {"keyString", kKeyString}, {"startKeyGroup", kStartKeyGroup},
      {"endKeyGroup", kEndKeyGroup}, {"mostSigBits", kMostSigBits},
      {"leastSigBits", kLeastSigBits}, {"value", kValue}, {"number", kNumber},
      {"operatorID", kOperatorID}, {"parallelism", kParallelism},
      {"maxParallelism", kMaxParallelism}, {"operatorName", kOperatorName},
      {"operatorUid", kOperatorUid}, {"coordinatorState", kCoordinatorState},
      {"operatorSubtaskStates", kOperatorSubtaskStates},
      {"managedOperatorState", kManagedOperatorState}, {"rawOperatorState", kRawOperatorState},
      {"managedKeyedState", kManagedKeyedState}, {"rawKeyedState", kRawKeyedState},
      {"inputChannelState", kInputChannelState},
      {"resultSubpartitionState", kResultSubpartitionState}, {"stateObjects", kStateObjects},
      {"handleName", kHandleName}, {"data", kData}, {"relativePath", kRelativePath},
      {"filePath", kFilePath}, {"stateSize", kStateSize}, {"startPos", kStartPos},
      {"logicalFileId", kLogicalFileId}, {"scope", kScope},
      {"groupRangeOffsets", kGroupRangeOffsets}, {"keyGroupRange", kKeyGroupRange},
      {"offsets", kOffsets}, {"stateHandle", kStateHandle}, {"stateHandleId", kStateHandleId},
      {"stateHandleID", kStateHandleID}, {"checkpointId", kCheckpointId},
      {"persistedSizeOfThisCheckpoint", kPersistedSizeOfThisCheckpoint},
      {"backendIdentifier", kBackendIdentifier}, {"metaStateHandle", kMetaStateHandle},
      {"sharedState", kSharedState}, {"privateState", kPrivateState},
      {"localPath", kLocalPath}, {"handle", kHandle},
      {"materializationID", kMaterializationID}, {"materialized", kMaterialized},
      {"nonMaterialized", kNonMaterialized}, {"size", kSize},
      {"incrementalSize", kIncrementalSize}, {"storageIdentifier", kStorageIdentifier},
      {"handlesAndOffsets", kHandlesAndOffsets}, {"f0", kF0}, {"f1", kF1}, {"from", kFrom},
      {"to", kTo}, {"changes", kChanges}, {"delegateStateHandle", kDelegateStateHandle},
      {"stateNameToPartitionOffsets", kStateNameToPartitionOffsets},
      {"distributionMode", kDistributionMode}, {"taskOwnedDirHandle", kTaskOwnedDirHandle},
      {"sharedDirHandle", kSharedDirHandle}, {"directory", kDirectory},
      {"subtaskIndex", kSubtaskIndex}, {"info", kInfo}, {"gateIdx", kGateIdx},
      {"inputChannelIdx", kInputChannelIdx}, {"partitionIdx", kPartitionIdx},
      {"subPartitionIdx", kSubPartitionIdx},
      {"serializedChannelOffsets", kSerializedChannelOffsets}, {"delegate", kDelegate},
      {"forced", kForced}, {"unclaimed", kUnclaimed}, {"discardSubsumed", kDiscardSubsumed},
      {"discardFinished", kDiscardFinished}, {"discardCancelled", kDiscardCancelled},
      {"discardFailed", kDiscardFailed}, {"discardSuspended", kDiscardSuspended},
      {"checkpointType", kCheckpointType}, {"name", kName}, {"formatType", kFormatType},
      {"postCheckpointAction", kPostCheckpointAction},
      {"sharingFilesStrategy", kSharingFilesStrategy}, {"m", kM}, {"list", kList}, {"s", kS},
      {"c", kC}, {"a", kA}, {"element", kElement}, {"k", kK}, {"v", kV}, {"tag", kTag}};
  return *names;
}

constexpr char kPropertiesClass[] = "org.apache.flink.runtime.checkpoint.CheckpointProperties";
constexpr char kCheckpointTypeClass[] = "org.apache.flink.runtime.checkpoint.CheckpointType";
constexpr char kSavepointTypeClass[] = "org.apache.flink.runtime.checkpoint.SavepointType";
constexpr char kStateMetaInfoClass[] =
    "org.apache.flink.runtime.state.OperatorStateHandle$StateMetaInfo";
constexpr char kFlinkPathClass[] = "org.apache.flink.core.fs.Path";

// An object being read: its descriptor, where its definition starts and
// ends, and where each class of its chain keeps its primitive values.
struct Obj {
  DescId desc = kNoDesc;
  uint64_t def = 0;
  uint64_t end = 0;
  absl::InlinedVector<uint64_t, 8> prim_at;
};

// Where a container entry's key or element starts (for `ContainerEntry`
// ranges: key first byte to value last byte).
struct EntryPos {
  uint64_t begin = 0;
};

// An item path, built only when a message needs it: a root ("top level",
// "operatorStates"), then segments (".field" or "[index]") that point to
// their parent (the ~60 file handles of every keyed handle of a wide job
// never build theirs).
class Path {
 public:
  explicit Path(absl::string_view root) : root_(root) {}
  Path(const Path& parent, absl::string_view segment) : parent_(&parent), root_(segment) {}
  Path(const Path& parent, int64_t index) : parent_(&parent), index_(index) {}
  std::string str() const {
    std::string out = parent_ != nullptr ? parent_->str() : std::string();
    if (index_ >= 0) {
      absl::StrAppend(&out, "[", index_, "]");
    } else {
      absl::StrAppend(&out, root_);
    }
    return out;
  }

 private:
  const Path* parent_ = nullptr;
  absl::string_view root_;
  int64_t index_ = -1;
};

class GraphScanner {
 public:
  GraphScanner(serde::ByteView input, const ScanCompletedCheckpointOptions& options,
               const CompletedOperatorSink* sink, internal::ScanHooks* hooks)
      : hooks_(hooks), in_(input), c_(input), options_(options), sink_(sink),
        release_(input, options.release_consumed_input),
        skip_release_(input, options.release_consumed_input) {}

  // The whole read; `head` gets the head (everything but the operators)
  // before the first operator when `options.head_first`.
  absl::StatusOr<StateFile> Read() {
    auto info = std::make_shared<CompletedCheckpointInfo>();
    info_ = info.get();
    file_.kind = StateFileKind::kCompletedCheckpoint;
    file_.size = in_.size();
    file_.metadata.version = 0;
    if (hooks_ != nullptr) hooks_->OnStart(&c_);
    if (!c_.ReadHeader()) return Failed();
    bool root_seen = false;
    while (!c_.AtStreamEnd()) {
      if (!c_.ok()) return Failed();
      CursorValue v;
      if (!c_.ReadContent(&v)) return Failed();
      if (!root_seen && v.tag == javaobj::kTcObject && !v.reference) {
        root_seen = true;
        if (!ReadRoot(&v)) return Failed();
        continue;
      }
      if (v.end == 0 && !c_.FinishValue(&v)) return Failed();
    }
    if (!c_.ok()) return Failed();
    if (c_.aborted() || !root_seen) return Failed();  // the model reader says how
    // Descriptor warnings come after the root's own and before the walk's,
    // as the model reader orders them.
    info_->shape_warnings = std::move(root_warnings_);
    internal::CheckDescriptorShapes(c_, [&](DescId d) { return c_.desc_offset(d); },
                                    &info_->shape_warnings);
    walk_.MoveTo(info_);
    internal::SortOperatorHandles(&info_->operator_handles);
    info_->flink_versions = internal::ReleaseHint(c_);
    file_.completed = std::move(info);
    return std::move(file_);
  }

 private:
  // --- failure ---------------------------------------------------------------

  // A failed read: the model reader's verdict decides what is reported.
  absl::Status Failed() {
    // The sink's, head sink's or hooks' own error, as is.
    if (!caller_status_.ok()) return caller_status_;
    absl::Status own = c_.ok() ? absl::InternalError("completedCheckpoint: scan stopped")
                               : c_.status();
    absl::StatusOr<StateFile> model = ReadCompletedCheckpointBytes(in_);
    if (!model.ok()) return model.status();
    return absl::InternalError(absl::StrCat(
        "completedCheckpoint: the one-pass reader failed (", own.message(),
        ") where the model reader succeeds; please report this file"));
  }
  // A container that does not have the layout of its class: the reader's own
  // error, or (tolerant reading, see `CountTolerant`) a note that the count is
  // unknown, with `v` finished.
  bool Bad(CursorValue* v, absl::string_view problem) {
    if (tolerant_) {
      layout_failed_ = true;
      return Done(v);
    }
    return Fail("", problem, v->offset);
  }
  // The same inside a container's custom data: false either way (the caller
  // of the annotation skips the rest when tolerant).
  bool Issue(absl::string_view problem, uint64_t at) {
    if (tolerant_) {
      layout_failed_ = true;
      return false;
    }
    return Fail("", problem, at);
  }
  bool Fail(const Path& path, absl::string_view problem, uint64_t at) {
    return Fail(path.str(), problem, at);
  }
  // The reader's own error (the model reader will be asked, see `Failed`).
  bool Fail(absl::string_view path, absl::string_view problem, uint64_t at) {
    return c_.SetError(serde::DecodeError(absl::StatusCode::kInvalidArgument,
                                          "completedCheckpoint", path, problem, at));
  }

  // --- descriptors -------------------------------------------------------------

  // The field ids of descriptor `d`, one per field.
  const std::vector<uint8_t>& FieldIds(DescId d) {
    if (ABSL_PREDICT_TRUE(d < fids_done_.size() && fids_done_[d])) return fids_[d];
    return NewFieldIds(d);
  }
  ABSL_ATTRIBUTE_NOINLINE const std::vector<uint8_t>& NewFieldIds(DescId d) {
    if (d >= fids_.size()) {
      fids_.resize(c_.num_descs());
      fids_done_.resize(c_.num_descs(), 0);
    }
    std::vector<uint8_t>& ids = fids_[d];
    ids.clear();
    for (const javaobj::FieldDesc& f : c_.desc(d).fields) {
      auto it = FieldNames().find(f.name);
      ids.push_back(it == FieldNames().end() ? kOther : it->second);
    }
    fids_done_[d] = 1;
    return ids;
  }
  const std::string& ShortNameOf(DescId d) {
    if (d >= short_names_.size()) {
      short_names_.resize(c_.num_descs());
      short_done_.resize(c_.num_descs(), false);
    }
    if (!short_done_[d]) {
      short_names_[d] = internal::ShortClassName(c_.desc(d).DisplayName());
      short_done_[d] = true;
    }
    return short_names_[d];
  }
  // The class name of value `v` as `Stream::ClassNameOf` gives it.
  std::string ClassNameOf(const CursorValue& v) const {
    switch (v.tag) {
      case javaobj::kTcString:
      case javaobj::kTcLongString: return "java.lang.String";
      case javaobj::kTcObject:
      case javaobj::kTcArray:
      case javaobj::kTcEnum: return v.desc == kNoDesc ? "" : c_.desc(v.desc).DisplayName();
      case javaobj::kTcClass: return "java.lang.Class";
      default: return "";
    }
  }
  static bool IsObject(const CursorValue& v) { return v.tag == javaobj::kTcObject; }
  static bool IsNull(const CursorValue& v) { return v.tag == javaobj::kTcNull; }
  static bool IsString(const CursorValue& v) {
    return v.tag == javaobj::kTcString || v.tag == javaobj::kTcLongString;
  }

  // True if object descriptor `d` plays `role` (by name, or by structure
  // with a CLASS_SHAPE_DRIFT warning once per class).
  // (The root's warning goes to `root_warnings_`, the walk's to `walk_`.)
  // `IsKnownForRole` scans the table of known shapes; its verdict is kept
  // per descriptor for the roles of every subtask (`kCachedRoles`).
  bool Matches(DescId d, absl::string_view role, const Path& path, uint64_t at,
               bool root = false) {
    if (KnownForRole(d, role)) return true;
    const KnownClassShape* best = internal::NearestShapeOfRole(c_, d, role);
    if (best == nullptr) return false;
    Drift(d, *best, role, path, at, root);
    return true;
  }
  static constexpr const char* kCachedRoles[] = {"OperatorSubtaskState",
                                                 "StateObjectCollection"};
  bool KnownForRole(DescId d, absl::string_view role) {
    size_t r = 0;
    while (r < std::size(kCachedRoles) && role != kCachedRoles[r]) ++r;
    if (r == std::size(kCachedRoles)) return internal::IsKnownForRole(c_.desc(d), role);
    if (d >= known_roles_.size()) known_roles_.resize(c_.num_descs());
    // Two bits per role: decided, known.
    uint8_t& bits = known_roles_[d];
    if (!(bits & (1u << (2 * r)))) {
      bits |= static_cast<uint8_t>(
          (1u << (2 * r)) | (internal::IsKnownForRole(c_.desc(d), role) ? 2u << (2 * r) : 0u));
    }
    return (bits & (2u << (2 * r))) != 0;
  }
  void Drift(DescId d, const KnownClassShape& best, absl::string_view role, const Path& path,
             uint64_t at, bool root = false) {
    CompletedCheckpointInfo::ShapeWarning w =
        internal::DriftWarning(c_, d, best, role, path.str(), at);
    if (root) {
      root_warnings_.push_back(std::move(w));
    } else {
      walk_.Drift(std::move(w));
    }
  }
  // Descriptors of classes the reader compares by name at every path.
  enum DescKindCode : int8_t { kUnknownDesc = 0, kPathDesc, kUriDesc, kOtherDesc };
  int8_t DescKind(DescId d) {
    if (d >= desc_kinds_.size()) desc_kinds_.resize(c_.num_descs(), kUnknownDesc);
    int8_t& k = desc_kinds_[d];
    if (k == kUnknownDesc) {
      const std::string& n = c_.desc(d).name;
      k = n == kFlinkPathClass ? kPathDesc : n == "java.net.URI" ? kUriDesc : kOtherDesc;
    }
    return k;
  }

  // The class of handle value `v` in `role` (0 StreamStateHandle, 1
  // KeyedStateHandle, 2 OperatorStateHandle) as an index into that role's
  // list of classes the reader knows (kStreamClasses, kKeyedClasses,
  // kOperatorHandleClasses), or -1: by name, or by structure (a drifted
  // class, noted at each occurrence). Decided once per descriptor.
  int RoleCode(const CursorValue& v, const Path& path, int role) {
    static constexpr const char* kRoles[] = {"StreamStateHandle", "KeyedStateHandle",
                                             "OperatorStateHandle"};
    if (!IsObject(v)) return -1;
    if (v.desc >= role_codes_.size()) {
      role_codes_.resize(c_.num_descs(), {kUnset, kUnset, kUnset});
      role_drift_.resize(c_.num_descs(), {nullptr, nullptr, nullptr});
    }
    int16_t& code = role_codes_[v.desc][role];
    if (code == kUnset) {
      auto find = [&](const std::string& cls) -> int16_t {
        auto search = [&](const auto& list) -> int16_t {
          for (size_t i = 0; i < std::size(list); ++i) {
            if (list[i] == cls) return static_cast<int16_t>(i);
          }
          return -1;
        };
        return role == 0 ? search(kStreamClasses)
                         : role == 1 ? search(kKeyedClasses) : search(kOperatorHandleClasses);
      };
      code = find(ShortNameOf(v.desc));
      if (code < 0) {
        const KnownClassShape* drift = nullptr;
        code = find(internal::ShortClassName(
            internal::HandleClassName(c_, v.desc, kRoles[role], &drift)));
        role_drift_[v.desc][role] = drift;
      }
    }
    if (const KnownClassShape* drift = role_drift_[v.desc][role]) {
      Drift(v.desc, *drift, kRoles[role], path, v.def);
    }
    return code;
  }

  void Unknown(const Path& path, const CursorValue& v) {
    walk_.Unknown(v.def, absl::StrCat(path.str(), ": ", ClassNameOf(v)));
  }

  // --- values ------------------------------------------------------------------

  // Finishes `v` (a value just read) if its body is still pending.
  bool Done(CursorValue* v) { return v->end != 0 || c_.FinishValue(v); }

  // Reads the object `v` (inline, or a reference read at its definition):
  // `on_field(Fid, CursorValue*)` gets each object field's value, just read,
  // and must finish it. False on failure.
  template <typename F>
  bool ReadObj(CursorValue* v, Obj* o, F&& on_field) {
    if (v->reference) {
      return c_.AtDefinition(*v, [&](CursorValue* d) { return ReadObjBody(d, o, on_field); });
    }
    return ReadObjBody(v, o, on_field);
  }
  template <typename F>
  bool ReadObjBody(CursorValue* v, Obj* o, F& on_field) {
    o->desc = v->desc;
    o->def = v->def;
    o->prim_at.clear();
    if (v->end != 0) {  // ended by a TC_EXCEPTION
      o->end = v->end;
      return c_.ok();
    }
    struct Visit {
      GraphScanner& g;
      Obj* o;
      F& on_field;
      // The field ids of the class being read (`FieldIds` keeps each
      // descriptor's ids in a buffer of its own, which does not move).
      const uint8_t* ids = nullptr;
      void Class(DescId cls, uint64_t prim) {
        o->prim_at.push_back(prim);
        ids = g.FieldIds(cls).data();
      }
      bool Field(DescId, uint32_t f) {
        const Fid id = static_cast<Fid>(ids[f]);
        CursorValue fv;
        if (!g.c_.ReadValue(&fv)) return false;
        if (id == kOther) return g.Done(&fv);
        return on_field(id, &fv);
      }
      bool Annotation(DescId) { return g.c_.SkipAnnotation(); }
    } visit{*this, o, on_field};
    if (!c_.ReadObjectData(v, visit)) return false;
    o->end = v->end;
    return true;
  }
  // Reads `v` if it is an object (`o->desc` set), else finishes it
  // (`o->desc` kNoDesc).
  template <typename F>
  bool AsObject(CursorValue* v, Obj* o, F&& on_field) {
    o->desc = kNoDesc;
    if (!IsObject(*v)) return Done(v);
    return ReadObj(v, o, on_field);
  }
  bool SkipFields(CursorValue* v, Obj* o) {
    return ReadObj(v, o, [this](Fid, CursorValue* f) { return Done(f); });
  }

  // Primitive field `f` of `o` as `Stream::PrimFieldInt` reads it (the most
  // derived class's field of that name).
  bool Prim(const Obj& o, Fid f, int64_t* out) {
    if (o.desc == kNoDesc) return false;
    const javaobj::ClassDesc& d = c_.desc(o.desc);
    if (d.is_externalizable()) return false;
    for (size_t ci = o.prim_at.size(); ci-- > 0;) {
      const DescId cls = d.chain[ci];
      const std::vector<uint8_t>& ids = FieldIds(cls);
      const std::vector<javaobj::FieldDesc>& fields = c_.desc(cls).fields;
      for (size_t i = 0; i < fields.size(); ++i) {
        if (!fields[i].is_primitive() || ids[i] != f) continue;
        const uint8_t* p = in_.data() + o.prim_at[ci] + fields[i].prim_offset;
        switch (javaobj::PrimitiveSize(fields[i].type_code)) {
          case 1: *out = static_cast<int8_t>(p[0]); return true;
          case 2: *out = static_cast<int16_t>(serde::DecodeBigEndian16(p)); return true;
          case 4: *out = static_cast<int32_t>(serde::DecodeBigEndian32(p)); return true;
          case 8: *out = static_cast<int64_t>(serde::DecodeBigEndian64(p)); return true;
          default: return false;
        }
      }
    }
    return false;
  }
  int64_t PrimOr(const Obj& o, Fid f, int64_t dflt) {
    int64_t v;
    return Prim(o, f, &v) ? v : dflt;
  }
  bool HasField(const Obj& o, Fid f) {
    if (o.desc == kNoDesc) return false;
    for (DescId cls : c_.desc(o.desc).chain) {
      for (uint8_t id : FieldIds(cls)) {
        if (id == f) return true;
      }
    }
    return false;
  }

  // The UTF-8 text of string value `v` ("" for anything else or malformed).
  std::string Text(const CursorValue& v) const {
    if (!IsString(v)) return "";
    const serde::ByteView b(in_.data() + v.payload.offset, v.payload.size);
    if (serde::IsPlainAscii(b)) return std::string(serde::AsStringView(b));
    absl::StatusOr<std::string> s = serde::ModifiedUtf8ToUtf8(b);
    return s.ok() ? *std::move(s) : std::string();
  }
  // A string field's value (finished; "" for null and non-strings).
  bool Str(CursorValue* v, std::string* out) {
    *out = Text(*v);
    return Done(v);
  }
  // A string value as a `Utf`: decoded, or (`decode_strings` false) as the
  // range of its u2 length and body in the input (`TextSource` and
  // `UtfBody` read it there; a TC_LONGSTRING has no u2 length and is
  // decoded).
  bool StrUtf(CursorValue* v, Utf* out) {
    out->range = {};
    out->value.clear();
    if (!options_.decode_strings && v->tag == javaobj::kTcString) {
      out->range = {v->payload.offset - 2, v->payload.size + 2};
    } else {
      out->value = Text(*v);
    }
    return Done(v);
  }
  // An enum constant's name ("" for anything else).
  std::string EnumText(const CursorValue& v) const {
    if (v.tag != javaobj::kTcEnum) return "";
    CursorValue s = v;
    s.tag = javaobj::kTcString;
    return Text(s);
  }

  // `org.apache.flink.core.fs.Path` -> `java.net.URI.string`; "" else.
  bool PathUtf(CursorValue* v, Utf* out) {
    *out = Utf();
    if (!IsObject(*v) || DescKind(v->desc) != kPathDesc) return Done(v);
    Obj path;
    return ReadObj(v, &path, [&](Fid f, CursorValue* fv) {
      if (f != kUri) return Done(fv);
      *out = Utf();
      if (!IsObject(*fv) || DescKind(fv->desc) != kUriDesc) return Done(fv);
      Obj uri;
      return ReadObj(fv, &uri, [&](Fid g, CursorValue* sv) {
        return g == kString ? StrUtfOrEmpty(sv, out) : Done(sv);
      });
    });
  }
  bool PathString(CursorValue* v, std::string* out) {
    Utf u;
    if (!PathUtf(v, &u)) return false;
    *out = u.range.size >= 2 ? Text(u) : std::move(u.value);
    return true;
  }
  // The text of a `Utf` made by `StrUtf`.
  std::string Text(const Utf& u) const {
    if (!u.value.empty() || u.range.size < 2) return u.value;
    CursorValue s;
    s.tag = javaobj::kTcString;
    s.payload = {u.range.offset + 2, u.range.size - 2};
    return Text(s);
  }
  // `AbstractID`: lowerPart then upperPart, each big-endian.
  bool IdBytes(CursorValue* v, std::array<uint8_t, 16>* out) {
    out->fill(0);
    Obj o;
    if (!AsObject(v, &o, [this](Fid, CursorValue* f) { return Done(f); })) return false;
    if (o.desc == kNoDesc) return true;
    const uint64_t lo = static_cast<uint64_t>(PrimOr(o, kLowerPart, 0));
    const uint64_t hi = static_cast<uint64_t>(PrimOr(o, kUpperPart, 0));
    for (int i = 0; i < 8; ++i) {
      (*out)[i] = static_cast<uint8_t>(lo >> (56 - 8 * i));
      (*out)[8 + i] = static_cast<uint8_t>(hi >> (56 - 8 * i));
    }
    return true;
  }
  // A string value into `*out`; any other value (null) read as "".
  bool StrUtfOrEmpty(CursorValue* v, Utf* out) {
    if (!IsString(*v)) {
      *out = Utf();
      return Done(v);
    }
    return StrUtf(v, out);
  }
  // `StateHandleID` and friends: the `keyString` field ("" for null).
  bool StringId(CursorValue* v, Utf* out) {
    *out = Utf();
    Obj o;
    return AsObject(v, &o, [&](Fid f, CursorValue* fv) {
      return f == kKeyString ? StrUtfOrEmpty(fv, out) : Done(fv);
    });
  }
  bool KeyGroupRange(CursorValue* v, int32_t* start, int32_t* num) {
    Obj o;
    if (!AsObject(v, &o, [this](Fid, CursorValue* f) { return Done(f); })) return false;
    if (o.desc == kNoDesc) return true;
    const int64_t a = PrimOr(o, kStartKeyGroup, 0);
    const int64_t b = PrimOr(o, kEndKeyGroup, -1);
    *start = static_cast<int32_t>(a);
    *num = static_cast<int32_t>(std::max<int64_t>(0, b - a + 1));
    return true;
  }
  OffsetsArray LongArray(const CursorValue& v) const {
    OffsetsArray o;
    if (v.tag == javaobj::kTcArray && v.element_type == 'J') {
      o.range = v.payload;
      o.count = static_cast<uint32_t>(v.count);
    }
    return o;
  }

  // --- containers ----------------------------------------------------------------

  // The container layouts `ContainerAt` knows, decided once per descriptor
  // from the class name (a wide job reads ~10 containers per subtask).
  enum class ContainerCode : int8_t {
    kUnset = -1, kNone = 0, kWrapper, kHashMap, kHashSet, kArrayList,
    kSequence,  // LinkedList, ArrayDeque
    kTreeMap, kTreeSet, kCollSer, kArraysArrayList, kSingletonList, kSingletonSet,
    kSingletonMap, kEmptyList, kEmptySet, kEmptyMap
  };
  ContainerCode ContainerCodeOf(DescId d) {
    if (d >= container_codes_.size()) {
      container_codes_.resize(c_.num_descs(), static_cast<int8_t>(ContainerCode::kUnset));
    }
    int8_t& code = container_codes_[d];
    if (code == static_cast<int8_t>(ContainerCode::kUnset)) {
      code = static_cast<int8_t>(ContainerCodeOfName(c_.desc(d).name));
    }
    return static_cast<ContainerCode>(code);
  }
  static ContainerCode ContainerCodeOfName(absl::string_view name) {
    if (absl::StartsWith(name, "java.util.Collections$Unmodifiable") ||
        absl::StartsWith(name, "java.util.Collections$Synchronized") ||
        absl::StartsWith(name, "java.util.Collections$Checked")) {
      return ContainerCode::kWrapper;
    }
    static constexpr std::pair<absl::string_view, ContainerCode> kNames[] = {
        {"java.util.HashMap", ContainerCode::kHashMap},
        {"java.util.LinkedHashMap", ContainerCode::kHashMap},
        {"java.util.HashSet", ContainerCode::kHashSet},
        {"java.util.LinkedHashSet", ContainerCode::kHashSet},
        {"java.util.ArrayList", ContainerCode::kArrayList},
        {"java.util.LinkedList", ContainerCode::kSequence},
        {"java.util.ArrayDeque", ContainerCode::kSequence},
        {"java.util.TreeMap", ContainerCode::kTreeMap},
        {"java.util.TreeSet", ContainerCode::kTreeSet},
        {"java.util.CollSer", ContainerCode::kCollSer},
        {"java.util.Arrays$ArrayList", ContainerCode::kArraysArrayList},
        {"java.util.Collections$SingletonList", ContainerCode::kSingletonList},
        {"java.util.Collections$SingletonSet", ContainerCode::kSingletonSet},
        {"java.util.Collections$SingletonMap", ContainerCode::kSingletonMap},
        {"java.util.Collections$EmptyList", ContainerCode::kEmptyList},
        {"java.util.Collections$EmptySet", ContainerCode::kEmptySet},
        {"java.util.Collections$EmptyMap", ContainerCode::kEmptyMap},
    };
    for (const auto& [n, c] : kNames) {
      if (name == n) return c;
    }
    return ContainerCode::kNone;
  }

  // Reads the container `v` as `javaobj::ViewContainer(UnwrapCollection(v))`
  // would see it: `on_key(CursorValue*)` for each map key, then
  // `on_value(CursorValue*, uint64_t entry_begin)` for each value or
  // element (each must read and finish its value). `*kind` and `*count` get
  // the container's kind and size. Null is an empty list. Anything else fails
  // (the model reader says how).
  template <typename OnKey, typename OnValue>
  bool Container(CursorValue* v, javaobj::ContainerKind* kind, int64_t* count, OnKey&& on_key,
                 OnValue&& on_value, int unwrap = 0) {
    struct Depth {
      int& d;
      explicit Depth(int& x) : d(++x) {}
      ~Depth() { --d; }
    } depth(container_depth_);
    return ContainerAt(v, kind, count, on_key, on_value, unwrap);
  }
  // True while reading the entries of the state map the hooks watch.
  bool HookedMap() const {
    return hooks_ != nullptr && container_depth_ == state_map_depth_ && !c_.replaying();
  }
  template <typename OnKey, typename OnValue>
  bool ContainerAt(CursorValue* v, javaobj::ContainerKind* kind, int64_t* count, OnKey& on_key,
                   OnValue& on_value, int unwrap) {
    *kind = javaobj::ContainerKind::kList;
    *count = 0;
    if (IsNull(*v)) return Done(v);
    if (v->reference) {
      return c_.AtDefinition(*v, [&](CursorValue* d) {
        return Container(d, kind, count, on_key, on_value, unwrap);
      });
    }
    if (v->tag == javaobj::kTcArray && javaobj::PrimitiveSize(v->element_type) == 0) {
      *count = static_cast<int64_t>(v->count);
      return c_.ReadElements(v, [&](uint64_t) {
        CursorValue e;
        if (!c_.ReadValue(&e)) return false;
        return on_value(&e, e.offset);
      });
    }
    if (!IsObject(*v)) return Bad(v, "not a known container");
    const std::string& name = c_.desc(v->desc).name;
    const ContainerCode code = ContainerCodeOf(v->desc);
    if (code == ContainerCode::kWrapper && unwrap < 64) {
      // The wrapped collection: the first of the fields m, list, s, c the
      // class declares (read again at its definition once chosen).
      CursorValue wrapped[4];
      bool present[4] = {false, false, false, false};
      Obj o;
      if (!ReadObj(v, &o, [&](Fid f, CursorValue* fv) {
            const int slot = f == kM ? 0 : f == kList ? 1 : f == kS ? 2 : f == kC ? 3 : -1;
            if (slot >= 0) {
              wrapped[slot] = *fv;
              present[slot] = true;
            }
            if (!Done(fv)) return false;
            if (slot >= 0) wrapped[slot].end = fv->end;
            return true;
          })) {
        return false;
      }
      for (int i = 0; i < 4; ++i) {
        if (!present[i]) continue;
        if (!IsObject(wrapped[i])) break;  // the wrapper itself: no layout
        return c_.AtDefinition(wrapped[i], [&](CursorValue* d) {
          return Container(d, kind, count, on_key, on_value, unwrap + 1);
        });
      }
      return Bad(v, absl::StrCat("no known layout for ", name));
    }
    const bool hash_map = code == ContainerCode::kHashMap;
    const bool hash_set = code == ContainerCode::kHashSet;
    if (hash_map || hash_set) {
      *kind = hash_map ? javaobj::ContainerKind::kMap : javaobj::ContainerKind::kSet;
      const char* base = hash_map ? "java.util.HashMap" : "java.util.HashSet";
      bool seen = false;
      if (!ObjectWithAnnotation(v, base, [&](const Obj&) {
            seen = true;
            uint8_t b[4];
            count_where_.clear();
            if (!c_.ReadBlockBytes(nullptr, hash_map ? 4 : 8, nullptr) ||
                !c_.ReadBlockBytes(b, 4, &count_where_)) {
              return false;
            }
            const int32_t n = static_cast<int32_t>(serde::DecodeBigEndian32(b));
            *count = n;
            if (hash_map && HookedMap()) {
              hooks_->OnStateMap(hook_op_, hook_subtask_, hook_slot_, count_where_, n);
            }
            return Entries(n, hash_map, on_key, on_value);
          })) {
        return false;
      }
      return seen || Bad(v, "no class data");
    }
    if (code == ContainerCode::kArrayList || code == ContainerCode::kSequence ||
        code == ContainerCode::kTreeMap || code == ContainerCode::kTreeSet ||
        code == ContainerCode::kCollSer) {
      bool seen = false;
      if (!ObjectWithAnnotation(v, name, [&](const Obj& o) {
            seen = true;
            int32_t scale = 1;
            bool pairs = false;
            if (code == ContainerCode::kTreeMap) {
              *kind = javaobj::ContainerKind::kMap;
              pairs = true;
            } else if (code == ContainerCode::kTreeSet) {
              *kind = javaobj::ContainerKind::kSet;
              if (!c_.NextAnnotationObject() || !c_.Skip()) return false;  // the comparator
            } else if (code == ContainerCode::kCollSer) {
              int64_t tag;
              if (!Prim(o, kTag, &tag)) return Issue("CollSer without tag", o.def);
              const int t = static_cast<int>(tag & 0xFF);
              if (t == 3) {
                *kind = javaobj::ContainerKind::kMap;
                pairs = true;
                scale = 2;
              } else if (t == 2) {
                *kind = javaobj::ContainerKind::kSet;
              } else if (t != 1 && t != 4) {
                return Issue("CollSer: unknown tag", o.def);
              }
            }
            uint8_t b[4];
            if (!c_.ReadBlockBytes(b, 4, nullptr)) return false;
            const int32_t n = static_cast<int32_t>(serde::DecodeBigEndian32(b));
            if (n < 0 || n % scale != 0) return Issue("invalid count", o.def);
            int64_t size = n / scale;
            if (code == ContainerCode::kArrayList) {
              // The reader uses the field (spec §13).
              if (!Prim(o, kSize, &size)) return Issue("ArrayList without size", o.def);
            }
            *count = size;
            return Entries(size, pairs, on_key, on_value);
          })) {
        return false;
      }
      return seen || Bad(v, "no custom data");
    }
    if (code == ContainerCode::kArraysArrayList) {
      bool seen = false;
      Obj o;
      if (!ReadObj(v, &o, [&](Fid f, CursorValue* fv) {
            if (f != kA || seen) return Done(fv);
            if (fv->tag != javaobj::kTcArray) return Done(fv);
            seen = true;
            return Container(fv, kind, count, on_key, on_value, unwrap);
          })) {
        return false;
      }
      return seen || Bad(v, "field a is not an array");
    }
    if (code == ContainerCode::kSingletonList || code == ContainerCode::kSingletonSet) {
      *kind = code == ContainerCode::kSingletonList ? javaobj::ContainerKind::kList
                                                    : javaobj::ContainerKind::kSet;
      bool seen = false;
      Obj o;
      if (!ReadObj(v, &o, [&](Fid f, CursorValue* fv) {
            if (f != kElement) return Done(fv);
            seen = true;
            return on_value(fv, fv->offset);
          })) {
        return false;
      }
      *count = 1;
      return seen || Bad(v, "missing field element");
    }
    if (code == ContainerCode::kSingletonMap) {
      *kind = javaobj::ContainerKind::kMap;
      bool k = false, val = false;
      uint64_t begin = 0;
      Obj o;
      if (!ReadObj(v, &o, [&](Fid f, CursorValue* fv) {
            if (f == kK) {
              k = true;
              begin = fv->offset;
              return on_key(fv);
            }
            if (f == kV) {
              val = true;
              return on_value(fv, k ? begin : fv->offset);
            }
            return Done(fv);
          })) {
        return false;
      }
      *count = 1;
      return (k && val) || Bad(v, "missing field k or v");
    }
    if (code == ContainerCode::kEmptyList || code == ContainerCode::kEmptySet ||
        code == ContainerCode::kEmptyMap) {
      *kind = code == ContainerCode::kEmptyList  ? javaobj::ContainerKind::kList
              : code == ContainerCode::kEmptySet ? javaobj::ContainerKind::kSet
                                                 : javaobj::ContainerKind::kMap;
      Obj o;
      return SkipFields(v, &o);
    }
    return Bad(v, absl::StrCat("no known layout for ", name));
  }
  // Reads object `v` (inline), calling `on_annotation(const Obj&)` inside
  // the custom data of class `cls` (at its start; it reads the entries, the
  // rest of the annotation must be empty).
  template <typename OnAnnotation>
  bool ObjectWithAnnotation(CursorValue* v, const std::string& cls, OnAnnotation&& on_annotation) {
    Obj o;
    o.desc = v->desc;
    o.def = v->def;
    if (v->end != 0) return c_.ok();
    struct Visit {
      GraphScanner& g;
      Obj& o;
      const std::string& cls;
      OnAnnotation& on_annotation;
      void Class(DescId, uint64_t prim) { o.prim_at.push_back(prim); }
      bool Field(DescId, uint32_t) { return g.c_.Skip(); }
      bool Annotation(DescId d) {
        if (g.c_.desc(d).name != cls) return g.c_.SkipAnnotation();
        if (on_annotation(static_cast<const Obj&>(o)) &&
            g.c_.FinishAnnotation(/*expect_end=*/true)) {
          return true;
        }
        // A layout problem (the cursor's are not sticky): fatal unless the
        // reading is tolerant, which skips the rest of the custom data.
        if (!g.c_.ok() || !g.tolerant_) return false;
        g.layout_failed_ = true;
        return g.c_.SkipAnnotation();
      }
    } visit{*this, o, cls, on_annotation};
    return c_.ReadObjectData(v, visit);
  }
  template <typename OnKey, typename OnValue>
  bool Entries(int64_t n, bool pairs, OnKey& on_key, OnValue& on_value) {
    if (n < 0) return Issue("negative size", c_.position());
    // The entries to come, for a reader that reserves room for them (a
    // hint: never more than the bytes left could hold).
    entries_hint_ = static_cast<uint64_t>(n) < c_.input().size() - c_.position() ? n : 0;
    const bool hooked = HookedMap();
    for (int64_t i = 0; i < n; ++i) {
      if (!c_.NextAnnotationObject()) return false;
      uint64_t begin = c_.position();
      if (hooked) hooks_->OnStateEntryBegin();
      if (pairs) {
        CursorValue k;
        if (!c_.ReadValue(&k) || !on_key(&k)) return false;
        if (!c_.NextAnnotationObject()) return false;
      }
      CursorValue val;
      if (!c_.ReadValue(&val) || !on_value(&val, begin)) return false;
    }
    return true;
  }
  // The number of entries of container `v` (values skipped).
  bool CountOf(CursorValue* v, int64_t* n, javaobj::ContainerKind* kind = nullptr) {
    javaobj::ContainerKind k;
    int64_t seen = 0;
    if (!Container(
            v, kind ? kind : &k, n, [this](CursorValue* x) { return Done(x); },
            [&](CursorValue* x, uint64_t) {
              ++seen;
              return Done(x);
            })) {
      return false;
    }
    *n = seen;
    return true;
  }

  // --- the graph ---------------------------------------------------------------------

  bool ReadRoot(CursorValue* v) {
    if (!Matches(v->desc, "CompletedCheckpoint", Path("top level"), v->offset, /*root=*/true)) {
      return Fail("top level", "not a CompletedCheckpoint", v->offset);
    }
    root_offset_ = v->offset;
    // A root without a `job` field (its class drifted) has the null JobID's
    // id, as the model reader gives it: 16 zero bytes.
    info_->job_id.assign(32, '0');
    Obj root;
    bool has_ops = false;
    CursorValue deferred_ops;
    const bool ok = ReadObj(v, &root, [&](Fid f, CursorValue* fv) -> bool {
      switch (f) {
        case kExternalPointer: return Str(fv, &info_->external_pointer);
        case kJob: {
          std::array<uint8_t, 16> id;
          if (!IdBytes(fv, &id)) return false;
          info_->job_id.clear();
          for (uint8_t b : id) absl::StrAppend(&info_->job_id, absl::Hex(b, absl::kZeroPad2));
          return true;
        }
        case kMasterHookStates: {
          info_->master_hook_states = 0;
          if (!IsObject(*fv)) return Done(fv);
          // A layout the reader cannot count is left at 0, as the model
          // reader leaves it.
          tolerant_ = true;
          layout_failed_ = false;
          int64_t n = 0;
          const bool read = CountOf(fv, &n);
          tolerant_ = false;
          if (!read) return false;
          if (!layout_failed_) info_->master_hook_states = static_cast<int>(n);
          return true;
        }
        case kMetadataHandle: return ReadMetadataHandle(fv);
        case kOperatorStates:
          has_ops = true;
          if (options_.head_first) {
            deferred_ops = *fv;
            c_.set_releaser(&skip_release_);
            const bool skipped = Done(fv);
            c_.set_releaser(nullptr);
            if (!skipped) return false;
            deferred_ops.end = fv->end;
            return true;
          }
          return ReadOperators(fv);
        case kProps: return Properties(fv, "props", &info_->properties);
        case kRestoredProps:
          if (IsNull(*fv)) return Done(fv);
          info_->has_restored_properties = true;
          return Properties(fv, "restoredProps", &info_->restored_properties);
        case kStorageLocation: {
          info_->storage_location_class.clear();
          info_->exclusive_checkpoint_dir.clear();
          if (!IsObject(*fv)) return Done(fv);
          info_->storage_location_class = c_.desc(fv->desc).DisplayName();
          Obj loc;
          return ReadObj(fv, &loc, [&](Fid g, CursorValue* x) {
            if (g != kExclusiveCheckpointDir) return Done(x);
            return PathString(x, &info_->exclusive_checkpoint_dir);
          });
        }
        default: return Done(fv);
      }
    });
    if (!ok) return false;
    int64_t id;
    if (!Prim(root, kCheckpointID, &id)) {
      return Fail("checkpoint", "no field 'checkpointID'", v->offset);
    }
    file_.metadata.checkpoint_id = id;
    info_->timestamp = PrimOr(root, kTimestamp, 0);
    int64_t d;
    if (Prim(root, kDuration, &d)) {
      info_->has_duration = true;
      info_->duration = d;
    }
    info_->completion_timestamp = PrimOr(root, kCompletionTimestamp, 0);
    if (options_.head_first) {
      if (options_.head_sink) {
        StateFile head;
        head.kind = file_.kind;
        head.size = file_.size;
        head.metadata.checkpoint_id = file_.metadata.checkpoint_id;
        auto copy = std::make_shared<CompletedCheckpointInfo>(*info_);
        head.completed = std::move(copy);
        if (absl::Status s = options_.head_sink(head); !s.ok()) {
          caller_status_ = s;
          return c_.SetError(s);
        }
      }
      if (has_ops) {
        // The skipping pass left the operators' pages resident; the reading
        // pass releases them again behind itself.
        release_.Upto(deferred_ops.end);
        release_ = serde::InputReleaser(in_, options_.release_consumed_input);
        if (!c_.AtDefinition(deferred_ops, [&](CursorValue* d) { return ReadOperators(d); })) {
          return false;
        }
      }
    }
    return true;
  }

  bool ReadMetadataHandle(CursorValue* v) {
    info_->metadata_path.clear();
    if (!IsObject(*v)) return Done(v);
    Obj meta;
    bool has_file_path = false;
    std::string file_path, handle_name;
    if (!ReadObj(v, &meta, [&](Fid f, CursorValue* x) {
          if (f == kFilePath) {
            has_file_path = true;
            return PathString(x, &file_path);
          }
          if (f == kHandleName) return Str(x, &handle_name);
          return Done(x);
        })) {
      return false;
    }
    info_->metadata_path = has_file_path ? file_path : handle_name;
    return true;
  }

  // A CheckpointProperties value (`SummarizeCheckpointPropertiesObject`),
  // by structure if its class is renamed.
  bool Properties(CursorValue* v, absl::string_view name, CheckpointPropertiesSummary* p) {
    const Path path(name);
    *p = CheckpointPropertiesSummary();
    if (IsNull(*v)) {
      p->kind = "null";
      return Done(v);
    }
    bool check_class = true;
    if (IsObject(*v) && c_.desc(v->desc).name != kPropertiesClass &&
        Matches(v->desc, "CheckpointProperties", path, v->def)) {
      check_class = false;
    }
    if (check_class ? !(IsObject(*v) && c_.desc(v->desc).name == kPropertiesClass)
                    : !IsObject(*v)) {
      p->kind = "unknown";
      p->error = absl::StrCat("expected ", kPropertiesClass, ", found ", ClassNameOf(*v));
      return Done(v);
    }
    Obj o;
    bool has_type = false;
    if (!ReadObj(v, &o, [&](Fid f, CursorValue* t) {
          if (f != kCheckpointType) return Done(t);
          has_type = true;
          return CheckpointType(t, p);
        })) {
      return false;
    }
    auto flag = [&](Fid f) { return PrimOr(o, f, 0) != 0; };
    p->forced = flag(kForced);
    int64_t u;
    p->has_unclaimed = Prim(o, kUnclaimed, &u);
    p->unclaimed = p->has_unclaimed && u != 0;
    p->discard_subsumed = flag(kDiscardSubsumed);
    p->discard_finished = flag(kDiscardFinished);
    p->discard_cancelled = flag(kDiscardCancelled);
    p->discard_failed = flag(kDiscardFailed);
    p->discard_suspended = flag(kDiscardSuspended);
    if (!has_type) {
      p->kind = "unknown";
      p->error = "CheckpointProperties without a checkpointType";
    }
    return true;
  }
  bool CheckpointType(CursorValue* t, CheckpointPropertiesSummary* p) {
    if (t->tag == javaobj::kTcEnum) {
      // Flink 1.13/1.14: `CheckpointType` is an enum; its display name and
      // post-checkpoint action are fields of the constant, not in the stream.
      SetLegacyCheckpointType(EnumText(*t), p);
      return Done(t);
    }
    const std::string cls = IsObject(*t) ? c_.desc(t->desc).name : "";
    Obj o;
    std::string format_type, action, sharing;
    if (!AsObject(t, &o, [&](Fid f, CursorValue* x) {
          switch (f) {
            case kName: return Str(x, &p->type_name);
            case kFormatType: format_type = EnumText(*x); return Done(x);
            case kPostCheckpointAction: action = EnumText(*x); return Done(x);
            case kSharingFilesStrategy: sharing = EnumText(*x); return Done(x);
            default: return Done(x);
          }
        })) {
      return false;
    }
    if (cls == kSavepointTypeClass) {
      p->kind = "savepoint";
      p->format_type = format_type;
      p->post_checkpoint_action = action;
    } else if (cls == kCheckpointTypeClass) {
      p->kind = "checkpoint";
      p->sharing_files_strategy = sharing;
    } else {
      p->kind = "unknown";
      p->error = absl::StrCat("unexpected checkpoint type class ", ClassNameOf(*t));
    }
    return true;
  }

  bool ReadOperators(CursorValue* v) {
    javaobj::ContainerKind kind;
    int64_t count;
    int index = 0;
    std::array<uint8_t, 16> key_id{};
    return Container(
        v, &kind, &count,
        [&](CursorValue* k) { return Done(k); },
        [&](CursorValue* val, uint64_t begin) {
          OperatorState op;
          if (!ReadOperator(val, index, &op)) return false;
          op.range = {begin, val->end - begin};
          (void)key_id;
          release_.Upto(val->offset);
          const int i = index++;
          if (sink_ != nullptr) {
            if (absl::Status s = (*sink_)(i, std::move(op)); !s.ok()) {
              caller_status_ = s;
              return c_.SetError(s);
            }
          } else {
            file_.metadata.operators.push_back(std::move(op));
          }
          return true;
        });
  }

  bool ReadOperator(CursorValue* v, int index, OperatorState* op) {
    const Path ops("operatorStates");
    const Path path(ops, index);
    if (!IsObject(*v) || !Matches(v->desc, "OperatorState", path, v->def)) {
      return Fail(path, "expected OperatorState", v->def);
    }
    const bool fully_finished = ShortNameOf(v->desc) == "checkpoint.FullyFinishedOperatorState";
    Obj o;
    if (!ReadObj(v, &o, [&](Fid f, CursorValue* x) -> bool {
          switch (f) {
            case kOperatorID:
              if (!IdBytes(x, &op->id)) return false;
              if (hooks_ != nullptr) hooks_->OnOperator(index, op->id);
              return true;
            case kOperatorName: return StrUtf(x, &op->name);
            case kOperatorUid: return StrUtf(x, &op->uid);
            case kCoordinatorState:
              op->coordinator_state = StreamStateHandle();
              return ReadStream(x, Path(path, ".coordinatorState"), &op->coordinator_state);
            case kOperatorSubtaskStates: {
              const Path sp(path, ".operatorSubtaskStates");
              int64_t subtask = 0;
              bool key_ok = false;
              javaobj::ContainerKind kind;
              int64_t count;
              op->subtasks.clear();
              return Container(
                  x, &kind, &count,
                  [&](CursorValue* k) {
                    Obj ko;
                    if (!AsObject(k, &ko, [this](Fid, CursorValue* y) { return Done(y); })) {
                      return false;
                    }
                    key_ok = Prim(ko, kValue, &subtask);
                    if (!key_ok) return Fail(sp, "a key that is not an Integer", k->def);
                    return true;
                  },
                  [&](CursorValue* val, uint64_t begin) {
                    OperatorSubtaskState st;
                    st.subtask_index = static_cast<int32_t>(subtask);
                    if (!ReadSubtask(val, Path(sp, subtask), index, &st)) {
                      return false;
                    }
                    st.range = {begin, val->end - begin};
                    op->subtasks.push_back(std::move(st));
                    return true;
                  });
            }
            default: return Done(x);
          }
        })) {
      return false;
    }
    op->parallelism = static_cast<int32_t>(PrimOr(o, kParallelism, 0));
    op->max_parallelism = static_cast<int32_t>(PrimOr(o, kMaxParallelism, 0));
    std::stable_sort(op->subtasks.begin(), op->subtasks.end(),
                     [](const OperatorSubtaskState& a, const OperatorSubtaskState& b) {
                       return a.subtask_index < b.subtask_index;
                     });
    op->num_subtasks = fully_finished ? -1 : static_cast<int32_t>(op->subtasks.size());
    return true;
  }

  bool ReadSubtask(CursorValue* v, const Path& path, int op_index,
                   OperatorSubtaskState* st) {
    if (!IsObject(*v) ||
        !Matches(v->desc, "OperatorSubtaskState", path, v->def)) {
      return Fail(path, "expected OperatorSubtaskState", v->def);
    }
    st->finished = ShortNameOf(v->desc) == "checkpoint.FinishedOperatorSubtaskState";
    int managed = 0, raw = 0;
    const auto keyed = [this](CursorValue* h, const Path& p, KeyedStateHandle* out) {
      return ReadKeyed(h, p, out);
    };
    const auto channel = [this](CursorValue* h, const Path& p, ChannelStateHandle* out) {
      return ReadChannel(h, p, out);
    };
    Obj o;
    if (!ReadObj(v, &o, [&](Fid f, CursorValue* x) -> bool {
          // With operator_state_only, the operator state slots alone are read.
          if (options_.operator_state_only && f != kManagedOperatorState &&
              f != kRawOperatorState) {
            return Done(x);
          }
          switch (f) {
            case kManagedOperatorState:
            case kRawOperatorState: {
              const bool m = f == kManagedOperatorState;
              const char* slot = m ? "managedOperatorState" : "rawOperatorState";
              int n = 0;
              const bool read = SlotHandles(
                  x, slot, path, m ? &st->managed_operator_state : &st->raw_operator_state,
                  [&](CursorValue* h, const Path& p, OperatorStateHandle* out) {
                    return ReadOperatorHandle(h, p, op_index, st->subtask_index, slot, out);
                  },
                  &n);
              (m ? managed : raw) = n == 0 ? 0 : 1;
              return read;
            }
            case kManagedKeyedState:
              return SlotHandles(x, "managedKeyedState", path, &st->managed_keyed_state, keyed);
            case kRawKeyedState:
              return SlotHandles(x, "rawKeyedState", path, &st->raw_keyed_state, keyed);
            case kInputChannelState:
              return SlotHandles(x, "inputChannelState", path, &st->input_channel_state,
                                 channel);
            case kResultSubpartitionState:
              return SlotHandles(x, "resultSubpartitionState", path,
                                 &st->result_subpartition_state, channel);
            default: return Done(x);
          }
        })) {
      return false;
    }
    st->has_managed_operator_state = managed;
    st->has_raw_operator_state = raw;
    return true;
  }

  // The handles of collection `x` in slot `slot` (`Collection`) into `*out`
  // (cleared first), each read by `read(value, path, &handle)` at
  // `path.slot[n]`; `*count` (if given) how many were read.
  template <typename H, typename Read>
  bool SlotHandles(CursorValue* x, const char* slot, const Path& path, std::vector<H>* out,
                   Read&& read, int* count = nullptr) {
    out->clear();
    int n = 0;
    const Path dot(path, ".");
    const Path sp(dot, slot);
    const bool ok = Collection(x, slot, path, [&](CursorValue* h) {
      H handle;
      if (!read(h, Path(sp, n), &handle)) return false;
      ++n;
      out->push_back(std::move(handle));
      return true;
    });
    if (count != nullptr) *count = n;
    return ok;
  }

  // The non-null elements of `StateObjectCollection` value `v`, each handed
  // to `each(CursorValue*)` (which must read it).
  template <typename Each>
  bool Collection(CursorValue* v, const char* slot, const Path& path, Each&& each) {
    if (IsNull(*v)) return Done(v);
    const Path dot(path, ".");
    const Path p(dot, slot);
    if (!IsObject(*v) || !Matches(v->desc, "StateObjectCollection", p, v->def)) {
      return Fail(p, "expected StateObjectCollection", v->def);
    }
    Obj o;
    return ReadObj(v, &o, [&](Fid f, CursorValue* x) {
      if (f != kStateObjects) return Done(x);
      javaobj::ContainerKind kind;
      int64_t count;
      return Container(
          x, &kind, &count, [this](CursorValue* k) { return Done(k); },
          [&](CursorValue* e, uint64_t) {
            if (IsNull(*e)) return Done(e);
            return each(e);
          });
    });
  }

  // The definition range of `v` once read (`Stream::range` of the resolved
  // item).
  bool DefRange(const CursorValue& v, const Obj& o, SourceRange* r) {
    if (!v.reference) {
      *r = {v.def, v.end - v.def};
      return true;
    }
    *r = {o.def, o.end - o.def};
    return true;
  }

  // A StreamStateHandle value; leaves tag 0 for null and unknown classes.
  bool ReadStream(CursorValue* v, const Path& path, StreamStateHandle* h) {
    if (IsNull(*v)) return Done(v);
    // kStreamClasses: 0 ByteStream, 1 RelativeFile, 2 File, 3 SegmentFile,
    // 4 EmptySegmentFile, 5-7 known without a `_metadata` counterpart.
    const int k = RoleCode(*v, path, 0);
    Obj o;
    if (k == 0) {
      h->tag = static_cast<uint8_t>(HandleTag::kByteStream);
      if (!ReadObj(v, &o, [&](Fid f, CursorValue* x) {
            if (f == kHandleName) return StrUtf(x, &h->name);
            if (f == kData) {
              // `Stream::item(...).payload`: array elements or string bytes.
              h->data = x->tag == javaobj::kTcArray || IsString(*x) ? x->payload : SourceRange{};
              return Done(x);
            }
            return Done(x);
          })) {
        return false;
      }
    } else if (k == 1) {
      h->tag = static_cast<uint8_t>(HandleTag::kRelativeStream);
      if (!ReadObj(v, &o, [&](Fid f, CursorValue* x) {
            if (f == kRelativePath) return StrUtf(x, &h->path);
            return Done(x);
          })) {
        return false;
      }
      h->state_size = PrimOr(o, kStateSize, 0);
    } else if (k == 2) {
      h->tag = static_cast<uint8_t>(HandleTag::kFileStream);
      if (!ReadObj(v, &o, [&](Fid f, CursorValue* x) {
            if (f == kFilePath) return PathUtf(x, &h->path);
            return Done(x);
          })) {
        return false;
      }
      h->state_size = PrimOr(o, kStateSize, 0);
    } else if (k == 3 || k == 4) {
      h->tag = static_cast<uint8_t>(k == 3 ? HandleTag::kSegmentFile
                                           : HandleTag::kEmptySegmentFile);
      if (!ReadObj(v, &o, [&](Fid f, CursorValue* x) {
            switch (f) {
              case kFilePath: return PathUtf(x, &h->path);
              case kLogicalFileId: return StringId(x, &h->logical_file_id);
              case kScope:
                if (!IsNull(*x)) h->scope_ordinal = EnumText(*x) == "SHARED" ? 1 : 0;
                return Done(x);
              default: return Done(x);
            }
          })) {
        return false;
      }
      h->state_size = PrimOr(o, kStateSize, 0);
      h->start_pos = PrimOr(o, kStartPos, 0);
    } else if (k >= 5) {
      // Known, but without a `_metadata` counterpart in stream position.
      if (!IsObject(*v)) return Done(v);
      if (!SkipFields(v, &o)) return false;
    } else {
      Unknown(path, *v);
      if (!IsObject(*v)) {
        h->range = {v->def, v->end == 0 ? 0 : v->end - v->def};
        return Done(v) && SetRangeOfValue(*v, &h->range);
      }
      if (!SkipFields(v, &o)) return false;
    }
    return DefRange(*v, o, &h->range);
  }
  // The definition range of a non-object value.
  bool SetRangeOfValue(const CursorValue& v, SourceRange* r) {
    uint64_t end = v.end;
    if (v.reference && !c_.DefinitionEnd(v, &end)) return false;
    *r = {v.def, end - v.def};
    return true;
  }

  bool ReadNamedHandles(CursorValue* v, const Path& path, std::vector<NamedStreamHandle>* out) {
    if (IsNull(*v)) return Done(v);
    javaobj::ContainerKind kind;
    int64_t count;
    size_t i = 0;
    Utf pending_key;
    entries_hint_ = 0;
    return Container(
        v, &kind, &count,
        [&](CursorValue* k) { return StringId(k, &pending_key); },
        [&](CursorValue* val, uint64_t) {
          if (i == 0 && entries_hint_ > 0) {
            out->reserve(out->size() + std::min<uint64_t>(entries_hint_, 1u << 16));
          }
          // Read in place: a wide job has ~60 per keyed handle.
          NamedStreamHandle& n = out->emplace_back();
          const Path p(path, static_cast<int64_t>(i));
          ++i;
          if (kind == javaobj::ContainerKind::kMap) {  // <= 1.17
            n.local_path = std::move(pending_key);
            pending_key = Utf();
            if (!ReadStream(val, p, &n.handle)) return false;
          } else {  // >= 1.18: HandleAndLocalPath
            Obj o;
            if (!AsObject(val, &o, [&](Fid f, CursorValue* x) {
                  if (f == kLocalPath) return StrUtf(x, &n.local_path);
                  if (f == kHandle) return ReadStream(x, p, &n.handle);
                  return Done(x);
                })) {
              return false;
            }
          }
          return true;
        });
  }

  bool ReadKeyed(CursorValue* v, const Path& path, KeyedStateHandle* h) {
    const internal::KeyedNesting nesting(keyed_depth_);
    if (nesting.too_deep()) return Fail(path, internal::kKeyedTooDeep, v->def);
    // kKeyedClasses: 0 KeyGroups, 1 KeyGroupsSavepoint, 2 IncrementalRemote,
    // 3 ChangelogBackendImpl, 4 ChangelogStream, 5 InMemoryChangelog.
    const int k = RoleCode(*v, path, 1);
    Obj o;
    if (!IsObject(*v)) {
      Unknown(path, *v);
      return Done(v) && SetRangeOfValue(*v, &h->range);
    }
    if (k == 0 || k == 1) {
      const bool savepoint = k == 1;
      if (!ReadObj(v, &o, [&](Fid f, CursorValue* x) {
            switch (f) {
              case kGroupRangeOffsets: {
                Obj g;
                return AsObject(x, &g, [&](Fid gf, CursorValue* y) {
                  if (gf == kKeyGroupRange) {
                    return KeyGroupRange(y, &h->start_key_group, &h->num_key_groups);
                  }
                  if (gf == kOffsets) {
                    h->key_group_offsets = LongArray(*y);
                    return Done(y);
                  }
                  return Done(y);
                });
              }
              case kStateHandle:
                h->delegate = std::make_unique<StreamStateHandle>();
                return ReadStream(x, Path(path, ".stateHandle"), h->delegate.get());
              case kStateHandleId: return StringId(x, &h->state_handle_id);
              default: return Done(x);
            }
          })) {
        return false;
      }
      const bool with_id = HasField(o, kStateHandleId) || HasField(o, kStateHandleID);
      h->tag = static_cast<uint8_t>(savepoint  ? HandleTag::kSavepointKeyGroups
                                    : with_id ? HandleTag::kKeyGroupsV2
                                              : HandleTag::kKeyGroups);
      if (!h->delegate) h->delegate = std::make_unique<StreamStateHandle>();
    } else if (k == 2) {
      h->meta_data = std::make_unique<StreamStateHandle>();
      if (!ReadObj(v, &o, [&](Fid f, CursorValue* x) {
            switch (f) {
              case kBackendIdentifier: {
                Obj u;
                if (!AsObject(x, &u, [this](Fid, CursorValue* y) { return Done(y); })) {
                  return false;
                }
                if (u.desc == kNoDesc) return true;
                // `UUID.toString()`: 8-4-4-4-12 lowercase hex digits.
                const uint64_t hi = static_cast<uint64_t>(PrimOr(u, kMostSigBits, 0));
                const uint64_t lo = static_cast<uint64_t>(PrimOr(u, kLeastSigBits, 0));
                h->backend_identifier.value = absl::StrCat(
                    absl::Hex(hi >> 32, absl::kZeroPad8), "-",
                    absl::Hex((hi >> 16) & 0xFFFF, absl::kZeroPad4), "-",
                    absl::Hex(hi & 0xFFFF, absl::kZeroPad4), "-",
                    absl::Hex(lo >> 48, absl::kZeroPad4), "-",
                    absl::Hex(lo & 0xFFFFFFFFFFFFULL, absl::kZeroPad12));
                return true;
              }
              case kKeyGroupRange:
                return KeyGroupRange(x, &h->start_key_group, &h->num_key_groups);
              case kMetaStateHandle:
                return ReadStream(x, Path(path, ".metaStateHandle"), h->meta_data.get());
              case kSharedState:
                h->shared_state.clear();
                return ReadNamedHandles(x, Path(path, ".sharedState"), &h->shared_state);
              case kPrivateState:
                h->private_state.clear();
                return ReadNamedHandles(x, Path(path, ".privateState"), &h->private_state);
              case kStateHandleId: return StringId(x, &h->state_handle_id);
              default: return Done(x);
            }
          })) {
        return false;
      }
      const bool with_id = HasField(o, kStateHandleId) || HasField(o, kStateHandleID);
      h->tag = static_cast<uint8_t>(with_id ? HandleTag::kIncrementalKeyGroupsV2
                                            : HandleTag::kIncrementalKeyGroups);
      h->checkpoint_id = PrimOr(o, kCheckpointId, 0);
      h->checkpointed_size = PrimOr(o, kPersistedSizeOfThisCheckpoint, -1);
    } else if (k == 3) {
      if (!ReadObj(v, &o, [&](Fid f, CursorValue* x) {
            switch (f) {
              case kKeyGroupRange:
                return KeyGroupRange(x, &h->start_key_group, &h->num_key_groups);
              case kStateHandleID: return StringId(x, &h->state_handle_id);
              case kMaterialized:
              case kNonMaterialized: {
                const bool m = f == kMaterialized;
                auto* out = m ? &h->materialized : &h->non_materialized;
                out->clear();
                const Path p(path, m ? ".materialized" : ".nonMaterialized");
                javaobj::ContainerKind kind;
                int64_t count;
                size_t i = 0;
                return Container(
                    x, &kind, &count, [this](CursorValue* k) { return Done(k); },
                    [&](CursorValue* e, uint64_t) {
                      const size_t at = i++;
                      if (IsNull(*e)) return Done(e);
                      KeyedStateHandle k;
                      if (!ReadKeyed(e, Path(p, static_cast<int64_t>(at)), &k)) return false;
                      out->push_back(std::move(k));
                      return true;
                    });
              }
              default: return Done(x);
            }
          })) {
        return false;
      }
      h->tag = static_cast<uint8_t>(HasField(o, kCheckpointId) ? HandleTag::kChangelogV2
                                                               : HandleTag::kChangelog);
      h->checkpoint_id = PrimOr(o, kCheckpointId, 0);
      h->materialization_id = PrimOr(o, kMaterializationID, 0);
      h->checkpointed_size = PrimOr(o, kPersistedSizeOfThisCheckpoint, -1);
    } else if (k == 4) {
      if (!ReadObj(v, &o, [&](Fid f, CursorValue* x) {
            switch (f) {
              case kKeyGroupRange:
                return KeyGroupRange(x, &h->start_key_group, &h->num_key_groups);
              case kStateHandleID: return StringId(x, &h->state_handle_id);
              case kStorageIdentifier: return StrUtf(x, &h->storage_identifier);
              case kHandlesAndOffsets: {
                h->increments.clear();
                const Path p(path, ".handlesAndOffsets");
                javaobj::ContainerKind kind;
                int64_t count;
                size_t i = 0;
                return Container(
                    x, &kind, &count, [this](CursorValue* k) { return Done(k); },
                    [&](CursorValue* t, uint64_t) {
                      const size_t at = i++;
                      if (IsNull(*t)) return Done(t);
                      OffsetStreamHandle os;
                      Obj to;
                      if (!AsObject(t, &to, [&](Fid tf, CursorValue* y) {
                            if (tf == kF1) {
                              Obj l;
                              if (!AsObject(y, &l, [this](Fid, CursorValue* z) { return Done(z); })) {
                                return false;
                              }
                              if (l.desc != kNoDesc) os.offset = PrimOr(l, kValue, 0);
                              return true;
                            }
                            if (tf == kF0) {
                              return ReadStream(y, Path(p, static_cast<int64_t>(at)), &os.handle);
                            }
                            return Done(y);
                          })) {
                        return false;
                      }
                      h->increments.push_back(std::move(os));
                      return true;
                    });
              }
              default: return Done(x);
            }
          })) {
        return false;
      }
      h->tag = static_cast<uint8_t>(HasField(o, kStorageIdentifier)
                                        ? HandleTag::kChangelogFileIncrementV2
                                        : HandleTag::kChangelogFileIncrement);
      h->state_size = PrimOr(o, kSize, 0);
      h->checkpointed_size = PrimOr(o, kIncrementalSize, -1);
    } else if (k == 5) {
      h->tag = static_cast<uint8_t>(HandleTag::kChangelogByteIncrement);
      if (!ReadObj(v, &o, [&](Fid f, CursorValue* x) {
            switch (f) {
              case kKeyGroupRange:
                return KeyGroupRange(x, &h->start_key_group, &h->num_key_groups);
              case kStateHandleID: return StringId(x, &h->state_handle_id);
              case kFrom:
              case kTo: {
                Obj n;
                if (!AsObject(x, &n, [this](Fid, CursorValue* y) { return Done(y); })) {
                  return false;
                }
                if (n.desc != kNoDesc) (f == kFrom ? h->from : h->to) = PrimOr(n, kNumber, 0);
                return true;
              }
              case kChanges: {
                int64_t n = 0;
                if (!CountOf(x, &n)) return false;
                h->num_changes = static_cast<uint32_t>(n);
                return true;
              }
              default: return Done(x);
            }
          })) {
        return false;
      }
    } else {
      Unknown(path, *v);
      if (!SkipFields(v, &o)) return false;
    }
    return DefRange(*v, o, &h->range);
  }

  bool ReadOperatorHandle(CursorValue* v, const Path& path, int op_index, int subtask,
                          const char* slot, OperatorStateHandle* h) {
    // kOperatorHandleClasses: 0 OperatorStream, 1 FileMerging, 2 EmptyFileMerging.
    const int k = RoleCode(*v, path, 2);
    const bool merging = k == 1 || k == 2;
    Obj o;
    if (k < 0 || !IsObject(*v)) {
      Unknown(path, *v);
      if (!IsObject(*v)) return Done(v) && SetRangeOfValue(*v, &h->range);
      return SkipFields(v, &o) && DefRange(*v, o, &h->range);
    }
    h->tag = static_cast<uint8_t>(merging ? HandleTag::kSegmentPartitionableOperator
                                          : HandleTag::kPartitionableOperator);
    if (merging) h->is_empty = k == 2;
    h->delegate = std::make_unique<StreamStateHandle>();
    const Path mp(path, ".stateNameToPartitionOffsets");
    bool map_null = true;
    uint64_t map_def = 0;
    if (!ReadObj(v, &o, [&](Fid f, CursorValue* x) -> bool {
          switch (f) {
            case kTaskOwnedDirHandle:
            case kSharedDirHandle: {
              Utf* out = f == kTaskOwnedDirHandle ? &h->task_owned_directory
                                                  : &h->shared_directory;
              if (!merging || IsNull(*x)) return Done(x);
              Obj d;
              return AsObject(x, &d, [&](Fid g, CursorValue* y) {
                if (g != kDirectory) return Done(y);
                return PathUtf(y, out);
              });
            }
            case kDelegateStateHandle:
              *h->delegate = StreamStateHandle();
              return ReadStream(x, Path(path, ".delegateStateHandle"), h->delegate.get());
            case kStateNameToPartitionOffsets: {
              h->states.clear();
              map_null = IsNull(*x);
              map_def = x->def;
              // The hooks watch this map's entries (its definition only).
              const int saved_map_depth = state_map_depth_;
              state_map_depth_ = container_depth_ + 1;
              hook_op_ = op_index;
              hook_subtask_ = subtask;
              hook_slot_ = slot;
              const bool watched = hooks_ != nullptr && !x->reference && !c_.replaying();
              struct Restore {
                int& d;
                int v;
                ~Restore() { d = v; }
              } restore{state_map_depth_, saved_map_depth};
              javaobj::ContainerKind kind;
              int64_t count;
              Utf name;
              bool have_name = false;
              if (!Container(
                      x, &kind, &count,
                      [&](CursorValue* k) {
                        if (!IsString(*k)) return Fail(mp, "a key that is not a string", k->def);
                        have_name = true;
                        return StrUtf(k, &name);
                      },
                      [&](CursorValue* val, uint64_t begin) -> bool {
                        if (kind != javaobj::ContainerKind::kMap) return Done(val);
                        StateNameEntry entry;
                        entry.name = name;
                        if (!IsObject(*val) || c_.desc(val->desc).name != kStateMetaInfoClass) {
                          return Fail(absl::StrCat(mp.str(), "[", Text(name), "]"),
                                      "expected OperatorStateHandle$StateMetaInfo", val->def);
                        }
                        Obj meta;
                        if (!ReadObj(val, &meta, [&](Fid g, CursorValue* y) {
                              if (g == kDistributionMode) {
                                const std::string mode = EnumText(*y);
                                entry.mode = mode == "UNION" ? 1 : mode == "BROADCAST" ? 2 : 0;
                                return Done(y);
                              }
                              if (g == kOffsets) {
                                entry.offsets = LongArray(*y);
                                return Done(y);
                              }
                              return Done(y);
                            })) {
                          return false;
                        }
                        entry.range = {begin, val->end - begin};
                        if (watched) {
                          if (absl::Status st = hooks_->OnStateEntryEnd(entry); !st.ok()) {
                            caller_status_ = st;
                            return c_.SetError(st);
                          }
                        }
                        h->states.push_back(std::move(entry));
                        (void)have_name;
                        return true;
                      })) {
                return false;
              }
              if (watched) {
                if (absl::Status st = hooks_->OnStateMapEnd(); !st.ok()) {
                  caller_status_ = st;
                  return c_.SetError(st);
                }
              }
              if (!map_null && kind != javaobj::ContainerKind::kMap) {
                return Fail(mp, "expected a map", x->def);
              }
              return true;
            }
            default: return Done(x);
          }
        })) {
      return false;
    }
    OperatorHandleRef ref;
    ref.operator_index = op_index;
    ref.subtask_index = subtask;
    ref.slot = slot;
    ref.handle_offset = v->def;
    ref.map_offset = map_null ? 0 : map_def;
    info_->operator_handles.push_back(std::move(ref));
    return DefRange(*v, o, &h->range);
  }

  bool ReadChannel(CursorValue* v, const Path& path, ChannelStateHandle* h) {
    h->type = static_cast<uint8_t>(
        internal::ChannelHandleType(IsObject(*v) ? ShortNameOf(v->desc) : ""));
    if (h->type == 0) {
      Unknown(path, *v);
      if (!IsObject(*v)) return Done(v) && SetRangeOfValue(*v, &h->range);
      Obj o;
      return SkipFields(v, &o) && DefRange(*v, o, &h->range);
    }
    Obj o;
    if (!ReadObj(v, &o, [&](Fid f, CursorValue* x) {
          switch (f) {
            case kInfo: {
              Obj i;
              if (!AsObject(x, &i, [this](Fid, CursorValue* y) { return Done(y); })) return false;
              if (i.desc == kNoDesc) return true;
              h->info_a = static_cast<int32_t>(h->type == 1 ? PrimOr(i, kGateIdx, 0)
                                                            : PrimOr(i, kPartitionIdx, 0));
              h->info_b = static_cast<int32_t>(h->type == 1 ? PrimOr(i, kInputChannelIdx, 0)
                                                            : PrimOr(i, kSubPartitionIdx, 0));
              return true;
            }
            case kOffsets: {
              if (IsNull(*x)) return Done(x);
              int64_t n = 0;
              if (!CountOf(x, &n)) return false;
              h->offsets.count = static_cast<uint32_t>(n);
              return true;
            }
            case kSerializedChannelOffsets:
              if (x->tag == javaobj::kTcArray || IsString(*x)) {
                h->serialized_channel_offsets = x->payload;
              }
              return Done(x);
            case kDelegate: return ReadStream(x, Path(path, ".delegate"), &h->delegate);
            default: return Done(x);
          }
        })) {
      return false;
    }
    h->subtask_index = static_cast<int32_t>(PrimOr(o, kSubtaskIndex, 0));
    h->state_size = PrimOr(o, kSize, 0);
    return DefRange(*v, o, &h->range);
  }

  internal::ScanHooks* hooks_ = nullptr;
  absl::Status caller_status_;
  int container_depth_ = 0;
  int state_map_depth_ = -1;
  int hook_op_ = -1;
  int hook_subtask_ = -1;
  const char* hook_slot_ = "";
  std::vector<SourceRange> count_where_;
  // Container layouts that do not match are noted, not fatal (masterHookStates).
  bool tolerant_ = false;
  bool layout_failed_ = false;
  int64_t entries_hint_ = 0;
  serde::ByteView in_;
  StreamCursor c_;
  const ScanCompletedCheckpointOptions& options_;
  const CompletedOperatorSink* sink_;
  serde::InputReleaser release_;
  serde::InputReleaser skip_release_;  // the skipping pass of `head_first`
  StateFile file_;
  CompletedCheckpointInfo* info_ = nullptr;
  uint64_t root_offset_ = 0;
  int keyed_depth_ = 0;
  std::vector<std::vector<uint8_t>> fids_;
  std::vector<uint8_t> fids_done_;
  std::vector<std::string> short_names_;
  std::vector<bool> short_done_;
  std::vector<CompletedCheckpointInfo::ShapeWarning> root_warnings_;
  internal::WalkFindings walk_;
  static constexpr int16_t kUnset = -2;
  std::vector<std::array<int16_t, 3>> role_codes_;
  std::vector<int8_t> desc_kinds_;
  std::vector<uint8_t> known_roles_;
  std::vector<int8_t> container_codes_;
  std::vector<std::array<const KnownClassShape*, 3>> role_drift_;
};

}  // namespace

absl::StatusOr<StateFile> ScanCompletedCheckpoint(serde::ByteView input,
                                                  const CompletedOperatorSink& sink,
                                                  const ScanCompletedCheckpointOptions& options) {
  GraphScanner g(input, options, sink ? &sink : nullptr, nullptr);
  return g.Read();
}

std::optional<int64_t> PeekCompletedCheckpointId(serde::ByteView input) {
  StreamCursor c(input);
  CursorValue root;
  if (!c.ReadHeader() || !c.ReadContent(&root) || root.tag != javaobj::kTcObject ||
      root.reference || root.end != 0) {
    return std::nullopt;
  }
  // The primitive values of each class come before its object fields: stop
  // at the first object field (the visitor's false ends the read).
  std::vector<uint64_t> prims;
  struct Visit {
    std::vector<uint64_t>& prims;
    void Class(DescId, uint64_t at) { prims.push_back(at); }
    bool Field(DescId, uint32_t) { return false; }
    bool Annotation(DescId) { return false; }
  } visit{prims};
  c.ReadObjectData(&root, visit);
  const javaobj::ClassDesc& d = c.desc(root.desc);
  for (size_t ci = std::min(prims.size(), d.chain.size()); ci-- > 0;) {
    const javaobj::ClassDesc& cls = c.desc(d.chain[ci]);
    for (const javaobj::FieldDesc& f : cls.fields) {
      if (f.name == "checkpointID" && f.type_code == 'J' &&
          prims[ci] + f.prim_offset + 8 <= input.size()) {
        return static_cast<int64_t>(
            serde::DecodeBigEndian64(input.data() + prims[ci] + f.prim_offset));
      }
    }
  }
  return std::nullopt;
}

namespace internal {

absl::StatusOr<StateFile> ScanCompletedCheckpointWithHooks(
    serde::ByteView input, const CompletedOperatorSink& sink,
    const ScanCompletedCheckpointOptions& options, ScanHooks* hooks) {
  GraphScanner g(input, options, sink ? &sink : nullptr, hooks);
  return g.Read();
}

}  // namespace internal

}  // namespace flinkstate
