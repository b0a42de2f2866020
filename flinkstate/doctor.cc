// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/doctor.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/inspect.h"
#include "flinkstate/javaobj/stream_constants.h"
#include "flinkstate/open.h"
#include "flinkstate/report_diff.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/file_transaction.h"
#include "flinkstate/serde/mapped_file.h"
#include "flinkstate/serde/modified_utf8.h"
#include "flinkstate/serde/status_macros.h"
#include "flinkstate/verify.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace flinkstate {
namespace {

namespace fs = std::filesystem;

// Flink's own configuration files are a few KiB; a larger --flink-conf is
// refused rather than read.
constexpr uintmax_t kMaxFlinkConfBytes = uintmax_t{16} << 20;

// ---------------------------------------------------------------------------
// Java serialization sizes (Java Object Serialization Specification ch. 6,
// constants in javaobj/stream_constants.h).
// ---------------------------------------------------------------------------

// One field of a class descriptor: type code, name, and for object and array
// fields the JVM type signature (written as a string: TC_STRING or, when the
// stream already holds that interned signature, TC_REFERENCE).
struct FieldShape {
  char type;
  const char* name;
  const char* signature;  // null for primitives
};

// A class as `ObjectStreamClass` writes it; `super` null ends the chain.
struct ClassShape {
  const char* name;
  std::vector<FieldShape> fields;
  const ClassShape* super = nullptr;
};

// The 1.15-1.20 shapes, as the class descriptors of real HA files of those
// releases show them (tests/testdata/flink-1.15.2 .. flink-1.20.5).
#define FS_CLASS(var, ...) const ClassShape var{__VA_ARGS__}
FS_CLASS(kEnum, "java.lang.Enum", {});
FS_CLASS(kNumber, "java.lang.Number", {});
FS_CLASS(kLong, "java.lang.Long", {{'J', "value", nullptr}}, &kNumber);
FS_CLASS(kHashMap, "java.util.HashMap",
         {{'F', "loadFactor", nullptr}, {'I', "threshold", nullptr}});
FS_CLASS(kArrayList, "java.util.ArrayList", {{'I', "size", nullptr}});
FS_CLASS(kEmptyList, "java.util.Collections$EmptyList", {});
FS_CLASS(kSingletonList, "java.util.Collections$SingletonList",
         {{'L', "element", "Ljava/lang/Object;"}});
FS_CLASS(kLongArray, "[J", {});
FS_CLASS(kByteArray, "[B", {});
FS_CLASS(kRescalingArray,
         "[Lorg.apache.flink.runtime.checkpoint.InflightDataRescalingDescriptor$"
         "InflightDataGateOrPartitionRescalingDescriptor;",
         {});
FS_CLASS(kOperatorSubtaskState, "org.apache.flink.runtime.checkpoint.OperatorSubtaskState",
         {{'J', "checkpointedSize", nullptr},
          {'J', "stateSize", nullptr},
          {'L', "inputChannelState", "Lorg/apache/flink/runtime/checkpoint/StateObjectCollection;"},
          {'L', "inputRescalingDescriptor",
           "Lorg/apache/flink/runtime/checkpoint/InflightDataRescalingDescriptor;"},
          {'L', "managedKeyedState", "Lorg/apache/flink/runtime/checkpoint/StateObjectCollection;"},
          {'L', "managedOperatorState", "Lorg/apache/flink/runtime/checkpoint/StateObjectCollection;"},
          {'L', "outputRescalingDescriptor",
           "Lorg/apache/flink/runtime/checkpoint/InflightDataRescalingDescriptor;"},
          {'L', "rawKeyedState", "Lorg/apache/flink/runtime/checkpoint/StateObjectCollection;"},
          {'L', "rawOperatorState", "Lorg/apache/flink/runtime/checkpoint/StateObjectCollection;"},
          {'L', "resultSubpartitionState",
           "Lorg/apache/flink/runtime/checkpoint/StateObjectCollection;"}});
FS_CLASS(kStateObjectCollection, "org.apache.flink.runtime.checkpoint.StateObjectCollection",
         {{'L', "stateObjects", "Ljava/util/Collection;"}});
FS_CLASS(kRescalingDescriptor,
         "org.apache.flink.runtime.checkpoint.InflightDataRescalingDescriptor",
         {{'[', "gateOrPartitionDescriptors",
           "[Lorg/apache/flink/runtime/checkpoint/InflightDataRescalingDescriptor$"
           "InflightDataGateOrPartitionRescalingDescriptor;"}});
FS_CLASS(kNoRescaling,
         "org.apache.flink.runtime.checkpoint.InflightDataRescalingDescriptor$"
         "NoRescalingDescriptor",
         {}, &kRescalingDescriptor);
FS_CLASS(kOperatorStreamStateHandle, "org.apache.flink.runtime.state.OperatorStreamStateHandle",
         {{'L', "delegateStateHandle", "Lorg/apache/flink/runtime/state/StreamStateHandle;"},
          {'L', "stateNameToPartitionOffsets", "Ljava/util/Map;"}});
FS_CLASS(kStateMetaInfo, "org.apache.flink.runtime.state.OperatorStateHandle$StateMetaInfo",
         {{'L', "distributionMode", "Lorg/apache/flink/runtime/state/OperatorStateHandle$Mode;"},
          {'[', "offsets", "[J"}});
FS_CLASS(kMode, "org.apache.flink.runtime.state.OperatorStateHandle$Mode", {}, &kEnum);
FS_CLASS(kByteStreamStateHandle, "org.apache.flink.runtime.state.memory.ByteStreamStateHandle",
         {{'[', "data", "[B"}, {'L', "handleName", "Ljava/lang/String;"}});
FS_CLASS(kFileStateHandle, "org.apache.flink.runtime.state.filesystem.FileStateHandle",
         {{'J', "stateSize", nullptr}, {'L', "filePath", "Lorg/apache/flink/core/fs/Path;"}});
FS_CLASS(kRelativeFileStateHandle,
         "org.apache.flink.runtime.state.filesystem.RelativeFileStateHandle",
         {{'L', "relativePath", "Ljava/lang/String;"}}, &kFileStateHandle);
FS_CLASS(kPath, "org.apache.flink.core.fs.Path", {{'L', "uri", "Ljava/net/URI;"}});
FS_CLASS(kUri, "java.net.URI", {{'L', "string", "Ljava/lang/String;"}});
FS_CLASS(kStringBasedId, "org.apache.flink.util.StringBasedID",
         {{'L', "keyString", "Ljava/lang/String;"}});
FS_CLASS(kStateHandleId, "org.apache.flink.runtime.state.StateHandleID", {}, &kStringBasedId);
FS_CLASS(kKeyGroupRange, "org.apache.flink.runtime.state.KeyGroupRange",
         {{'I', "endKeyGroup", nullptr}, {'I', "startKeyGroup", nullptr}});
FS_CLASS(kKeyGroupRangeOffsets, "org.apache.flink.runtime.state.KeyGroupRangeOffsets",
         {{'L', "keyGroupRange", "Lorg/apache/flink/runtime/state/KeyGroupRange;"},
          {'[', "offsets", "[J"}});
FS_CLASS(kKeyGroupsStateHandle, "org.apache.flink.runtime.state.KeyGroupsStateHandle",
         {{'L', "groupRangeOffsets", "Lorg/apache/flink/runtime/state/KeyGroupRangeOffsets;"},
          {'L', "stateHandle", "Lorg/apache/flink/runtime/state/StreamStateHandle;"},
          {'L', "stateHandleId", "Lorg/apache/flink/runtime/state/StateHandleID;"}});
FS_CLASS(kKeyGroupsSavepointStateHandle,
         "org.apache.flink.runtime.state.KeyGroupsSavepointStateHandle", {},
         &kKeyGroupsStateHandle);
// Incremental RocksDB (1.18+ List<HandleAndLocalPath> shape, approximate for
// older ones) and changelog handles: the fields that carry bytes.
FS_CLASS(kUuid, "java.util.UUID",
         {{'J', "leastSigBits", nullptr}, {'J', "mostSigBits", nullptr}});
FS_CLASS(kAbstractIncremental, "org.apache.flink.runtime.state.AbstractIncrementalStateHandle",
         {{'J', "checkpointId", nullptr},
          {'L', "backendIdentifier", "Ljava/util/UUID;"},
          {'L', "keyGroupRange", "Lorg/apache/flink/runtime/state/KeyGroupRange;"},
          {'L', "metaStateHandle", "Lorg/apache/flink/runtime/state/StreamStateHandle;"},
          {'L', "sharedState", "Ljava/util/List;"},
          {'L', "stateHandleId", "Lorg/apache/flink/runtime/state/StateHandleID;"}});
FS_CLASS(kIncremental, "org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle",
         {{'J', "persistedSizeOfThisCheckpoint", nullptr},
          {'L', "privateState", "Ljava/util/List;"}},
         &kAbstractIncremental);
FS_CLASS(kHandleAndLocalPath, "org.apache.flink.runtime.state.IncrementalKeyedStateHandle$"
                              "HandleAndLocalPath",
         {{'L', "handle", "Lorg/apache/flink/runtime/state/StreamStateHandle;"},
          {'L', "localPath", "Ljava/lang/String;"}});
// 1.15 layout (tag 8) and 1.16+ (tag 14, with checkpointId).
FS_CLASS(kChangelog, "org.apache.flink.runtime.state.changelog.ChangelogStateBackendHandle$"
                     "ChangelogStateBackendHandleImpl",
         {{'J', "materializationID", nullptr},
          {'J', "persistedSizeOfThisCheckpoint", nullptr},
          {'L', "keyGroupRange", "Lorg/apache/flink/runtime/state/KeyGroupRange;"},
          {'L', "materialized", "Ljava/util/List;"},
          {'L', "nonMaterialized", "Ljava/util/List;"},
          {'L', "stateHandleID", "Lorg/apache/flink/runtime/state/StateHandleID;"}});
FS_CLASS(kChangelogV2, "org.apache.flink.runtime.state.changelog.ChangelogStateBackendHandle$"
                       "ChangelogStateBackendHandleImpl",
         {{'J', "checkpointId", nullptr},
          {'J', "materializationID", nullptr},
          {'J', "persistedSizeOfThisCheckpoint", nullptr},
          {'L', "keyGroupRange", "Lorg/apache/flink/runtime/state/KeyGroupRange;"},
          {'L', "materialized", "Ljava/util/List;"},
          {'L', "nonMaterialized", "Ljava/util/List;"},
          {'L', "stateHandleID", "Lorg/apache/flink/runtime/state/StateHandleID;"}});
// Collections.unmodifiableList(ArrayList): an UnmodifiableRandomAccessList,
// which writeReplace()s itself by an UnmodifiableList (fields c and list,
// the same ArrayList).
FS_CLASS(kUnmodifiableCollection, "java.util.Collections$UnmodifiableCollection",
         {{'L', "c", "Ljava/util/Collection;"}});
FS_CLASS(kUnmodifiableList, "java.util.Collections$UnmodifiableList",
         {{'L', "list", "Ljava/util/List;"}}, &kUnmodifiableCollection);
FS_CLASS(kChangelogStream, "org.apache.flink.runtime.state.changelog.ChangelogStateHandleStreamImpl",
         {{'J', "incrementalSize", nullptr},
          {'J', "size", nullptr},
          {'L', "handlesAndOffsets", "Ljava/util/List;"},
          {'L', "keyGroupRange", "Lorg/apache/flink/runtime/state/KeyGroupRange;"},
          {'L', "stateHandleID", "Lorg/apache/flink/runtime/state/StateHandleID;"}});
FS_CLASS(kTuple, "org.apache.flink.api.java.tuple.Tuple", {});
FS_CLASS(kTuple2, "org.apache.flink.api.java.tuple.Tuple2",
         {{'L', "f0", "Ljava/lang/Object;"}, {'L', "f1", "Ljava/lang/Object;"}}, &kTuple);
FS_CLASS(kInMemoryChangelog, "org.apache.flink.runtime.state.changelog.inmemory."
                             "InMemoryChangelogStateHandle",
         {{'J', "from", nullptr},
          {'J', "to", nullptr},
          {'L', "changes", "Ljava/util/List;"},
          {'L', "keyGroupRange", "Lorg/apache/flink/runtime/state/KeyGroupRange;"},
          {'L', "stateHandleID", "Lorg/apache/flink/runtime/state/StateHandleID;"}});
FS_CLASS(kLogicalFileId, "org.apache.flink.runtime.checkpoint.filemerging.LogicalFile$LogicalFileId",
         {}, &kStringBasedId);
FS_CLASS(kCheckpointedStateScope, "org.apache.flink.runtime.state.CheckpointedStateScope", {},
         &kEnum);
FS_CLASS(kSegmentFile, "org.apache.flink.runtime.state.filemerging.SegmentFileStateHandle",
         {{'J', "startPos", nullptr},
          {'J', "stateSize", nullptr},
          {'L', "filePath", "Lorg/apache/flink/core/fs/Path;"},
          {'L', "logicalFileId",
           "Lorg/apache/flink/runtime/checkpoint/filemerging/LogicalFile$LogicalFileId;"},
          {'L', "scope", "Lorg/apache/flink/runtime/state/CheckpointedStateScope;"}});
FS_CLASS(kEmptySegmentFile, "org.apache.flink.runtime.state.filemerging.EmptySegmentFileStateHandle",
         {}, &kSegmentFile);
FS_CLASS(kDirectoryHandle, "org.apache.flink.runtime.state.filemerging.DirectoryStreamStateHandle",
         {{'L', "directory", "Lorg/apache/flink/core/fs/Path;"}});
FS_CLASS(kFileMergingOperatorHandle,
         "org.apache.flink.runtime.state.filemerging.FileMergingOperatorStreamStateHandle",
         {{'L', "sharedDirHandle",
           "Lorg/apache/flink/runtime/state/filemerging/DirectoryStreamStateHandle;"},
          {'L', "taskOwnedDirHandle",
           "Lorg/apache/flink/runtime/state/filemerging/DirectoryStreamStateHandle;"}},
         &kOperatorStreamStateHandle);
FS_CLASS(kEmptyFileMergingOperatorHandle,
         "org.apache.flink.runtime.state.filemerging.EmptyFileMergingOperatorStreamStateHandle", {},
         &kFileMergingOperatorHandle);
FS_CLASS(kChannelHandle, "org.apache.flink.runtime.state.AbstractChannelStateHandle",
         {{'J', "size", nullptr},
          {'I', "subtaskIndex", nullptr},
          {'L', "delegate", "Lorg/apache/flink/runtime/state/StreamStateHandle;"},
          {'L', "info", "Ljava/lang/Object;"},
          {'L', "offsets", "Ljava/util/List;"}});
FS_CLASS(kInputChannelHandle, "org.apache.flink.runtime.state.InputChannelStateHandle", {},
         &kChannelHandle);
FS_CLASS(kResultSubpartitionHandle,
         "org.apache.flink.runtime.state.ResultSubpartitionStateHandle", {}, &kChannelHandle);
FS_CLASS(kInputChannelInfo, "org.apache.flink.runtime.checkpoint.channel.InputChannelInfo",
         {{'I', "gateIdx", nullptr}, {'I', "inputChannelIdx", nullptr}});
FS_CLASS(kResultSubpartitionInfo,
         "org.apache.flink.runtime.checkpoint.channel.ResultSubpartitionInfo",
         {{'I', "partitionIdx", nullptr}, {'I', "subPartitionIdx", nullptr}});
FS_CLASS(kAbstractId, "org.apache.flink.util.AbstractID",
         {{'J', "lowerPart", nullptr}, {'J', "upperPart", nullptr}});
FS_CLASS(kOperatorId, "org.apache.flink.runtime.jobgraph.OperatorID", {}, &kAbstractId);
FS_CLASS(kTaskStateSnapshot, "org.apache.flink.runtime.checkpoint.TaskStateSnapshot",
         {{'Z', "isTaskDeployedAsFinished", nullptr},
          {'Z', "isTaskFinished", nullptr},
          {'L', "subtaskStatesByOperatorID", "Ljava/util/Map;"}});
FS_CLASS(kJobManagerTaskRestore, "org.apache.flink.runtime.checkpoint.JobManagerTaskRestore",
         {{'J', "restoreCheckpointId", nullptr},
          {'L', "taskStateSnapshot", "Lorg/apache/flink/runtime/checkpoint/TaskStateSnapshot;"}});
#undef FS_CLASS

uint64_t PrimBytes(char type) {
  switch (type) {
    case 'B': case 'Z': return 1;
    case 'C': case 'S': return 2;
    case 'I': case 'F': return 4;
    default: return 8;  // J, D
  }
}

// The bytes an `ObjectOutputStream` writes, for one stream: class
// descriptors once (then TC_REFERENCE, 5 bytes), strings and shared objects
// once by identity key.
class JavaSizer {
 public:
  // classDesc: TC_CLASSDESC className serialVersionUID classDescFlags
  // fields classAnnotation(TC_ENDBLOCKDATA) superClassDesc; or a reference.
  uint64_t Desc(const ClassShape& c) {
    if (!described_.insert(&c).second) return kRef;
    uint64_t b = 1 + Utf(c.name) + 8 + 1 + 2;
    for (const FieldShape& f : c.fields) {
      b += 1 + Utf(f.name);
      if (f.signature != nullptr) b += String(absl::StrCat("sig:", f.signature), f.signature);
    }
    b += 1;
    b += c.super != nullptr ? Desc(*c.super) : 1;
    return b;
  }
  // newObject header + every class's primitive fields of the chain.
  uint64_t Object(const ClassShape& c) {
    uint64_t b = 1 + Desc(c);
    for (const ClassShape* k = &c; k != nullptr; k = k->super) {
      for (const FieldShape& f : k->fields) {
        if (f.signature == nullptr) b += PrimBytes(f.type);
      }
    }
    return b;
  }
  // A string object (TC_STRING u2 / TC_LONGSTRING u8), once per identity key.
  uint64_t String(const std::string& key, absl::string_view value) {
    if (!shared_.insert(key).second) return kRef;
    return value.size() > 0xFFFF ? 1 + 8 + value.size() : 1 + 2 + value.size();
  }
  // A primitive array of `bytes` element bytes.
  uint64_t Array(const ClassShape& c, uint64_t bytes) { return 1 + Desc(c) + 4 + bytes; }
  uint64_t Enum(const ClassShape& c, const char* constant) {
    if (!shared_.insert(absl::StrCat("enum:", c.name, ".", constant)).second) return kRef;
    return 1 + Desc(c) + String(absl::StrCat("enumname:", constant), constant);
  }
  // True the first time `key` is seen (a shared object is written once).
  bool First(const std::string& key) { return shared_.insert(key).second; }

  static constexpr uint64_t kRef = 5;  // TC_REFERENCE + u4 handle
  static constexpr uint64_t kNull = 1;

