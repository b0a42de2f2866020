// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: object_model.h
// -----------------------------------------------------------------------------
// The decoded form of a Java Object Serialization stream: a flat, stream-ordered
// arena of items (one per grammar occurrence: every TC_* construct including
// TC_NULL and TC_REFERENCE), the class descriptors, and the handle table.
//
//   ```c++ (serde::ByteView bytes)
//   FLINKSTATE_ASSIGN_OR_RETURN(javaobj::Stream s, javaobj::DecodeStream(bytes));
//   if (s.top_level().empty()) return absl::InvalidArgumentError("empty stream");
//   javaobj::ItemId root = s.top_level()[0];
//   javaobj::ItemId ops = s.FieldValue(root, "operatorStates");
//   if (ops == javaobj::kNoItem) return absl::NotFoundError("no operatorStates");
//   const javaobj::Item& map = s.item(s.Resolve(ops));
//   ```
//
// Shape of the model:
//   * Items are numbered in stream (pre-)order; the descendants of item `i`
//     are exactly the ids `(i, subtree_end(i))`. Every item records its
//     input `serde::SourceRange` (tag byte to last byte) and, if it defines a
//     handle, its handle index (`0x7E0000 + index` on the wire) and epoch (the
//     number of TC_RESET / TC_EXCEPTION table clears before it).
//   * `children(i)` lists the items nested directly in `i`, in stream order:
//       TC_CLASSDESC   field type strings (`className1`), annotation items,
//                      the super-class descriptor
//       TC_PROXYCLASSDESC  annotation items, the super-class descriptor
//       TC_OBJECT      its class descriptor, then per class of the chain
//                      (super-most first) the object field values and the
//                      annotation items (see `ClassData`)
//       TC_ARRAY       its class descriptor, then the elements (object arrays)
//       TC_ENUM        its class descriptor, the constant-name string
//       TC_CLASS       its class descriptor
//       TC_EXCEPTION   the Throwable
//     The handle of a construct is assigned just before `children[assign_at]`
//     (ObjectOutputStream order, see docs/formats/java-serialization.md §7);
//     bytes between children are framing that belongs to the item itself.
//   * Payloads are never copied: strings, primitive arrays and block data are
//     `payload` ranges of the input. A `long[]` of 50 million entries is one
//     item of ~100 bytes.
//   * Storage is compact (see `Stream`): about 2 bytes per item plus 4 per
//     child entry, 4 per handle, 4 per string and a 32-byte node per compound
//     item; `item(id)` builds the `Item` value on the fly (a few loads and
//     the item's header bytes in the input), `kind(id)` and `range(id)` read
//     one field. Inputs over 4 GiB are supported (64-bit group bases); item
//     ids, handles and children counts are 32-bit (`DecodeLimits::max_items`).
//
// Thread safety: a decoded `Stream` is immutable; concurrent const calls
// are safe (as long as the input bytes stay mapped). Moving or destroying it
// while others read is a data race.
//
// Lifetime: a `Stream` borrows the input bytes it was decoded from; every view
// it returns (payloads, `input()`) is valid while that buffer (usually a
// `serde::MappedFile`) is alive and unmodified.

#ifndef FLINKSTATE_JAVAOBJ_OBJECT_MODEL_H_
#define FLINKSTATE_JAVAOBJ_OBJECT_MODEL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate::javaobj {

using ItemId = uint32_t;
inline constexpr ItemId kNoItem = std::numeric_limits<uint32_t>::max();
using DescId = uint32_t;
inline constexpr DescId kNoDesc = std::numeric_limits<uint32_t>::max();

enum class ItemKind : uint8_t {
  kNull,            // TC_NULL
  kReference,       // TC_REFERENCE; `target` is the defining item
  kClassDesc,       // TC_CLASSDESC; `desc` is its ClassDesc
  kProxyClassDesc,  // TC_PROXYCLASSDESC; `desc` is its ClassDesc
  kObject,          // TC_OBJECT; `desc` is its (resolved) class descriptor
  kString,          // TC_STRING or TC_LONGSTRING (see `tag`)
  kArray,           // TC_ARRAY
  kEnum,            // TC_ENUM
  kClass,           // TC_CLASS
  kBlockData,       // TC_BLOCKDATA or TC_BLOCKDATALONG (see `tag`)
  kReset,           // TC_RESET
  kException,       // TC_EXCEPTION
};

