// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: stream_cursor.h
// -----------------------------------------------------------------------------
// A pull parser over a Java Object Serialization stream (Java Object
// Serialization Specification ch. 6): the caller walks the grammar in stream
// order, reading the values it needs and skipping the rest, and nothing is
// kept but the class descriptors and one offset per live handle. It is the
// reader for files made of millions of small objects (a wide job's
// `completedCheckpoint`), where `DecodeStream`'s model costs ~20 bytes per
// item and a second pass over it.
//
//   ```c++ (serde::ByteView bytes)
//   javaobj::StreamCursor c(bytes);
//   javaobj::CursorValue v;
//   if (!c.ReadHeader() || !c.ReadContent(&v)) return c.status();
//   if (v.tag == javaobj::kTcObject && !v.reference) {
//     // Visit the object's class data field by field (or skip it whole).
//     if (!c.FinishValue(&v)) return c.status();
//   }
//   ```
//
// The cursor accepts exactly the streams `DecodeStream` accepts and reads the
// same items (tests/javaobj/stream_cursor_test.cc and the fuzz target
// `javaobj_stream` hold it to that). Its own errors are terse; a caller that
// reports one runs `CanonicalError`, which re-reads the input with
// `ScanStream` and returns the error `DecodeStream` gives (the same message,
// construct path and offset), so that a file fails the same way on every
// path.
//
// Failure is sticky (riegeli's style): a method that returns false has set
// `status()`, and every later call returns false.
//
// Handles: a new item is assigned its handle exactly where
// `ObjectInputStream` assigns it; the table keeps the offset of each handle's
// defining item (4 bytes per handle for inputs under 4 GiB, else 8) for the
// current epoch only. A `TC_REFERENCE` is resolved to its definition
// (`CursorValue::def`); a caller that needs the fields of a referenced object
// re-reads the definition with `AtDefinition`, in *replay* mode, where the
// handles the definition assigns are checked against the table instead of
// added. Replay is bounded (`replayed_bytes`, see `CursorLimits`) so that a
// graph of references cannot make the work exceed a multiple of the input.
//
// Lifetime: the cursor borrows `input`; keep it alive and unmodified.
//
// Thread safety: a cursor is not thread-safe; use each from one thread.
// Several cursors may read the same input concurrently.

#ifndef FLINKSTATE_JAVAOBJ_STREAM_CURSOR_H_
#define FLINKSTATE_JAVAOBJ_STREAM_CURSOR_H_

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "flinkstate/javaobj/object_model.h"
#include "flinkstate/javaobj/stream_constants.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/serde/byte_view.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/input_releaser.h"

namespace flinkstate::javaobj {

inline constexpr uint64_t kNoHandle = std::numeric_limits<uint64_t>::max();

// A value as `StreamCursor::ReadValue` read it: for leaves (null, strings,
// references, primitive arrays, enums, classes) the whole item; for objects
// and object arrays the head up to their handle, with the body (class data,
// elements) still to be read (`ReadObjectData`, `ReadElements`) or skipped
// (`FinishValue`).
struct CursorValue {
  // The kind of the value: TC_NULL, TC_OBJECT, TC_STRING, TC_LONGSTRING,
  // TC_ARRAY, TC_ENUM or TC_CLASS (a reference has the tag of its
  // definition); TC_BLOCKDATA / TC_BLOCKDATALONG / TC_RESET only from
  // `ReadContent`.
  uint8_t tag = kTcNull;
  // True if written as a TC_REFERENCE: its body was read at the definition;
  // `AtDefinition` reads it again.
  bool reference = false;
  // Arrays: the component type code (B C D F I J S Z, 'L' or '[').
  char element_type = 0;
  // The item's first byte (the TC_REFERENCE's for a reference).
  uint64_t offset = 0;
  // The defining item's first byte (`offset` unless a reference).
  uint64_t def = 0;
  // Where the item ends (exclusive), once known: leaves and references at
  // once, objects and object arrays after their body.
  uint64_t end = 0;
  // The handle the definition was assigned (index in the current epoch),
  // `kNoHandle` for null, block data and resets.
  uint64_t handle = kNoHandle;
  // Objects, arrays, enums, classes: the class descriptor.
  DescId desc = kNoDesc;
  // Strings: the modified UTF-8 body. Primitive arrays: the packed
  // big-endian elements. Enums: the constant name's body. Block data: the
  // bytes.
  serde::SourceRange payload;
  // Arrays: the element count.
  uint64_t count = 0;
};

// Limits beyond `DecodeLimits` that only the cursor has.
struct CursorLimits {
  // Bytes re-read by `AtDefinition`, as a multiple of the input size plus
  // 1 MiB: a hostile graph whose objects refer back to each other cannot make
  // a caller that follows references do more than this much work.
  uint64_t max_replay_multiple = 4;
};

class StreamCursor {
 public:
  explicit StreamCursor(serde::ByteView input ABSL_ATTRIBUTE_LIFETIME_BOUND,
                        const DecodeOptions& options = {}, const CursorLimits& limits = {});
  StreamCursor(const StreamCursor&) = delete;
  StreamCursor& operator=(const StreamCursor&) = delete;

