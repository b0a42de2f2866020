// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/completed_checkpoint_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "flinkstate/serde/buffered_fd_writer.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/modified_utf8.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate {
namespace {

// --- Class descriptors (Flink 1.19-1.20, JDK 8-25) -------------------------------

struct Field {
  char code;
  const char* name;
  const char* type;  // object fields: JVM type string
};

struct Cls {
  const char* name;
  uint64_t suid;
  uint8_t flags;
  std::vector<Field> fields;
  const Cls* super;
};

constexpr char kStr[] = "Ljava/lang/String;";
constexpr char kStream[] = "Lorg/apache/flink/runtime/state/StreamStateHandle;";
constexpr char kSoc[] = "Lorg/apache/flink/runtime/checkpoint/StateObjectCollection;";
constexpr char kIdrd[] = "Lorg/apache/flink/runtime/checkpoint/InflightDataRescalingDescriptor;";
constexpr char kPathT[] = "Lorg/apache/flink/core/fs/Path;";

const Cls kAbstractId{"org.apache.flink.util.AbstractID", 1, 2,
                      {{'J', "lowerPart", nullptr}, {'J', "upperPart", nullptr}}, nullptr};
const Cls kJobId{"org.apache.flink.api.common.JobID", 1, 2, {}, &kAbstractId};
const Cls kOperatorId{"org.apache.flink.runtime.jobgraph.OperatorID", 1, 2, {}, &kAbstractId};
const Cls kEmptyList{"java.util.Collections$EmptyList", 0x7ab817b43ca79edeULL, 2, {}, nullptr};
const Cls kUri{"java.net.URI", 0xac01782e439e49abULL, 3, {{'L', "string", kStr}}, nullptr};
const Cls kPath{"org.apache.flink.core.fs.Path", 1, 2, {{'L', "uri", "Ljava/net/URI;"}}, nullptr};
const Cls kFileHandle{"org.apache.flink.runtime.state.filesystem.FileStateHandle",
                      0x04dc75d862bd1bb3ULL, 2,
                      {{'J', "stateSize", nullptr}, {'L', "filePath", kPathT}}, nullptr};
const Cls kRelativeHandle{"org.apache.flink.runtime.state.filesystem.RelativeFileStateHandle",
                          1, 2, {{'L', "relativePath", kStr}}, &kFileHandle};
const Cls kByteArray{"[B", 0xacf317f8060854e0ULL, 2, {}, nullptr};
const Cls kLongArray{"[J", 0x782004b512b17593ULL, 2, {}, nullptr};
const Cls kByteHandle{"org.apache.flink.runtime.state.memory.ByteStreamStateHandle",
                      0xb6b8de37f3796da6ULL, 2,
                      {{'[', "data", "[B"}, {'L', "handleName", kStr}}, nullptr};
const Cls kHashMap{"java.util.HashMap", 0x0507dac1c31660d1ULL, 3,
                   {{'F', "loadFactor", nullptr}, {'I', "threshold", nullptr}}, nullptr};
const Cls kArrayList{"java.util.ArrayList", 0x7881d21d99c7619dULL, 3,
                     {{'I', "size", nullptr}}, nullptr};
const Cls kSingletonSet{"java.util.Collections$SingletonSet", 0x2c52419829c0b1bfULL, 2,
                        {{'L', "element", "Ljava/lang/Object;"}}, nullptr};
const Cls kNumber{"java.lang.Number", 0x86ac951d0b94e08bULL, 2, {}, nullptr};
const Cls kInteger{"java.lang.Integer", 0x12e2a0a4f7818738ULL, 2,
                   {{'I', "value", nullptr}}, &kNumber};
const Cls kOperatorState{
    "org.apache.flink.runtime.checkpoint.OperatorState", 0xbcc10c7a051403eeULL, 2,
    {{'I', "maxParallelism", nullptr},
     {'I', "parallelism", nullptr},
     {'L', "coordinatorState", "Lorg/apache/flink/runtime/state/memory/ByteStreamStateHandle;"},
     {'L', "operatorID", "Lorg/apache/flink/runtime/jobgraph/OperatorID;"},
     {'L', "operatorSubtaskStates", "Ljava/util/Map;"}},
    nullptr};
const Cls kFullyFinished{"org.apache.flink.runtime.checkpoint.FullyFinishedOperatorState", 1,
                         2, {}, &kOperatorState};
const Cls kSubtaskState{"org.apache.flink.runtime.checkpoint.OperatorSubtaskState",
                        0xdec453c49b306be5ULL, 2,
                        {{'J', "checkpointedSize", nullptr},
                         {'J', "stateSize", nullptr},
                         {'L', "inputChannelState", kSoc},
                         {'L', "inputRescalingDescriptor", kIdrd},
                         {'L', "managedKeyedState", kSoc},
                         {'L', "managedOperatorState", kSoc},
                         {'L', "outputRescalingDescriptor", kIdrd},
                         {'L', "rawKeyedState", kSoc},
                         {'L', "rawOperatorState", kSoc},
                         {'L', "resultSubpartitionState", kSoc}},
                        nullptr};
const Cls kFinishedSubtask{"org.apache.flink.runtime.checkpoint.FinishedOperatorSubtaskState",
                           1, 2, {}, &kSubtaskState};
const Cls kSocCls{"org.apache.flink.runtime.checkpoint.StateObjectCollection", 1, 2,
                  {{'L', "stateObjects", "Ljava/util/Collection;"}}, nullptr};
constexpr char kGateArray[] =
    "[Lorg/apache/flink/runtime/checkpoint/InflightDataRescalingDescriptor$"
    "InflightDataGateOrPartitionRescalingDescriptor;";
const Cls kIdrdCls{"org.apache.flink.runtime.checkpoint.InflightDataRescalingDescriptor",
                   0xd0dc96ae0c462839ULL, 2,
                   {{'[', "gateOrPartitionDescriptors", kGateArray}}, nullptr};
const Cls kNoRescaling{
    "org.apache.flink.runtime.checkpoint.InflightDataRescalingDescriptor$NoRescalingDescriptor",
    1, 2, {}, &kIdrdCls};
const Cls kGateArrayCls{
    "[Lorg.apache.flink.runtime.checkpoint.InflightDataRescalingDescriptor$"
    "InflightDataGateOrPartitionRescalingDescriptor;",
    0xd227aeac448823f6ULL, 2, {}, nullptr};
const Cls kKeyGroupRange{"org.apache.flink.runtime.state.KeyGroupRange", 0x4392982fa819b9cfULL,
                         2, {{'I', "endKeyGroup", nullptr}, {'I', "startKeyGroup", nullptr}},
                         nullptr};
const Cls kKeyGroupRangeOffsets{
    "org.apache.flink.runtime.state.KeyGroupRangeOffsets", 0x5b879f32a2d4fe80ULL, 2,
    {{'L', "keyGroupRange", "Lorg/apache/flink/runtime/state/KeyGroupRange;"},
     {'[', "offsets", "[J"}},
    nullptr};
const Cls kStringBasedId{"org.apache.flink.util.StringBasedID", 1, 2,
                         {{'L', "keyString", kStr}}, nullptr};
const Cls kStateHandleId{"org.apache.flink.runtime.state.StateHandleID", 1, 2, {},
                         &kStringBasedId};
const Cls kKeyGroupsHandle{
    "org.apache.flink.runtime.state.KeyGroupsStateHandle", 0x9000711b5bfc13cdULL, 2,
    {{'L', "groupRangeOffsets", "Lorg/apache/flink/runtime/state/KeyGroupRangeOffsets;"},
     {'L', "stateHandle", kStream},
     {'L', "stateHandleId", "Lorg/apache/flink/runtime/state/StateHandleID;"}},
    nullptr};
const Cls kSavepointKeyGroups{"org.apache.flink.runtime.state.KeyGroupsSavepointStateHandle", 1,
                              2, {}, &kKeyGroupsHandle};
const Cls kOperatorHandle{"org.apache.flink.runtime.state.OperatorStreamStateHandle",
                          0x007f7581ef5b6047ULL, 2,
                          {{'L', "delegateStateHandle", kStream},
                           {'L', "stateNameToPartitionOffsets", "Ljava/util/Map;"}},
                          nullptr};
const Cls kEnum{"java.lang.Enum", 0, 0x12, {}, nullptr};
const Cls kMode{"org.apache.flink.runtime.state.OperatorStateHandle$Mode", 0, 0x12, {}, &kEnum};
const Cls kMetaInfo{"org.apache.flink.runtime.state.OperatorStateHandle$StateMetaInfo",
                    0x31dfce14acd03ceeULL, 2,
                    {{'L', "distributionMode",
                      "Lorg/apache/flink/runtime/state/OperatorStateHandle$Mode;"},
                     {'[', "offsets", "[J"}},
                    nullptr};
const Cls kProperties{"org.apache.flink.runtime.checkpoint.CheckpointProperties", 2, 2,
                      {{'Z', "discardCancelled", nullptr},
                       {'Z', "discardFailed", nullptr},
                       {'Z', "discardFinished", nullptr},
                       {'Z', "discardSubsumed", nullptr},
                       {'Z', "discardSuspended", nullptr},
                       {'Z', "forced", nullptr},
                       {'Z', "unclaimed", nullptr},
                       {'L', "checkpointType", "Lorg/apache/flink/runtime/checkpoint/SnapshotType;"}},
                      nullptr};
const Cls kCheckpointType{
    "org.apache.flink.runtime.checkpoint.CheckpointType", 0xd6de4f0305ae1d3aULL, 2,
    {{'L', "name", kStr},
     {'L', "sharingFilesStrategy",
      "Lorg/apache/flink/runtime/checkpoint/SnapshotType$SharingFilesStrategy;"}},
    nullptr};
const Cls kSharing{"org.apache.flink.runtime.checkpoint.SnapshotType$SharingFilesStrategy", 0,
                   0x12, {}, &kEnum};
const Cls kFsLocation{
    "org.apache.flink.runtime.state.filesystem.FsCompletedCheckpointStorageLocation", 1, 2,
    {{'L', "exclusiveCheckpointDir", kPathT},
     {'L', "externalPointer", kStr},
     {'L', "metadataFileHandle",
      "Lorg/apache/flink/runtime/state/filesystem/FileStateHandle;"}},
    nullptr};
const Cls kCompleted{
    "org.apache.flink.runtime.checkpoint.CompletedCheckpoint", 0x8bfa6e933be66402ULL, 2,
    {{'J', "checkpointID", nullptr},
     {'J', "completionTimestamp", nullptr},
     {'J', "timestamp", nullptr},
     {'L', "externalPointer", kStr},
     {'L', "job", "Lorg/apache/flink/api/common/JobID;"},
     {'L', "masterHookStates", "Ljava/util/Collection;"},
     {'L', "metadataHandle", kStream},
     {'L', "operatorStates", "Ljava/util/Map;"},
     {'L', "props", "Lorg/apache/flink/runtime/checkpoint/CheckpointProperties;"},
     {'L', "restoredProps", "Lorg/apache/flink/runtime/checkpoint/CheckpointProperties;"},
     {'L', "storageLocation",
      "Lorg/apache/flink/runtime/state/CompletedCheckpointStorageLocation;"}},
    nullptr};

// --- Output ------------------------------------------------------------------------

// Big-endian output buffered to the file (serde/buffered_fd_writer.h).
class Out : public serde::BufferedFdWriter {
 public:
  explicit Out(int fd) : serde::BufferedFdWriter(fd, "ccwriter") {}
};

// A minimal `ObjectOutputStream`: descriptors once per stream then by
// reference, interned field type strings, handles in JDK order.
class JavaOut {
 public:
  explicit JavaOut(Out* o) : o_(*o) {
    o_.U16(0xACED);
    o_.U16(5);
  }
  Out& raw() { return o_; }