const char* ItemKindName(ItemKind kind);

// One item as a value, built on the fly from the compact storage of `Stream`
// (see `Stream::item`); the fields are the same as in the fat record of
// earlier versions, so `const Item& it = s.item(id);` and `s.item(id).range`
// keep compiling (the reference binds to the returned temporary).
struct Item {
  // Whole item: from its type code to its last byte.
  serde::SourceRange range;
  // kString: the modified UTF-8 body. kBlockData: the block bytes.
  // kArray of primitives: the packed big-endian elements. Else empty.
  serde::SourceRange payload;
  // kArray: element count. kString / kBlockData: payload bytes.
  uint64_t count = 0;
  // Always 0: children live in per-item runs, use `Stream::children`.
  uint32_t first_child = 0;
  uint32_t num_children = 0;
  // First id after this item's subtree.
  ItemId subtree_end = 0;
  // kReference: the defining item (never itself a reference).
  ItemId target = kNoItem;
  // kClassDesc / kProxyClassDesc: the descriptor defined here. kObject,
  // kArray, kEnum, kClass: the descriptor of the value (through references).
  DescId desc = kNoDesc;
  // Always 0: use `Stream::class_data`; `num_class_data` is its size.
  uint32_t first_class_data = 0;
  uint32_t num_class_data = 0;
  // Handle index within `epoch` defined by this item, or -1.
  int32_t handle = -1;
  uint32_t epoch = 0;
  // The handle is assigned just before child number `assign_at`.
  uint32_t assign_at = 0;
  ItemKind kind = ItemKind::kNull;
  // The type code byte (distinguishes TC_STRING/TC_LONGSTRING and
  // TC_BLOCKDATA/TC_BLOCKDATALONG).
  uint8_t tag = 0;
  // kArray: component type code: B C D F I J S Z, or 'L' / '[' for objects.
  char element_type = 0;
  // True when a TC_EXCEPTION nested in this item ended the stream early
  // (`ObjectOutputStream.writeFatalException`); its data is incomplete.
  bool aborted = false;
};

// The kind of the item whose type code is `tag` (kNull for a byte that is
// not an item's type code).
ItemKind ItemKindOfTag(uint8_t tag);

// One field of a class descriptor (`ObjectStreamField`).
struct FieldDesc {
  char type_code = 0;          // B C D F I J S Z, 'L' or '['
  std::string name;            // UTF-8
  serde::SourceRange name_range;  // u2 length + modified UTF-8
  ItemId type_item = kNoItem;  // object fields: the className1 item
  std::string type_name;       // object fields: JVM descriptor, "Ljava/lang/String;"
  uint32_t prim_offset = 0;    // primitive fields: offset in the primitive values
  bool is_primitive() const { return type_code != 'L' && type_code != '['; }
};

// A class descriptor (`ObjectStreamClass`) as written in the stream.
struct ClassDesc {
  ItemId item = kNoItem;       // the defining TC_CLASSDESC / TC_PROXYCLASSDESC
  bool is_proxy = false;
  std::string name;            // "java.util.HashMap"; "" for proxies
  serde::SourceRange name_range;
  int64_t suid = 0;
  uint8_t flags = 0;           // SC_*; proxies: SC_SERIALIZABLE
  std::vector<FieldDesc> fields;  // wire order: primitives, then objects
  std::vector<std::string> interfaces;  // proxies, UTF-8
  // Proxies: each interface name as written (u2 length + modified UTF-8), so
  // that the encoder reproduces forms the JDK reads but never writes (a raw
  // 0x00 byte, which `readUTF` accepts as U+0000).
  std::vector<serde::SourceRange> interface_ranges;
  uint32_t num_object_fields = 0;
  uint32_t prim_bytes = 0;     // total size of the primitive values
  DescId super = kNoDesc;
  // Super-most first, ending with this descriptor: the class data order.
  std::vector<DescId> chain;
  bool complete = false;       // false while the descriptor is being read
  // String, Class and ObjectStreamClass may not appear as TC_OBJECT.
  bool forbidden_as_object = false;