 private:
  static uint64_t Utf(absl::string_view s) { return 2 + s.size(); }
  std::set<const ClassShape*> described_;
  std::set<std::string> shared_;
};

// What a task receives, with its parts accounted.
// 64-bit HotSpot with compressed oops: 12-byte headers, 4-byte references,
// 8-byte alignment.
uint64_t Align8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }
uint64_t JvmObject(uint64_t refs, uint64_t prim) { return Align8(12 + 4 * refs + prim); }
uint64_t JvmArray(uint64_t bytes) { return Align8(16 + bytes); }
uint64_t JvmString(uint64_t len) { return 24 + JvmArray(len); }
uint64_t JvmHashMap(uint64_t entries) {
  uint64_t cap = 16;
  while (cap * 3 / 4 < entries) cap *= 2;
  return 48 + JvmArray(4 * cap) + 32 * entries;
}
uint64_t JvmArrayList(uint64_t n) { return 24 + JvmArray(4 * std::max<uint64_t>(n, 10)); }

struct Payload {
  uint64_t total = 0;
  uint64_t union_bytes = 0;
  uint64_t inline_bytes = 0;
  uint64_t offset_bytes = 0;
  uint32_t handles = 0;
  // JobManager heap of the objects the state assignment creates for the task
  // (`TaskPayload.assigned_heap_bytes`).
  uint64_t assigned_heap = 0;
};

std::string PtrKey(const char* what, const void* p) {
  return absl::StrCat(what, ":", reinterpret_cast<uintptr_t>(p));
}

// The absolute form a relative handle takes in the JobManager.
std::string ResolvedPath(const StreamStateHandle& h, absl::string_view dir) {
  if (h.tag == static_cast<uint8_t>(HandleTag::kRelativeStream)) {
    return absl::StrCat(dir, "/", h.path.value);
  }
  return h.path.value;
}

uint64_t StreamHandleSize(JavaSizer& js, const StreamStateHandle& h, absl::string_view dir,
                          Payload* p) {
  if (!js.First(PtrKey("stream", &h))) return JavaSizer::kRef;
  switch (static_cast<HandleTag>(h.tag)) {
    case HandleTag::kNull:
      return JavaSizer::kNull;
    case HandleTag::kByteStream: {
      p->inline_bytes += h.data.size;
      return js.Object(kByteStreamStateHandle) + js.Array(kByteArray, h.data.size) +
             js.String(PtrKey("name", &h), h.name.value);
    }
    case HandleTag::kFileStream:
    case HandleTag::kRelativeStream: {
      const bool rel = h.tag == static_cast<uint8_t>(HandleTag::kRelativeStream);
      uint64_t b = js.Object(rel ? kRelativeFileStateHandle : kFileStateHandle);
      // Path -> URI: URI.writeObject writes its string field, then
      // TC_ENDBLOCKDATA (SC_WRITE_METHOD).
      b += js.Object(kPath) + js.Object(kUri) +
           js.String(PtrKey("uri", &h), ResolvedPath(h, dir)) + 1;
      if (rel) b += js.String(PtrKey("rel", &h), h.path.value);
      return b;
    }
    case HandleTag::kSegmentFile:
    case HandleTag::kEmptySegmentFile: {
      uint64_t b = js.Object(h.tag == static_cast<uint8_t>(HandleTag::kEmptySegmentFile)
                                 ? kEmptySegmentFile
                                 : kSegmentFile) +
                   js.Object(kPath) + js.Object(kUri) +
                   js.String(PtrKey("uri", &h), h.path.value) + 1;
      b += js.Object(kLogicalFileId) + js.String(PtrKey("lfid", &h), h.logical_file_id.value);
      b += js.Enum(kCheckpointedStateScope, h.scope_ordinal == 0 ? "EXCLUSIVE" : "SHARED");
      return b;
    }
    case HandleTag::kKeyGroups:
    case HandleTag::kKeyGroupsV2: {
      // A key-groups handle in stream context (a delegate).
      uint64_t b = js.Object(kKeyGroupsStateHandle) + js.Object(kKeyGroupRangeOffsets) +
                   js.Object(kKeyGroupRange) +
                   js.Array(kLongArray, 8ull * h.key_group_offsets.count);
      p->offset_bytes += 8ull * h.key_group_offsets.count;
      b += h.delegate ? StreamHandleSize(js, *h.delegate, dir, p) : JavaSizer::kNull;
      b += js.Object(kStateHandleId) + js.String(PtrKey("id", &h), std::string(36, 'x'));
      return b;
    }
    default:
      return js.Object(kFileStateHandle) + js.Object(kPath) + js.Object(kUri) +
             js.String(PtrKey("uri", &h), h.path.value) + 1;
  }
}

// An `ArrayList` of `n` elements: size field, block data with the capacity,
// the elements, TC_ENDBLOCKDATA.
uint64_t ArrayListSize(JavaSizer& js, uint64_t elements) {
  return js.Object(kArrayList) + (1 + 1 + 4) + elements + 1;
}

// A `StateObjectCollection` of handles of `sizes` bytes each.
uint64_t CollectionSize(JavaSizer& js, const std::vector<uint64_t>& sizes) {
  if (sizes.empty()) {
    // StateObjectCollection.empty(): one shared instance over an EmptyList.
    if (!js.First("empty-collection")) return JavaSizer::kRef;
    return js.Object(kStateObjectCollection) + js.Object(kEmptyList);
  }
  uint64_t e = 0;
  for (uint64_t s : sizes) e += s;
  return js.Object(kStateObjectCollection) + ArrayListSize(js, e);
}

// A keyed handle as the new subtask receives it; `kg` the number of key
// groups after intersection (-1: the handle whole).
uint64_t KeyedHandleSize(JavaSizer& js, const KeyedStateHandle& h, int64_t kg,
                         absl::string_view dir, Payload* p) {
  const auto tag = static_cast<HandleTag>(h.tag);
  auto id = [&](const void* k) {
    return js.Object(kStateHandleId) +
           js.String(PtrKey("id", k), h.state_handle_id.value.empty()
                                          ? std::string(36, 'x')
                                          : h.state_handle_id.value);
  };
  switch (tag) {
    case HandleTag::kNull:
      return 0;
    case HandleTag::kKeyGroups:
    case HandleTag::kKeyGroupsV2:
    case HandleTag::kSavepointKeyGroups: {
      const uint64_t n = kg >= 0 ? static_cast<uint64_t>(kg) : h.key_group_offsets.count;
      p->offset_bytes += 8 * n;
      uint64_t b = js.Object(tag == HandleTag::kSavepointKeyGroups ? kKeyGroupsSavepointStateHandle
                                                                   : kKeyGroupsStateHandle) +
                   js.Object(kKeyGroupRangeOffsets) + js.Object(kKeyGroupRange) +
                   js.Array(kLongArray, 8 * n);
      b += h.delegate ? StreamHandleSize(js, *h.delegate, dir, p) : JavaSizer::kNull;
      b += id(&h);
      return b;
    }
    case HandleTag::kIncrementalKeyGroups:
    case HandleTag::kIncrementalKeyGroupsV2: {
      uint64_t b = js.Object(kIncremental) + js.Object(kUuid) + js.Object(kKeyGroupRange);
      b += h.meta_data ? StreamHandleSize(js, *h.meta_data, dir, p) : JavaSizer::kNull;
      for (const auto* list : {&h.shared_state, &h.private_state}) {
        uint64_t e = 0;
        for (const NamedStreamHandle& n : *list) {
          e += js.Object(kHandleAndLocalPath) +
               js.String(PtrKey("local", &n), n.local_path.value) +
               StreamHandleSize(js, n.handle, dir, p);
        }
        b += ArrayListSize(js, e);
      }
      b += id(&h);
      return b;
    }
    case HandleTag::kChangelog:
    case HandleTag::kChangelogV2: {
      uint64_t b = js.Object(tag == HandleTag::kChangelogV2 ? kChangelogV2 : kChangelog) +
                   js.Object(kKeyGroupRange);
      for (const auto* list : {&h.materialized, &h.non_materialized}) {
        uint64_t e = 0;
        for (const KeyedStateHandle& k : *list) e += KeyedHandleSize(js, k, -1, dir, p);
        b += js.Object(kUnmodifiableList) + ArrayListSize(js, e) + JavaSizer::kRef;
      }
      b += id(&h);
      return b;
    }
    case HandleTag::kChangelogByteIncrement: {
      p->inline_bytes += h.changes.size;
      return js.Object(kInMemoryChangelog) + js.Object(kKeyGroupRange) +
             ArrayListSize(js, h.changes.size + 16ull * h.num_changes) + id(&h);
    }
    case HandleTag::kChangelogFileIncrement:
    case HandleTag::kChangelogFileIncrementV2: {
      uint64_t e = 0;
      for (const OffsetStreamHandle& o : h.increments) {
        // Tuple2<StreamStateHandle, Long>.
        e += js.Object(kTuple2) + StreamHandleSize(js, o.handle, dir, p) + js.Object(kLong);
      }
      return js.Object(kChangelogStream) + ArrayListSize(js, e) + js.Object(kKeyGroupRange) +
             id(&h);
    }
    default:
      return h.delegate ? StreamHandleSize(js, *h.delegate, dir, p) : JavaSizer::kNull;
  }
}

uint64_t ChannelHandleSize(JavaSizer& js, const ChannelStateHandle& h, bool input,
                           absl::string_view dir, Payload* p) {
  uint64_t b = js.Object(input ? kInputChannelHandle : kResultSubpartitionHandle);
  b += js.Object(input ? kInputChannelInfo : kResultSubpartitionInfo);
  b += StreamHandleSize(js, h.delegate, dir, p);
  // List<Long> offsets: a SingletonList of one Long or an ArrayList of Longs.
  const uint64_t n = h.offsets.count;
  uint64_t longs = 0;
  for (uint64_t i = 0; i < n; ++i) longs += js.Object(kLong);
  if (n == 1) {
    b += js.Object(kSingletonList) + longs;
  } else {
    b += ArrayListSize(js, longs);
  }
  b += h.serialized_channel_offsets.size;
  return b;
}

// One restored operator state handle: a delegate and the entries put into
// its `stateNameToPartitionOffsets` map.
struct RestoredEntry {
  const StateNameEntry* entry;
  uint64_t offsets;      // elements of the (possibly sliced) long[]
  std::string name_key;  // identity of the key String object
  std::string meta_key;  // identity of the StateMetaInfo object ("" = new)
  bool is_union;
};
struct RestoredHandle {
  const StreamStateHandle* delegate;
  std::vector<RestoredEntry> entries;
  // The checkpoint's handle object when the task keeps it as it is (an
  // unchanged parallelism): its class (e.g. a file-merging handle) stays.
  const OperatorStateHandle* kept = nullptr;
};

// The handles of one slot (managed or raw) of one operator after
// redistribution. A new subtask that receives nothing but union entries gets
// the same handles as every other such subtask: they are held once
// (`union_only`), so that a high parallelism with few handles costs what the
// handles cost, not parallelism x union entries.
struct RestoredSlot {
  // Per new subtask; empty for a subtask that receives only union entries.
  std::vector<std::vector<RestoredHandle>> own;
  // What such a subtask receives: the union entries of every old handle.
  std::vector<RestoredHandle> union_only;

  const std::vector<RestoredHandle>& For(int i) const {
    return own[i].empty() ? union_only : own[i];
  }
  // True when new subtask `i` receives only union entries (or nothing).
  bool OnlyUnion(int i) const { return own[i].empty(); }
};

// `RoundRobinOperatorStateRepartitioner.repartitionState` over the handles of
// one slot (managed or raw) of one operator.
RestoredSlot RepartitionOperatorState(
    const std::vector<std::vector<const OperatorStateHandle*>>& old, int new_parallelism) {
  const int old_parallelism = static_cast<int>(old.size());
  RestoredSlot slot;
  std::vector<std::vector<RestoredHandle>>& result = slot.own;
  result.resize(new_parallelism);
  // Handles by delegate per new subtask (merged as Flink's map of
  // StreamStateHandle -> OperatorStateHandle merges them); only subtasks that
  // receive something besides union entries have one.
  std::map<int, std::map<const StreamStateHandle*, size_t>> merge;
  std::map<const StreamStateHandle*, size_t> union_merge;
  auto add_to = [](std::vector<RestoredHandle>& handles,
                   std::map<const StreamStateHandle*, size_t>& by_delegate,
                   const StreamStateHandle* d) -> RestoredHandle& {
    auto [it, inserted] = by_delegate.emplace(d, handles.size());
    if (inserted) handles.push_back(RestoredHandle{d, {}});
    return handles[it->second];
  };
  auto handle_for = [&](int i, const StreamStateHandle* d) -> RestoredHandle& {
    return add_to(result[i], merge[i], d);
  };
  // The key String a name takes: the first handle's (groupByStateMode's
  // computeIfAbsent keeps the first key object).
  std::map<std::string, std::string> first_key;
  struct Located {
    const OperatorStateHandle* handle;
    const StateNameEntry* entry;
    int subtask;  // the old subtask holding the handle
  };
  std::map<uint8_t, std::vector<std::pair<std::string, std::vector<Located>>>> by_mode;
  bool has_union = false;
  for (int s = 0; s < old_parallelism; ++s) {
    for (const OperatorStateHandle* h : old[s]) {
      for (const StateNameEntry& e : h->states) {
        auto& names = by_mode[e.mode];
        auto it = std::find_if(names.begin(), names.end(),
                               [&](const auto& n) { return n.first == e.name.value; });
        if (it == names.end()) {
          names.push_back({e.name.value, {}});
          it = names.end() - 1;
          first_key[e.name.value] = PtrKey("key", &e);
        }
        it->second.push_back({h, &e, s});
        if (e.mode == static_cast<uint8_t>(DistributionMode::kUnion)) has_union = true;
      }
    }
  }
  auto delegate_of = [](const OperatorStateHandle* h) -> const StreamStateHandle* {
    return h->delegate ? h->delegate.get() : nullptr;
  };
  const auto union_mode = static_cast<uint8_t>(DistributionMode::kUnion);
  // The union entries, in Flink's order, added to `handles` (skipping those
  // of old subtask `own`, already in its own handles; -1: none).
  auto add_union = [&](std::vector<RestoredHandle>& handles,
                       std::map<const StreamStateHandle*, size_t>& by_delegate, int own) {
    for (const auto& [name, located] : by_mode[union_mode]) {
      for (const Located& l : located) {
        if (l.subtask == own) continue;
        add_to(handles, by_delegate, delegate_of(l.handle))
            .entries.push_back({l.entry, l.entry->offsets.count, first_key[name],
                                PtrKey("meta", l.entry), true});
      }
    }
  };
  if (new_parallelism == old_parallelism) {
    // Handles stay; union entries of every other subtask are added.
    for (int i = 0; i < new_parallelism; ++i) {
      for (const OperatorStateHandle* h : old[i]) {
        RestoredHandle& r = handle_for(i, delegate_of(h));
        r.kept = h;
        for (const StateNameEntry& e : h->states) {
          r.entries.push_back({&e, e.offsets.count, PtrKey("key", &e), PtrKey("meta", &e),
                               e.mode == union_mode});
        }
      }
    }
    if (!has_union) return slot;
    for (int i = 0; i < new_parallelism; ++i) {
      if (!result[i].empty()) add_union(result[i], merge[i], i);
    }
    add_union(slot.union_only, union_merge, -1);
    return slot;
  }
  // repartitionSplitState
  int start = 0;
  for (const auto& [name, located] : by_mode[static_cast<uint8_t>(DistributionMode::kSplitDistribute)]) {
    int64_t total = 0;
    for (const Located& l : located) total += l.entry->offsets.count;
    size_t idx = 0;
    int64_t off = 0;
    const int64_t base = total / new_parallelism;
    int64_t remainder = total % new_parallelism;
    int new_start = start;
    for (int i = 0; i < new_parallelism; ++i) {
      const int op = (i + start) % new_parallelism;
      int64_t assign = base;
      if (remainder > 0) {
        ++assign;
        --remainder;
      } else if (remainder == 0) {
        new_start = op;
        --remainder;
      }
      while (assign > 0 && idx < located.size()) {
        const Located& l = located[idx];
        const int64_t remaining = static_cast<int64_t>(l.entry->offsets.count) - off;
        int64_t take;
        if (remaining > assign) {
          take = assign;
          off += assign;
        } else {
          take = remaining;
          off = 0;
          ++idx;
        }
        assign -= remaining;
        handle_for(op, delegate_of(l.handle))
            .entries.push_back({l.entry, static_cast<uint64_t>(take), first_key[name], "", false});
      }
    }
    start = new_start;
  }
  // Broadcast: the i-th old handle's entries to new subtask i (mod their
  // number), after the union entries; a subtask that gets broadcast entries
  // holds its own handles.
  const auto& broadcast = by_mode[static_cast<uint8_t>(DistributionMode::kBroadcast)];
  for (int i = 0; i < new_parallelism; ++i) {
    if (result[i].empty() && broadcast.empty()) continue;  // union entries only
    add_union(result[i], merge[i], -1);
    for (const auto& [name, located] : broadcast) {
      const Located& l = located[i % located.size()];
      handle_for(i, delegate_of(l.handle))
          .entries.push_back({l.entry, l.entry->offsets.count, first_key[name],
                              PtrKey("meta", l.entry), false});
    }
  }
  add_union(slot.union_only, union_merge, -1);
  return slot;
}

const char* ModeConstant(uint8_t mode) {
  switch (mode) {
    case 0: return "SPLIT_DISTRIBUTE";
    case 1: return "UNION";
    default: return "BROADCAST";
  }
}

uint64_t OperatorHandlesSize(JavaSizer& js, const std::vector<RestoredHandle>& handles,
                             absl::string_view dir, Payload* p, std::vector<uint64_t>* sizes) {
  uint64_t all = 0;
  for (const RestoredHandle& r : handles) {
    uint64_t b = 0;
    if (r.kept != nullptr &&
        r.kept->tag == static_cast<uint8_t>(HandleTag::kSegmentPartitionableOperator)) {
      // FileMergingOperatorStreamStateHandle: two DirectoryStreamStateHandle
      // (a Path each) besides the OperatorStreamStateHandle fields.
      b += js.Object(r.kept->is_empty ? kEmptyFileMergingOperatorHandle
                                      : kFileMergingOperatorHandle);
      for (const Utf* d : {&r.kept->shared_directory, &r.kept->task_owned_directory}) {
        b += js.Object(kDirectoryHandle) + js.Object(kPath) + js.Object(kUri) +
             js.String(PtrKey("dir", d), d->value) + 1;
      }
    } else {
      b += js.Object(kOperatorStreamStateHandle);
    }
    b += r.delegate ? StreamHandleSize(js, *r.delegate, dir, p) : JavaSizer::kNull;
    // HashMap: loadFactor, threshold; block data (capacity, size); entries;
    // TC_ENDBLOCKDATA.
    b += js.Object(kHashMap) + (1 + 1 + 8) + 1;
    bool all_union = !r.entries.empty();
    uint64_t union_part = 0;
    for (const RestoredEntry& e : r.entries) {
      uint64_t eb = js.String(e.name_key, e.entry->name.value);
      if (!e.meta_key.empty() && !js.First(e.meta_key)) {
        eb += JavaSizer::kRef;
      } else {
        eb += js.Object(kStateMetaInfo) + js.Enum(kMode, ModeConstant(e.entry->mode)) +
              js.Array(kLongArray, 8 * e.offsets);
        p->offset_bytes += 8 * e.offsets;
      }
      b += eb;
      if (e.is_union) union_part += eb;
      all_union = all_union && e.is_union;
    }
    // A handle that carries only union entries counts whole (its delegate
    // travels because of them).
    p->union_bytes += all_union ? b : union_part;
    // JobManager heap the state assignment creates
    // (RoundRobinOperatorStateRepartitioner, release-1.15.2 .. 2.3.0): a new
    // OperatorStreamStateHandle and HashMap unless the checkpoint's handle is
    // kept, and a new StateMetaInfo with its own long[] for every re-split
    // entry (repartitionSplitState's Arrays.copyOfRange); union and broadcast
    // entries share the checkpoint's StateMetaInfo.
    if (r.kept == nullptr) p->assigned_heap += JvmObject(2, 0) + JvmHashMap(r.entries.size());
    for (const RestoredEntry& e : r.entries) {
      if (e.meta_key.empty()) p->assigned_heap += JvmObject(2, 0) + JvmArray(8 * e.offsets);
    }
    sizes->push_back(b);
    all += b;
  }
  p->handles += static_cast<uint32_t>(handles.size());
  return all;
}

// KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex.
std::pair<int64_t, int64_t> KeyGroupRangeFor(int64_t max_parallelism, int64_t parallelism,
                                             int64_t index) {
  const int64_t start = (index * max_parallelism + parallelism - 1) / parallelism;
  const int64_t end = ((index + 1) * max_parallelism - 1) / parallelism;
  return {start, end};
}

int64_t KeyedStart(const KeyedStateHandle& h) { return h.start_key_group; }
int64_t KeyedCount(const KeyedStateHandle& h) {
  if (!h.materialized.empty()) return h.materialized.front().num_key_groups;
  return h.num_key_groups;
}

// One operator's state after redistribution to its new subtasks. Built in
// time proportional to the handles and the new parallelism (each handle is
// placed with the subtasks that receive it), not their product.
class OperatorRestore {
 public:
  OperatorRestore(const OperatorState& op, int parallelism)
      : op_(op),
        old_p_(std::max(op.parallelism, 1)),
        new_p_(parallelism > 0 ? parallelism : std::max(op.parallelism, 1)),
        max_p_(op.max_parallelism > 0 ? op.max_parallelism : 128) {
    std::vector<const OperatorSubtaskState*> by_index(old_p_, nullptr);
    std::vector<std::vector<const OperatorStateHandle*>> managed(old_p_), raw(old_p_);
    for (const OperatorSubtaskState& s : op.subtasks) {
      if (s.subtask_index < 0 || s.subtask_index >= old_p_) continue;
      by_index[s.subtask_index] = &s;
    }
    for (int k = 0; k < 2; ++k) {
      keyed_[k].resize(new_p_);
      channel_[k].resize(new_p_);
    }
    for (const OperatorSubtaskState* s : by_index) {
      if (s == nullptr) continue;
      for (const OperatorStateHandle& h : s->managed_operator_state) {
        if (h.tag != 0) managed[s->subtask_index].push_back(&h);
      }
      for (const OperatorStateHandle& h : s->raw_operator_state) {
        if (h.tag != 0) raw[s->subtask_index].push_back(&h);
      }
      // Keyed: each handle to the new subtasks whose key groups it
      // intersects (`KeyGroupRangeAssignment.computeOperatorIndexForKeyGroup`
      // of its first and last key group bound them); at an unchanged
      // parallelism it stays with its subtask.
      for (int k = 0; k < 2; ++k) {
        for (const KeyedStateHandle& h : k == 0 ? s->managed_keyed_state : s->raw_keyed_state) {
          if (h.tag == 0) continue;
          if (new_p_ == old_p_) {
            keyed_[k][s->subtask_index].push_back({&h, -1});
            continue;
          }
          const int64_t first = KeyedStart(h);
          const int64_t last = KeyedStart(h) + KeyedCount(h) - 1;
          const int64_t lo = std::max<int64_t>(first, 0);
          const int64_t hi = std::min<int64_t>(last, max_p_ - 1);
          if (hi < lo) continue;
          const int64_t to = std::min<int64_t>(hi * new_p_ / max_p_, new_p_ - 1);
          for (int64_t i = lo * new_p_ / max_p_; i <= to; ++i) {
            const auto [kg_start, kg_end] = KeyGroupRangeFor(max_p_, new_p_, i);
            const int64_t a = std::max<int64_t>(first, kg_start);
            const int64_t z = std::min<int64_t>(last, kg_end);
            if (z < a) continue;
            const auto tag = static_cast<HandleTag>(h.tag);
            const bool sliced = tag == HandleTag::kKeyGroups || tag == HandleTag::kKeyGroupsV2 ||
                                tag == HandleTag::kSavepointKeyGroups;
            keyed_[k][i].push_back({&h, sliced ? z - a + 1 : -1});
          }
        }
      }
      // Channel state: with the subtask of the same index (i mod N otherwise).
      for (int k = 0; k < 2; ++k) {
        for (const ChannelStateHandle& h :
             k == 0 ? s->input_channel_state : s->result_subpartition_state) {
          channel_[k][s->subtask_index % new_p_].push_back(&h);
        }
      }
    }
    managed_ = RepartitionOperatorState(managed, new_p_);
    raw_ = RepartitionOperatorState(raw, new_p_);
  }
  int new_parallelism() const { return new_p_; }
  const OperatorState& op() const { return op_; }

  // True when new subtask `i` receives union entries only (or nothing): every
  // such subtask of the operator receives the same state.
  bool OnlyUnion(int i) const {
    return managed_.OnlyUnion(i) && raw_.OnlyUnion(i) && keyed_[0][i].empty() &&
           keyed_[1][i].empty() && channel_[0][i].empty() && channel_[1][i].empty();
  }

  // The `OperatorSubtaskState` object of new subtask `i` (no stream header).
  uint64_t Size(JavaSizer& js, int i, absl::string_view dir, Payload* p) const {
    uint64_t b = js.Object(kOperatorSubtaskState);
    // The new OperatorSubtaskState in the JobManager's heap (8 references, 2
    // longs) and a StateObjectCollection over an ArrayList per non-empty slot
    // (an empty slot is the shared StateObjectCollection.empty()).
    p->assigned_heap += JvmObject(8, 16);
    auto collection_heap = [p](size_t n) {
      if (n > 0) p->assigned_heap += JvmObject(1, 0) + JvmArrayList(n);
    };
    std::vector<uint64_t> sizes;
    OperatorHandlesSize(js, managed_.For(i), dir, p, &sizes);
    b += CollectionSize(js, sizes);
    collection_heap(sizes.size());
    sizes.clear();
    OperatorHandlesSize(js, raw_.For(i), dir, p, &sizes);
    b += CollectionSize(js, sizes);
    collection_heap(sizes.size());
    // Keyed: the old handles whose key groups intersect the new range.
    for (int k = 0; k < 2; ++k) {
      sizes.clear();
      for (const KeyedAssigned& a : keyed_[k][i]) {
        sizes.push_back(KeyedHandleSize(js, *a.handle, a.key_groups, dir, p));
        ++p->handles;
        // KeyGroupsStateHandle.getIntersection: a new handle, KeyGroupRangeOffsets,
        // KeyGroupRange and a copy of the intersection's offsets; the other
        // kinds go whole (the checkpoint's object).
        if (a.key_groups >= 0) {
          p->assigned_heap += JvmObject(2, 0) + JvmObject(2, 0) + JvmObject(0, 12) +
                              JvmArray(8 * static_cast<uint64_t>(a.key_groups));
        }
      }
      b += CollectionSize(js, sizes);
      collection_heap(sizes.size());
    }
    for (int k = 0; k < 2; ++k) {
      sizes.clear();
      for (const ChannelStateHandle* h : channel_[k][i]) {
        sizes.push_back(ChannelHandleSize(js, *h, k == 0, dir, p));
        ++p->handles;
      }
      b += CollectionSize(js, sizes);
      collection_heap(sizes.size());
    }
    // inputRescalingDescriptor, outputRescalingDescriptor: the one
    // NO_RESCALE instance, written once per stream.
    b += js.First("no-rescale") ? js.Object(kNoRescaling) + js.Array(kRescalingArray, 0)
                                : JavaSizer::kRef;
    b += JavaSizer::kRef;
    return b;
  }

 private:
  // A keyed handle a new subtask receives; `key_groups` after the
  // intersection (-1: the handle whole).
  struct KeyedAssigned {
    const KeyedStateHandle* handle;
    int64_t key_groups;
  };
  const OperatorState& op_;
  int old_p_, new_p_, max_p_;
  RestoredSlot managed_, raw_;
  // [managed, raw] keyed handles and [input, output] channel handles per new
  // subtask.
  std::vector<std::vector<KeyedAssigned>> keyed_[2];
  std::vector<std::vector<const ChannelStateHandle*>> channel_[2];
};

// STREAM_MAGIC + STREAM_VERSION.
constexpr uint64_t kStreamHeaderBytes = 4;

// The `JobManagerTaskRestore` of a task running `chain` (TaskStateSnapshot
// of every chained operator's state), one stream.
uint64_t ChainRestoreSize(const std::vector<const OperatorRestore*>& chain, int i,
                          absl::string_view dir) {
  JavaSizer js;
  Payload p;
  uint64_t b = kStreamHeaderBytes + js.Object(kJobManagerTaskRestore) +
               js.Object(kTaskStateSnapshot) + js.Object(kHashMap) + (1 + 1 + 8) + 1;
  for (const OperatorRestore* r : chain) {
    b += js.Object(kOperatorId);
    if (i < r->new_parallelism()) b += r->Size(js, i, dir, &p);
  }
  return b;
}

}  // namespace

absl::StatusOr<std::vector<report::TaskPayload>> ForecastTasks(
    const StateFile& file, serde::ByteView bytes, int parallelism,
    absl::string_view checkpoint_dir) {
  (void)bytes;
  if (parallelism < 0 || parallelism > kMaxFlinkParallelism) {
    return absl::InvalidArgumentError(absl::StrCat("doctor: parallelism ", parallelism,
                                                   " is outside 1..", kMaxFlinkParallelism));
  }
  for (const OperatorState& op : file.metadata.operators) {
    if (op.parallelism > kMaxFlinkParallelism) {
      return absl::InvalidArgumentError(
          absl::StrCat("doctor: operators[", op.IdHex(), "]: parallelism ", op.parallelism,
                       " exceeds Flink's upper bound ", kMaxFlinkParallelism));
    }
  }
  std::vector<report::TaskPayload> tasks;
  for (const OperatorState& op : file.metadata.operators) {
    const OperatorRestore r(op, parallelism);
    // The subtasks that receive union entries only receive the same state:
    // sized once.
    std::optional<size_t> only_union;
    for (int i = 0; i < r.new_parallelism(); ++i) {
      if (r.OnlyUnion(i) && only_union.has_value()) {
        tasks.push_back(tasks[*only_union]);
        tasks.back().set_subtask_index(i);
        continue;
      }
      if (r.OnlyUnion(i)) only_union = tasks.size();
      JavaSizer js;
      Payload p;
      const uint64_t b = kStreamHeaderBytes + r.Size(js, i, checkpoint_dir, &p);
      report::TaskPayload t;
      t.set_operator_id(op.IdHex());
      t.set_uid(op.uid.value);
      t.set_name(op.name.value);
      t.set_subtask_index(i);
      t.set_payload_bytes(b);
      t.set_union_bytes(p.union_bytes);
      t.set_inline_bytes(p.inline_bytes);
      t.set_offset_bytes(p.offset_bytes);
      t.set_parallelism(r.new_parallelism());
      t.set_handles(p.handles);
      t.set_assigned_heap_bytes(p.assigned_heap);
      tasks.push_back(std::move(t));
    }
  }
  return tasks;
}

uint64_t DescriptorOverheadBytes(const StateFile& file) {
  // Only Flink 2.x can have written it, so only 2.x restores it.
  if (WriterReleases(file).first.major >= 2) return kFlink2DescriptorOverheadBytes;
  if (file.kind == StateFileKind::kCompletedCheckpoint && file.completed) {
    const std::string& v = file.completed->flink_versions;
    for (const char* akka : {"1.13", "1.14", "1.15", "1.16", "1.17"}) {
      if (absl::StartsWith(v, akka)) return kAkkaDescriptorOverheadBytes;
    }
    return kPekkoDescriptorOverheadBytes;
  }
  if (file.kind == StateFileKind::kMetadata && file.metadata.version <= 3) {
    return kAkkaDescriptorOverheadBytes;
  }
  return kPekkoDescriptorOverheadBytes;
}

namespace {

// A YAML comment starts at '#' at the line's start or after whitespace.
absl::string_view StripYamlComment(absl::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) return s.substr(0, i);
  }
  return s;
}

// A quoted YAML scalar at the start of `s` (YAML 1.1, as SnakeYAML reads it,
// on one line): single-quoted ('' is a quote) or double-quoted (backslash
// escapes). `*end` is set past the closing quote.
absl::StatusOr<std::string> ReadQuotedYamlScalar(absl::string_view s, size_t* end) {
  const char q = s[0];
  std::string out;
  for (size_t i = 1; i < s.size(); ++i) {
    const char c = s[i];
    if (q == '\'' && c == '\'') {
      if (i + 1 < s.size() && s[i + 1] == '\'') {
        out.push_back('\'');
        ++i;
        continue;
      }
      *end = i + 1;
      return out;
    }
    if (q == '"' && c == '"') {
      *end = i + 1;
      return out;
    }
    if (q == '"' && c == '\\') {
      if (++i == s.size()) break;
      static constexpr struct {
        char code;
        char value;
      } kEscapes[] = {{'0', '\0'}, {'a', '\a'}, {'b', '\b'}, {'t', '\t'}, {'\t', '\t'},
                      {'n', '\n'}, {'v', '\v'}, {'f', '\f'}, {'r', '\r'}, {'e', '\x1b'},
                      {' ', ' '},  {'"', '"'},  {'/', '/'},  {'\\', '\\'}};
      bool simple = false;
      for (const auto& e : kEscapes) {
        if (s[i] == e.code) {
          out.push_back(e.value);
          simple = true;
        }
      }
      if (simple) continue;
      const int digits = s[i] == 'x' ? 2 : s[i] == 'u' ? 4 : s[i] == 'U' ? 8 : 0;
      uint32_t code = 0;
      if (digits == 0 || i + digits >= s.size() ||
          !absl::c_all_of(s.substr(i + 1, digits), absl::ascii_isxdigit) ||
          !absl::SimpleHexAtoi(s.substr(i + 1, digits), &code) || code > 0x10FFFF) {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown escape '\\", s.substr(i, 1), "' in a double-quoted value"));
      }
      serde::AppendCodePoint(code, &out);
      i += digits;
      continue;
    }
    out.push_back(c);
  }
  return absl::InvalidArgumentError(
      "a quoted value does not end on its line (doctor reads one-line values)");
}

// One `key: value` of a YAML block mapping: the key (plain or quoted) and the
// rest of the line after ": " (or nothing after a final ':').
struct YamlPair {
  std::string key;
  absl::string_view value;
};

std::optional<YamlPair> SplitYamlPair(absl::string_view line) {
  YamlPair p;
  size_t colon;
  if (!line.empty() && (line[0] == '"' || line[0] == '\'')) {
    size_t end = 0;
    absl::StatusOr<std::string> key = ReadQuotedYamlScalar(line, &end);
    if (!key.ok()) return std::nullopt;
    p.key = *key;
    colon = end;
    while (colon < line.size() && line[colon] == ' ') ++colon;
    if (colon >= line.size() || line[colon] != ':') return std::nullopt;
  } else {
    // A plain key ends at the first ':' followed by a space or the line's end.
    colon = absl::string_view::npos;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == ':' && (i + 1 == line.size() || line[i + 1] == ' ' || line[i + 1] == '\t')) {
        colon = i;
        break;
      }
    }
    if (colon == absl::string_view::npos) return std::nullopt;
    p.key = std::string(absl::StripTrailingAsciiWhitespace(line.substr(0, colon)));
  }
  if (colon + 1 < line.size() && line[colon + 1] != ' ' && line[colon + 1] != '\t') {
    return std::nullopt;
  }
  p.value = absl::StripAsciiWhitespace(line.substr(colon + 1));
  return p;
}

// A YAML scalar value as Flink's Configuration then holds it (a string):
// quotes removed, a comment dropped; nullopt for null ("~", "null", or
// nothing).
absl::StatusOr<std::optional<std::string>> ReadYamlValue(absl::string_view v) {
  if (v.empty()) return std::optional<std::string>();
  if (v[0] == '"' || v[0] == '\'') {
    size_t end = 0;
    FLINKSTATE_ASSIGN_OR_RETURN(std::string s, ReadQuotedYamlScalar(v, &end));
    if (!absl::StripAsciiWhitespace(StripYamlComment(v.substr(end))).empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("text after the closing quote: ", v.substr(end)));
    }
    return std::optional<std::string>(std::move(s));
  }
  if (v[0] == '|' || v[0] == '>' || v[0] == '&' || v[0] == '*' || v[0] == '!') {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", v.substr(0, 1), "' (a block scalar, anchor, alias or tag) is not read by doctor"));
  }
  const std::string plain(absl::StripTrailingAsciiWhitespace(StripYamlComment(v)));
  if (plain.empty() || plain == "~" || plain == "null" || plain == "Null" || plain == "NULL") {
    return std::optional<std::string>();
  }
  return std::optional<std::string>(plain);
}

}  // namespace

const std::string* FlinkConfiguration::Find(absl::string_view key) const {
  auto it = values.find(std::string(key));
  return it == values.end() ? nullptr : &it->second;
}

bool FlinkConfiguration::HasKeyUnder(absl::string_view prefix) const {
  auto it = values.lower_bound(std::string(prefix));
  return it != values.end() && absl::StartsWith(it->first, prefix);
}