  // --- Stream level --------------------------------------------------------

  // Reads `magic` (0xACED) and `version` (5).
  bool ReadHeader();
  // True when no content item follows: the input ends, or (after at least one
  // item) the next byte cannot start one (the bytes from there are
  // `trailing()`; an error if `DecodeOptions::allow_trailing_data` is false).
  // False also when failed (check `ok()`).
  bool AtStreamEnd();
  // `content` at the top level: a value (as `ReadValue`), block data
  // (`tag` TC_BLOCKDATA/TC_BLOCKDATALONG, `payload` its bytes) or TC_RESET
  // (the handle table is cleared). Counts the top-level item; when a
  // TC_EXCEPTION aborted the previous one, `aborted()` says so.
  bool ReadContent(CursorValue* v);

  // --- Values --------------------------------------------------------------

  // `object` (`ObjectInputStream.readObject0`): reads the value at the
  // position; see `CursorValue` for what is left of it.
  bool ReadValue(CursorValue* v);
  // Reads whatever `ReadValue` left of `v` (class data, object-array
  // elements) without looking at it, and sets `v->end`.
  bool FinishValue(CursorValue* v);
  // `ReadValue` + `FinishValue`.
  bool Skip() {
    CursorValue v;
    // Leaves are whole once read: no call to finish them.
    return ReadValue(&v) && (v.end != 0 || FinishValue(&v));
  }

  // Reads the class data of object `v` (just returned by `ReadValue`, not a
  // reference), class by class of its chain, super-most first
  // (`ObjectInputStream.readSerialData`):
  //   * `visit.Class(DescId cls, uint64_t prim_offset)`: the class's
  //     primitive field values start at `prim_offset` (`desc(cls).prim_bytes`
  //     of them, already bounds-checked);
  //   * `visit.Field(DescId cls, uint32_t field)` for each object field, with
  //     the cursor at its value: it must read exactly one value (`Skip()` at
  //     least) and return false on failure;
  //   * `visit.Annotation(DescId cls)` if the class wrote custom data
  //     (SC_WRITE_METHOD, or externalizable data in block mode): it must read
  //     the annotation up to and including its TC_ENDBLOCKDATA
  //     (`SkipAnnotation()` at least).
  // Sets `v->end`. A nested TC_EXCEPTION ends the object early
  // (`aborted()`), as in `DecodeStream`.
  template <typename Visit>
  bool ReadObjectData(CursorValue* v, Visit& visit);

  // Reads the elements of object array `v` (just returned by `ReadValue`,
  // not a reference): `each(uint64_t index)` must read exactly one value.
  // Sets `v->end`.
  template <typename Each>
  bool ReadElements(CursorValue* v, Each&& each);