  bool has_write_method() const { return flags & 0x01; }
  bool is_externalizable() const { return flags & 0x04; }
  bool is_enum() const { return flags & 0x10; }
  // "proxy(I1,I2)" for proxies, else `name`.
  std::string DisplayName() const;
  // Index of the field called `name`, or -1.
  int FindField(absl::string_view field_name) const;
};

// The data one class of an object's chain contributed (`classdata`).
struct ClassData {
  DescId desc = kNoDesc;
  // The packed primitive field values (`prim_bytes` long).
  serde::SourceRange prim_values;
  // Object field values: `children(obj)[first_field, first_field + num_fields)`.
  uint32_t first_field = 0;
  uint32_t num_fields = 0;
  // Annotation items (block data and objects written by writeObject /
  // writeExternal): `children(obj)[first_annotation, + num_annotation)`.
  uint32_t first_annotation = 0;
  uint32_t num_annotation = 0;
  // True if this class data ends with TC_ENDBLOCKDATA (SC_WRITE_METHOD or
  // SC_EXTERNALIZABLE|SC_BLOCK_DATA); `end_offset` is that byte.
  bool has_annotation = false;
  uint64_t end_offset = 0;
};

// An append-only vector stored in chunks: growing never moves or copies
// elements (a decoded stream may hold tens of millions of items).
//
// The first chunks grow geometrically (64, 64, 128, ... 2048 elements) up to
// `kChunk` elements, then every chunk holds `kChunk`: memory stays
// proportional to the element count, so a 12-byte stream does not cost a
// large chunk (found by the fuzzers' allocation cap). Capacity beyond the
// size is below `kChunk` elements at any size.
template <typename T>
class ChunkedVector {
 public:
  static constexpr size_t kFirstBits = 6;
  static constexpr size_t kFirst = size_t{1} << kFirstBits;
  static constexpr size_t kChunkBits = 12;
  static constexpr size_t kChunk = size_t{1} << kChunkBits;
  // Chunks covering [0, kChunk): [0, 64), [64, 128), [128, 256), ...
  static constexpr size_t kSmallChunks = kChunkBits - kFirstBits + 1;

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = const T&;
    const_iterator(const ChunkedVector* v, size_t i) : v_(v), i_(i) {}
    const T& operator*() const { return (*v_)[i_]; }
    const_iterator& operator++() { ++i_; return *this; }
    const_iterator operator++(int) { const_iterator c = *this; ++i_; return c; }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }
    bool operator!=(const const_iterator& o) const { return i_ != o.i_; }

   private:
    const ChunkedVector* v_;
    size_t i_;
  };

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return *Locate(i); }
  const T& operator[](size_t i) const { return *Locate(i); }
  // Like `std::vector::at`: `std::out_of_range` past the end.
  const T& at(size_t i) const {
    if (i >= size_) throw std::out_of_range("ChunkedVector::at");
    return *Locate(i);
  }
  const T& front() const { return *Locate(0); }
  const T& back() const { return *Locate(size_ - 1); }
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size_); }
  T& emplace_back() {
    const size_t n = size_;
    if (n == 0 || (n >= kFirst && n <= kChunk && (n & (n - 1)) == 0) ||
        (n > kChunk && (n & (kChunk - 1)) == 0)) {
      const size_t len = n < kFirst ? kFirst : (n < kChunk ? n : kChunk);
      chunks_.emplace_back(new T[len]());
    }
    return (*this)[size_++];
  }
  void push_back(const T& v) { emplace_back() = v; }

 private:
  T* Locate(size_t i) const {
    if (i < kFirst) return &chunks_[0][i];
    if (i < kChunk) {
      const int b = 63 - __builtin_clzll(static_cast<unsigned long long>(i));
      return &chunks_[b - kFirstBits + 1][i - (size_t{1} << b)];
    }
    return &chunks_[kSmallChunks + (i >> kChunkBits) - 1][i & (kChunk - 1)];
  }

  std::vector<std::unique_ptr<T[]>> chunks_;
  size_t size_ = 0;
};

