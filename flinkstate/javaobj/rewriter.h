// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: rewriter.h
// -----------------------------------------------------------------------------
// A zero-copy rewriter: collects edits against a decoded `Stream` and turns
// them into a `serde::EditPlan` over the original input. Unchanged regions
// become copy pieces (a 400 MB `long[]` elsewhere in the stream is one copy
// piece); only changed items, patched counts and renumbered references are
// new bytes.
//
//   ```c++ (const javaobj::Stream& stream, const serde::MappedFile& file, const std::string& out)
//   StreamRewriter rw(stream);
//   FLINKSTATE_ASSIGN_OR_RETURN(auto hits, FindMapEntriesByStringKey(
//       stream, "org.apache.flink.runtime.state.OperatorStreamStateHandle",
//       "stateNameToPartitionOffsets", "my-state"));
//   FLINKSTATE_RETURN_IF_ERROR(rw.RemoveMapEntries(hits));
//   FLINKSTATE_ASSIGN_OR_RETURN(serde::EditPlan plan, rw.BuildPlan());
//   FLINKSTATE_RETURN_IF_ERROR(serde::WritePlanAtomically(
//       plan, file, out, [](serde::ByteView o) { return VerifyRoundTrip(o); }));
//   ```
//
// What the plan fixes (docs/formats/java-serialization.md §12):
//   * counts inside custom data and fields (HashMap size in its block data,
//     ArrayList `size` field and block int, array lengths, CollSer counts);
//   * every later TC_REFERENCE whose handle number shifts because handles
//     were removed or inserted before its target (per TC_RESET epoch);
//   * definitions (class descriptors, field-type strings, strings, enum
//     constants, shared objects) that a removed part introduced and later
//     parts still refer to: the first later reference is replaced by a full
//     copy of the definition (recursively), and every reference after that
//     points to the new position;
//   * a reference in inserted content to an item defined later in the stream:
//     the definition is written at the insertion point and the later original
//     definition becomes a TC_REFERENCE.
// Block framing is kept: counts are patched in place (same width), so no
// block changes length.
//
// Values edited in place (`EditArrayElements`, `SetPrimitiveField`) keep
// their item and handle: only the edited bytes (and an array's length) are new
// in the plan, the rest of the array stays a copy piece, and no reference
// needs renumbering. They are edits of the one object, so every site that
// refers to it sees them.
//
// Sharing semantics: `ReplaceValue` on a defining item replaces the value for
// every site that references it (spec §12 rule 4); on a TC_REFERENCE item it
// changes only that site.
//
// Lifetime: the rewriter holds a reference to `stream`, which must outlive it.
//
// Thread safety: a `StreamRewriter` is not thread-safe; use each from one
// thread. It only reads its `Stream`, so several rewriters (one per thread) may
// share one stream. The free functions only read the stream.

#ifndef FLINKSTATE_JAVAOBJ_REWRITER_H_
#define FLINKSTATE_JAVAOBJ_REWRITER_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "flinkstate/javaobj/layouts.h"
#include "flinkstate/javaobj/object_model.h"
#include "flinkstate/serde/edit_plan.h"

namespace flinkstate::javaobj {

// A value to write into the stream.
class NewValue {
 public:
  // TC_NULL.
  static NewValue Null() { return NewValue(Kind::kNull, "", kNoItem); }
  // A new TC_STRING / TC_LONGSTRING (UTF-8 text; chosen by encoded length).
  static NewValue String(std::string utf8) {
    return NewValue(Kind::kString, std::move(utf8), kNoItem);
  }
  // The existing value `item` (shared: a TC_REFERENCE where possible, the
  // full definition where it is not yet in the output).
  static NewValue Existing(ItemId item) {
    return NewValue(Kind::kExisting, "", item);
  }

  enum class Kind : uint8_t { kNull, kString, kExisting };
  Kind kind() const { return kind_; }
  const std::string& text() const { return text_; }
  ItemId item() const { return item_; }

 private:
  NewValue(Kind k, std::string t, ItemId i)
      : kind_(k), text_(std::move(t)), item_(i) {}
  Kind kind_;
  std::string text_;
  ItemId item_;
};

// An entry of a map-valued field found by `FindMapEntriesByStringKey`.
struct MapEntryRef {
  ItemId owner = kNoItem;  // the object whose field holds the map
  ItemId map = kNoItem;    // the map object (definition)
  size_t index = 0;        // entry index in `ViewContainer(map).entries`
  ContainerEntry entry;
};

// Finds, under every object of class `owner_class` (exact descriptor name),
// the map held by object field `field` (through Collections$Unmodifiable*
// wrappers) and returns its entries whose key is the string `key`. A map
// shared by several owners is reported once.
// Return values: `InvalidArgument` if such a field holds something that is
// not a known map layout (the layout error is included).
[[nodiscard]] absl::StatusOr<std::vector<MapEntryRef>> FindMapEntriesByStringKey(
    const Stream& stream, absl::string_view owner_class,
    absl::string_view field, absl::string_view key);

struct RewriteStats {
  uint64_t removed_items = 0;        // edits that removed an item
  uint64_t rematerialized = 0;       // definitions re-emitted at a later use
  uint64_t renumbered_references = 0;
  uint64_t demoted_definitions = 0;  // definitions turned into references
  uint64_t patched_counts = 0;
  uint64_t edited_in_place = 0;      // arrays and primitive fields edited in place
};

class StreamRewriter {
 public:
  explicit StreamRewriter(const Stream& stream);