  void Utf(const std::string& s) {
    absl::StatusOr<std::string> m = serde::Utf8ToModifiedUtf8(s);
    if (!m.ok() || m->size() > serde::kMaxWriteUtfBytes) {
      o_.Fail(absl::InvalidArgumentError(absl::StrCat("ccwriter: string '", s.substr(0, 40),
                                                      "' cannot be written with writeUTF")));
      return;
    }
    o_.U16(static_cast<uint16_t>(m->size()));
    o_.Bytes(m->data(), m->size());
  }
  void Ref(int32_t h) {
    o_.U8(0x71);
    o_.I32(0x7E0000 + h);
  }
  void Null() { o_.U8(0x70); }
  int32_t String(const std::string& s) {
    o_.U8(0x74);
    Utf(s);
    return next_++;
  }
  void Desc(const Cls& c) {
    auto it = descs_.find(&c);
    if (it != descs_.end()) return Ref(it->second);
    o_.U8(0x72);
    Utf(c.name);
    o_.I64(static_cast<int64_t>(c.suid));
    descs_[&c] = next_++;
    o_.U8(c.flags);
    o_.U16(static_cast<uint16_t>(c.fields.size()));
    for (const Field& f : c.fields) {
      o_.U8(static_cast<uint8_t>(f.code));
      Utf(f.name);
      if (f.type != nullptr) {
        auto t = types_.find(f.type);
        if (t != types_.end()) {
          Ref(t->second);
        } else {
          types_[f.type] = String(f.type);
        }
      }
    }
    o_.U8(0x78);
    if (c.super != nullptr) {
      Desc(*c.super);
    } else {
      Null();
    }
  }
  int32_t Object(const Cls& c) {
    o_.U8(0x73);
    Desc(c);
    return next_++;
  }
  void Enum(const Cls& c, const std::string& constant) {
    const std::string key = absl::StrCat(c.name, ".", constant);
    auto it = enums_.find(key);
    if (it != enums_.end()) return Ref(it->second);
    o_.U8(0x7E);
    Desc(c);
    enums_[key] = next_++;
    String(constant);
  }
  void Array(const Cls& c, serde::ByteView payload, uint32_t count) {
    o_.U8(0x75);
    Desc(c);
    next_++;
    o_.I32(static_cast<int32_t>(count));
    o_.Bytes(payload.data(), payload.size());
  }
  void Block(const uint8_t* b, uint8_t n) {
    o_.U8(0x77);
    o_.U8(n);
    o_.Bytes(b, n);
  }
  void EndBlock() { o_.U8(0x78); }
  void Id(const std::array<uint8_t, 16>& id, const Cls& c) {
    Object(c);
    o_.Bytes(id.data(), 16);  // lowerPart, upperPart: the file order of both formats
  }
  void HashMapHeader(size_t n) {
    Object(kHashMap);
    // `new HashMap<>(m)`: table for n / 0.75 + 1 entries.
    int32_t cap = 1;
    while (cap < static_cast<int64_t>(n / 0.75 + 1) && cap < (1 << 30)) cap <<= 1;
    const float lf = 0.75f;
    uint32_t bits;
    std::memcpy(&bits, &lf, 4);
    o_.I32(static_cast<int32_t>(bits));
    o_.I32(static_cast<int32_t>(cap * 0.75));
    uint8_t b[8];
    serde::EncodeBigEndian32(static_cast<uint32_t>(cap), b);
    serde::EncodeBigEndian32(static_cast<uint32_t>(n), b + 4);
    Block(b, 8);
  }