// An append-only store of runs of `T` (each item's children, each object's
// class data): every run is contiguous, never moves, and is handed out as a
// pointer. Runs share chunks of up to `kChunk` elements (a run that does not
// fit in the rest of a chunk starts the next one; runs over `kChunk / 8` get
// an allocation of their own), so spare capacity stays under 1/8 of the
// stored elements plus one chunk.
template <typename T>
class RunArena {
 public:
  static constexpr size_t kFirst = 64;
  static constexpr size_t kChunk = 4096;
  const T* Append(const T* src, size_t n) {
    if (n == 0) return nullptr;
    T* dst = Reserve(n);
    std::copy(src, src + n, dst);
    return dst;
  }
  // A run of `n` (> 0) elements to be filled by the caller.
  T* Reserve(size_t n) {
    T* dst;
    if (n > kChunk / 8) {
      blocks_.emplace_back(new T[n]);
      dst = blocks_.back().get();
    } else {
      if (n > room_) {
        next_ = next_ == 0 ? kFirst : (next_ < kChunk ? next_ * 2 : kChunk);
        const size_t len = next_ < n ? n : next_;
        blocks_.emplace_back(new T[len]);
        cur_ = blocks_.back().get();
        room_ = len;
      }
      dst = cur_;
      cur_ += n;
      room_ -= n;
    }
    return dst;
  }

 private:
  std::vector<std::unique_ptr<T[]>> blocks_;
  T* cur_ = nullptr;
  size_t room_ = 0;
  size_t next_ = 0;
};

// The class data of one object, `Stream::class_data` (one entry per class of
// its chain; most chains are short, so no heap allocation).
using ClassDataList = absl::InlinedVector<ClassData, 2>;

// Ids in stream order, as `Stream::top_level` returns them: indexable,
// iterable, `size()`, `empty()`, `front()`, `at()` like `std::vector`.
using ItemIdList = ChunkedVector<ItemId>;

// Memory layout (the "compact model"; a few bytes per item instead of an
// 88-byte record):
//   * per item, 1 byte: the item's offset relative to its group of 16 items
//     (`OffsetGroup`, 24 bytes per 16 items: a 64-bit base, so inputs over
//     4 GiB are fine); groups spanning more than 255 bytes keep 16 full
//     64-bit offsets in a side table instead (they cover >= 256 input bytes);
//   * the kind and type code are not stored: they are the input byte at the
//     item's offset (the model borrows the input anyway);
//   * leaves need nothing else: sizes, payloads and counts of strings and
//     block data are read from their headers, a TC_REFERENCE's target from
//     its handle value and the handle table of its epoch;
//   * strings keep their handle (4 bytes) and compound items (descriptors,
//     objects, arrays, enums, classes, exceptions) a 32-byte `Node`, found
//     through a 16-bit mask and rank in the item's group;
//   * children are contiguous runs in a `RunArena`; class data is not stored
//     but derived from the children's ranges (`class_data`); the handle
//     table, epochs and top-level ids are chunked 32-bit arrays.
class Stream {
 public:
  Stream() = default;
  Stream(Stream&&) = default;
  Stream& operator=(Stream&&) = default;