  // --- Annotations (custom `writeObject` data) -------------------------------
  //
  // Inside `visit.Annotation`, the annotation is a sequence of block data
  // and objects ending in TC_ENDBLOCKDATA. All consecutive block data items
  // form one byte stream (spec §10.1).

  // Layout failures of these helpers are not sticky: they return false with
  // `ok()` still true and `layout_error()` saying what was found instead, the
  // position at an item boundary of the annotation (`SkipAnnotation` moves
  // past the rest), so that a caller may tolerate a layout it does not know.
  //
  // Reads `n` bytes of the block data stream into `out` (if not null),
  // appending the input ranges they came from to `where` (if not null).
  // Fails ("block data ends early") if an object or the end comes first.
  bool ReadBlockBytes(uint8_t* out, uint64_t n, std::vector<serde::SourceRange>* where);
  // Moves past finished block data to the next object of the annotation;
  // fails with "unread block data where an object is expected" or "custom
  // data ends early" (`layout_error()`) otherwise. Then read the object.
  bool NextAnnotationObject();
  // Reads the rest of the annotation and its TC_ENDBLOCKDATA. With
  // `expect_end`, anything but empty block data before the end fails with
  // "unexpected items after the entries" (`layout_error()`).
  bool FinishAnnotation(bool expect_end);
  bool SkipAnnotation() { return FinishAnnotation(false); }
  // Moves past whole block data items to the next object of the annotation
  // (`*at_end` false; then read it) or past its TC_ENDBLOCKDATA (`*at_end`
  // true). For walkers that copy the block bytes as they are.
  bool NextAnnotationItem(bool* at_end);

  // --- References ----------------------------------------------------------

  // Reads the definition of `v` again (a reference, or any earlier value):
  // positions the cursor at `v.def` in replay mode, calls `fn(CursorValue*
  // def)` with the definition read by `ReadValue` (its body still to read or
  // finish), checks that `fn` read exactly the definition, and restores the
  // position. Nested replays are allowed.
  template <typename Fn>
  bool AtDefinition(const CursorValue& v, Fn&& fn);
  // The end of the definition of `v` (re-reads it if `v` is a reference).
  bool DefinitionEnd(const CursorValue& v, uint64_t* end);

  // --- Descriptors ---------------------------------------------------------

  size_t num_descs() const { return descs_.size(); }
  const ClassDesc& desc(DescId id) const { return descs_[id]; }
  const std::vector<ClassDesc>& descs() const { return descs_; }
  // The descriptor defined at `offset` (a TC_CLASSDESC / TC_PROXYCLASSDESC
  // item), or kNoDesc.
  DescId DescAt(uint64_t offset) const;
  // The offset of descriptor `id`'s defining item, and where it ends.
  uint64_t desc_offset(DescId id) const { return desc_offsets_[id]; }
  uint64_t desc_end(DescId id) const { return desc_ends_[id]; }

  // --- State ---------------------------------------------------------------

  bool ok() const { return status_.ok(); }
  const absl::Status& status() const { return status_; }
  // Fails the cursor with `status` (a caller's own error, e.g. a graph the
  // caller cannot read); later calls return false.
  bool SetError(absl::Status status);
  // The last layout failure of the annotation helpers (OK if none): not a
  // grammar error, the stream may be valid (see "Annotations").
  const absl::Status& layout_error() const { return layout_error_; }
  // The error `DecodeStream` gives for this input, if it fails; OK if
  // `DecodeStream` accepts it (then a failure of this cursor was a layout or
  // caller error).
  absl::Status CanonicalError() const;