 private:
  Out& o_;
  int32_t next_ = 0;
  std::map<const Cls*, int32_t> descs_;
  std::map<std::string, int32_t> types_;
  std::map<std::string, int32_t> enums_;
};

class GraphWriter {
 public:
  GraphWriter(const StateFile& f, serde::ByteView in, const CompletedCheckpointWriteOptions& o,
              JavaOut* j)
      : f_(f), in_(in), o_(o), j_(*j) {}

  absl::Status Write() {
    j_.Object(kCompleted);
    Out& r = j_.raw();
    r.I64(f_.metadata.checkpoint_id);
    r.I64(o_.completion_timestamp);
    r.I64(o_.timestamp);
    pointer_ = j_.String(o_.external_pointer);
    std::array<uint8_t, 16> job{};
    for (int i = 0; i < 16; ++i) {
      job[i] = static_cast<uint8_t>(std::stoi(o_.job_id.substr(2 * i, 2), nullptr, 16));
    }
    j_.Id(job, kJobId);
    empty_list_ = j_.Object(kEmptyList);
    metadata_handle_ = j_.Object(kFileHandle);
    r.I64(static_cast<int64_t>(in_.size()));
    PathObject(o_.external_pointer + "/_metadata");
    const auto& ops = f_.metadata.operators;
    j_.HashMapHeader(ops.size());
    for (const OperatorState& op : ops) FLINKSTATE_RETURN_IF_ERROR(Operator(op));
    j_.EndBlock();
    // props: a retained-on-nothing checkpoint, as the JobManager uses by default.
    j_.Object(kProperties);
    for (uint8_t b : {1, 1, 1, 1, 1, 0, 0}) r.U8(b);
    j_.Object(kCheckpointType);
    j_.String("Checkpoint");
    j_.Enum(kSharing, "FORWARD_BACKWARD");
    j_.Null();  // restoredProps
    j_.Object(kFsLocation);
    PathObject(o_.external_pointer);
    j_.Ref(pointer_);
    j_.Ref(metadata_handle_);
    return r.status();
  }