  // Lifetime: valid while the decoded buffer is alive.
  serde::ByteView input() const { return input_; }
  // Top-level content items in order (objects, block data, resets).
  const ItemIdList& top_level() const { return top_level_; }
  size_t num_items() const { return num_items_; }
  // The item `id` (< num_items()), built from the compact storage; the
  // accessors below read single fields without building it.
  Item item(ItemId id) const;
  ItemKind kind(ItemId id) const { return ItemKindOfTag(Tag(id)); }
  serde::SourceRange range(ItemId id) const {
    return {Offset(id), Size(id)};
  }
  ItemId subtree_end(ItemId id) const {
    const Node* n = NodeOf(id);
    return n ? n->subtree_end : id + 1;
  }
  // The descriptor of a descriptor / object / array / enum / class item,
  // else kNoDesc.
  DescId desc_of(ItemId id) const {
    const Node* n = NodeOf(id);
    return n ? n->desc : kNoDesc;
  }
  absl::Span<const ItemId> children(ItemId id) const {
    const Node* n = NodeOf(id);
    return n ? absl::Span<const ItemId>(n->kids, n->num_children)
             : absl::Span<const ItemId>();
  }
  // The class data of object `object` (empty for other items), derived on
  // each call from the children's ranges and the descriptors (it is not
  // stored; objects ended by TC_EXCEPTION keep theirs in a side table).
  // Returned by value: bind it to a variable, not a reference into it, if it
  // must outlive the full expression (`const ClassData cd = ...[0];`).
  ClassDataList class_data(ItemId object) const;
  size_t num_descs() const { return descs_.size(); }
  const ClassDesc& desc(DescId id) const { return descs_[id]; }
  // True if a TC_EXCEPTION aborted a top-level item (the writer failed while
  // writing it; `ObjectInputStream.readObject` throws WriteAbortedException
  // for that item). Later top-level items, if any, are complete.
  bool aborted() const { return aborted_; }
  // The bytes after the last content item that cannot start one (a type code
  // outside TC_NULL..TC_ENUM); size 0 if the stream ends after an item. The
  // JDK never reads them. See `DecodeOptions::allow_trailing_data`.
  serde::SourceRange trailing() const { return trailing_; }
  // Number of handle table clears (TC_RESET, and two per TC_EXCEPTION).
  uint32_t num_epochs() const {
    return static_cast<uint32_t>(epoch_begin_.size());
  }
  // Handles assigned in `epoch` and the item that defined handle `h` there.
  uint32_t num_handles(uint32_t epoch) const;
  ItemId handle_item(uint32_t epoch, uint32_t h) const {
    return handle_items_[epoch_begin_[epoch] + h];
  }

  // The item whose bytes start at byte `offset` of the input (the first, in
  // stream order, if an item and its first child start at the same byte),
  // or kNoItem. Binary search: items are numbered in stream order, at
  // non-decreasing offsets.
  ItemId ItemAt(uint64_t offset) const;

  // Follows a TC_REFERENCE to its defining item; other ids unchanged.
  ItemId Resolve(ItemId id) const {
    return Tag(id) == kTagReference ? Target(id) : id;
  }
  // Class name of the value `id` (through references): the descriptor name
  // for objects, arrays, enums; "java.lang.String" for strings; "" else.
  std::string ClassNameOf(ItemId id) const;
  // True if the value `id` (through references) is an object whose class is
  // `class_name` (exact descriptor name, not its super classes).
  bool IsInstanceOf(ItemId id, absl::string_view class_name) const;

  // The string value of `id` (through references) as UTF-8.
  // Return values: `InvalidArgument` if `id` is not a string (or its body is
  // malformed modified UTF-8).
  absl::StatusOr<std::string> StringValue(ItemId id) const;
  // True if `id` (through references) is a string whose decoded value equals
  // `utf8` (compares raw bytes when the text is plain ASCII).
  bool StringEquals(ItemId id, absl::string_view utf8) const;

  // The value item of object field `field` of object `object` (through
  // references), searching the chain from the most derived class; `kNoItem`
  // if there is no such object field.
  ItemId FieldValue(ItemId object, absl::string_view field) const;
  // The bytes of primitive field `field` (1-8 bytes, big-endian); empty if
  // there is no such primitive field.
  serde::ByteView PrimFieldBytes(ItemId object, absl::string_view field) const;
  // Input range of primitive field `field`; size 0 if missing.
  serde::SourceRange PrimFieldRange(ItemId object,
                                    absl::string_view field) const;
  // Decoded primitive field (I/S/B/C/J/Z widened to int64); `NotFound` if the
  // object has no such primitive field.
  absl::StatusOr<int64_t> PrimFieldInt(ItemId object,
                                       absl::string_view field) const;

  // The item defining the constant name of enum `id`, and the name itself.
  absl::StatusOr<std::string> EnumName(ItemId id) const;

  // Calls `fn(id)` for every item in the subtree of `root` (pre-order,
  // including `root`). References are not followed.
  template <typename Fn>
  void ForEachInSubtree(ItemId root, Fn&& fn) const {
    for (ItemId i = root, end = subtree_end(root); i < end; ++i) fn(i);
  }

  // Heap bytes held by the item storage (offsets, nodes, children, class
  // data, handles; not descriptors), for benchmarks and tests.
  size_t ItemStorageBytes() const;

