// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: internal/completed_checkpoint_shapes.h
// -----------------------------------------------------------------------------
// The class-shape decisions of the completedCheckpoint readers, made from the
// stream's own class descriptors and `KnownClassShapes()`: whether a class
// plays a role (by name, or by structure as the nearest known shape), which
// fields it lacks, the descriptor warnings (changed serialVersionUID, drifted
// fields) and the release hint. Shared by the reader over a decoded
// `javaobj::Stream` and the one-pass reader over a `javaobj::StreamCursor`,
// so that both decide alike; `Descs` is either (anything with
// `desc(DescId)` and `num_descs()`).
//
// Not installed: an implementation detail of completed_checkpoint*.cc.
//
// Thread safety: the functions keep no state.

#ifndef FLINKSTATE_FLINKSTATE_INTERNAL_COMPLETED_CHECKPOINT_SHAPES_H_
#define FLINKSTATE_FLINKSTATE_INTERNAL_COMPLETED_CHECKPOINT_SHAPES_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/javaobj/object_model.h"

namespace flinkstate::internal {

inline constexpr char kRuntimePrefix[] = "org.apache.flink.runtime.";

// The handle classes both readers know by name (short names, see
// `ShortClassName`), per position: the readers switch on the index.
inline constexpr absl::string_view kStreamClasses[] = {
    "state.memory.ByteStreamStateHandle", "state.filesystem.RelativeFileStateHandle",
    "state.filesystem.FileStateHandle", "state.filemerging.SegmentFileStateHandle",
    "state.filemerging.EmptySegmentFileStateHandle", "state.PlaceholderStreamStateHandle",
    "state.filemerging.DirectoryStreamStateHandle",
    "state.changelog.inmemory.InMemoryChangelogStateHandle"};
inline constexpr absl::string_view kKeyedClasses[] = {
    "state.KeyGroupsStateHandle", "state.KeyGroupsSavepointStateHandle",
    "state.IncrementalRemoteKeyedStateHandle",
    "state.changelog.ChangelogStateBackendHandle$ChangelogStateBackendHandleImpl",
    "state.changelog.ChangelogStateHandleStreamImpl",
    "state.changelog.inmemory.InMemoryChangelogStateHandle"};
inline constexpr absl::string_view kOperatorHandleClasses[] = {
    "state.OperatorStreamStateHandle", "state.filemerging.FileMergingOperatorStreamStateHandle",
    "state.filemerging.EmptyFileMergingOperatorStreamStateHandle"};

// `ChannelStateHandle::type` of a channel handle class (short name): 1 input
// channel, 2 result subpartition, 3 and 4 their merged forms; 0 for a class
// that is none of them.
inline int ChannelHandleType(absl::string_view short_name) {
  constexpr absl::string_view kChannelClasses[] = {
      "state.InputChannelStateHandle", "state.ResultSubpartitionStateHandle",
      "state.MergedInputChannelStateHandle", "state.MergedResultSubpartitionStateHandle"};
  for (int i = 0; i < 4; ++i) {
    if (short_name == kChannelClasses[i]) return i + 1;
  }
  return 0;
}

// The operator handle references in model order: by operator, subtask, then
// slot ("managedOperatorState" before "rawOperatorState"), keeping the order
// in which the reader met the handles of one slot (the map order).
inline void SortOperatorHandles(std::vector<OperatorHandleRef>* refs) {
  std::stable_sort(refs->begin(), refs->end(),
                   [](const OperatorHandleRef& a, const OperatorHandleRef& b) {
                     if (a.operator_index != b.operator_index) {
                       return a.operator_index < b.operator_index;
                     }
                     if (a.subtask_index != b.subtask_index) {
                       return a.subtask_index < b.subtask_index;
                     }
                     return a.slot < b.slot;
                   });
}

// Changelog handles nest keyed handles and a hostile stream can make a
// reference cycle of them (Flink nests one level): both readers refuse a
// keyed handle nested deeper than this, with this message. `KeyedNesting`
// counts the levels while a keyed handle is read.
inline constexpr int kMaxKeyedDepth = 16;
inline constexpr char kKeyedTooDeep[] = "keyed handles nested too deeply (a reference cycle?)";
class KeyedNesting {
 public:
  explicit KeyedNesting(int& depth) : depth_(++depth) {}
  ~KeyedNesting() { --depth_; }
  KeyedNesting(const KeyedNesting&) = delete;
  KeyedNesting& operator=(const KeyedNesting&) = delete;
  bool too_deep() const { return depth_ > kMaxKeyedDepth; }