  // Removes entry `index` of `container` (a map entry: key and value; a list,
  // set or array element) and adjusts its counts.
  // Return values: `FailedPrecondition` for a container that cannot shrink
  // in place (singletons, empties), an index out of range or an entry already
  // edited.
  [[nodiscard]] absl::Status RemoveEntry(const ContainerView& container,
                                         size_t index);
  // `RemoveEntry` for each hit (grouped per map; duplicates ignored).
  [[nodiscard]] absl::Status RemoveMapEntries(
      const std::vector<MapEntryRef>& hits);
  // Removes a top-level item or an item of unknown custom data (annotation).
  // Field values cannot be removed (replace them with `NewValue::Null()`).
  // Return values: `FailedPrecondition` for a field value, element or
  // descriptor part, an item already edited, or the last remaining top-level
  // item of a stream with trailing bytes (`Stream::trailing`): those bytes
  // would stand where the first content item must be.
  [[nodiscard]] absl::Status RemoveItem(ItemId id);
  // Replaces item `id` (any value position) with `value`.
  [[nodiscard]] absl::Status ReplaceValue(ItemId id, NewValue value);
  // Appends an entry to `container` (maps need `key`; lists/sets ignore it).
  [[nodiscard]] absl::Status AppendEntry(const ContainerView& container,
                                         NewValue key, NewValue value);
  // Edits the elements of the primitive array `array` (a TC_ARRAY item that
  // defines an array of B C D F I J S or Z) in place: `edits` replace ranges
  // of its element bytes (offsets relative to the first element byte; sorted,
  // not overlapping, within the elements; an empty range inserts) and the
  // array's `length` becomes the new element count. A `byte[]` of 300 MB with
  // a few edits stays a few copy pieces. Every site that refers to the array
  // sees the edit (it is one object).
  // Return values: `FailedPrecondition` for an item that is not a defining
  // primitive array, an array removed, replaced or edited already, edits out
  // of order or bounds, an edited size that is not a whole number of elements
  // or over 2^31 - 1 elements.
  [[nodiscard]] absl::Status EditArrayElements(ItemId array,
                                               std::vector<serde::Replacement> edits);
  // Sets primitive field `field` of the object `object` (a TC_OBJECT item
  // that defines it; the field found from the most derived class up, as
  // `Stream::FieldValue` does) to `value`, written big-endian in the field's
  // width (B, C, S, I, J; Z as 0 or 1). Every site that refers to the object
  // sees it.
  // Return values: `FailedPrecondition` for an item that is not a defining
  // object, an object removed or replaced, no such primitive field, a `float`
  // or `double` field, a value that does not fit the field's width, or a
  // field already set.
  [[nodiscard]] absl::Status SetPrimitiveField(ItemId object, absl::string_view field,
                                               int64_t value);

  // Produces the plan. Can be called once.
  // Return values: `FailedPrecondition` for conflicting edits; `Internal`
  // for a broken invariant.
  [[nodiscard]] absl::StatusOr<serde::EditPlan> BuildPlan();

  const RewriteStats& stats() const { return stats_; }

 private:
  enum EditKind : uint8_t { kNone = 0, kDeleted = 1, kReplaced = 2 };

  absl::Status Walk(ItemId id, std::string* buf, bool force);
  absl::Status WalkChildren(ItemId id, std::string* buf);
  absl::Status Gap(uint64_t from, uint64_t to, std::string* buf);
  absl::Status EmitValue(const NewValue& v, std::string* out,
                         int32_t* defined_handle);
  void Emit(serde::SourceRange range, std::string bytes, std::string* buf);
  absl::Status MarkEdited(ItemId id, EditKind kind);
  // Replaces input bytes `[offset, offset + size)` that lie inside one item's
  // own bytes (no child item) with `bytes`; refuses an overlap with another
  // patch.
  absl::Status AddPatch(uint64_t offset, uint64_t size, std::string bytes);

  const Stream& s_;
  std::vector<ItemId> parent_;
  std::vector<uint8_t> edit_;
  std::map<ItemId, NewValue> replacement_;
  std::map<uint64_t, std::vector<NewValue>> inserts_;
  // Input bytes replaced wherever they are copied: `size` bytes at the key.
  struct Patch {
    uint64_t size = 0;
    std::string bytes;
  };
  std::map<uint64_t, Patch> patches_;
  // Items whose bytes `EditArrayElements` / `SetPrimitiveField` patched
  // (they may not also be removed or replaced).
  std::set<ItemId> edited_in_place_;
  struct CountChange {
    std::vector<CountLocation> counts;
    int64_t size = 0;
    int64_t delta = 0;
  };
  std::map<ItemId, CountChange> count_changes_;
  // New handle of each defining item in the output, -1 if not (yet) there.
  std::vector<int32_t> new_handle_;
  // Items replaced by null: references to them become TC_NULL.
  std::vector<uint8_t> now_null_;
  int32_t next_handle_ = 0;
  std::vector<serde::Replacement> replacements_;
  RewriteStats stats_;
  // Top-level items removed by `RemoveItem`.
  size_t removed_top_level_ = 0;
  bool built_ = false;
};

}  // namespace flinkstate::javaobj

#endif  // FLINKSTATE_JAVAOBJ_REWRITER_H_