  serde::ByteView input() const { return {base_, size_}; }
  uint64_t position() const { return static_cast<uint64_t>(p_ - base_); }
  bool replaying() const { return replay_depth_ > 0; }
  uint32_t epoch() const { return epoch_; }
  // Handles assigned in the current epoch (replays add none).
  uint64_t num_handles() const { return handles_size_; }
  // The offset of the item that defined handle `h` (< num_handles()).
  uint64_t handle_offset(uint64_t h) const {
    return wide_ ? wide_chunks_[h >> kHandleChunkBits][h & (kHandleChunk - 1)]
                 : narrow_chunks_[h >> kHandleChunkBits][h & (kHandleChunk - 1)];
  }
  uint64_t num_items() const { return items_; }
  uint64_t num_top_level() const { return top_count_; }
  // A TC_EXCEPTION aborted a top-level item (see `Stream::aborted`); the
  // offset of the first TC_EXCEPTION.
  bool aborted() const { return any_aborted_; }
  uint64_t first_exception_offset() const { return first_exception_; }
  // True while a TC_EXCEPTION is unwinding the current top-level item.
  bool unwinding() const { return aborted_; }
  serde::SourceRange trailing() const { return trailing_; }
  // True if a class descriptor's annotation (`classAnnotation`, written by
  // `ObjectOutputStream.annotateClass`; empty as the JDK writes it) held an
  // item: the cursor reads past those items, a walker over values does not
  // see them.
  bool annotated_descriptors() const { return annotated_descs_; }
  uint64_t replayed_bytes() const { return replayed_; }

  // --- Observation (the streaming rewriter) ----------------------------------

  // Receives, in stream order, the events a rewriter needs (not called in
  // replay mode unless `observe_replays` is set).
  class Observer {
   public:
    virtual ~Observer() = default;
    // A new item defines handle `h`; its first byte is at `offset`.
    virtual void OnHandle(uint64_t h, uint64_t offset) = 0;
    // A TC_REFERENCE at `offset` names handle `h`.
    virtual void OnReference(uint64_t h, uint64_t offset) = 0;
    // The handle table was cleared (TC_RESET, TC_EXCEPTION).
    virtual void OnReset() = 0;
  };
  void set_observer(Observer* o, bool observe_replays = false) {
    observer_ = o;
    observe_replays_ = observe_replays;
  }

  // Releases the input's pages behind the cursor as it reads (every 8 MiB),
  // so that a pass over a large file mapping keeps little of it resident.
  // `releaser` (not owned) must outlive the cursor's reading.
  void set_releaser(serde::InputReleaser* releaser) { releaser_ = releaser; }

 private:
  // --- error helpers (cold) ---
  ABSL_ATTRIBUTE_NOINLINE bool Fail(absl::StatusCode code, absl::string_view what, uint64_t at);
  ABSL_ATTRIBUTE_NOINLINE bool Truncated(uint64_t at);
  ABSL_ATTRIBUTE_NOINLINE bool LayoutFail(absl::string_view what, uint64_t at);

  bool Need(uint64_t n) {
    if (ABSL_PREDICT_TRUE(static_cast<uint64_t>(end_ - p_) >= n)) return true;
    return Truncated(position());
  }
  uint64_t remaining() const { return static_cast<uint64_t>(end_ - p_); }
  uint64_t Off(const uint8_t* q) const { return static_cast<uint64_t>(q - base_); }

