// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: layouts.h
// -----------------------------------------------------------------------------
// Known layouts of the custom `writeObject` data of the JDK collection classes
// that occur in Flink graphs, so that their elements are addressable items
// (with the byte range of each entry) and the counts that must change with
// them are located.
//
//   ```c++ (const javaobj::Stream& s, javaobj::ItemId map_item)
//   FLINKSTATE_ASSIGN_OR_RETURN(ContainerView m, ViewContainer(s, map_item));
//   for (const ContainerEntry& e : m.entries) {
//     if (s.StringEquals(e.key, "my-state")) return absl::OkStatus();  // found
//   }
//   ```
//
// Layouts (spec §13; `writeObject` of each class, JDK 8-25):
//   java.util.HashMap / LinkedHashMap   block: i4 capacity, i4 size; size x (key, value)
//   java.util.HashSet / LinkedHashSet   block: i4 capacity, f4 loadFactor, i4 size; size x element
//   java.util.ArrayList                 field I size; block: i4 size; size x element
//   java.util.LinkedList / ArrayDeque   block: i4 size; size x element
//   java.util.TreeMap                   field comparator; block: i4 size; size x (key, value)
//   java.util.TreeSet                   comparator object; block: i4 size; size x element
//   java.util.CollSer (List.of/Set.of/Map.of)  field I tag; block: i4 n; n objects
//                                       (tag 3 = map: n = 2 x entries)
//   java.util.Arrays$ArrayList          field a: the array's elements
//   Collections$Singleton{List,Set,Map}, Collections$Empty{List,Set,Map}
//   object arrays (`[L...;`, `[[...`)   the elements; count = array length
// Wrappers (`Collections$Unmodifiable*`, `Collections$Synchronized*`,
// `Collections$Checked*`) are unwrapped by `UnwrapCollection`.
//
// Unknown custom data is left as the parsed annotation items of the model
// (`Stream::class_data`), never dropped.
//
// Lifetime: views hold item ids of the `Stream` they were made from.
//
// Thread safety: views are computed from a `Stream` without changing it; any
// number of threads may view containers of the same stream concurrently.

#ifndef FLINKSTATE_JAVAOBJ_LAYOUTS_H_
#define FLINKSTATE_JAVAOBJ_LAYOUTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "flinkstate/javaobj/object_model.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate::javaobj {

enum class ContainerKind : uint8_t { kList, kSet, kMap };

struct ContainerEntry {
  ItemId key = kNoItem;    // maps only
  ItemId value = kNoItem;  // the element for lists and sets
  // From the first byte of the key (or element) to the last of the value.
  serde::SourceRange range;
};

// A 32-bit big-endian count that must equal `size * scale`. `pieces` are the
// input ranges holding its 4 bytes (more than one when a block boundary
// splits the int, as `ObjectOutputStream` may).
struct CountLocation {
  std::vector<serde::SourceRange> pieces;
  int32_t scale = 1;
  int32_t value = 0;
};

struct ContainerView {
  ItemId object = kNoItem;  // the container (an object or array definition)
  std::string class_name;
  ContainerKind kind = ContainerKind::kList;
  int64_t size = 0;
  std::vector<ContainerEntry> entries;
  std::vector<CountLocation> counts;
  // Input offset where an appended entry goes (before the TC_ENDBLOCKDATA of
  // the data, or after the last array element).
  uint64_t append_offset = 0;
  // False for singletons and empties: entries cannot be added or removed in
  // place (replace the whole container instead).
  bool resizable = true;
};

// True if `class_name` has a layout `ViewContainer` understands.
bool IsKnownContainerClass(absl::string_view class_name);

// Interprets the container `id` (through references).
// Return values: `NotFound` if the class has no known layout;
// `InvalidArgument` (naming class and byte) if the data does not match it
// (wrong count, missing objects, block data in the wrong place).
[[nodiscard]] absl::StatusOr<ContainerView> ViewContainer(const Stream& stream,
                                                          ItemId id);

// Follows `Collections$Unmodifiable*` / `Synchronized*` / `Checked*`
// wrappers (fields `m`, `c`, `list`, `s`) to the wrapped collection; returns
// the resolved `id` itself for anything else.
ItemId UnwrapCollection(const Stream& stream, ItemId id);

// A container whose data does not match its layout, with what
// `ObjectInputStream` does with it.
struct LayoutFinding {
  ItemId object = kNoItem;
  std::string class_name;
  uint64_t offset = 0;  // the container's TC_OBJECT / TC_ARRAY byte
  std::string problem;  // the `ViewContainer` error
  // What the JDK's `readObject` of the class does: throws (and which
  // exception) or silently reads a different collection.
  std::string jdk;
};

// Checks every object of a known container class (see
// `IsKnownContainerClass`; object arrays are checked by the decoder) in the
// whole stream: the counts in fields and block data against the elements
// that follow. `verify` reports these.
std::vector<LayoutFinding> CheckLayouts(const Stream& stream);

// Reads the logical byte stream of the block data in an annotation (all
// consecutive TC_BLOCKDATA items between two objects form one stream, spec
// §10.1), remembering where each byte came from.
class AnnotationCursor {
 public:
  AnnotationCursor(const Stream& stream, absl::Span<const ItemId> items)
      : s_(stream), items_(items) {}
  // Reads a big-endian i4 from block data. `where` receives its pieces.
  [[nodiscard]] absl::Status ReadInt32(int32_t* out,
                                       std::vector<serde::SourceRange>* where);
  // Skips `n` bytes of block data.
  [[nodiscard]] absl::Status SkipBytes(uint64_t n);
  // Takes the next object item; the pending block bytes must be used up.
  [[nodiscard]] absl::Status ReadObject(ItemId* out);
  // True if every item was consumed (zero-length blocks are ignored).
  bool AtEnd();
  size_t index() const { return index_; }

 private:
  absl::Status NextByte(uint8_t* b, uint64_t* offset);
  const Stream& s_;
  absl::Span<const ItemId> items_;
  size_t index_ = 0;     // current item
  uint64_t in_block_ = 0;  // bytes consumed of the current block
};

}  // namespace flinkstate::javaobj

#endif  // FLINKSTATE_JAVAOBJ_LAYOUTS_H_