 private:
  void PathObject(const std::string& uri) {
    j_.Object(kPath);
    j_.Object(kUri);
    j_.String(uri);
    j_.EndBlock();
  }

  absl::Status Stream(const StreamStateHandle& h, const std::string& where) {
    Out& r = j_.raw();
    switch (static_cast<HandleTag>(h.tag)) {
      case HandleTag::kNull:
        j_.Null();
        return absl::OkStatus();
      case HandleTag::kByteStream:
        j_.Object(kByteHandle);
        j_.Array(kByteArray, serde::Slice(in_, h.data), static_cast<uint32_t>(h.data.size));
        j_.String(h.name.value);
        return absl::OkStatus();
      case HandleTag::kFileStream:
        j_.Object(kFileHandle);
        r.I64(h.state_size);
        PathObject(h.path.value);
        return absl::OkStatus();
      case HandleTag::kRelativeStream:
        j_.Object(kRelativeHandle);
        r.I64(h.state_size);
        PathObject(o_.external_pointer + "/" + h.path.value);
        j_.String(h.path.value);
        return absl::OkStatus();
      default:
        return absl::UnimplementedError(absl::StrCat(
            "ccwriter: ", where, ": stream handle tag ", h.tag, " is not supported"));
    }
  }

  // A StateObjectCollection of `n` handles written by `each(i)`; empty ones
  // share the subtask's EMPTY collection.
  template <typename Fn>
  absl::Status Collection(size_t n, Fn&& each) {
    if (n == 0) {
      if (subtask_empty_ >= 0) {
        j_.Ref(subtask_empty_);
      } else {
        subtask_empty_ = j_.Object(kSocCls);
        j_.Ref(empty_list_);
      }
      return absl::OkStatus();
    }
    j_.Object(kSocCls);
    if (n == 1) {
      j_.Object(kSingletonSet);
      return each(0);
    }
    j_.Object(kArrayList);
    j_.raw().I32(static_cast<int32_t>(n));
    uint8_t b[4];
    serde::EncodeBigEndian32(static_cast<uint32_t>(n), b);
    j_.Block(b, 4);
    for (size_t i = 0; i < n; ++i) FLINKSTATE_RETURN_IF_ERROR(each(i));
    j_.EndBlock();
    return absl::OkStatus();
  }