  bool Enter() {
    if (ABSL_PREDICT_FALSE(++depth_ > max_depth_)) return DepthFail();
    return true;
  }
  ABSL_ATTRIBUTE_NOINLINE bool DepthFail();
  bool CountItem() {
    if (replay_depth_ > 0) return true;  // counted when first read
    if (ABSL_PREDICT_FALSE(++items_ > max_items_)) return ItemsFail();
    return true;
  }
  ABSL_ATTRIBUTE_NOINLINE bool ItemsFail();
  // The next handle for the item at `offset` (checked against the table in
  // replay). Inline for the common cases, nobody observing and a narrow
  // table: a new handle with room in the last chunk, a replayed one that
  // matches.
  bool AssignHandle(uint64_t offset, uint64_t* h) {
    const uint64_t n = handles_size_;
    const uint64_t k = n & (kHandleChunk - 1);
    if (ABSL_PREDICT_TRUE(replay_depth_ == 0 && observer_ == nullptr && !wide_ && k != 0 &&
                          n < options_.limits.max_handles)) {
      narrow_chunks_[n >> kHandleChunkBits][k] = static_cast<uint32_t>(offset);
      *h = n;
      ++handles_size_;
      ++handles_total_;
      return true;
    }
    // Replay (`AtDefinition`, and the whole operator list of a report that
    // puts the head first): the handle the definition had, as the table says.
    if (replay_depth_ > 0 && observer_ == nullptr && !wide_) {
      const uint64_t r = replay_next_;
      if (ABSL_PREDICT_TRUE(r < handles_size_ &&
                            narrow_chunks_[r >> kHandleChunkBits][r & (kHandleChunk - 1)] ==
                                offset)) {
        replay_next_ = r + 1;
        *h = r;
        return true;
      }
    }
    return AssignHandleSlow(offset, h);
  }
  bool AssignHandleSlow(uint64_t offset, uint64_t* h);
  void PushHandle(uint64_t offset);
  void NoteDescHandle(DescId did, uint64_t h);
  // Makes complete descriptor `did` found by its handle in one load
  // (`desc_by_handle_`).
  void NoteCompleteDesc(DescId did);
  void NewEpoch();

  bool ReadValueAt(CursorValue* v);
  bool ReadReference(CursorValue* v);
  bool ReadNewString(CursorValue* v);
  bool ReadNewArrayHead(CursorValue* v);
  bool ReadNewEnum(CursorValue* v);
  bool ReadNewClass(CursorValue* v);
  bool ReadNewObjectHead(CursorValue* v);
  bool ReadException(CursorValue* v);
  // The head TC_OBJECT, TC_ARRAY, TC_ENUM and TC_CLASS share: the item
  // counted (`*at` its offset), the type code and the class descriptor read;
  // with `null_refusal`, a null descriptor is refused with that message.
  bool ReadItemHead(uint64_t* at, DescId* did, const char* null_refusal = nullptr) {
    *at = position();
    if (!CountItem()) return false;
    ++p_;
    if (!ReadClassDesc(did)) return false;
    if (ABSL_PREDICT_FALSE(null_refusal != nullptr && *did == kNoDesc)) {
      return Fail(absl::StatusCode::kInvalidArgument, null_refusal, *at);
    }
    return true;
  }
  // Refuses reference `r` (read at `at`) to an item that is not `expected`.
  bool WrongReference(const CursorValue& r, absl::string_view expected, uint64_t at);
  // `v` of such an item takes class descriptor `did` and the next handle.
  bool SetDescAndHandle(uint64_t at, DescId did, CursorValue* v) {
    v->desc = did;
    uint64_t h;
    if (!AssignHandle(at, &h)) return false;
    v->handle = h;
    return true;
  }
  // A block data or string length read at `at`, refused as `CheckItemLength`
  // refuses it.
  bool CheckLength(absl::string_view what, int64_t len, uint64_t limit, uint64_t at) {
    if (ABSL_PREDICT_TRUE(len >= 0 && static_cast<uint64_t>(len) <= limit &&
                          static_cast<uint64_t>(len) <= remaining())) {
      return true;
    }
    return LengthFail(what, len, limit, at);
  }
  ABSL_ATTRIBUTE_NOINLINE bool LengthFail(absl::string_view what, int64_t len, uint64_t limit,
                                          uint64_t at);
  // `classDesc`: a new descriptor, a reference to one, or null (kNoDesc).
  // Inline for the common case, a reference to a complete descriptor
  // (`desc_by_handle_`) with nobody observing; the rest in
  // `ReadClassDescSlow`.
  bool ReadClassDesc(DescId* out) {
    if (ABSL_PREDICT_TRUE(remaining() >= 5 && *p_ == kTcReference && observer_ == nullptr)) {
      const uint64_t h = static_cast<uint32_t>(serde::DecodeBigEndian32(p_ + 1)) -
                         static_cast<uint64_t>(kBaseWireHandle);
      if (h < desc_by_handle_.size() && h < handles_size_) {
        const DescId d = desc_by_handle_[h];
        if (d != kNoDesc) {
          if (!CountItem()) return false;
          p_ += 5;
          *out = d;
          return true;
        }
      }
    }
    return ReadClassDescSlow(out);
  }
  bool ReadClassDescSlow(DescId* out);
  // The start both class descriptor forms share: the item counted, the
  // descriptor found again (replay) or added, the type code read.
  bool BeginClassDesc(uint64_t at, DescId* out);
  bool ReadNewClassDesc(DescId* out);
  bool ReadNewProxyClassDesc(DescId* out);
  bool ReadClassDescTail(DescId did);
  bool ReadUtf(serde::SourceRange* body, std::string* text, bool want_text);
  bool CheckModifiedUtf8(const uint8_t* body, uint64_t n);
  // Skips one annotation item or stops at TC_ENDBLOCKDATA (`*end`).
  bool SkipAnnotationItem(bool* end);
  bool SkipObjectData(CursorValue* v);
  // Block data helpers.
  bool ReadBlockHeader(uint64_t* len, uint64_t* payload);
  // The handle-defining descriptor of a value defined at `def` (its classDesc
  // starts at `def + 1`).
  DescId DescOfDefinition(uint64_t def) const;
  // The first handle the definition of `v` assigns: its class descriptor's
  // when that is defined inline (an object's handle follows its classDesc),
  // else its own.
  uint64_t FirstHandleOfDefinition(const CursorValue& v) const;