 private:
  int& depth_;
};

// Class names without the common "org.apache.flink.runtime." prefix.
inline std::string ShortClassName(const std::string& name) {
  return absl::StartsWith(name, kRuntimePrefix) ? name.substr(sizeof(kRuntimePrefix) - 1) : name;
}

// True if descriptor `d`'s chain declares a field `field`.
template <typename Descs>
bool ChainHasField(const Descs& s, javaobj::DescId d, absl::string_view field) {
  for (javaobj::DescId c : s.desc(d).chain) {
    if (s.desc(c).FindField(field) >= 0) return true;
  }
  return false;
}

// Fields of `k` that descriptor `d`'s chain does not declare.
template <typename Descs>
int MissingFields(const Descs& s, javaobj::DescId d, const KnownClassShape& k) {
  int missing = 0;
  for (const char* f : k.fields) missing += !ChainHasField(s, d, f);
  return missing;
}

// Fields declared by `d` but not by `k` plus fields of `k` that `d` lacks
// (entries without a declared list: the needed fields `d` lacks).
inline size_t DeclaredDiff(const javaobj::ClassDesc& d, const KnownClassShape& k) {
  const std::vector<const char*>& names = k.declared.empty() ? k.fields : k.declared;
  size_t diff = 0;
  for (const char* n : names) diff += d.FindField(n) < 0;
  if (k.declared.empty()) return diff;
  for (const javaobj::FieldDesc& f : d.fields) {
    diff += std::none_of(names.begin(), names.end(), [&](const char* n) { return f.name == n; });
  }
  return diff;
}

// True if the class of descriptor `d` is named in an entry of `role`.
inline bool IsKnownForRole(const javaobj::ClassDesc& d, absl::string_view role) {
  for (const KnownClassShape& k : KnownClassShapes()) {
    if (k.role == role && d.name == k.class_name) return true;
  }
  return false;
}

// The entry of `role` nearest to descriptor `d` (fewest of its needed fields
// missing, at least one present; ties: the release whose declared fields
// differ least), or null.
template <typename Descs>
const KnownClassShape* NearestShapeOfRole(const Descs& s, javaobj::DescId d,
                                          absl::string_view role) {
  const KnownClassShape* best = nullptr;
  int best_missing = 0;
  size_t best_diff = 0;
  for (const KnownClassShape& k : KnownClassShapes()) {
    if (k.role != role) continue;
    const int m = MissingFields(s, d, k);
    const size_t diff = DeclaredDiff(s.desc(d), k);
    if (m < static_cast<int>(k.fields.size()) &&
        (best == nullptr || m < best_missing || (m == best_missing && diff < best_diff))) {
      best = &k;
      best_missing = m;
      best_diff = diff;
    }
  }
  return best;
}

// The CLASS_SHAPE_DRIFT warning for an object of descriptor `d` at `offset`
// (item path `path`) read by structure as `best`.
template <typename Descs>
CompletedCheckpointInfo::ShapeWarning DriftWarning(const Descs& s, javaobj::DescId d,
                                                   const KnownClassShape& best,
                                                   absl::string_view role,
                                                   absl::string_view path, uint64_t offset) {
  const javaobj::ClassDesc& cd = s.desc(d);
  std::string missing;
  for (const char* f : best.fields) {
    if (!ChainHasField(s, d, f)) absl::StrAppend(&missing, missing.empty() ? "" : ", ", f);
  }
  CompletedCheckpointInfo::ShapeWarning w;
  w.code = "CLASS_SHAPE_DRIFT";
  w.path = std::string(path);
  w.class_name = cd.DisplayName();
  w.nearest_shape = absl::StrCat(best.class_name, " (Flink ", best.releases, ")");
  w.offset = offset;
  w.message = absl::StrCat(
      path, ": class ", w.class_name, " is not a known ", role,
      " class; read by structure as the nearest known shape ", w.nearest_shape,
      missing.empty() ? ", whose fields it has"
                      : absl::StrCat(", without its fields ", missing, " (read as absent)"),
      " at byte ", offset);
  return w;
}

// For a handle class the reader does not know by name: the class of the
// nearest known shape of `role` if the descriptor declares every field some
// entry of the role needs (it is read as that class; `*drifted` set), else
// its own name.
template <typename Descs>
std::string HandleClassName(const Descs& s, javaobj::DescId d, absl::string_view role,
                            const KnownClassShape** drifted) {
  *drifted = nullptr;
  const javaobj::ClassDesc& cd = s.desc(d);
  if (IsKnownForRole(cd, role)) return cd.name;
  for (const KnownClassShape& k : KnownClassShapes()) {
    if (k.role == role && MissingFields(s, d, k) == 0) {
      const KnownClassShape* best = NearestShapeOfRole(s, d, role);
      *drifted = best;
      return best != nullptr ? best->class_name : cd.name;
    }
  }
  return cd.name;
}

// " (nearest known shape X: missing N of its M fields)" for an error.
template <typename Descs>
std::string NearestShapeNote(const Descs& s, javaobj::DescId d) {
  const KnownClassShape* best = nullptr;
  int best_missing = 0;
  for (const KnownClassShape& k : KnownClassShapes()) {
    const int m = MissingFields(s, d, k);
    if (best == nullptr || m < best_missing) {
      best = &k;
      best_missing = m;
    }
  }
  if (best == nullptr || best_missing == static_cast<int>(best->fields.size())) return "";
  return absl::StrCat(" (nearest known shape ", best->class_name, ": ", best_missing, " of its ",
                      best->fields.size(), " fields missing)");
}

// The warnings about every descriptor of a class in the table: a
// serialVersionUID other than the one Flink declares (the JDK's
// ObjectInputStream refuses it: InvalidClassException) and declared fields
// that are those of no release shape of the class. `offset_of(DescId)` gives
// the descriptor item's first byte.
template <typename Descs, typename OffsetOf>
void CheckDescriptorShapes(const Descs& s, const OffsetOf& offset_of,
                           std::vector<CompletedCheckpointInfo::ShapeWarning>* out) {
  for (size_t i = 0; i < s.num_descs(); ++i) {
    const javaobj::DescId d = static_cast<javaobj::DescId>(i);
    const javaobj::ClassDesc& cd = s.desc(d);
    const KnownClassShape* suid_entry = nullptr;
    bool suid_ok = false, fields_ok = false, compared = false;
    const KnownClassShape* nearest = nullptr;
    size_t nearest_diff = 0;
    std::string added, removed, releases;
    for (const KnownClassShape& k : KnownClassShapes()) {
      if (cd.name != k.class_name) continue;
      if (k.suid != 0) {
        absl::StrAppend(&releases, suid_entry == nullptr ? "" : ", ", k.releases);
        suid_entry = &k;
        suid_ok |= cd.suid == k.suid;
      }
      if (k.declared.empty()) continue;
      compared = true;
      std::string add, rem;
      size_t diff = 0;
      for (const javaobj::FieldDesc& f : cd.fields) {
        if (std::find_if(k.declared.begin(), k.declared.end(),
                         [&](const char* n) { return f.name == n; }) == k.declared.end()) {
          absl::StrAppend(&add, add.empty() ? "" : ", ", f.name);
          ++diff;
        }
      }
      for (const char* n : k.declared) {
        if (cd.FindField(n) < 0) {
          absl::StrAppend(&rem, rem.empty() ? "" : ", ", n);
          ++diff;
        }
      }
      if (diff == 0) fields_ok = true;
      if (nearest == nullptr || diff < nearest_diff) {
        nearest = &k;
        nearest_diff = diff;
        added = add;
        removed = rem;
      }
    }
    const uint64_t at = offset_of(d);
    if (suid_entry != nullptr && !suid_ok) {
      CompletedCheckpointInfo::ShapeWarning w;
      w.code = "SERIAL_VERSION_UID_CHANGED";
      w.class_name = cd.name;
      w.nearest_shape = absl::StrCat(suid_entry->class_name, " (Flink ", releases, ")");
      w.offset = at;
      w.message = absl::StrFormat(
          "class %s has serialVersionUID 0x%016x, Flink %s declares 0x%016x: "
          "ObjectInputStream on such a Flink throws java.io.InvalidClassException "
          "(local class incompatible) at byte %d",
          cd.name, static_cast<uint64_t>(cd.suid), releases,
          static_cast<uint64_t>(suid_entry->suid), at);
      out->push_back(std::move(w));
    }
    if (compared && !fields_ok) {
      CompletedCheckpointInfo::ShapeWarning w;
      w.code = "CLASS_FIELDS_DRIFT";
      w.class_name = cd.name;
      w.nearest_shape = absl::StrCat(nearest->class_name, " (Flink ", nearest->releases, ")");
      w.offset = at;
      w.message = absl::StrCat(
          "class ", cd.name, " declares fields no known release shape has; nearest: Flink ",
          nearest->releases, added.empty() ? "" : absl::StrCat(", fields added: ", added),
          removed.empty() ? "" : absl::StrCat(", fields missing: ", removed),
          "; read by field name at byte ", at);
      out->push_back(std::move(w));
    }
  }
}

// Findings of a walk over the graph, kept until the walk ends so that their
// order is the stream's, not the reader's visiting order: an unknown handle
// class at each place it occurs, and one CLASS_SHAPE_DRIFT warning per
// drifted class, at its first occurrence in the stream (an object shared by
// several places is reported at the first of their item paths in
// lexicographic order, whichever a reader visits first).
class WalkFindings {
 public:
  void Unknown(uint64_t offset, std::string text) {
    unknown_.emplace_back(offset, std::move(text));
  }
  void Drift(CompletedCheckpointInfo::ShapeWarning w) { drift_.push_back(std::move(w)); }
  // Appends the findings to `info` in stream order (`shape_warnings` after
  // those already there; no second warning for a class already warned).
  void MoveTo(CompletedCheckpointInfo* info) {
    std::sort(unknown_.begin(), unknown_.end());
    for (auto& u : unknown_) info->unknown_classes.push_back(std::move(u.second));
    std::sort(drift_.begin(), drift_.end(), [](const auto& a, const auto& b) {
      return a.offset != b.offset ? a.offset < b.offset : a.path < b.path;
    });
    std::vector<std::string> warned;
    for (const auto& w : info->shape_warnings) {
      if (w.code == "CLASS_SHAPE_DRIFT") warned.push_back(w.class_name);
    }
    for (auto& w : drift_) {
      if (std::find(warned.begin(), warned.end(), w.class_name) != warned.end()) continue;
      warned.push_back(w.class_name);
      info->shape_warnings.push_back(std::move(w));
    }
    unknown_.clear();
    drift_.clear();
  }