absl::StatusOr<FlinkConfiguration> ParseFlinkConfiguration(absl::string_view text,
                                                           FlinkConfFormat format) {
  FlinkConfiguration conf;
  int line_no = 0;
  if (format == FlinkConfFormat::kLegacyFlinkConf) {
    // GlobalConfiguration.loadYAMLResource (flink-conf.yaml): the line up to
    // its first '#', split at the first ": ", key and value trimmed; a line
    // without ": ", or with an empty key or value, is skipped; the last
    // occurrence wins; the value is kept as written, quotes and all.
    for (absl::string_view raw : absl::StrSplit(text, '\n')) {
      ++line_no;
      const absl::string_view conf_line =
          absl::StripAsciiWhitespace(raw.substr(0, raw.find('#')));
      const size_t sep = conf_line.find(": ");
      if (sep == absl::string_view::npos) continue;
      const absl::string_view key = absl::StripAsciiWhitespace(conf_line.substr(0, sep));
      const absl::string_view value = absl::StripAsciiWhitespace(conf_line.substr(sep + 2));
      if (key.empty() || value.empty()) continue;
      conf.values[std::string(key)] = std::string(value);
    }
    return conf;
  }
  // config.yaml (Flink 1.19+): YamlParserUtils.loadYamlFile (SnakeYAML,
  // duplicate keys refused), flattened by joining nested keys with '.'.
  struct Level {
    int indent;               // of this mapping's keys; -1 until its first key
    std::string prefix;       // flattened key of the parent ("" at the top)
    std::set<std::string> keys;  // its keys as written (duplicates are refused)
  };
  std::vector<Level> levels{{-1, "", {}}};
  // The key whose value is a block below it (a nested mapping or a sequence),
  // with the indent of its line.
  std::optional<std::pair<int, std::string>> open_key;
  std::vector<std::string> items;  // a block sequence under open_key
  auto fail = [&](absl::string_view problem) {
    return absl::InvalidArgumentError(
        absl::StrCat("doctor: configuration: line ", line_no, ": ", problem));
  };
  auto close_sequence = [&]() {
    if (open_key.has_value() && !items.empty()) {
      // ConfigurationUtils keeps a list as its YAML flow text.
      conf.values[open_key->second] = absl::StrCat("[", absl::StrJoin(items, ", "), "]");
    }
    items.clear();
  };
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_no;
    const absl::string_view rest = absl::StripAsciiWhitespace(raw);
    if (rest.empty() || rest[0] == '#') continue;  // blank or comment
    const size_t first = raw.find_first_not_of(' ');
    if (raw[first] == '\t') return fail("a tab in the indentation (YAML allows spaces only)");
    const int indent = static_cast<int>(first);
    const absl::string_view line = absl::StripTrailingAsciiWhitespace(raw.substr(first));
    if (indent == 0 && (line == "---" || line == "...")) continue;
    if (line == "-" || absl::StartsWith(line, "- ")) {
      if (!open_key.has_value() || indent < open_key->first) {
        return fail("a sequence item outside a key's value");
      }
      const absl::string_view text_item = absl::StripAsciiWhitespace(line.substr(1));
      if (SplitYamlPair(text_item).has_value()) {
        return fail("a sequence of mappings is not read by doctor");
      }
      absl::StatusOr<std::optional<std::string>> item = ReadYamlValue(text_item);
      if (!item.ok()) return fail(item.status().message());
      items.push_back(item->value_or("null"));
      continue;
    }
    std::optional<YamlPair> pair = SplitYamlPair(line);
    if (!pair.has_value()) {
      return fail(absl::StrCat("'", line, "' is no 'key: value' (doctor reads block mappings)"));
    }
    if (open_key.has_value()) {
      if (!items.empty() || indent <= open_key->first) {
        close_sequence();
      } else {
        // The first key of a nested mapping.
        levels.push_back({indent, open_key->second, {}});
      }
      open_key.reset();
    }
    while (levels.size() > 1 && indent < levels.back().indent) levels.pop_back();
    Level& level = levels.back();
    if (level.indent < 0) level.indent = indent;
    if (indent != level.indent) return fail("indentation matches no enclosing key");
    if (!level.keys.insert(pair->key).second) {
      // SnakeYAML with setAllowDuplicateKeys(false): Flink does not start.
      return fail(absl::StrCat("duplicate key '", pair->key, "' (Flink refuses the file)"));
    }
    const std::string key =
        level.prefix.empty() ? pair->key : absl::StrCat(level.prefix, ".", pair->key);
    if (pair->value.empty() || pair->value[0] == '#') {
      open_key = {indent, key};
      continue;
    }
    absl::StatusOr<std::optional<std::string>> value = ReadYamlValue(pair->value);
    if (!value.ok()) return fail(value.status().message());
    if (value->has_value()) conf.values[key] = **value;
  }
  close_sequence();
  return conf;
}

FlinkConfFormat FlinkConfFormatOf(absl::string_view path) {
  const size_t slash = path.rfind('/');
  const absl::string_view name = slash == absl::string_view::npos ? path : path.substr(slash + 1);
  return name == "config.yaml" ? FlinkConfFormat::kYaml : FlinkConfFormat::kLegacyFlinkConf;
}

absl::StatusOr<uint64_t> ParseRpcFrameSize(absl::string_view value) {
  // Flink hands the string to Akka / Pekko, which read it as a HOCON size
  // (`Config.getBytes`): a number, optional whitespace, an optional unit.
  // Units are case-sensitive; "kB", "MB", ... are powers of 1000, "K"/"k",
  // "Ki", "KiB", "M"/"m", ... powers of 1024; "kb", "mb" are no units.
  const std::string v(absl::StripAsciiWhitespace(value));
  size_t i = 0;
  while (i < v.size() && absl::ascii_isdigit(v[i])) ++i;
  const std::string bad = absl::StrCat("doctor: configuration: framesize '", v, "'");
  uint64_t n = 0;
  if (i == 0 || !absl::SimpleAtoi(v.substr(0, i), &n)) {
    return absl::InvalidArgumentError(absl::StrCat(bad, " is no size"));
  }
  if (i < v.size() && v[i] == '.') {
    return absl::InvalidArgumentError(
        absl::StrCat(bad, ": fractional sizes are not read by doctor; give whole bytes"));
  }
  const std::string unit(absl::StripAsciiWhitespace(v.substr(i)));
  struct Unit {
    const char* names[6];
    uint64_t factor;
  };
  static constexpr Unit kUnits[] = {
      {{"", "B", "b", "byte", "bytes", nullptr}, 1},
      {{"kB", "kilobyte", "kilobytes", nullptr}, 1000},
      {{"K", "k", "Ki", "KiB", "kibibyte", "kibibytes"}, uint64_t{1} << 10},
      {{"MB", "megabyte", "megabytes", nullptr}, 1000 * 1000},
      {{"M", "m", "Mi", "MiB", "mebibyte", "mebibytes"}, uint64_t{1} << 20},
      {{"GB", "gigabyte", "gigabytes", nullptr}, 1000 * 1000 * 1000},
      {{"G", "g", "Gi", "GiB", "gibibyte", "gibibytes"}, uint64_t{1} << 30},
      {{"TB", "terabyte", "terabytes", nullptr}, uint64_t{1000} * 1000 * 1000 * 1000},
      {{"T", "t", "Ti", "TiB", "tebibyte", "tebibytes"}, uint64_t{1} << 40},
  };
  uint64_t factor = 0;
  for (const Unit& u : kUnits) {
    for (const char* name : u.names) {
      if (name != nullptr && unit == name) factor = u.factor;
    }
  }
  if (factor == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        bad, " has unit '", unit, "', which Akka/Pekko do not read (b, k/K/KiB, kB, m/M/MiB, "
        "MB, g/G/GiB, GB; case matters); Flink would not start"));
  }
  if (n > std::numeric_limits<uint64_t>::max() / factor ||
      n * factor > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return absl::InvalidArgumentError(absl::StrCat(bad, " does not fit in 64 bits"));
  }
  if (n == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(bad, ": Flink requires a positive maximum frame size"));
  }
  return n * factor;
}

absl::StatusOr<uint64_t> ReadFrameSize(const FlinkConfiguration& conf, RpcSystem rpc) {
  // Pekko (Flink 1.18+) reads pekko.framesize, falling back to the
  // deprecated akka.framesize; Akka (<= 1.17) knows only akka.framesize.
  const std::string* value = rpc == RpcSystem::kPekko ? conf.Find("pekko.framesize") : nullptr;
  if (value == nullptr) value = conf.Find("akka.framesize");
  if (value == nullptr) {
    return absl::NotFoundError(rpc == RpcSystem::kPekko
                                   ? "doctor: configuration: no pekko.framesize or akka.framesize"
                                   : "doctor: configuration: no akka.framesize");
  }
  // Flink writes the value into the RPC system's HOCON configuration
  // (`maximum-frame-size = <value>`, AkkaUtils / PekkoUtils), where a
  // double-quoted string stands for its contents; anything else is an
  // unquoted HOCON value (single quotes are no HOCON quotes).
  absl::string_view v = *value;
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  return ParseRpcFrameSize(v);
}

absl::StatusOr<uint64_t> ReadFrameSize(absl::string_view conf_text, RpcSystem rpc,
                                       FlinkConfFormat format) {
  FLINKSTATE_ASSIGN_OR_RETURN(FlinkConfiguration conf, ParseFlinkConfiguration(conf_text, format));
  return ReadFrameSize(conf, rpc);
}

absl::StatusOr<uint64_t> ReadBlobOffloadMinSize(const FlinkConfiguration& conf) {
  const std::string* value = conf.Find("blob.offload.minsize");
  if (value == nullptr) {
    return absl::NotFoundError("doctor: configuration: no blob.offload.minsize");
  }
  // An int option (ConfigOptions.key(...).intType()): bytes, no unit.
  uint64_t n = 0;
  if (value->empty() || !absl::c_all_of(*value, absl::ascii_isdigit) ||
      !absl::SimpleAtoi(*value, &n) || n > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "doctor: configuration: blob.offload.minsize '", *value,
        "' is no int number of bytes"));
  }
  return n;
}

absl::StatusOr<uint64_t> ReadBlobOffloadMinSize(absl::string_view conf_text,
                                                FlinkConfFormat format) {
  FLINKSTATE_ASSIGN_OR_RETURN(FlinkConfiguration conf, ParseFlinkConfiguration(conf_text, format));
  return ReadBlobOffloadMinSize(conf);
}

absl::StatusOr<FlinkRelease> ParseFlinkRelease(absl::string_view text) {
  const std::vector<absl::string_view> parts = absl::StrSplit(text, '.');
  FlinkRelease r;
  int* fields[] = {&r.major, &r.minor, &r.patch};
  bool ok = parts.size() == 2 || parts.size() == 3;
  for (size_t i = 0; ok && i < parts.size(); ++i) {
    ok = !parts[i].empty() && parts[i].size() <= 3 && absl::c_all_of(parts[i], absl::ascii_isdigit) &&
         absl::SimpleAtoi(parts[i], fields[i]);
  }
  if (!ok || r.major < 1 || r.major > 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "doctor: Flink release '", text, "' is not X.Y or X.Y.Z (e.g. 1.20 or 2.2.0)"));
  }
  return r;
}

bool OffloadsTaskRestore(const FlinkRelease& release) {
  return release.major > 2 || (release.major == 2 && release.minor >= 2);
}

std::pair<FlinkRelease, FlinkRelease> WriterReleases(const StateFile& file) {
  const FlinkRelease open_end{99, 0, -1};
  if (file.kind == StateFileKind::kCompletedCheckpoint && file.completed) {
    // "1.13", "1.14-1.15", "1.16-1.20", "2.x", ...
    const std::string& v = file.completed->flink_versions;
    const std::vector<std::string> range = absl::StrSplit(v, '-');
    auto parse = [&](const std::string& x, bool high) -> FlinkRelease {
      if (absl::EndsWith(x, ".x")) {
        FlinkRelease r;
        if (absl::SimpleAtoi(x.substr(0, x.size() - 2), &r.major)) {
          return high ? (r.major >= 2 ? open_end : FlinkRelease{r.major, 99, -1})
                      : FlinkRelease{r.major, 0, -1};
        }
      }
      absl::StatusOr<FlinkRelease> r = ParseFlinkRelease(x);
      return r.ok() ? *r : (high ? open_end : FlinkRelease{1, 0, -1});
    };
    if (!range.empty() && !v.empty()) {
      return {parse(range.front(), false), parse(range.back(), true)};
    }
    return {FlinkRelease{1, 0, -1}, open_end};
  }
  const int v = file.metadata.version;
  if (v <= 1) return {FlinkRelease{1, 1, -1}, FlinkRelease{1, 2, -1}};
  if (v == 2) return {FlinkRelease{1, 3, -1}, FlinkRelease{1, 10, -1}};
  if (v == 3) return {FlinkRelease{1, 11, -1}, FlinkRelease{1, 15, -1}};
  if (v == 4) return {FlinkRelease{1, 16, -1}, FlinkRelease{1, 20, -1}};
  if (v == 5) return {FlinkRelease{2, 0, -1}, FlinkRelease{2, 0, -1}};
  return {FlinkRelease{2, 1, -1}, open_end};
}

namespace {

// ---------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------

struct Input {
  std::string path;
  std::string dir;  // the checkpoint directory (for relative paths)
  LoadedFile file;
  report::Report report;
};

bool IsCheckpointDirName(const std::string& n) {
  return absl::StartsWith(n, "chk-") || absl::StartsWith(n, "savepoint-");
}

absl::StatusOr<std::vector<std::string>> ExpandPath(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return std::vector<std::string>{path};
  if (fs::exists(fs::path(path) / kMetadataFileName, ec)) {
    return std::vector<std::string>{(fs::path(path) / kMetadataFileName).string()};
  }
  std::vector<std::string> found;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && IsCheckpointDirName(name) &&
        fs::exists(it->path() / kMetadataFileName)) {
      found.push_back((it->path() / kMetadataFileName).string());
    } else if (it->is_regular_file() && absl::StartsWith(name, "completedCheckpoint")) {
      found.push_back(it->path().string());
    }
  }
  if (found.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": doctor: a directory without _metadata, chk-* directories or "
              "completedCheckpoint files"));
  }
  std::sort(found.begin(), found.end());
  return found;
}

int64_t CheckpointId(const Input& in) { return in.file.model.metadata.checkpoint_id; }

uint64_t UnionEntries(const StateFile& f) {
  uint64_t n = 0;
  for (const OperatorState& op : f.metadata.operators) {
    for (const OperatorSubtaskState& s : op.subtasks) {
      for (const auto* slot : {&s.managed_operator_state, &s.raw_operator_state}) {
        for (const OperatorStateHandle& h : *slot) {
          for (const StateNameEntry& e : h.states) {
            if (e.mode == static_cast<uint8_t>(DistributionMode::kUnion)) n += e.offsets.count;
          }
        }
      }
    }
  }
  return n;
}

// ---------------------------------------------------------------------------
// Plan (chaining)
// ---------------------------------------------------------------------------

struct PlanVertex {
  std::string id;
  // The node's "description" as text: the REST plan HTML-escapes it
  // ("A -&gt; B"), breaks lines with "<br/>" and, from 1.15 on, writes a tree
  // ("[1]:Source: A<br/>+- [2]:B<br/>"); entities are decoded once, line
  // breaks are '\n'.
  std::string text;
  int parallelism = 0;
  std::vector<std::string> operator_ids;  // filled by matching
};

// The REST plan's HTML undone in one pass (so "&amp;gt;" becomes "&gt;", not
// ">"): the entities Flink's JSON plan generator escapes, and "<br/>".
std::string PlanDescriptionText(absl::string_view description) {
  return absl::StrReplaceAll(description, {{"<br/>", "\n"},
                                           {"<br>", "\n"},
                                           {"&gt;", ">"},
                                           {"&lt;", "<"},
                                           {"&quot;", "\""},
                                           {"&#39;", "'"},
                                           {"&amp;", "&"}});
}

absl::StatusOr<std::vector<PlanVertex>> ReadPlan(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": doctor: cannot read the plan"));
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  // A plan nests about five levels; protobuf's JSON parser takes time that
  // grows with the square of the depth, so a deeply nested file is refused
  // before it is parsed.
  constexpr int kMaxPlanDepth = 100;
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxPlanDepth) {
        return serde::InFile(
            serde::WithLocation(
                absl::InvalidArgumentError(absl::StrCat(
                    "doctor: plan: JSON nested deeper than ", kMaxPlanDepth, " levels at byte ",
                    i, " (a job plan nests about five)")),
                "doctor", "plan", i),
            path);
      }
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  google::protobuf::Struct root;
  auto st = google::protobuf::util::JsonStringToMessage(text, &root);
  if (!st.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": doctor: plan: not JSON: ", st.ToString()));
  }
  const google::protobuf::Struct* plan = &root;
  if (auto it = root.fields().find("plan");
      it != root.fields().end() && it->second.has_struct_value()) {
    plan = &it->second.struct_value();  // `flink info` / job details wrap it
  }
  auto nodes = plan->fields().find("nodes");
  if (nodes == plan->fields().end() || !nodes->second.has_list_value()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": doctor: plan: no \"nodes\" list"));
  }
  std::vector<PlanVertex> out;
  int index = -1;
  for (const auto& n : nodes->second.list_value().values()) {
    ++index;
    if (!n.has_struct_value()) continue;
    const auto& f = n.struct_value().fields();
    PlanVertex v;
    if (auto it = f.find("id"); it != f.end()) v.id = absl::AsciiStrToLower(it->second.string_value());
    if (auto it = f.find("description"); it != f.end()) {
      v.text = PlanDescriptionText(it->second.string_value());
    }
    if (auto it = f.find("parallelism"); it != f.end()) {
      // A job vertex runs 1 .. kMaxFlinkParallelism subtasks; anything else
      // is not a plan Flink wrote (attack run 6, item 9: 0, -5 and 10^9 were
      // taken and matched operators by accident).
      const double p = it->second.number_value();
      if (!it->second.has_number_value() || !(p >= 1 && p <= kMaxFlinkParallelism) ||
          p != static_cast<double>(static_cast<int>(p))) {
        std::string shown;
        if (!google::protobuf::util::MessageToJsonString(it->second, &shown).ok()) shown = "?";
        return absl::InvalidArgumentError(absl::StrCat(
            path, ": doctor: plan: nodes[", index, "] (id \"", v.id, "\"): parallelism ", shown,
            " is not a whole number from 1 to ", kMaxFlinkParallelism));
      }
      v.parallelism = static_cast<int>(p);
    }
    // An explicit list of chained operator ids, if the plan carries one.
    if (auto it = f.find("operatorIds"); it != f.end() && it->second.has_list_value()) {
      for (const auto& x : it->second.list_value().values()) {
        v.operator_ids.push_back(absl::AsciiStrToLower(x.string_value()));
      }
    }
    out.push_back(std::move(v));
  }
  return out;
}

// True if a plan node's text (PlanVertex::text) names the operator `name`:
// the name must stand between separators, not inside a longer name.
bool DescriptionNames(absl::string_view text, absl::string_view name) {
  if (name.empty()) return false;
  auto is_sep = [](char c) { return c == ' ' || c == '\n' || c == '>' || c == ']' || c == ':' ||
                                    c == '\t' || c == '(' || c == ')' || c == ','; };
  for (size_t at = text.find(name); at != absl::string_view::npos;
       at = text.find(name, at + 1)) {
    const size_t end = at + name.size();
    const bool before = at == 0 || is_sep(text[at - 1]);
    const bool after = end == text.size() || is_sep(text[end]) || text[end] == '-';
    if (before && after) return true;
  }
  return false;
}

// A plan node's text on one line, its lines joined with "; " (attack run 7:
// `-&gt;` was shown as is).
std::string ChainName(absl::string_view text) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n', absl::SkipWhitespace());
  return absl::StrJoin(lines, "; ");
}