  const uint8_t* base_;
  const uint8_t* p_;
  const uint8_t* end_;
  uint64_t size_;
  DecodeOptions options_;
  CursorLimits climits_;
  uint32_t max_depth_;
  uint64_t max_items_;
  absl::Status status_;
  absl::Status layout_error_;

  // Handle table of the current epoch: the defining item's offset per
  // handle, in chunks of `kHandleChunk` that are never moved (a push is a
  // store and a compare; inputs over 4 GiB keep 64-bit offsets).
  static constexpr int kHandleChunkBits = 14;
  static constexpr uint64_t kHandleChunk = uint64_t{1} << kHandleChunkBits;
  bool wide_;
  std::vector<std::unique_ptr<uint32_t[]>> narrow_chunks_;
  std::vector<std::unique_ptr<uint64_t[]>> wide_chunks_;
  uint64_t handles_size_ = 0;
  uint64_t handles_total_ = 0;
  // Complete descriptors by the handle that defined them, for handles below
  // `kDescByHandleMax` (every Flink graph defines its classes early): a
  // reference to a class descriptor is one load.
  static constexpr uint64_t kDescByHandleMax = uint64_t{1} << 16;
  std::vector<DescId> desc_by_handle_;

  std::vector<ClassDesc> descs_;
  // What `ReadObjectData` needs of each descriptor, set when it is complete:
  // 16 bytes side by side instead of fields spread over a `ClassDesc`.
  struct Layout {
    uint32_t prim_bytes = 0;
    uint32_t first_object_field = 0;
    uint32_t num_fields = 0;
    uint8_t flags = 0;
  };
  std::vector<Layout> layouts_;
  std::vector<uint64_t> desc_offsets_;  // ascending (stream order)
  std::vector<uint64_t> desc_ends_;     // where each descriptor's item ends
  std::vector<uint64_t> desc_handles_;  // the handle each descriptor was assigned

  uint32_t depth_ = 0;
  uint32_t epoch_ = 0;
  uint64_t items_ = 0;
  uint64_t top_count_ = 0;
  bool aborted_ = false;
  bool any_aborted_ = false;
  uint64_t first_exception_ = 0;
  serde::SourceRange trailing_;
  bool annotated_descs_ = false;

  // Replay.
  uint32_t replay_depth_ = 0;
  uint64_t replay_next_ = 0;
  uint64_t replayed_ = 0;
  uint64_t max_replayed_;

  // Annotation block-data state: bytes left in the current block.
  uint64_t block_left_ = 0;