 private:
  std::vector<std::pair<uint64_t, std::string>> unknown_;
  std::vector<CompletedCheckpointInfo::ShapeWarning> drift_;
};

// The Flink releases whose class shapes the descriptors match.
template <typename Descs>
std::string ReleaseHint(const Descs& s) {
  auto desc_has_field = [&](absl::string_view cls, absl::string_view field) {
    for (size_t d = 0; d < s.num_descs(); ++d) {
      const javaobj::ClassDesc& cd = s.desc(static_cast<javaobj::DescId>(d));
      if (cd.name == cls && cd.FindField(field) >= 0) return true;
    }
    return false;
  };
  auto saw_desc = [&](absl::string_view cls) {
    for (size_t d = 0; d < s.num_descs(); ++d) {
      if (s.desc(static_cast<javaobj::DescId>(d)).name == cls) return true;
    }
    return false;
  };
  const std::string cc = kCompletedCheckpointClass;
  if (desc_has_field(cc, "duration")) return "1.13";
  if (!desc_has_field(cc, "restoredProps")) return "1.14-1.15";
  if (desc_has_field("org.apache.flink.runtime.checkpoint.OperatorState", "operatorName")) {
    return "2.x";
  }
  if (saw_desc("org.apache.flink.runtime.state.filemerging.SegmentFileStateHandle") ||
      saw_desc("org.apache.flink.runtime.state.filemerging."
               "FileMergingOperatorStreamStateHandle") ||
      desc_has_field("org.apache.flink.runtime.state.PlaceholderStreamStateHandle",
                     "fileMerged")) {
    return "1.20";
  }
  if (saw_desc("org.apache.flink.runtime.state.AbstractIncrementalStateHandle")) {
    return "1.19-1.20";
  }
  if (saw_desc("org.apache.flink.runtime.state."
               "IncrementalKeyedStateHandle$HandleAndLocalPath")) {
    return "1.18";
  }
  if (saw_desc("org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle")) {
    return "1.16-1.17";
  }
  return "1.16-1.20";
}

}  // namespace flinkstate::internal

#endif  // FLINKSTATE_FLINKSTATE_INTERNAL_COMPLETED_CHECKPOINT_SHAPES_H_