// Job vertex id = the head operator's id; other operators join the vertex
// (a vertex's parallelism is the checkpoint's or, for a plan of the job as
// restored with --parallelism, `restore_parallelism`; 0 when not given)
// whose description names them (" -> " separated; HTML <br/> removed).
void MatchPlan(const StateFile& f, int restore_parallelism, std::vector<PlanVertex>* plan) {
  std::set<std::string> placed;
  for (const PlanVertex& v : *plan) placed.insert(v.operator_ids.begin(), v.operator_ids.end());
  for (PlanVertex& v : *plan) {
    for (const OperatorState& op : f.metadata.operators) {
      const std::string id = op.IdHex();
      if (id == v.id && !placed.count(id)) {
        v.operator_ids.push_back(id);
        placed.insert(id);
      }
    }
  }
  for (const OperatorState& op : f.metadata.operators) {
    const std::string id = op.IdHex();
    if (placed.count(id) || op.name.value.empty()) continue;
    for (PlanVertex& v : *plan) {
      if (DescriptionNames(v.text, op.name.value) &&
          (v.parallelism == 0 || v.parallelism == std::max(op.parallelism, 1) ||
           (restore_parallelism > 0 && v.parallelism == restore_parallelism))) {
        v.operator_ids.push_back(id);
        placed.insert(id);
        break;
      }
    }
  }
  // Operators without a recorded name (metadata before v5): when exactly one
  // vertex of their parallelism describes more operators than it holds, and
  // as many such operators are left as it misses, they are that chain's.
  std::map<int, std::vector<std::string>> unnamed;
  for (const OperatorState& op : f.metadata.operators) {
    if (!placed.count(op.IdHex())) unnamed[std::max(op.parallelism, 1)].push_back(op.IdHex());
  }
  for (auto& [p, ids] : unnamed) {
    PlanVertex* target = nullptr;
    int candidates = 0;
    size_t missing = 0;
    for (PlanVertex& v : *plan) {
      // A plan of the job at the restore parallelism (--parallelism) has
      // that parallelism where the checkpoint has the old one.
      if (v.parallelism != p && !(restore_parallelism > 0 && v.parallelism == restore_parallelism)) {
        continue;
      }
      // One operator per line of the tree form, or per " -> " part.
      const std::vector<absl::string_view> lines =
          absl::StrSplit(v.text, '\n', absl::SkipWhitespace());
      const std::vector<absl::string_view> parts = absl::StrSplit(v.text, " -> ");
      const size_t described = std::max<size_t>({lines.size(), parts.size(), 1});
      if (described > v.operator_ids.size()) {
        ++candidates;
        target = &v;
        missing = described - v.operator_ids.size();
      }
    }
    if (candidates == 1 && missing == ids.size()) {
      for (const std::string& id : ids) target->operator_ids.push_back(id);
    }
  }
}

// ---------------------------------------------------------------------------
// Heap
// ---------------------------------------------------------------------------

uint64_t HeapStream(const StreamStateHandle& h) {
  switch (static_cast<HandleTag>(h.tag)) {
    case HandleTag::kNull: return 0;
    case HandleTag::kByteStream:
      return JvmObject(2, 0) + JvmArray(h.data.size) + JvmString(h.name.value.size());
    default:
      // FileStateHandle + Path + URI (its string and parsed parts).
      return JvmObject(1, 8) + JvmObject(1, 0) + JvmObject(9, 8) +
             2 * JvmString(h.path.value.size()) +
             (h.delegate ? HeapStream(*h.delegate) : 0) + JvmArray(8ull * h.key_group_offsets.count);
  }
}

uint64_t HeapKeyed(const KeyedStateHandle& h) {
  uint64_t b = JvmObject(4, 8) + JvmObject(2, 0) + JvmObject(0, 8) +
               JvmArray(8ull * h.key_group_offsets.count) + JvmObject(1, 0) + JvmString(36);
  if (h.delegate) b += HeapStream(*h.delegate);
  if (h.meta_data) b += HeapStream(*h.meta_data);
  for (const auto* l : {&h.shared_state, &h.private_state}) {
    b += JvmArrayList(l->size());
    for (const NamedStreamHandle& n : *l) {
      b += JvmObject(2, 0) + JvmString(n.local_path.value.size()) + HeapStream(n.handle);
    }
  }
  for (const auto* l : {&h.materialized, &h.non_materialized}) {
    for (const KeyedStateHandle& k : *l) b += HeapKeyed(k);
  }
  for (const OffsetStreamHandle& o : h.increments) b += 32 + HeapStream(o.handle);
  b += h.changes.size;
  return b;
}

uint64_t HeapCheckpoint(const StateFile& f) {
  uint64_t b = JvmHashMap(f.metadata.operators.size());
  for (const OperatorState& op : f.metadata.operators) {
    b += JvmObject(4, 8) + JvmObject(0, 16) + JvmHashMap(op.subtasks.size());
    for (const OperatorSubtaskState& s : op.subtasks) {
      b += JvmObject(8, 16) + 6 * (JvmObject(1, 0) + JvmArrayList(1)) + 16;
      for (const auto* slot : {&s.managed_operator_state, &s.raw_operator_state}) {
        for (const OperatorStateHandle& h : *slot) {
          b += JvmObject(2, 0) + JvmHashMap(h.states.size());
          if (h.delegate) b += HeapStream(*h.delegate);
          for (const StateNameEntry& e : h.states) {
            b += JvmString(e.name.value.size()) + JvmObject(2, 0) +
                 JvmArray(8ull * e.offsets.count);
          }
        }
      }
      for (const auto* slot : {&s.managed_keyed_state, &s.raw_keyed_state}) {
        for (const KeyedStateHandle& h : *slot) {
          if (h.tag != 0) b += HeapKeyed(h);
        }
      }
      for (const auto* slot : {&s.input_channel_state, &s.result_subpartition_state}) {
        for (const ChannelStateHandle& h : *slot) {
          b += JvmObject(5, 12) + JvmObject(0, 8) + HeapStream(h.delegate) +
               JvmArrayList(h.offsets.count) + 16ull * h.offsets.count;
        }
      }
    }
  }
  return b;
}

// ---------------------------------------------------------------------------
// Paths and duplicates
// ---------------------------------------------------------------------------

bool HasEntropyMarker(absl::string_view p) {
  // Flink's documented example key (`s3.entropy.key: _entropy_`) and the
  // common variants.
  return absl::StrContains(p, "_entropy_") || absl::StrContains(p, "__ENTROPY_KEY__");
}

// The prefix a path is grouped by: its directory up to the checkpoint-level
// part (".../chk-N", ".../shared", ".../taskowned" and what follows dropped).
std::string PathPrefixOf(absl::string_view p) {
  std::vector<std::string> parts = absl::StrSplit(p, '/');
  if (!parts.empty()) parts.pop_back();
  for (size_t i = 0; i < parts.size(); ++i) {
    if (IsCheckpointDirName(parts[i]) || parts[i] == "shared" || parts[i] == "taskowned") {
      parts.resize(i);
      break;
    }
  }
  return absl::StrJoin(parts, "/");
}

struct PathWalker {
  const std::string& dir;
  report::PathReport* out;
  std::map<std::string, report::PathPrefix> prefixes;
  std::string dir_real;  // `dir` with its links resolved, found on first use
  void Stream(const StreamStateHandle& h) {
    switch (static_cast<HandleTag>(h.tag)) {
      case HandleTag::kNull:
        return;
      case HandleTag::kByteStream:
        out->set_inline_handles(out->inline_handles() + 1);
        return;
      case HandleTag::kRelativeStream: {
        out->set_relative_handles(out->relative_handles() + 1);
        report::PathPrefix& p = prefixes["(relative)"];
        p.set_prefix("(relative to the checkpoint directory)");
        p.set_handles(p.handles() + 1);
        p.set_bytes(p.bytes() + static_cast<uint64_t>(std::max<int64_t>(h.state_size, 0)));
        return;
      }
      default:
        break;
    }
    if (h.path.value.empty()) {
      if (h.delegate) Stream(*h.delegate);
      return;
    }
    out->set_absolute_handles(out->absolute_handles() + 1);
    const std::string prefix = PathPrefixOf(h.path.value);
    report::PathPrefix& p = prefixes[prefix];
    p.set_prefix(prefix);
    p.set_absolute(true);
    p.set_handles(p.handles() + 1);
    p.set_bytes(p.bytes() + static_cast<uint64_t>(std::max<int64_t>(h.state_size, 0)));
    std::string norm = h.path.value;
    if (absl::StartsWith(norm, "file:")) norm = absl::StripPrefix(norm, "file:").data();
    while (absl::StartsWith(norm, "//")) norm = norm.substr(1);
    // Inside the directory as named or as it resolves (a checkpoint
    // reached through a link, handles written with the link's target).
    const auto inside = [&norm](const std::string& d) {
      const std::string job_dir = fs::path(d).parent_path().string();
      return absl::StartsWith(norm, d) || absl::StartsWith(norm, job_dir + "/");
    };
    if (dir_real.empty() && !dir.empty()) {
      std::error_code ec;
      dir_real = fs::canonical(dir, ec).string();
      if (ec) dir_real = dir;
    }
    const bool outside = !dir.empty() && !inside(dir) && !inside(dir_real);
    if (outside) {
      p.set_outside_checkpoint_dir(true);
      out->set_outside_handles(out->outside_handles() + 1);
    }
    if (HasEntropyMarker(h.path.value)) {
      p.set_entropy_marker(true);
      out->set_entropy_marked_handles(out->entropy_marked_handles() + 1);
    }
    if (h.delegate) Stream(*h.delegate);
  }
  void Keyed(const KeyedStateHandle& h) {
    if (h.delegate) Stream(*h.delegate);
    if (h.meta_data) Stream(*h.meta_data);
    for (const auto* l : {&h.shared_state, &h.private_state}) {
      for (const NamedStreamHandle& n : *l) Stream(n.handle);
    }
    for (const auto* l : {&h.materialized, &h.non_materialized}) {
      for (const KeyedStateHandle& k : *l) Keyed(k);
    }
    for (const OffsetStreamHandle& o : h.increments) Stream(o.handle);
  }
};

std::string ShellQuote(absl::string_view s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789/._-:=+@,") == absl::string_view::npos) {
    return std::string(s);
  }
  return absl::StrCat("'", absl::StrReplaceAll(s, {{"'", "'\\''"}}), "'");
}

// ---------------------------------------------------------------------------
// Warnings
// ---------------------------------------------------------------------------

report::DoctorWarning* AddWarning(report::DoctorReport* r, absl::string_view code,
                                  std::string message, std::string command = "") {
  report::DoctorWarning* w = r->add_warnings();
  w->set_code(std::string(code));
  w->set_message(std::move(message));
  w->set_command(std::move(command));
  w->set_subtask_index(-1);
  return w;
}

// A state name that every restore multiplies (inspect's
// UNION_STATE_MULTIPLIES), per operator id.
std::map<std::string, std::set<std::string>> MultiplyingUnionStates(const report::Report& r) {
  std::map<std::string, std::set<std::string>> out;
  for (const report::Warning& w : r.warnings()) {
    if (w.code() == "UNION_STATE_MULTIPLIES") out[w.operator_id()].insert(w.state_name());
  }
  return out;
}

uint64_t MaxPayload(const std::vector<report::TaskPayload>& tasks) {
  uint64_t m = 0;
  for (const auto& t : tasks) m = std::max<uint64_t>(m, t.payload_bytes());
  return m;
}

// What Flink's loader refuses although the bytes decode (verify.h's
// `CheckOperatorLoadable`, `_metadata` only): such a checkpoint is never
// restored, so nothing is forecast for it.
std::vector<Finding> LoadRefusals(const StateFile& f) {
  std::vector<Finding> refusals;
  if (f.kind != StateFileKind::kMetadata) return refusals;
  for (size_t i = 0; i < f.metadata.operators.size(); ++i) {
    CheckOperatorLoadable(f.metadata.operators[i], static_cast<int>(i), f.metadata.version,
                          &refusals);
  }
  return refusals;
}

// Why the forecast of a checkpoint with `refusals` is skipped.
std::string ForecastSkippedReason(const std::vector<Finding>& refusals) {
  return absl::StrCat("Flink cannot load this checkpoint (", refusals.size(),
                      refusals.size() == 1 ? " refusal" : " refusals", ", the first: ",
                      refusals.front().path, ": ", refusals.front().problem,
                      "), so no restore sends its state: no per-task payload, chain or other "
                      "parallelism is forecast, and the heap counts the checkpoint only");
}

}  // namespace