  void NoRescaling() {
    if (no_rescale_ >= 0) return j_.Ref(no_rescale_);
    no_rescale_ = j_.Object(kNoRescaling);
    j_.Array(kGateArrayCls, {}, 0);
  }

  absl::Status Subtask(const OperatorSubtaskState& st, const std::string& where) {
    if (!st.input_channel_state.empty() || !st.result_subpartition_state.empty()) {
      return absl::UnimplementedError(
          absl::StrCat("ccwriter: ", where, ": channel state is not supported"));
    }
    j_.Object(st.finished ? kFinishedSubtask : kSubtaskState);
    int64_t size = 0;
    for (const auto& h : st.managed_operator_state) {
      if (h.delegate) size += h.delegate->state_size + static_cast<int64_t>(h.delegate->data.size);
    }
    j_.raw().I64(size);
    j_.raw().I64(size);
    subtask_empty_ = -1;
    auto keyed = [&](const std::vector<KeyedStateHandle>& v) {
      std::vector<const KeyedStateHandle*> live;
      for (const auto& k : v) {
        if (k.tag != 0) live.push_back(&k);
      }
      return Collection(live.size(), [&](size_t i) { return Keyed(*live[i], where); });
    };
    auto oper = [&](const std::vector<OperatorStateHandle>& v) {
      std::vector<const OperatorStateHandle*> live;
      for (const auto& h : v) {
        if (h.tag != 0) live.push_back(&h);
      }
      return Collection(live.size(), [&](size_t i) { return Operator(*live[i], where); });
    };
    auto none = [](size_t) { return absl::OkStatus(); };
    FLINKSTATE_RETURN_IF_ERROR(Collection(0, none));  // inputChannelState
    NoRescaling();
    FLINKSTATE_RETURN_IF_ERROR(keyed(st.managed_keyed_state));
    FLINKSTATE_RETURN_IF_ERROR(oper(st.managed_operator_state));
    NoRescaling();
    FLINKSTATE_RETURN_IF_ERROR(keyed(st.raw_keyed_state));
    FLINKSTATE_RETURN_IF_ERROR(oper(st.raw_operator_state));
    return Collection(0, none);  // resultSubpartitionState
  }