  Observer* observer_ = nullptr;
  bool observe_replays_ = false;
  serde::InputReleaser* releaser_ = nullptr;
  uint64_t next_release_ = uint64_t{8} << 20;

  // Scratch for field names of descriptors being read.
  std::string scratch_;
};

// --- Template implementations ------------------------------------------------

template <typename Visit>
bool StreamCursor::ReadObjectData(CursorValue* v, Visit& visit) {
  if (v->end != 0) return ok();  // a TC_EXCEPTION in its descriptor ended it
  const DescId did = v->desc;
  if (ABSL_PREDICT_FALSE(descs_[did].is_externalizable())) {
    if (!(descs_[did].flags & kScBlockData)) {
      return Fail(absl::StatusCode::kUnimplemented,
                  "externalizable data written with PROTOCOL_VERSION_1 cannot be decoded "
                  "without the class",
                  position());
    }
    block_left_ = 0;
    if (!visit.Annotation(did)) return false;
    v->end = position();
    --depth_;
    return true;
  }
  // Indexes, not references: `descs_` and `layouts_` may grow while the
  // data is read.
  const size_t chain_len = descs_[did].chain.size();
  for (size_t ci = 0; ci < chain_len && !aborted_; ++ci) {
    const DescId cls = descs_[did].chain[ci];
    const Layout layout = layouts_[cls];
    if (ABSL_PREDICT_FALSE(layout.prim_bytes > remaining())) {
      return Fail(absl::StatusCode::kOutOfRange, "input ends inside primitive field values",
                  position());
    }
    visit.Class(cls, position());
    p_ += layout.prim_bytes;
    for (uint32_t f = layout.first_object_field; f < layout.num_fields && !aborted_; ++f) {
      if (!visit.Field(cls, f)) return false;
    }
    if ((layout.flags & kScWriteMethod) && !aborted_) {
      block_left_ = 0;
      if (!visit.Annotation(cls)) return false;
    }
  }
  v->end = position();
  --depth_;
  return ok();
}

template <typename Each>
bool StreamCursor::ReadElements(CursorValue* v, Each&& each) {
  if (v->end != 0) return ok();  // primitive arrays are read whole
  {
    for (uint64_t i = 0; i < v->count && !aborted_; ++i) {
      if (!each(i)) return false;
    }
  }
  v->end = position();
  --depth_;
  return ok();
}

template <typename Fn>
bool StreamCursor::AtDefinition(const CursorValue& v, Fn&& fn) {
  if (!ok()) return false;
  if (ABSL_PREDICT_FALSE(v.handle == kNoHandle)) {
    return SetError(absl::FailedPreconditionError("javaobj: cursor: no definition to re-read"));
  }
  const uint8_t* saved_p = p_;
  const uint64_t saved_next = replay_next_;
  const uint32_t saved_depth = depth_;
  const uint64_t saved_block = block_left_;
  p_ = base_ + v.def;
  ++replay_depth_;
  replay_next_ = FirstHandleOfDefinition(v);
  CursorValue d;
  bool ok_read = ReadValue(&d) && fn(&d);
  if (ok_read && ABSL_PREDICT_FALSE(d.end == 0 || replay_next_ <= v.handle)) {
    // `fn` must read the whole definition (its body included).
    ok_read = SetError(absl::InternalError("javaobj: cursor: a replayed definition was not read"));
  }
  if (ok_read) {
    replayed_ += d.end - d.def;
    if (ABSL_PREDICT_FALSE(replayed_ > max_replayed_)) {
      ok_read = Fail(absl::StatusCode::kResourceExhausted,
                     "references re-read more bytes than the limit allows (a graph of "
                     "objects referring back to each other)",
                     v.def);
    }
  }
  --replay_depth_;
  replay_next_ = saved_next;
  depth_ = saved_depth;
  block_left_ = saved_block;
  p_ = saved_p;
  return ok_read;
}

}  // namespace flinkstate::javaobj

#endif  // FLINKSTATE_JAVAOBJ_STREAM_CURSOR_H_