absl::StatusOr<report::DoctorReport> Doctor(const std::vector<std::string>& paths,
                                            const DoctorOptions& options) {
  if (paths.empty()) return absl::InvalidArgumentError("doctor: no PATH given");
  report::DoctorReport r;
  std::vector<Input> inputs;
  std::set<std::string> seen;  // canonical paths already read
  absl::Status first_skipped;
  for (const std::string& p : paths) {
    FLINKSTATE_ASSIGN_OR_RETURN(std::vector<std::string> files, ExpandPath(p));
    // A job's checkpoint or HA directory: its chk-* / completedCheckpoint
    // entries were listed, not named one by one.
    std::error_code dir_ec;
    const bool listed = fs::is_directory(p, dir_ec) &&
                        !fs::exists(fs::path(p) / kMetadataFileName, dir_ec);
    for (const std::string& f : files) {
      std::error_code ec;
      const std::string canonical = fs::weakly_canonical(fs::path(f), ec).string();
      if (!seen.insert(ec ? f : canonical).second) {
        AddWarning(&r, "DUPLICATE_INPUT",
                   absl::StrCat(f, " is given more than once; it is read once"));
        continue;
      }
      absl::StatusOr<LoadedFile> lf = Open(f);
      if (!lf.ok() && listed) {
        // An aborted or half-written checkpoint beside good ones: the
        // history goes on without it, and says so.
        AddWarning(&r, "CHECKPOINT_UNREADABLE",
                   absl::StrCat(lf.status().message(),
                                "; left out of the history (an aborted or incomplete "
                                "checkpoint?)"));
        if (first_skipped.ok()) first_skipped = lf.status();
        continue;
      }
      if (!lf.ok()) return lf.status();
      if (!lf->is_state_file()) {
        return absl::InvalidArgumentError(absl::StrCat(
            f, ": doctor: ", FileKindWithArticle(lf->kind),
            " file; give the checkpoint directory, _metadata or completedCheckpoint file"));
      }
      Input in;
      in.path = f;
      in.file = *std::move(lf);
      if (in.file.kind == FileKind::kCompletedCheckpoint && in.file.model.completed) {
        std::string d = in.file.model.completed->exclusive_checkpoint_dir;
        if (absl::StartsWith(d, "file:")) d = std::string(absl::StripPrefix(d, "file:"));
        in.dir = d;
      } else if (serde::IsUrl(in.file.path)) {
        // An object (a prefix given: its _metadata, in.file.path): its
        // "directory" in the store, not a local path made of the URL.
        in.dir = serde::DirName(in.file.path);
      } else {
        // A file in the working directory has no parent in its name (the
        // report said "0 outside ," for `doctor _metadata`; attack run of
        // 2026-12-03).
        // Relative to the working directory as the shell names it ($PWD,
        // when it is this directory), so that `doctor _metadata` and
        // `doctor ../x/_metadata` name a directory reached through a link
        // alike, as the shell does.
        std::error_code ec;
        const fs::path parent = fs::path(f).parent_path();
        std::string cwd = fs::current_path(ec).string();
        if (const char* pwd = std::getenv("PWD"); pwd != nullptr && pwd[0] == '/') {
          struct stat a, b;
          if (::stat(pwd, &a) == 0 && ::stat(".", &b) == 0 && a.st_dev == b.st_dev &&
              a.st_ino == b.st_ino) {
            cwd = fs::path(pwd).lexically_normal().string();
          }
        }
        in.dir = parent.empty()         ? cwd
                 : parent.is_absolute() ? parent.lexically_normal().string()
                                        : (fs::path(cwd) / parent).lexically_normal().string();
        while (in.dir.size() > 1 && in.dir.back() == '/') in.dir.pop_back();
      }
      InspectOptions io;
      io.file_name = f;
      io.subtasks = false;
      io.frame_size = options.frame_size > 0 ? options.frame_size : kDefaultFrameSize;
      in.report = BuildReport(in.file.model, in.file.bytes(), io);
      report::DoctorInput* di = r.add_inputs();
      di->set_path(f);
      di->set_kind(in.report.kind());
      di->set_file_size(in.file.model.size);
      di->set_checkpoint_id(CheckpointId(in));
      if (in.file.model.completed) di->set_flink_versions(in.file.model.completed->flink_versions);
      inputs.push_back(std::move(in));
    }
  }

  if (inputs.empty()) {
    return first_skipped.ok() ? absl::InvalidArgumentError("doctor: no readable checkpoint")
                              : first_skipped;
  }
  // Checkpoints of different jobs in one history: no operator in common
  // between consecutive checkpoints (by id) means the growth figures compare
  // unrelated files.
  {
    std::vector<const Input*> by_id;
    for (const Input& in : inputs) by_id.push_back(&in);
    std::stable_sort(by_id.begin(), by_id.end(), [](const Input* a, const Input* b) {
      return CheckpointId(*a) < CheckpointId(*b);
    });
    // The job id where the input says it: an HA file's jobId, or a
    // checkpoint directory laid out as <jobId>/chk-<n>/_metadata.
    auto job_of = [](const Input& in) -> std::string {
      if (in.file.model.completed) return in.file.model.completed->job_id;
      const fs::path chk = fs::path(in.path).parent_path();
      const std::string job = chk.parent_path().filename().string();
      if (!absl::StartsWith(chk.filename().string(), "chk-") || job.size() != 32 ||
          !absl::c_all_of(job, [](char c) { return absl::ascii_isxdigit(c); })) {
        return "";
      }
      return job;
    };
    for (size_t i = 1; i < by_id.size(); ++i) {
      const std::string ja = job_of(*by_id[i - 1]), jb = job_of(*by_id[i]);
      if (!ja.empty() && !jb.empty() && ja != jb) {
        AddWarning(&r, "HISTORY_MIXES_JOBS",
                   absl::StrCat(by_id[i - 1]->path, " (job ", ja, ") and ", by_id[i]->path,
                                " (job ", jb, ") are checkpoints of different jobs; the growth "
                                "between them means nothing"));
        continue;
      }
      std::set<std::string> ids;
      for (const report::Operator& op : by_id[i - 1]->report.operators()) {
        ids.insert(op.operator_id());
      }
      bool shared = false;
      for (const report::Operator& op : by_id[i]->report.operators()) {
        shared = shared || ids.count(op.operator_id()) > 0;
      }
      if (!shared && !ids.empty() && by_id[i]->report.operators_size() > 0) {
        AddWarning(&r, "HISTORY_MIXES_JOBS",
                   absl::StrCat(by_id[i - 1]->path, " and ", by_id[i]->path,
                                " have no operator in common: they are not checkpoints of one "
                                "job, and the growth between them means nothing"));
      }
    }
  }

  // Frame size.
  uint64_t frame = kDefaultFrameSize;
  // The restoring cluster's RPC system when its configuration names it.
  uint64_t conf_overhead = 0;
  std::optional<uint64_t> conf_blob_min;
  std::string frame_source = "default (akka.framesize / pekko.framesize 10485760b)";
  // --flink-conf, parsed once; its frame size is read below once the release is known.
  std::optional<FlinkConfiguration> conf;
  if (options.frame_size > 0) {
    frame = options.frame_size;
    frame_source = "--frame-size";
  } else if (!options.flink_conf.empty()) {
    std::error_code ec;
    if (fs::is_directory(options.flink_conf, ec)) {
      return absl::InvalidArgumentError(absl::StrCat(
          options.flink_conf, ": doctor: --flink-conf names a directory; give its "
          "flink-conf.yaml or config.yaml"));
    }
    // A configuration is a small text file; /dev/zero or a FIFO would be read
    // without end (attack run 6, item 11).
    if (fs::exists(options.flink_conf, ec) && !fs::is_regular_file(options.flink_conf, ec)) {
      return absl::InvalidArgumentError(absl::StrCat(
          options.flink_conf, ": doctor: --flink-conf is not a regular file"));
    }
    if (const uintmax_t size = fs::file_size(options.flink_conf, ec);
        !ec && size > kMaxFlinkConfBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          options.flink_conf, ": doctor: --flink-conf has ", size, " bytes, more than the ",
          kMaxFlinkConfBytes, " a Flink configuration file is read with here"));
    }
    std::ifstream in(options.flink_conf, std::ios::binary);
    if (!in) {
      const int err = errno;
      return absl::NotFoundError(absl::StrCat(options.flink_conf, ": doctor: cannot read --flink-conf: ",
                                              std::strerror(err)));
    }
    std::stringstream ss;
    ss << in.rdbuf();
    absl::StatusOr<FlinkConfiguration> parsed =
        ParseFlinkConfiguration(ss.str(), FlinkConfFormatOf(options.flink_conf));
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(options.flink_conf, ": ", parsed.status().message()));
    }
    conf = *std::move(parsed);
    // --flink-version, when given, decides the RPC system whatever keys the
    // file also carries (attack run 6, item 5b: a 1.15 configuration with
    // both pekko.* and akka.* keys was given Pekko's descriptor overhead).
    if (options.flink_version.empty()) {
      if (conf->HasKeyUnder("pekko.")) {
        conf_overhead = kPekkoDescriptorOverheadBytes;
      } else if (conf->HasKeyUnder("akka.")) {
        conf_overhead = kAkkaDescriptorOverheadBytes;
      }
    }
    absl::StatusOr<uint64_t> bms = ReadBlobOffloadMinSize(*conf);
    if (bms.ok()) {
      conf_blob_min = *bms;
    } else if (!absl::IsNotFound(bms.status())) {
      return absl::InvalidArgumentError(
          absl::StrCat(options.flink_conf, ": ", bms.status().message()));
    }
  }

  // The newest checkpoint is the one a restore uses.
  size_t newest = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (CheckpointId(inputs[i]) >= CheckpointId(inputs[newest])) newest = i;
  }
  const Input& cur = inputs[newest];
  const StateFile& f = cur.file.model;
  // A Pekko cluster restoring a file only Flink 2.x can have written is a 2.x cluster.
  if (conf_overhead == kPekkoDescriptorOverheadBytes && WriterReleases(f).first.major >= 2) {
    conf_overhead = kFlink2DescriptorOverheadBytes;
  }

  // The frame size a --flink-conf sets, read as the restoring release reads
  // it: Akka up to 1.17 (akka.framesize only), Pekko from 1.18 on
  // (pekko.framesize, else akka.framesize). The release: --flink-version; else
  // the releases that can have written the file (and Pekko too when the
  // configuration has pekko.* keys), and where the readings differ, the
  // smaller frame (the stricter answer).
  if (conf.has_value()) {
    std::vector<RpcSystem> systems;
    if (!options.flink_version.empty()) {
      FLINKSTATE_ASSIGN_OR_RETURN(FlinkRelease fr, ParseFlinkRelease(options.flink_version));
      systems.push_back(fr.major == 1 && fr.minor <= 17 ? RpcSystem::kAkka : RpcSystem::kPekko);
    } else {
      // pekko.* keys suggest a Pekko cluster (1.18+) restores the file, but
      // an Akka one (<= 1.17) may, where the writers allow it, and reads
      // only akka.framesize (attack run 8: pekko.framesize was taken for a
      // file of 1.11-1.15): both readings, and the smaller frame decides.
      const auto [lo, hi] = WriterReleases(f);
      auto akka = [](const FlinkRelease& x) { return x.major == 1 && x.minor <= 17; };
      if (akka(lo)) systems.push_back(RpcSystem::kAkka);
      if (!akka(hi) || conf_overhead == kPekkoDescriptorOverheadBytes ||
          conf_overhead == kFlink2DescriptorOverheadBytes) {
        systems.push_back(RpcSystem::kPekko);
      }
    }
    bool found = false;
    std::string keys;
    for (RpcSystem rpc : systems) {
      absl::StatusOr<uint64_t> fsz = ReadFrameSize(*conf, rpc);
      if (absl::IsNotFound(fsz.status())) {
        // This release reads no key: the default.
        fsz = kDefaultFrameSize;
      } else if (!fsz.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(options.flink_conf, ": ", fsz.status().message()));
      } else {
        found = true;
      }
      if (keys.empty() || *fsz < frame) frame = *fsz;
      absl::StrAppend(&keys, keys.empty() ? "" : ", ",
                      rpc == RpcSystem::kAkka ? "Akka (<= 1.17): " : "Pekko (1.18+): ", *fsz);
    }
    frame_source = found ? absl::StrCat(options.flink_conf, " (framesize as ", keys, ")")
                         : absl::StrCat(options.flink_conf,
                                        " sets no framesize the release reads: default 10485760b");
  }

  // Akka's and Pekko's Netty transport read `maximum-frame-size` as a 32-bit
  // int (`getBytes(...).toInt`, which keeps the low 32 bits) and refuse one
  // below 32000: the ActorSystem, and so the cluster, would not start with
  // such a value, and a larger one would run at its truncation (attack run
  // 6, item 13).
  if (frame < kMinRpcFrameSize || frame > kMaxRpcFrameSize) {
    const int32_t transport = static_cast<int32_t>(static_cast<uint32_t>(frame));
    return absl::InvalidArgumentError(absl::StrCat(
        "doctor: frame size ", frame, " bytes (", frame_source, ") is outside ",
        kMinRpcFrameSize, "..", kMaxRpcFrameSize,
        ": Akka/Pekko read maximum-frame-size as a 32-bit int",
        frame > kMaxRpcFrameSize ? absl::StrCat(" (this one as ", transport, ")") : "",
        " and refuse one below ", kMinRpcFrameSize, " bytes; Flink would not start"));
  }

  // 1. Restore forecast.
  report::RestoreForecast* rf = r.mutable_restore();
  rf->set_file(cur.path);
  rf->set_parallelism(options.parallelism);
  rf->set_frame_size(frame);
  rf->set_frame_size_source(frame_source);
  // The cluster that restores may run another release than the one that
  // wrote the file: its configuration's akka./pekko. keys decide when given.
  // --flink-version names it as well: Akka up to 1.17, Pekko from 1.18 on.
  if (!options.flink_version.empty()) {
    if (absl::StatusOr<FlinkRelease> fr = ParseFlinkRelease(options.flink_version); fr.ok()) {
      conf_overhead = fr->major >= 2                     ? kFlink2DescriptorOverheadBytes
                      : fr->major == 1 && fr->minor <= 17 ? kAkkaDescriptorOverheadBytes
                                                          : kPekkoDescriptorOverheadBytes;
    }
  }
  const uint64_t overhead = conf_overhead > 0 ? conf_overhead : DescriptorOverheadBytes(f);
  rf->set_descriptor_overhead_bytes(overhead);

  // The release that restores decides whether a task restore may go to the
  // BLOB server instead of the RPC (doctor.h).
  bool offloading = false;
  if (!options.flink_version.empty()) {
    FLINKSTATE_ASSIGN_OR_RETURN(FlinkRelease fr, ParseFlinkRelease(options.flink_version));
    offloading = OffloadsTaskRestore(fr);
    rf->set_flink_version(options.flink_version);
    rf->set_flink_version_source("--flink-version");
  } else {
    const auto [lo, hi] = WriterReleases(f);
    auto name = [](const FlinkRelease& x) {
      return x.major >= 99 ? std::string("current") : absl::StrCat(x.major, ".", x.minor);
    };
    const std::string range = absl::StrCat(name(lo), lo.major == hi.major && lo.minor == hi.minor
                                                         ? "" : absl::StrCat("-", name(hi)));
    // The lowest release of the range: the task restore travels in the RPC
    // unless every release of the range offloads it.
    offloading = OffloadsTaskRestore(lo);
    rf->set_flink_version_ambiguous(OffloadsTaskRestore(lo) != OffloadsTaskRestore(hi));
    rf->set_flink_version(range);
    rf->set_flink_version_source(absl::StrCat(
        "assumed: the release that wrote the file (", range, ")",
        rf->flink_version_ambiguous() ? ", taken as its lowest, " : ", ",
        offloading ? "which offloads task restores"
                   : "which sends the task restore in the RPC",
        "; --flink-version names the restoring release"));
  }
  rf->set_task_restore_offloading(offloading);
  uint64_t blob_min = kDefaultBlobOffloadMinSize;
  rf->set_blob_offload_min_size_source("default (blob.offload.minsize 1048576)");
  if (options.blob_offload_min_size > 0) {
    blob_min = options.blob_offload_min_size;
    rf->set_blob_offload_min_size_source("--blob-offload-minsize");
  } else if (conf_blob_min.has_value()) {
    blob_min = *conf_blob_min;
    rf->set_blob_offload_min_size_source(absl::StrCat(options.flink_conf, " (blob.offload.minsize)"));
  }
  rf->set_blob_offload_min_size(blob_min);
  // The RPC bytes of a task whose JobManagerTaskRestore serializes to
  // `restore` bytes, on the modelled release or (`offloads`) another.
  auto rpc_bytes = [&](uint64_t restore, bool offloads) {
    return overhead + (offloads && restore >= blob_min ? kOffloadedTaskRestoreRpcBytes : restore);
  };
  auto offloaded = [&](uint64_t restore) { return offloading && restore >= blob_min; };
  uint64_t offloaded_tasks = 0, max_offloaded = 0, total_offloaded = 0;
  // Over the frame size on the other side of an ambiguous release range.
  uint64_t over_if_other = 0;
  auto count_offload = [&](uint64_t restore) {
    if (offloaded(restore)) {
      ++offloaded_tasks;
      max_offloaded = std::max(max_offloaded, restore);
      total_offloaded += restore;
    }
  };
  std::map<std::string, const OperatorState*> op_by_id;
  for (const OperatorState& op : f.metadata.operators) op_by_id[op.IdHex()] = &op;

  // What Flink's loader refuses although the bytes decode (verify.h): the
  // job cannot start from this checkpoint whatever the frame size, and no
  // restore is forecast (a hostile parallelism must not cost its product with
  // the handles either).
  const std::vector<Finding> refusals = LoadRefusals(f);
  const bool loadable = refusals.empty();
  for (const Finding& x : refusals) {
    report::DoctorWarning* w = AddWarning(
        &r, "CHECKPOINT_NOT_LOADABLE",
        absl::StrCat(x.path, ": ", x.problem, " (at byte ", x.offset, ")"),
        absl::StrCat("flinkstate verify ", ShellQuote(cur.path)));
    const size_t close = x.path.find(']');
    int index = 0;
    if (close != std::string::npos &&
        absl::SimpleAtoi(x.path.substr(10, close - 10), &index) && index >= 0 &&
        static_cast<size_t>(index) < f.metadata.operators.size()) {
      w->set_operator_id(f.metadata.operators[index].IdHex());
    }
  }
  std::vector<report::TaskPayload> tasks;
  if (loadable) {
    FLINKSTATE_ASSIGN_OR_RETURN(tasks,
                                ForecastTasks(f, cur.file.bytes(), options.parallelism, cur.dir));
  } else {
    rf->set_forecast_skipped(ForecastSkippedReason(refusals));
    AddWarning(&r, "FORECAST_SKIPPED", absl::StrCat(cur.path, ": ", rf->forecast_skipped()),
               absl::StrCat("flinkstate verify ", ShellQuote(cur.path)));
  }
  for (const auto& t : tasks) *rf->add_tasks() = t;

  // Channel state (unaligned checkpoints) at a new parallelism: Flink
  // redistributes it by each edge's SubtaskStateMapper
  // (StateAssignmentOperation.reDistributeInputChannelStates /
  // reDistributeResultSubpartitionStates, release-1.15.2 .. 2.3.0) and adds
  // InflightDataRescalingDescriptors; the checkpoint records neither the
  // partitioners nor the gates, and the referee does not rescale it, so the
  // forecast keeps old subtask i's handles with new subtask i mod N. Said.
  if (loadable && options.parallelism > 0) {
    for (const OperatorState& op : f.metadata.operators) {
      if (op.parallelism == options.parallelism) continue;
      uint64_t handles = 0;
      for (const OperatorSubtaskState& st : op.subtasks) {
        handles += st.input_channel_state.size() + st.result_subpartition_state.size();
      }
      if (handles == 0) continue;
      report::DoctorWarning* w = AddWarning(
          &r, "CHANNEL_STATE_APPROXIMATED",
          absl::StrCat("operator ", op.IdHex(), " holds ", handles,
                       " in-flight channel-state handles (an unaligned checkpoint) and restores at "
                       "parallelism ", options.parallelism, " instead of ", op.parallelism,
                       ": Flink hands them out by each edge's SubtaskStateMapper and adds "
                       "rescaling descriptors, neither of which the checkpoint records; the "
                       "forecast gives old subtask i's to new subtask i mod ",
                       options.parallelism, ", so this operator's payloads are approximate"),
          "rescale from a savepoint (it holds no channel state): flink savepoint JOB_ID, then "
          "restore the savepoint at the new parallelism");
      w->set_operator_id(op.IdHex());
      w->set_uid(op.uid.value);
      w->set_name(op.name.value);
      w->set_bytes(handles);
    }
  }

  if (options.parallelism > 0) {
    for (const OperatorState& op : f.metadata.operators) {
      if (op.max_parallelism > 0 && options.parallelism > op.max_parallelism) {
        report::DoctorWarning* w = AddWarning(
            &r, "PARALLELISM_ABOVE_MAX_PARALLELISM",
            absl::StrCat("operator ", op.IdHex(), " has max parallelism ", op.max_parallelism,
                         ": Flink refuses to restore it at parallelism ", options.parallelism,
                         " (its key groups cannot be split further)"),
            absl::StrCat("flinkstate doctor --parallelism ", op.max_parallelism, " ..."));
        w->set_operator_id(op.IdHex());
        w->set_uid(op.uid.value);
        w->set_name(op.name.value);
        w->set_bytes(static_cast<uint64_t>(options.parallelism));
        w->set_limit_bytes(static_cast<uint64_t>(op.max_parallelism));
      }
    }
  }
  std::vector<std::unique_ptr<OperatorRestore>> restores;
  std::map<std::string, const OperatorRestore*> restore_by_id;
  for (const OperatorState& op : f.metadata.operators) {
    if (!loadable) break;
    restores.push_back(std::make_unique<OperatorRestore>(op, options.parallelism));
    restore_by_id[op.IdHex()] = restores.back().get();
  }
  uint64_t max_payload = MaxPayload(tasks);
  uint64_t max_deploy = 0;
  // Each operator subtask as if it were its task (exact without chaining).
  for (report::TaskPayload& t : *rf->mutable_tasks()) {
    t.set_task_restore_offloaded(offloaded(t.payload_bytes()));
    t.set_rpc_bytes(rpc_bytes(t.payload_bytes(), offloading));
  }
  if (!options.plan_file.empty() && !loadable) {
    // Read for its errors; nothing to chain.
    FLINKSTATE_RETURN_IF_ERROR(ReadPlan(options.plan_file).status());
  } else if (!options.plan_file.empty()) {
    FLINKSTATE_ASSIGN_OR_RETURN(std::vector<PlanVertex> plan, ReadPlan(options.plan_file));
    MatchPlan(f, options.parallelism, &plan);
    rf->set_chaining_known(true);
    std::set<std::string> placed;
    for (const PlanVertex& v : plan) placed.insert(v.operator_ids.begin(), v.operator_ids.end());
    // A plan that names none of the checkpoint's operators, whatever the
    // parallelism (by vertex id, operatorIds or a name in a description), is
    // another job's, or another version of it with new ids and names: every
    // operator is then a chain of its own, which the plan was given to avoid
    // (attack runs 6 and 7, item 9).
    bool names_any = false;
    for (const OperatorState& op : f.metadata.operators) {
      const std::string id = op.IdHex();
      for (const PlanVertex& v : plan) {
        names_any |= v.id == id || absl::c_linear_search(v.operator_ids, id) ||
                     DescriptionNames(v.text, op.name.value);
      }
    }
    if (!names_any && !f.metadata.operators.empty()) {
      AddWarning(&r, "PLAN_MATCHES_NO_OPERATOR",
                 absl::StrCat("none of the plan's ", plan.size(), " vertices names any of the ",
                              f.metadata.operators.size(),
                              " operators of the checkpoint (by id, operatorIds or the operator "
                              "names in the description): is it the plan of another job? Every "
                              "operator is counted as a chain of its own"),
                 "take the plan of the job that wrote this checkpoint (REST /jobs/<id>/plan)");
    }
    // A plan taken at another parallelism than the checkpoint's, without
    // --parallelism: its vertices do not match the operators by parallelism,
    // and those operators become chains of their own (say so, with the fix).
    if (options.parallelism <= 0 && names_any) {
      std::set<int> plan_p, ckpt_p;
      for (const PlanVertex& v : plan) {
        if (v.parallelism > 0) plan_p.insert(v.parallelism);
      }
      std::vector<std::string> unplaced;
      for (const OperatorState& op : f.metadata.operators) {
        ckpt_p.insert(std::max(op.parallelism, 1));
        if (!placed.count(op.IdHex())) unplaced.push_back(op.IdHex());
      }
      std::vector<int> only_plan;
      for (int x : plan_p) {
        if (!ckpt_p.count(x)) only_plan.push_back(x);
      }
      if (!unplaced.empty() && !only_plan.empty()) {
        report::DoctorWarning* w = AddWarning(
            &r, "PLAN_PARALLELISM_DIFFERS",
            absl::StrCat("the plan's vertices run at parallelism ", absl::StrJoin(only_plan, ", "),
                         ", which no operator of the checkpoint has; ", unplaced.size(),
                         " operator(s) matched no vertex and are counted as chains of their own "
                         "(e.g. ", unplaced.front(), ")"),
            absl::StrCat("flinkstate doctor --parallelism ", only_plan.front(), " --plan ",
                         options.plan_file, " ..."));
        w->set_operator_id(unplaced.front());
      }
    }
    // Operators of the checkpoint no plan vertex holds are chains of their own.
    for (const OperatorState& op : f.metadata.operators) {
      if (!placed.count(op.IdHex())) {
        PlanVertex v;
        v.id = op.IdHex();
        v.text = absl::StrCat(op.name.value, " (not in the plan)");
        v.operator_ids.push_back(op.IdHex());
        plan.push_back(std::move(v));
      }
    }
    for (const PlanVertex& v : plan) {
      std::vector<const OperatorRestore*> chain;
      int n = 0;
      for (const std::string& id : v.operator_ids) {
        if (auto it = restore_by_id.find(id); it != restore_by_id.end()) {
          chain.push_back(it->second);
          n = std::max(n, it->second->new_parallelism());
        }
      }
      if (chain.empty()) continue;  // no state of this task: no restore is sent
      // Every operator of the task fully finished: Flink sends the task
      // TaskStateSnapshot.FINISHED_ON_RESTORE (an empty map and two flags)
      // instead of the operators' states (StateAssignmentOperation, 1.14+).
      bool all_finished = true;
      for (const std::string& id : v.operator_ids) {
        auto it = op_by_id.find(id);
        all_finished &= it != op_by_id.end() && it->second->fully_finished();
      }
      if (all_finished) chain.clear();
      // Subtasks whose every operator receives union entries only receive
      // the same restore: sized once.
      std::optional<uint64_t> only_union_bytes;
      for (int i = 0; i < n; ++i) {
        report::ChainPayload* c = rf->add_chains();
        for (const std::string& id : v.operator_ids) c->add_operator_ids(id);
        c->set_name(ChainName(v.text));
        c->set_subtask_index(i);
        const bool only_union = absl::c_all_of(chain, [i](const OperatorRestore* x) {
          return i < x->new_parallelism() && x->OnlyUnion(i);
        });
        if (!only_union || !only_union_bytes.has_value()) {
          const uint64_t bytes = ChainRestoreSize(chain, i, cur.dir);
          if (only_union) only_union_bytes = bytes;
          c->set_payload_bytes(bytes);
        } else {
          c->set_payload_bytes(*only_union_bytes);
        }
        c->set_task_restore_offloaded(offloaded(c->payload_bytes()));
        c->set_deployment_bytes(rpc_bytes(c->payload_bytes(), offloading));
        count_offload(c->payload_bytes());
        if (rpc_bytes(c->payload_bytes(), !offloading) > frame) ++over_if_other;
        max_deploy = std::max<uint64_t>(max_deploy, c->deployment_bytes());
      }
    }
  } else if (loadable) {
    // Without a plan each operator subtask stands for its task (a lower
    // bound of the chain's JobManagerTaskRestore, also for the offload).
    for (const report::TaskPayload& t : rf->tasks()) {
      count_offload(t.payload_bytes());
      if (rpc_bytes(t.payload_bytes(), !offloading) > frame) ++over_if_other;
      max_deploy = std::max<uint64_t>(max_deploy, t.rpc_bytes());
    }
    AddWarning(&r, "NO_PLAN",
               "no --plan: the checkpoint does not record which operators share a task; a "
               "task carries the sum of its chained operators' payloads plus the descriptor "
               "overhead, so the per-operator figures below are lower bounds for chained tasks",
               "curl http://JOBMANAGER:8081/jobs/JOB_ID/plan > plan.json; flinkstate doctor "
               "--plan plan.json ...");
  }
  rf->set_max_payload_bytes(max_payload);
  rf->set_max_deployment_bytes(max_deploy);
  // Akka and Pekko refuse a maximum-frame-size below 32000 bytes.
  rf->set_min_frame_size(std::max(max_deploy, kMinRpcFrameSize));
  uint32_t over = 0;
  auto warn_over = [&](const std::string& op_id, int subtask, uint64_t bytes,
                       const std::string& what) {
    ++over;
    report::DoctorWarning* w = AddWarning(
        &r, "TASK_OVER_FRAME_SIZE",
        absl::StrCat(what, " subtask ", subtask, " would receive ", bytes, " bytes (",
                     HumanBytes(bytes), "), ", bytes - frame, " bytes over the frame size ",
                     frame, ": the deployment fails with \"Discarding oversized payload\""));
    w->set_operator_id(op_id);
    if (auto it = op_by_id.find(op_id); it != op_by_id.end()) {
      w->set_uid(it->second->uid.value);
      w->set_name(it->second->name.value);
    }
    w->set_subtask_index(subtask);
    w->set_bytes(bytes);
    w->set_limit_bytes(frame);
  };
  if (rf->chaining_known()) {
    for (const auto& c : rf->chains()) {
      if (c.deployment_bytes() > frame) {
        warn_over(c.operator_ids_size() ? c.operator_ids(0) : "", c.subtask_index(),
                  c.deployment_bytes(), absl::StrCat("chain '", c.name(), "'"));
      }
    }
  } else {
    for (const auto& t : rf->tasks()) {
      const uint64_t b = t.rpc_bytes();
      if (b > frame) {
        warn_over(t.operator_id(), t.subtask_index(), b,
                  absl::StrCat("operator ", t.operator_id(),
                               t.name().empty() ? "" : absl::StrCat(" (", t.name(), ")")));
      }
    }
  }
  rf->set_tasks_over_frame_size(over);
  rf->set_tasks_restore_offloaded(static_cast<uint32_t>(offloaded_tasks));
  rf->set_max_offloaded_restore_bytes(max_offloaded);
  rf->set_total_offloaded_restore_bytes(total_offloaded);
  if (offloaded_tasks > 0) {
    report::DoctorWarning* w = AddWarning(
        &r, "TASK_RESTORE_OFFLOADED",
        absl::StrCat(offloaded_tasks, rf->chaining_known() ? " tasks'" : " operator subtasks'",
                     " JobManagerTaskRestore (largest ", max_offloaded, " bytes, ",
                     HumanBytes(max_offloaded), "; ", total_offloaded, " bytes in all) reach ",
                     "blob.offload.minsize ", blob_min, ": Flink ", rf->flink_version(),
                     " puts them on the BLOB server and the RPC carries a key, so the frame "
                     "size does not limit them; the BLOB server's storage (and the HA storage "
                     "with high availability) holds them, and each TaskManager downloads its "
                     "task's restore and deserializes it in its heap"));
    w->set_bytes(max_offloaded);
    w->set_limit_bytes(blob_min);
  }
  if (rf->flink_version_ambiguous() && over_if_other != over) {
    report::DoctorWarning* w = AddWarning(
        &r, "FLINK_VERSION_ASSUMED",
        absl::StrCat("the file was written by Flink ", rf->flink_version(),
                     " and the restoring release was not given: the forecast takes ",
                     offloading ? "offloading" : "the task restore in the RPC", " (",
                     over, " tasks over the frame size); on ",
                     offloading ? "a release that sends it in the RPC (up to 2.1)"
                                : "Flink 2.2 or later, which offloads task restores of "
                                  "blob.offload.minsize bytes or more to the BLOB server,",
                     " ", over_if_other, " would be"),
        "flinkstate doctor --flink-version X.Y.Z ...");
    w->set_bytes(over_if_other);
  }

  // The state names that make the payload, and the fix.
  const auto multiplying = MultiplyingUnionStates(cur.report);
  auto fix_command = [&](const std::string& state) {
    std::vector<std::string> cmds;
    for (const Input& in : inputs) {
      if (&in != &cur) continue;
      cmds.push_back(absl::StrCat("flinkstate strip-state --state ", ShellQuote(state), " ",
                                  ShellQuote(in.path), " ", ShellQuote(in.path + ".stripped")));
    }
    cmds.push_back(absl::StrCat("flinkstate repair --state ", ShellQuote(state),
                                " --ha-dir HA_DIR JOB_CHECKPOINT_DIR"));
    return absl::StrJoin(cmds, "; ");
  };
  for (const auto& [op_id, names] : multiplying) {
    for (const std::string& name : names) {
      for (const report::Warning& w : cur.report.warnings()) {
        if (w.code() != "UNION_STATE_MULTIPLIES" || w.operator_id() != op_id ||
            w.state_name() != name) {
          continue;
        }
        report::DoctorWarning* d = AddWarning(&r, "UNION_STATE_MULTIPLIES", w.message(),
                                              fix_command(name));
        d->set_operator_id(op_id);
        if (auto it = op_by_id.find(op_id); it != op_by_id.end()) {
          d->set_uid(it->second->uid.value);
          d->set_name(it->second->name.value);
        }
        d->set_state_name(name);
        d->set_bytes(w.entry_count());
        d->set_factor(w.parallelism());
      }
    }
  }
  if (over > 0) {
    report::DoctorWarning* w = AddWarning(
        &r, "MIN_FRAME_SIZE",
        absl::StrCat("the smallest frame size that deploys every task is ", rf->min_frame_size(),
                     " bytes (", HumanBytes(rf->min_frame_size()),
                     "); raising it moves the limit, it does not shrink the state, and every "
                     "task's descriptor is held in the JobManager heap during the restore"),
        absl::StrCat("pekko.framesize: ", rf->min_frame_size(),
                     "b   (Flink < 2.0: akka.framesize: ", rf->min_frame_size(), "b)"));
    w->set_bytes(rf->min_frame_size());
    w->set_limit_bytes(frame);
  }

  // Other parallelisms.
  std::vector<int> others = options.other_parallelisms;
  int cur_p = options.parallelism;
  if (cur_p <= 0) {
    for (const OperatorState& op : f.metadata.operators) cur_p = std::max(cur_p, op.parallelism);
  }
  if (others.empty()) {
    for (int q : {1, cur_p / 2, cur_p * 2, cur_p * 4}) {
      if (q >= 1 && q != cur_p && std::find(others.begin(), others.end(), q) == others.end()) {
        others.push_back(q);
      }
    }
  }
  for (int q : others) {
    if (q > kMaxFlinkParallelism || !loadable) continue;
    FLINKSTATE_ASSIGN_OR_RETURN(std::vector<report::TaskPayload> t,
                                ForecastTasks(f, cur.file.bytes(), q, cur.dir));
    report::ParallelismForecast* pf = rf->add_other_parallelisms();
    pf->set_parallelism(q);
    uint64_t total = 0;
    for (const auto& x : t) total += x.payload_bytes();
    pf->set_max_payload_bytes(MaxPayload(t) + overhead);
    pf->set_total_payload_bytes(total);
    uint64_t max_rpc = 0;
    for (const auto& x : t) max_rpc = std::max(max_rpc, rpc_bytes(x.payload_bytes(), offloading));
    pf->set_max_rpc_bytes(max_rpc);
    pf->set_exceeds_frame_size(max_rpc > frame);
  }

  // 2. Heap.
  report::HeapForecast* heap = r.mutable_heap();
  const uint64_t ckpt_heap = HeapCheckpoint(f);
  heap->set_checkpoint_bytes(ckpt_heap);
  heap->set_retained(std::max(options.retained, 1));
  heap->set_retained_bytes(ckpt_heap * static_cast<uint64_t>(heap->retained()));
  // What the restore adds (StateAssignmentOperation, Execution.deploy,
  // release-1.15.2 .. 2.3.0): every task's assigned restore, held until the
  // task is deployed, and its serialized descriptor while it is sent.
  uint64_t assigned = 0;
  uint64_t in_flight = 0;
  for (const auto& t : tasks) assigned += t.assigned_heap_bytes();
  // A JobManagerTaskRestore (checkpoint id, TaskStateSnapshot) per task; the
  // snapshot's HashMap of OperatorID -> OperatorSubtaskState and the IDs.
  auto task_objects = [](uint64_t operators) {
    return JvmObject(1, 8) + JvmObject(1, 2) + JvmHashMap(operators) +
           operators * JvmObject(0, 16);
  };
  if (rf->chains_size() > 0) {
    for (const report::ChainPayload& c : rf->chains()) {
      assigned += task_objects(static_cast<uint64_t>(c.operator_ids_size()));
      in_flight += JvmArray(c.deployment_bytes());
    }
  } else {
    // Without a plan each operator subtask stands for a task of its own.
    for (const report::TaskPayload& t : rf->tasks()) {
      assigned += task_objects(1);
      in_flight += JvmArray(t.rpc_bytes());
    }
  }
  const uint64_t restore_objects = assigned + in_flight;
  heap->set_assigned_restore_bytes(assigned);
  heap->set_in_flight_bytes(in_flight);
  heap->set_before_deployment_bytes(heap->retained_bytes() + assigned);
  heap->set_restore_bytes(restore_objects);
  heap->set_restore_peak_bytes(heap->retained_bytes() + restore_objects);
  r.add_notes(absl::StrCat(
      "heap: an estimate for a 64-bit JVM with compressed oops (12-byte headers, 4-byte "
      "references, 8-byte alignment): the checkpoint's object graph (handles, long[] offsets, "
      "inline byte[], strings, HashMaps) x ", heap->retained(),
      " retained, plus the objects the state assignment creates for every task (held until the "
      "task is deployed: ", assigned, " bytes; before any task is deployed the JobManager holds ",
      heap->before_deployment_bytes(), " bytes), plus every task's serialized deployment "
      "descriptor (its restore + ", overhead, " bytes, a BLOB key where offloaded: ", in_flight,
      " bytes) as if all were in flight at once, an upper bound of that transient part"));
  r.add_notes(
      "restore: Flink's RoundRobinOperatorStateRepartitioner and key-group assignment, sized as "
      "Java serialization of each task's OperatorSubtaskState with the 1.15-1.20 class shapes; "
      "a task adds the deployment descriptor's own bytes (an estimate from real deployments: 21500 with Akka, "
      "25500 with Pekko up to 1.20, 23000 on Flink 2)");
  r.add_notes(absl::StrCat(
      "rpc: job and task information and wide inputs' shuffle descriptors go to the BLOB server "
      "from blob.offload.minsize (", blob_min, " bytes) on in every release (the overhead "
      "estimate is then an upper bound); the task's JobManagerTaskRestore does from Flink 2.2.0 "
      "on (FLINK-38114), up to 2.1 it is always in the RPC; modelled: Flink ",
      rf->flink_version(), " (", rf->flink_version_source(), "), ",
      offloading ? "restores offloaded" : "restores in the RPC"));
  if (heap->restore_peak_bytes() > (uint64_t{1} << 30)) {
    report::DoctorWarning* w = AddWarning(
        &r, "HEAP_LARGE",
        absl::StrCat("the JobManager needs about ", HumanBytes(heap->restore_peak_bytes()),
                     " of heap during the restore (", HumanBytes(ckpt_heap), " per checkpoint x ",
                     heap->retained(), " retained + ", HumanBytes(assigned),
                     " of assigned restores + ", HumanBytes(in_flight),
                     " of descriptors in flight)"),
        "jobmanager.memory.heap.size: " + HumanBytes(heap->restore_peak_bytes() * 2));
    w->set_bytes(heap->restore_peak_bytes());
  }

  // 3. History.
  std::vector<size_t> order(inputs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return CheckpointId(inputs[a]) < CheckpointId(inputs[b]);
  });
  report::History* hist = r.mutable_history();
  uint64_t prev_union = 0, prev_size = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const Input& in = inputs[order[k]];
    report::HistoryCheckpoint* hc = hist->add_checkpoints();
    hc->set_file(in.path);
    hc->set_checkpoint_id(CheckpointId(in));
    hc->set_file_size(in.file.model.size);
    hc->set_union_entries(UnionEntries(in.file.model));
    if (&in == &cur) {
      hc->set_max_payload_bytes(MaxPayload(tasks));
    } else if (const std::vector<Finding> no = LoadRefusals(in.file.model); !no.empty()) {
      AddWarning(&r, "FORECAST_SKIPPED", absl::StrCat(in.path, ": ", ForecastSkippedReason(no)),
                 absl::StrCat("flinkstate verify ", ShellQuote(in.path)));
    } else {
      FLINKSTATE_ASSIGN_OR_RETURN(std::vector<report::TaskPayload> t,
                                  ForecastTasks(in.file.model, in.file.bytes(), 0, in.dir));
      hc->set_max_payload_bytes(MaxPayload(t));
    }
    if (k > 0) {
      const double g = prev_union > 0 ? static_cast<double>(hc->union_entries()) / prev_union
                       : prev_size > 0 ? static_cast<double>(hc->file_size()) / prev_size
                                       : 0;
      hc->set_growth_factor(g);
      if (g > 1.5 && hist->growth_began_at() == 0) hist->set_growth_began_at(hc->checkpoint_id());
    }
    prev_union = hc->union_entries();
    prev_size = hc->file_size();
  }
  if (hist->growth_began_at() != 0) {
    const auto& last = hist->checkpoints(hist->checkpoints_size() - 1);
    report::DoctorWarning* w = AddWarning(
        &r, "GROWTH",
        absl::StrCat("union entries grew from checkpoint ", hist->growth_began_at(),
                     " on (a restore re-snapshots every entry it received); checkpoint ",
                     last.checkpoint_id(), " holds ", last.union_entries()));
    w->set_bytes(last.union_entries());
  }
  // Projection: a multiplying union state is handed whole to each of the P
  // subtasks, which snapshot it all again.
  uint64_t union_mult_bytes = 0, nonunion_max = 0;
  uint64_t mult_entries = 0, mult_p = 1;
  for (const auto& t : tasks) {
    if (multiplying.count(t.operator_id())) {
      union_mult_bytes = std::max<uint64_t>(union_mult_bytes, t.union_bytes());
      nonunion_max = std::max<uint64_t>(nonunion_max, t.payload_bytes() - t.union_bytes());
      mult_p = std::max<uint64_t>(mult_p, static_cast<uint64_t>(t.parallelism()));
    }
  }
  for (const report::Warning& w : cur.report.warnings()) {
    if (w.code() == "UNION_STATE_MULTIPLIES") mult_entries += w.entry_count();
  }
  const uint64_t union_total = UnionEntries(f);
  if (!loadable) {
    // No restore: nothing to project (restore.forecast_skipped).
    hist->set_projected_union_entries(union_total);
    hist->set_projected_file_size(f.size);
    hist->set_restores_until_frame_exceeded(-1);
  } else if (mult_entries > 0) {
    hist->set_projected_union_entries(union_total - mult_entries + mult_entries * mult_p);
    hist->set_projected_max_payload_bytes(
        std::max(max_deploy, nonunion_max + union_mult_bytes * mult_p + overhead));
    // The file's union part grows with its entries (offsets and the bytes
    // they point to); approximated by the union share of the payloads.
    uint64_t union_file = 0;
    for (const OperatorState& op : f.metadata.operators) {
      if (!multiplying.count(op.IdHex())) continue;
      for (const auto& s : op.subtasks) {
        for (const auto& h : s.managed_operator_state) {
          uint64_t share = 0, all = 0;
          for (const auto& e : h.states) {
            all += e.offsets.count;
            if (e.mode == 1) share += e.offsets.count;
          }
          const uint64_t data = h.delegate && h.delegate->tag == 1 ? h.delegate->data.size : 0;
          union_file += 8 * share + (all > 0 ? data * share / all : 0);
        }
      }
    }
    hist->set_projected_file_size(f.size + union_file * (mult_p - 1));
    int k = -1;
    for (int n = 0; n <= 8; ++n) {
      double pw = std::pow(static_cast<double>(mult_p), n);
      double b = static_cast<double>(nonunion_max + overhead) +
                 static_cast<double>(union_mult_bytes) * pw;
      // Offloaded from blob.offload.minsize on: the RPC keeps only a key.
      if (offloading && b - static_cast<double>(overhead) >= static_cast<double>(blob_min)) {
        b = static_cast<double>(overhead + kOffloadedTaskRestoreRpcBytes);
      }
      if (b > static_cast<double>(frame)) {
        k = n;
        break;
      }
    }
    hist->set_restores_until_frame_exceeded(k);
    if (k == 1) {
      report::DoctorWarning* w = AddWarning(
          &r, "FRAME_SIZE_AT_NEXT_RESTORE",
          absl::StrCat("this restore deploys, but its next checkpoint holds ",
                       hist->projected_union_entries(), " union entries; restoring from it sends ",
                       hist->projected_max_payload_bytes(), " bytes to a task, over the frame size ",
                       frame),
          fix_command(multiplying.begin()->second.empty() ? "NAME"
                                                          : *multiplying.begin()->second.begin()));
      w->set_bytes(hist->projected_max_payload_bytes());
      w->set_limit_bytes(frame);
      w->set_factor(static_cast<double>(mult_p));
    }
  } else {
    hist->set_projected_union_entries(union_total);
    hist->set_projected_max_payload_bytes(max_deploy);
    hist->set_projected_file_size(f.size);
    hist->set_restores_until_frame_exceeded(over > 0 ? 0 : -1);
  }

  // 4. Paths.
  report::PathReport* pr = r.mutable_paths();
  pr->set_checkpoint_dir(cur.dir);
  PathWalker pw{cur.dir, pr, {}, {}};
  for (const OperatorState& op : f.metadata.operators) {
    pw.Stream(op.coordinator_state);
    for (const OperatorSubtaskState& s : op.subtasks) {
      for (const auto* slot : {&s.managed_operator_state, &s.raw_operator_state}) {
        for (const OperatorStateHandle& h : *slot) {
          if (h.delegate) pw.Stream(*h.delegate);
        }
      }
      for (const auto* slot : {&s.managed_keyed_state, &s.raw_keyed_state}) {
        for (const KeyedStateHandle& h : *slot) pw.Keyed(h);
      }
      for (const auto* slot : {&s.input_channel_state, &s.result_subpartition_state}) {
        for (const ChannelStateHandle& h : *slot) pw.Stream(h.delegate);
      }
    }
  }
  for (auto& [k, p] : pw.prefixes) *pr->add_prefixes() = p;
  pr->set_relocatable(pr->absolute_handles() == 0);
  for (const auto& p : pr->prefixes()) {
    if (!p.absolute()) continue;
    const std::string cmd =
        absl::StrCat("flinkstate relocate --from ", ShellQuote(p.prefix()), " --to NEW_PREFIX ",
                     ShellQuote(cur.path), " ", ShellQuote(cur.path + ".relocated"));
    pr->add_relocate_commands(cmd);
    report::DoctorWarning* w = AddWarning(
        &r, p.outside_checkpoint_dir() ? "PATHS_OUTSIDE_CHECKPOINT" : "ABSOLUTE_PATHS",
        absl::StrCat(p.handles(), " handles (", HumanBytes(p.bytes()), ") name absolute paths under ",
                     p.prefix(),
                     p.outside_checkpoint_dir() ? ", outside the checkpoint directory" : "",
                     ": the checkpoint cannot be moved without rewriting them"),
        cmd);
    w->set_bytes(p.bytes());
    if (p.entropy_marker()) {
      AddWarning(&r, "ENTROPY_MARKER",
                 absl::StrCat("paths under ", p.prefix(),
                              " hold an entropy-injection marker: the files sit under a "
                              "randomised prefix, relocate each prefix separately"),
                 cmd);
    }
  }

  // 5. Duplicated inline bytes, size mismatches, inline bytes per state.
  report::DuplicateReport* dr = r.mutable_duplicates();
  const serde::ByteView bytes = cur.file.bytes();
  std::map<std::pair<uint64_t, std::string>, std::vector<std::string>> by_content;
  auto data_of = [&](const SourceRange& range) -> absl::string_view {
    if (range.offset + range.size > bytes.size()) return {};
    return absl::string_view(reinterpret_cast<const char*>(bytes.data()) + range.offset,
                             range.size);
  };
  auto note_inline = [&](const StreamStateHandle& h, const std::string& where) {
    if (h.tag != static_cast<uint8_t>(HandleTag::kByteStream) || h.data.size == 0) return;
    // Key by size and the bytes themselves (compared exactly).
    by_content[{h.data.size, std::string(data_of(h.data))}].push_back(where);
  };
  for (size_t oi = 0; oi < f.metadata.operators.size(); ++oi) {
    const OperatorState& op = f.metadata.operators[oi];
    const std::string opid = op.IdHex();
    for (const OperatorSubtaskState& s : op.subtasks) {
      const std::string base = absl::StrCat("operators[", opid, "].subtasks[", s.subtask_index, "]");
      for (const auto* slot : {&s.managed_operator_state, &s.raw_operator_state}) {
        for (size_t hi = 0; hi < slot->size(); ++hi) {
          const OperatorStateHandle& h = (*slot)[hi];
          if (!h.delegate) continue;
          note_inline(*h.delegate, absl::StrCat(base, ".operatorState[", hi, "]"));
          // Attribute the delegate's bytes to the state names by offsets.
          const uint64_t data =
              h.delegate->tag == 1 ? h.delegate->data.size
                                   : static_cast<uint64_t>(std::max<int64_t>(h.delegate->state_size, 0));
          std::vector<std::pair<int64_t, const StateNameEntry*>> starts;
          for (const StateNameEntry& e : h.states) {
            int64_t first = -1;
            if (e.offsets.count > 0 && e.offsets.range.offset + 8 <= bytes.size()) {
              const uint8_t* q = bytes.data() + e.offsets.range.offset;
              uint64_t v = 0;
              for (int b = 0; b < 8; ++b) v = (v << 8) | q[b];
              first = static_cast<int64_t>(v);
            }
            starts.push_back({first, &e});
          }
          std::sort(starts.begin(), starts.end(),
                    [](const auto& a, const auto& b) { return a.first < b.first; });
          for (size_t k = 0; k < starts.size(); ++k) {
            uint64_t attributed = 0;
            if (starts[k].first >= 0 && h.delegate->tag == 1) {
              int64_t next = static_cast<int64_t>(data);
              for (size_t m = k + 1; m < starts.size(); ++m) {
                if (starts[m].first >= 0) {
                  next = starts[m].first;
                  break;
                }
              }
              attributed = static_cast<uint64_t>(std::max<int64_t>(next - starts[k].first, 0));
            }
            report::InlineByState* ib = dr->add_inline_by_state();
            ib->set_operator_id(opid);
            ib->set_state_name(starts[k].second->name.value);
            ib->set_subtask_index(s.subtask_index);
            ib->set_mode(DistributionModeName(starts[k].second->mode));
            ib->set_inline_bytes(attributed);
            ib->set_offset_bytes(8ull * starts[k].second->offsets.count);
          }
        }
      }
      for (const auto* slot : {&s.input_channel_state, &s.result_subpartition_state}) {
        for (size_t hi = 0; hi < slot->size(); ++hi) {
          const ChannelStateHandle& h = (*slot)[hi];
          const std::string where = absl::StrCat(
              base, slot == &s.input_channel_state ? ".inputChannelState[" : ".resultSubpartitionState[",
              hi, "]");
          note_inline(h.delegate, where);
          const uint64_t inline_size = h.delegate.tag == 1 ? h.delegate.data.size : 0;
          if (h.delegate.tag == 1 && h.state_size >= 0 &&
              static_cast<uint64_t>(h.state_size) != inline_size) {
            report::SizeMismatch* m = dr->add_size_mismatches();
            m->set_item_path(where);
            m->set_declared_bytes(static_cast<uint64_t>(h.state_size));
            m->set_inline_bytes(inline_size);
          }
        }
      }
      for (const auto* slot : {&s.managed_keyed_state, &s.raw_keyed_state}) {
        for (size_t hi = 0; hi < slot->size(); ++hi) {
          const KeyedStateHandle& h = (*slot)[hi];
          if (h.delegate) note_inline(*h.delegate, absl::StrCat(base, ".keyedState[", hi, "]"));
        }
      }
    }
  }
  uint64_t dup_bytes = 0;
  for (auto& [key, where] : by_content) {
    if (where.size() < 2) continue;
    report::DuplicateInline* d = dr->add_duplicates();
    d->set_bytes(key.first);
    d->set_copies(static_cast<uint32_t>(where.size()));
    for (const std::string& w : where) d->add_handles(w);
    dup_bytes += key.first * (where.size() - 1);
  }
  dr->set_duplicated_bytes(dup_bytes);
  if (dup_bytes > 0) {
    report::DoctorWarning* w = AddWarning(
        &r, "DUPLICATED_INLINE_BYTES",
        absl::StrCat(dr->duplicates_size(), " inline byte arrays are carried identically by "
                     "several handles: ", dup_bytes, " bytes (", HumanBytes(dup_bytes),
                     ") are copies (e.g. one per-subtask array in every channel-state handle)"));
    w->set_bytes(dup_bytes);
  }
  for (const auto& m : dr->size_mismatches()) {
    report::DoctorWarning* w = AddWarning(
        &r, "SIZE_MISMATCH",
        absl::StrCat(m.item_path(), " declares ", m.declared_bytes(), " bytes but carries ",
                     m.inline_bytes(), " inline bytes"),
        absl::StrCat("flinkstate verify ", ShellQuote(cur.path)));
    w->set_bytes(m.inline_bytes());
    w->set_limit_bytes(m.declared_bytes());
  }

  // 6. What changed (doctor A B).
  if (paths.size() == 2 && inputs.size() == 2) {
    report::Report a = inputs[0].report, b = inputs[1].report;
    a.clear_file();
    b.clear_file();
    google::protobuf::util::MessageDifferencer md;
    // Operators by id, wherever each file lists them.
    md.TreatAsMap(report::Report::descriptor()->FindFieldByName("operators"),
                  report::Operator::descriptor()->FindFieldByName("operator_id"));
    std::string diff;
    md.ReportDifferencesToString(&diff);
    md.Compare(a, b);
    for (absl::string_view line : absl::StrSplit(diff, '\n', absl::SkipEmpty())) {
      r.add_changes(std::string(line));
    }
  }
  return r;
}