 private:
  friend class StreamReader;

  static constexpr uint8_t kTagReference = 0x71;
  static constexpr uint32_t kNarrow = 0xFFFFFFFF;
  // Offsets and aux lookup for items [16 g, 16 g + 16).
  struct OffsetGroup {
    uint64_t base = 0;       // offset of item 16 g
    uint32_t wide = kNarrow;  // `wide_[16 wide + k]` holds item 16 g + k
    uint32_t aux_rank = 0;   // aux entries before this group
    uint16_t aux_mask = 0;   // bit k: item 16 g + k has an aux entry
  };
  // A compound item (descriptor, object, array, enum, class, exception):
  // 32 bytes. An array's element count is read from the input (the int after
  // its class descriptor child); an object's class data is derived from its
  // children (`class_data`).
  struct Node {
    uint64_t size = 0;
    const ItemId* kids = nullptr;
    uint32_t num_children = 0;
    ItemId subtree_end = 0;
    DescId desc = kNoDesc;
    int32_t handle = -1;
  };
  static_assert(sizeof(Node) == 32);

  uint8_t Tag(ItemId id) const { return input_[Offset(id)]; }
  uint64_t Offset(ItemId id) const {
    const OffsetGroup& g = groups_[id >> 4];
    return g.base + (g.wide == kNarrow ? narrow_[id]
                                       : wide_[(size_t{g.wide} << 4) | (id & 15)]);
  }
  // Index of `id`'s aux entry, or -1.
  int64_t AuxIndex(ItemId id) const {
    const OffsetGroup& g = groups_[id >> 4];
    const uint32_t bit = 1u << (id & 15);
    if (!(g.aux_mask & bit)) return -1;
    return g.aux_rank + __builtin_popcount(g.aux_mask & (bit - 1));
  }
  const Node* NodeOf(ItemId id) const {
    const int64_t a = AuxIndex(id);
    if (a < 0 || IsLeafTag(Tag(id))) return nullptr;
    return &nodes_[aux_[a]];
  }
  Node* MutableNode(ItemId id) {
    return const_cast<Node*>(NodeOf(id));
  }
  static bool IsLeafTag(uint8_t tag) {
    return tag == 0x70 || tag == 0x71 || tag == 0x74 || tag == 0x7C ||
           tag == 0x77 || tag == 0x7A || tag == 0x79;
  }
  uint64_t Size(ItemId id) const;
  uint64_t End(ItemId id) const { return Offset(id) + Size(id); }
  // kArray: the element count (the int after the class descriptor).
  uint32_t ArrayCount(const Node& n) const;
  ItemId Target(ItemId id) const;
  uint32_t EpochOf(ItemId id) const;
  bool IsAborted(ItemId id) const;
  // Appends item `num_items_` at `offset`; `aux` is stored for items that
  // carry one (strings: the handle; compound items: a new `Node`).
  void AppendItem(uint64_t offset, uint8_t tag);

  serde::ByteView input_;
  size_t num_items_ = 0;
  ChunkedVector<OffsetGroup> groups_;
  ChunkedVector<uint8_t> narrow_;
  ChunkedVector<uint64_t> wide_;
  ChunkedVector<uint32_t> aux_;
  ChunkedVector<Node> nodes_;
  RunArena<ItemId> kids_;
  std::vector<ClassDesc> descs_;
  ItemIdList top_level_;
  ChunkedVector<ItemId> handle_items_;
  // Epoch e begins at handle `epoch_begin_[e]` and item `epoch_first_[e]`.
  ChunkedVector<uint32_t> epoch_begin_;
  ChunkedVector<ItemId> epoch_first_;
  // Items ended by TC_EXCEPTION, ascending (sorted when decoding ends).
  std::vector<ItemId> aborted_items_;
  // The class data of objects ended by TC_EXCEPTION (partial, so not
  // derivable from the descriptors).
  std::map<ItemId, std::vector<ClassData>> aborted_class_data_;
  bool aborted_ = false;
  serde::SourceRange trailing_;
};

}  // namespace flinkstate::javaobj

#endif  // FLINKSTATE_JAVAOBJ_OBJECT_MODEL_H_