  absl::Status Keyed(const KeyedStateHandle& k, const std::string& where) {
    const auto tag = static_cast<HandleTag>(k.tag);
    if (tag != HandleTag::kKeyGroups && tag != HandleTag::kKeyGroupsV2 &&
        tag != HandleTag::kSavepointKeyGroups) {
      return absl::UnimplementedError(absl::StrCat(
          "ccwriter: ", where, ": keyed handle tag ", k.tag, " is not supported"));
    }
    j_.Object(tag == HandleTag::kSavepointKeyGroups ? kSavepointKeyGroups : kKeyGroupsHandle);
    j_.Object(kKeyGroupRangeOffsets);
    j_.Object(kKeyGroupRange);
    j_.raw().I32(k.start_key_group + k.num_key_groups - 1);
    j_.raw().I32(k.start_key_group);
    j_.Array(kLongArray, serde::Slice(in_, k.key_group_offsets.range), k.key_group_offsets.count);
    FLINKSTATE_RETURN_IF_ERROR(Stream(*k.delegate, where));
    if (k.state_handle_id.value.empty()) {
      j_.Null();
    } else {
      j_.Object(kStateHandleId);
      j_.String(k.state_handle_id.value);
    }
    return absl::OkStatus();
  }

  absl::Status Operator(const OperatorStateHandle& h, const std::string& where) {
    if (h.tag != static_cast<uint8_t>(HandleTag::kPartitionableOperator)) {
      return absl::UnimplementedError(absl::StrCat(
          "ccwriter: ", where, ": operator handle tag ", h.tag, " is not supported"));
    }
    j_.Object(kOperatorHandle);
    FLINKSTATE_RETURN_IF_ERROR(Stream(*h.delegate, where));
    j_.HashMapHeader(h.states.size());
    for (const StateNameEntry& e : h.states) {
      j_.String(e.name.value);
      j_.Object(kMetaInfo);
      j_.Enum(kMode, e.mode == 1 ? "UNION" : e.mode == 2 ? "BROADCAST" : "SPLIT_DISTRIBUTE");
      j_.Array(kLongArray, serde::Slice(in_, e.offsets.range), e.offsets.count);
    }
    j_.EndBlock();
    return absl::OkStatus();
  }

  absl::Status Operator(const OperatorState& op) {
    const std::string where = absl::StrCat("operator ", op.IdHex());
    const int32_t id = j_.Object(kOperatorId);
    j_.raw().Bytes(op.id.data(), 16);
    j_.Object(op.fully_finished() ? kFullyFinished : kOperatorState);
    j_.raw().I32(op.max_parallelism);
    j_.raw().I32(op.parallelism);
    if (op.coordinator_state.tag == static_cast<uint8_t>(HandleTag::kByteStream)) {
      FLINKSTATE_RETURN_IF_ERROR(Stream(op.coordinator_state, where));
    } else {
      j_.Null();
    }
    j_.Ref(id);
    j_.HashMapHeader(op.subtasks.size());
    for (const OperatorSubtaskState& st : op.subtasks) {
      j_.Object(kInteger);
      j_.raw().I32(st.subtask_index);
      FLINKSTATE_RETURN_IF_ERROR(
          Subtask(st, absl::StrCat(where, " subtask ", st.subtask_index)));
    }
    j_.EndBlock();
    return absl::OkStatus();
  }

  const StateFile& f_;
  serde::ByteView in_;
  const CompletedCheckpointWriteOptions& o_;
  JavaOut& j_;
  int32_t pointer_ = -1;
  int32_t empty_list_ = -1;
  int32_t metadata_handle_ = -1;
  int32_t no_rescale_ = -1;
  int32_t subtask_empty_ = -1;
};

}  // namespace

absl::Status WriteCompletedCheckpointFromMetadata(const StateFile& file, serde::ByteView input,
                                                  const CompletedCheckpointWriteOptions& options,
                                                  const std::string& path) {
  if (file.kind != StateFileKind::kMetadata) {
    return absl::InvalidArgumentError("ccwriter: the model is not a _metadata file");
  }
  if (options.job_id.size() != 32 ||
      options.job_id.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("ccwriter: job id '", options.job_id, "' is not 32 hex characters"));
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("ccwriter: open ", path));
  Out out(fd);
  JavaOut j(&out);
  GraphWriter g(file, input, options, &j);
  absl::Status s = g.Write();
  out.Flush();
  if (s.ok()) s = out.status();
  if (::close(fd) != 0 && s.ok()) s = absl::ErrnoToStatus(errno, "ccwriter: close");
  if (!s.ok()) ::unlink(path.c_str());
  return s;
}

}  // namespace flinkstate