int DoctorExitCode(const report::DoctorReport& r) {
  for (const auto& w : r.warnings()) {
    if (w.code() == "TASK_OVER_FRAME_SIZE" || w.code() == "FRAME_SIZE_AT_NEXT_RESTORE" ||
        w.code() == "PARALLELISM_ABOVE_MAX_PARALLELISM" ||
        w.code() == "CHECKPOINT_NOT_LOADABLE") {
      return 1;
    }
  }
  return 0;
}

std::string RenderDoctorText(const report::DoctorReport& r) {
  std::string o;
  const report::RestoreForecast& rf = r.restore();
  absl::StrAppend(&o, "restore forecast for ", rf.file(), "\n");
  absl::StrAppend(&o, "  parallelism: ",
                  rf.parallelism() > 0 ? absl::StrCat(rf.parallelism()) : "as checkpointed",
                  "; frame size ", rf.frame_size(), " bytes (", HumanBytes(rf.frame_size()),
                  ", ", rf.frame_size_source(), ")\n");
  absl::StrAppend(&o, "  flink release: ", rf.flink_version(), " (", rf.flink_version_source(),
                  "); task restore: ",
                  rf.task_restore_offloading()
                      ? absl::StrCat("to the BLOB server from ", rf.blob_offload_min_size(),
                                     " bytes on (blob.offload.minsize, ",
                                     rf.blob_offload_min_size_source(), ")")
                      : "in the RPC whatever its size",
                  "\n");
  if (!rf.forecast_skipped().empty()) {
    absl::StrAppend(&o, "  forecast skipped: ", rf.forecast_skipped(), "\n");
  }
  absl::StrAppend(&o, "  per operator and subtask (Java-serialized OperatorSubtaskState):\n");
  absl::StrAppendFormat(&o, "    %-32s %7s %12s %12s %12s %12s %7s\n", "operator", "subtask",
                        "payload", "union", "inline", "offsets", "handles");
  for (const auto& t : rf.tasks()) {
    absl::StrAppendFormat(&o, "    %-32s %7d %12d %12d %12d %12d %7d  %s\n", t.operator_id(),
                          t.subtask_index(), t.payload_bytes(), t.union_bytes(), t.inline_bytes(),
                          t.offset_bytes(), t.handles(),
                          absl::StrCat(t.name().empty() ? t.uid() : t.name(),
                                       t.task_restore_offloaded() ? "  (restore on the BLOB server)" : ""));
  }
  if (rf.chaining_known()) {
    absl::StrAppend(&o, "  per task (chains from the plan, + ", rf.descriptor_overhead_bytes(),
                    " bytes descriptor overhead, an estimate):\n");
    for (const auto& c : rf.chains()) {
      absl::StrAppendFormat(&o, "    %-40s %7d restore %12d  deployment %12d%s\n", c.name(),
                            c.subtask_index(), c.payload_bytes(), c.deployment_bytes(),
                            c.deployment_bytes() > rf.frame_size()  ? "  OVER"
                            : c.task_restore_offloaded()           ? "  restore on the BLOB server"
                                                                   : "");
    }
  } else {
    absl::StrAppend(&o, "  chaining unknown (no --plan): a task carries the sum of its chained "
                        "operators + ", rf.descriptor_overhead_bytes(),
                    " bytes descriptor overhead (estimate)\n");
  }
  absl::StrAppend(&o, "  largest operator payload: ", rf.max_payload_bytes(), " bytes (",
                  HumanBytes(rf.max_payload_bytes()), "); largest deployment message: ",
                  rf.max_deployment_bytes(), " bytes (", HumanBytes(rf.max_deployment_bytes()),
                  ", estimate); minimum frame size that deploys: ",
                  rf.min_frame_size(), " bytes; tasks over the frame size: ",
                  rf.tasks_over_frame_size(), "\n");
  if (rf.tasks_restore_offloaded() > 0) {
    absl::StrAppend(&o, "  restores on the BLOB server: ", rf.tasks_restore_offloaded(),
                    " tasks, largest ", rf.max_offloaded_restore_bytes(), " bytes (",
                    HumanBytes(rf.max_offloaded_restore_bytes()), "), ",
                    rf.total_offloaded_restore_bytes(), " bytes in all (limited by the BLOB "
                    "storage and the TaskManager heap, not the frame size)\n");
  }
  for (const auto& p : rf.other_parallelisms()) {
    absl::StrAppend(&o, "  at parallelism ", p.parallelism(), ": largest task ",
                    p.max_payload_bytes(), " bytes (", HumanBytes(p.max_payload_bytes()), ")",
                    p.max_rpc_bytes() != p.max_payload_bytes()
                        ? absl::StrCat(", largest RPC ", p.max_rpc_bytes(), " bytes")
                        : "",
                    p.exceeds_frame_size() ? ", over the frame size" : "", "\n");
  }
  const report::HeapForecast& h = r.heap();
  absl::StrAppend(&o, "jobmanager heap (estimate): ", h.checkpoint_bytes(), " bytes (",
                  HumanBytes(h.checkpoint_bytes()), ") per checkpoint x ", h.retained(),
                  " retained + ", h.assigned_restore_bytes(),
                  " bytes of assigned task restores = ", h.before_deployment_bytes(), " bytes (",
                  HumanBytes(h.before_deployment_bytes()), ") before the tasks deploy; + ",
                  h.in_flight_bytes(), " bytes of serialized descriptors if all were in flight = ",
                  h.restore_peak_bytes(), " bytes (", HumanBytes(h.restore_peak_bytes()),
                  ") at most at the restore's peak\n");
  const report::History& hi = r.history();
  absl::StrAppend(&o, "history (", hi.checkpoints_size(), " checkpoints, by id):\n");
  for (const auto& c : hi.checkpoints()) {
    absl::StrAppendFormat(&o, "    chk %-8d %12d bytes  %10d union entries  growth %s  largest task %d  %s\n",
                          c.checkpoint_id(), c.file_size(), c.union_entries(),
                          c.growth_factor() > 0 ? absl::StrFormat("x%.2f", c.growth_factor()) : "-",
                          c.max_payload_bytes(), c.file());
  }
  if (hi.growth_began_at() != 0) {
    absl::StrAppend(&o, "  growth began at checkpoint ", hi.growth_began_at(), "\n");
  }
  if (!rf.forecast_skipped().empty()) {
    absl::StrAppend(&o, "  after the next restore: not projected (no restore forecast)\n");
  } else {
    absl::StrAppend(&o, "  after the next restore: ", hi.projected_union_entries(),
                    " union entries, file ~", hi.projected_file_size(), " bytes, largest task ~",
                    hi.projected_max_payload_bytes(), " bytes; ",
                    hi.restores_until_frame_exceeded() < 0
                        ? std::string("the frame size is not reached within 8 restores")
                        : hi.restores_until_frame_exceeded() == 0
                              ? std::string("the frame size is exceeded now")
                              : absl::StrCat("the frame size is exceeded at restore ",
                                             hi.restores_until_frame_exceeded(), " from now"),
                    "\n");
  }
  const report::PathReport& p = r.paths();
  absl::StrAppend(&o, "paths: ", p.inline_handles(), " inline, ", p.relative_handles(),
                  " relative, ", p.absolute_handles(), " absolute (", p.outside_handles(),
                  " outside ", p.checkpoint_dir(), ", ", p.entropy_marked_handles(),
                  " with an entropy marker); ", p.relocatable() ? "relocatable" : "not relocatable",
                  "\n");
  for (const auto& x : p.prefixes()) {
    absl::StrAppend(&o, "    ", x.prefix(), ": ", x.handles(), " handles, ", x.bytes(), " bytes",
                    x.outside_checkpoint_dir() ? " (outside the checkpoint directory)" : "", "\n");
  }
  const report::DuplicateReport& d = r.duplicates();
  absl::StrAppend(&o, "duplicated inline bytes: ", d.duplicated_bytes(), " bytes in ",
                  d.duplicates_size(), " groups; size mismatches: ", d.size_mismatches_size(),
                  "\n");
  for (const auto& x : d.duplicates()) {
    absl::StrAppend(&o, "    ", x.bytes(), " bytes x ", x.copies(), ": ",
                    absl::StrJoin(x.handles(), ", "), "\n");
  }
  if (r.changes_size() > 0) {
    absl::StrAppend(&o, "what changed (", r.changes_size(), "):\n");
    for (const auto& c : r.changes()) absl::StrAppend(&o, "    ", c, "\n");
  }
  absl::StrAppend(&o, "warnings (", r.warnings_size(), "):\n");
  for (const auto& w : r.warnings()) {
    absl::StrAppend(&o, "  ", w.code(), ": ", w.message(), "\n");
    if (!w.command().empty()) absl::StrAppend(&o, "    fix: ", w.command(), "\n");
  }
  for (const auto& n : r.notes()) absl::StrAppend(&o, "note: ", n, "\n");
  return o;
}

}  // namespace flinkstate
