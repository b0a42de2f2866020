// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/metadata_reader.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/base/optimization.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "flinkstate/format_constants.h"
#include "flinkstate/javaobj/stream_constants.h"
#include "flinkstate/serde/data_input.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/modified_utf8.h"
#include "flinkstate/serde/status_macros.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/input_releaser.h"

namespace flinkstate {
namespace {

using serde::ByteView;
using serde::DataInput;

// One bounds discipline for model memory: a model element is far larger
// than its smallest encoding (a 1-byte null keyed handle becomes a 408-byte
// KeyedStateHandle, a 4-byte finished-subtask marker a 232-byte
// OperatorSubtaskState), so checking counts against the bytes left is not
// enough. Every element is charged against the model budget
// (`MetadataReadOptions`) before it exists: a list when its count has been
// read (`ReadCount` with the element size), single handles where they are
// created. Containers are still grown from decoded elements, never sized
// from a count, so a hostile count that fails on its first element costs
// almost nothing (at most this many elements are reserved up front).
// The first reservation is the whole count when it fits in 64 KiB (a wide
// job's 45 shared files of an incremental handle: one allocation instead of
// four and no moves), else at most 8 elements.
constexpr int32_t kMaxInitialReserve = 8;
constexpr size_t kMaxInitialReserveBytes = size_t{64} << 10;

// Appends a default element to `v`, which will hold `count` elements once
// decoding succeeds. Precondition: `count` elements were charged.
template <typename T>
T& AppendElement(std::vector<T>* v, int32_t count) {
  if (v->empty()) {
    const size_t n = static_cast<size_t>(count);
    v->reserve(n * sizeof(T) <= kMaxInitialReserveBytes
                   ? n
                   : std::min(n, static_cast<size_t>(kMaxInitialReserve)));
  }
  return v->emplace_back();
}

using serde::InputReleaser;

// One step of the item path shown in errors: "name" or "name[index]".
struct PathSegment {
  const char* name;
  int64_t index;
};

class MetadataDecoder {
 public:
  MetadataDecoder(ByteView input, const MetadataReadOptions& options)
      : in_(input),
        options_(options),
        model_budget_(options.max_model_bytes_per_input_byte * input.size() +
                      options.max_model_base_bytes) {}

  // The whole model into `*m`; or, with `on_operator`, every operator handed
  // to it as soon as it is decoded and freed after (the model budget covers
  // one operator at a time then; `m->operators` stays empty).
  absl::Status ReadMetadata(CheckpointMetadata* m, const OperatorCallback* on_operator);
  absl::Status ReadSnapshot(OperatorSnapshot* s);

 private:
  // Keeps a path segment pushed for the lifetime of the scope.
  class Scope {
   public:
    Scope(MetadataDecoder* d, const char* name, int64_t index = -1) : d_(d) {
      d_->path_.push_back({name, index});
    }
    ~Scope() { d_->path_.pop_back(); }

   private:
    MetadataDecoder* d_;
  };

  // Prefixes a failed status with the layer and the current item path.
  // The path is built only for a failure: `Wrap` runs on every read
  // (building it eagerly took a third of a wide job's decoding time).
  absl::Status Wrap(const absl::Status& s) const {
    if (ABSL_PREDICT_TRUE(s.ok())) return s;
    return serde::Relabel(s, "metadata", Path());
  }
  absl::Status Error(absl::StatusCode code, absl::string_view what) const {
    return Wrap(in_.Fail(code, what));
  }
  absl::Status Invalid(absl::string_view what) const {
    return Error(absl::StatusCode::kInvalidArgument, what);
  }
  // As `Invalid`, about the byte at `offset` rather than the read position.
  absl::Status InvalidAt(absl::string_view what, uint64_t offset) const {
    return Wrap(
        serde::DecodeError(absl::StatusCode::kInvalidArgument, "serde", "", what, offset));
  }
  std::string Path() const {
    if (path_.empty()) return "header";
    std::string p;
    for (const PathSegment& s : path_) {
      if (!p.empty() && s.name[0] != '[') p += '.';
      p += s.name;
      if (s.index >= 0) absl::StrAppend(&p, "[", s.index, "]");
    }
    return p;
  }

  absl::Status I8(int8_t* v) { return Wrap(in_.ReadInt8(v)); }
  absl::Status U8(uint8_t* v) { return Wrap(in_.ReadUint8(v)); }
  absl::Status I32(int32_t* v) { return Wrap(in_.ReadInt32(v)); }
  absl::Status I64(int64_t* v) { return Wrap(in_.ReadInt64(v)); }
  // Java `readBoolean` takes any non-zero byte as true, but `writeBoolean`
  // writes only 0 or 1 and the model keeps only the bool, so another byte
  // could not be written back byte for byte: it is rejected, as non-canonical
  // `readUTF` bodies are (`ReadUtf`).
  absl::Status Bool(bool* v) {
    uint8_t b;
    FLINKSTATE_RETURN_IF_ERROR(U8(&b));
    if (b > 1) {
      return InvalidAt(absl::StrCat("boolean byte ", b, " (0 or 1 expected)"), in_.position() - 1);
    }
    *v = b == 1;
    return absl::OkStatus();
  }
  // Java `readUTF`. Unlike Java, a body that is not in the one form
  // `writeUTF` produces (a raw 0x00 byte instead of C0 80, a non-shortest
  // 2- or 3-byte sequence) is rejected: no Flink writer emits one, and the
  // model keeps only the decoded text, so such a string could not be written
  // back byte for byte.
  // With `decode_strings` off the text is decoded and checked the same way,
  // into a reused buffer, and `u->value` stays empty.
  // Plain ASCII (nearly every string: paths, names) is checked once and
  // copied only when kept.
  absl::Status ReadUtf(Utf* u) {
    const uint64_t start = in_.position();
    std::string* text = options_.decode_strings ? &u->value : &scratch_;
    ByteView body;
    bool ascii = false;
    absl::Status s = in_.ReadModifiedUtf8Raw(&body, nullptr, &ascii);
    u->range = {start, in_.position() - start};
    if (!s.ok()) return Wrap(s);
    if (ascii) {
      if (options_.decode_strings) {
        text->assign(reinterpret_cast<const char*>(body.data()), body.size());
      }
    } else {
      absl::StatusOr<std::string> decoded = serde::ModifiedUtf8ToUtf8(body);
      if (!decoded.ok()) {
        return Wrap(in_.Fail(absl::StatusCode::kInternal,
                             "modified UTF-8 checked twice differently"));
      }
      *text = *std::move(decoded);
      absl::StatusOr<std::string> canonical = serde::Utf8ToModifiedUtf8(*text);
      if (!canonical.ok() || serde::AsBytes(*canonical) != body) {
        return InvalidAt(
            "string is not in the modified UTF-8 form writeUTF produces (raw NUL or "
            "non-shortest sequence)",
            start);
      }
    }
    return absl::OkStatus();
  }

  // Charges `count` model elements of `elem_bytes` each against the budget.
  absl::Status Charge(uint64_t count, uint64_t elem_bytes, absl::string_view what) {
    model_bytes_ += count * elem_bytes;
    if (model_bytes_ > model_budget_) {
      return Error(absl::StatusCode::kResourceExhausted,
                   absl::StrCat(count, " ", what, " would take the decoded model to ",
                                model_bytes_, " bytes, over its budget of ",
                                model_budget_, " bytes for this input"));
    }
    return absl::OkStatus();
  }

  // Reads an i32 element count and checks that `count * min_bytes` bytes are
  // left, so that no container is sized from an impossible count, then
  // charges `count` model elements of `elem_bytes` each (0: none).
  absl::Status ReadCount(absl::string_view what, uint64_t min_bytes,
                         int32_t* count, uint64_t elem_bytes = 0) {
    FLINKSTATE_RETURN_IF_ERROR(I32(count));
    if (*count < 0) {
      return Invalid(absl::StrCat("negative ", what, " count ", *count));
    }
    if (static_cast<uint64_t>(*count) * min_bytes > in_.remaining()) {
      return Error(absl::StatusCode::kOutOfRange,
                   absl::StrCat(what, " count ", *count, " needs at least ",
                                static_cast<uint64_t>(*count) * min_bytes,
                                " bytes, ", in_.remaining(), " left"));
    }
    return Charge(static_cast<uint64_t>(*count), elem_bytes, what);
  }

  // i32 count + count x i64, skipped.
  absl::Status ReadOffsets(OffsetsArray* a) {
    int32_t n;
    FLINKSTATE_RETURN_IF_ERROR(ReadCount("offset", 8, &n));
    a->count = static_cast<uint32_t>(n);
    a->range = {in_.position(), uint64_t{8} * a->count};
    return Wrap(in_.SkipArray(a->count, 8));
  }

  // i32 length + bytes, skipped.
  absl::Status ReadBlob(SourceRange* r) {
    int32_t n;
    FLINKSTATE_RETURN_IF_ERROR(I32(&n));
    if (n < 0) return Invalid(absl::StrCat("negative byte length ", n));
    *r = {in_.position(), static_cast<uint64_t>(n)};
    return Wrap(in_.Skip(static_cast<uint64_t>(n)));
  }

  // A handle list count of an operator snapshot: -1 (absent) or a count of
  // handles of at least one byte each. Like `ReadCount`, a count the bytes
  // left cannot hold is an early end of input (`OutOfRange`), so truncated
  // and corrupt files are told apart the same way everywhere.
  absl::Status CheckSnapshotHandleCount(int32_t count, uint64_t elem_bytes) {
    if (count < -1) return Invalid(absl::StrCat("bad handle count ", count));
    if (count > 0 && static_cast<uint64_t>(count) > in_.remaining()) {
      return Error(absl::StatusCode::kOutOfRange,
                   absl::StrCat("handle count ", count, " needs at least ",
                                count, " bytes, ", in_.remaining(), " left"));
    }
    return count > 0 ? Charge(static_cast<uint64_t>(count), elem_bytes, "handles")
                     : absl::OkStatus();
  }

  absl::Status Enter() {
    if (++depth_ > options_.max_depth) {
      return Error(absl::StatusCode::kResourceExhausted,
                   absl::StrCat("handles nested deeper than ",
                                options_.max_depth));
    }
    return absl::OkStatus();
  }

  // Reads a handle that may nest others: one level deeper (bounded by
  // `max_depth`), recording the input range the handle came from.
  template <typename Handle>
  absl::Status ReadNested(Handle* h, absl::Status (MetadataDecoder::*body)(Handle*)) {
    FLINKSTATE_RETURN_IF_ERROR(Enter());
    const uint64_t start = in_.position();
    absl::Status s = (this->*body)(h);
    h->range = {start, in_.position() - start};
    --depth_;
    return s;
  }

  // `n` elements appended to `*list`, each read by `read(T*)` under the
  // item path `name[i]` (`name` "": `[i]` under the enclosing scope).
  // Precondition: `n` elements were charged (`ReadCount`).
  template <typename T, typename Read>
  absl::Status ReadElements(int32_t n, std::vector<T>* list, Read&& read, const char* name = "") {
    for (int32_t i = 0; i < n; ++i) {
      Scope e(this, name, i);
      FLINKSTATE_RETURN_IF_ERROR(read(&AppendElement(list, n)));
    }
    return absl::OkStatus();
  }
  // A counted list: `ReadCount(what, min_bytes, ...)` charging elements of
  // `T` (the count into `*count` when given), then `ReadElements`.
  template <typename T, typename Read>
  absl::Status ReadCountedList(absl::string_view what, uint64_t min_bytes, std::vector<T>* list,
                               Read&& read, int32_t* count = nullptr, const char* name = "") {
    int32_t n;
    if (count == nullptr) count = &n;
    FLINKSTATE_RETURN_IF_ERROR(ReadCount(what, min_bytes, count, sizeof(T)));
    return ReadElements(*count, list, std::forward<Read>(read), name);
  }
  // An operator snapshot's handle list `name`: its count (`*count`, -1 for
  // none) and handles, each read by `read(T*)`.
  template <typename T, typename Read>
  absl::Status ReadSnapshotList(const char* name, int32_t* count, std::vector<T>* list,
                                Read&& read) {
    Scope s(this, name);
    FLINKSTATE_RETURN_IF_ERROR(I32(count));
    FLINKSTATE_RETURN_IF_ERROR(CheckSnapshotHandleCount(*count, sizeof(T)));
    return ReadElements(*count, list, std::forward<Read>(read));
  }

  absl::Status ReadMasterState(MasterState* m);
  absl::Status ReadOperator(OperatorState* op);
  absl::Status ReadSubtaskV1(OperatorSubtaskState* st);
  absl::Status ReadSubtaskCommon(OperatorSubtaskState* st);
  absl::Status ReadKeyedSlots(OperatorSubtaskState* st);
  absl::Status ReadChannelLists(OperatorSubtaskState* st);
  absl::Status ReadStreamHandle(StreamStateHandle* h);
  absl::Status ReadStreamHandleBody(StreamStateHandle* h);
  absl::Status ReadKeyedHandle(KeyedStateHandle* h);
  absl::Status ReadKeyedHandleBody(KeyedStateHandle* h);
  absl::Status ReadKeyGroupsBody(int32_t* start, int32_t* num,
                                 OffsetsArray* offsets,
                                 std::unique_ptr<StreamStateHandle>* delegate);
  absl::Status ReadNamedHandles(std::vector<NamedStreamHandle>* out);
  absl::Status ReadOperatorHandle(OperatorStateHandle* h);
  absl::Status ReadChannelHandle(bool input, ChannelStateHandle* h);
  absl::Status ReadChannelHandleV1Body(ChannelStateHandle* h);
  absl::Status ReadMergedChannelOffsets(ChannelStateHandle* h);
  absl::Status ReadHandleList(const char* what,
                              std::vector<OperatorStateHandle>* out,
                              int32_t* count);

  DataInput in_;
  const MetadataReadOptions& options_;
  const uint64_t model_budget_;
  uint64_t model_bytes_ = 0;
  std::vector<PathSegment> path_;
  std::string scratch_;  // the text of the last string, without decode_strings
  uint32_t version_ = 0;
  int depth_ = 0;
};

absl::Status MetadataDecoder::ReadMetadata(CheckpointMetadata* m,
                                           const OperatorCallback* on_operator) {
  uint32_t magic;
  FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.ReadUint32(&magic)));
  if (magic != kMetadataMagic) {
    return Wrap(serde::DecodeError(
        absl::StatusCode::kInvalidArgument, "serde", "",
        absl::StrCat("not a Flink metadata file (magic 0x", absl::Hex(magic, absl::kZeroPad8),
                     ", expected 0x", absl::Hex(kMetadataMagic, absl::kZeroPad8), ")"),
        0));
  }
  FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.ReadUint32(&m->version)));
  version_ = m->version;
  if (version_ == 0) {
    return Error(absl::StatusCode::kUnimplemented,
                 "metadata version 0 (Flink 1.1 savepoints) is not supported");
  }
  if (version_ > kMaxMetadataVersion) {
    return Error(absl::StatusCode::kUnimplemented,
                 absl::StrCat("unknown metadata version ", version_, " (known: ",
                              kMinMetadataVersion, " to ", kMaxMetadataVersion, ")"));
  }
  FLINKSTATE_RETURN_IF_ERROR(I64(&m->checkpoint_id));
  if (version_ >= 2) {
    if (m->checkpoint_id < 0) {
      return Invalid(absl::StrCat("negative checkpoint id ", m->checkpoint_id));
    }
    int32_t n;
    FLINKSTATE_RETURN_IF_ERROR(ReadCount("master state", 8, &n, sizeof(MasterState)));
    for (int32_t i = 0; i < n; ++i) {
      Scope s(this, "masterStates", i);
      FLINKSTATE_RETURN_IF_ERROR(
          ReadMasterState(&AppendElement(&m->master_states, n)));
    }
  }
  int32_t n;
  m->operator_count_range = {in_.position(), 4};
  FLINKSTATE_RETURN_IF_ERROR(
      ReadCount(version_ == 1 ? "task state" : "operator state", 24, &n,
                sizeof(OperatorState)));
  if (on_operator == nullptr) {
    for (int32_t i = 0; i < n; ++i) {
      Scope s(this, "operators", i);
      FLINKSTATE_RETURN_IF_ERROR(ReadOperator(&AppendElement(&m->operators, n)));
    }
  } else {
    // One operator alive at a time: its charges are returned once it is gone.
    const uint64_t charged_before = model_bytes_;
    InputReleaser release(in_.data(), options_.release_consumed_input);
    for (int32_t i = 0; i < n; ++i) {
      OperatorState op;
      {
        Scope s(this, "operators", i);
        FLINKSTATE_RETURN_IF_ERROR(ReadOperator(&op));
      }
      const uint64_t op_end = op.range.offset + op.range.size;
      FLINKSTATE_RETURN_IF_ERROR((*on_operator)(i, std::move(op)));
      model_bytes_ = charged_before;
      release.Upto(op_end);
    }
  }
  const uint64_t rest_at = in_.position();
  const SourceRange rest{rest_at, in_.remaining()};
  if (version_ >= 4) {
    Scope s(this, "checkpointProperties");
    ByteView b = serde::Slice(in_.data(), {rest_at - in_.base_offset(), rest.size});
    if (b.size() < 5 || !javaobj::HasStreamHeader(b.data(), b.size())) {
      return Invalid(
          "expected the Java-serialized CheckpointProperties (AC ED 00 05) "
          "after the last operator");
    }
    m->properties = rest;
  } else {
    m->trailing = rest;
  }
  return Wrap(in_.Skip(rest.size));
}

absl::Status MetadataDecoder::ReadMasterState(MasterState* m) {
  const uint64_t start = in_.position();
  uint32_t magic;
  FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.ReadUint32(&magic)));
  if (magic != kMasterStateMagic) {
    return Invalid(absl::StrCat("bad master state magic 0x",
                                absl::Hex(magic, absl::kZeroPad8)));
  }
  int32_t len;
  FLINKSTATE_RETURN_IF_ERROR(I32(&len));
  if (len <= 0) return Invalid(absl::StrCat("master state length ", len));
  if (static_cast<uint64_t>(len) > in_.remaining()) {
    return Error(absl::StatusCode::kOutOfRange,
                 absl::StrCat("master state of ", len, " bytes, ",
                              in_.remaining(), " left"));
  }
  const uint64_t block_end = in_.position() + static_cast<uint64_t>(len);
  FLINKSTATE_RETURN_IF_ERROR(I32(&m->version));
  FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&m->name));
  FLINKSTATE_RETURN_IF_ERROR(ReadBlob(&m->payload));
  if (in_.position() != block_end) {
    return Invalid(absl::StrCat("master state block declares ", len,
                                " bytes but its fields end at byte ",
                                in_.position(), ", not ", block_end));
  }
  m->range = {start, in_.position() - start};
  return absl::OkStatus();
}

absl::Status MetadataDecoder::ReadOperator(OperatorState* op) {
  const uint64_t start = in_.position();
  if (version_ >= 5) {
    { Scope s(this, "name"); FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&op->name)); }
    { Scope s(this, "uid"); FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&op->uid)); }
  }
  ByteView id;
  FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.ReadBytes(16, &id)));
  std::copy(id.begin(), id.end(), op->id.begin());
  FLINKSTATE_RETURN_IF_ERROR(I32(&op->parallelism));
  FLINKSTATE_RETURN_IF_ERROR(I32(&op->max_parallelism));
  if (version_ <= 2) FLINKSTATE_RETURN_IF_ERROR(I32(&op->chain_length));
  if (version_ >= 3) {
    Scope s(this, "coordinatorState");
    FLINKSTATE_RETURN_IF_ERROR(ReadStreamHandle(&op->coordinator_state));
    const uint8_t t = op->coordinator_state.tag;
    if (t != 0 && t != 1) {
      return InvalidAt(
          absl::StrCat("coordinator state must be a null or byte-stream handle, found tag ", t),
          op->coordinator_state.range.offset);
    }
  }
  FLINKSTATE_RETURN_IF_ERROR(I32(&op->num_subtasks));
  if (op->num_subtasks == -1 && version_ >= 3) {
    if (op->coordinator_state.tag != 0) {
      return Invalid("fully finished operator with coordinator state");
    }
  } else {
    if (op->num_subtasks < 0) {
      return Invalid(absl::StrCat("negative subtask count ", op->num_subtasks));
    }
    if (static_cast<uint64_t>(op->num_subtasks) * 4 > in_.remaining()) {
      return Error(absl::StatusCode::kOutOfRange,
                   absl::StrCat("subtask count ", op->num_subtasks,
                                " exceeds the bytes left"));
    }
    FLINKSTATE_RETURN_IF_ERROR(Charge(static_cast<uint64_t>(op->num_subtasks),
                                      sizeof(OperatorSubtaskState), "subtasks"));
    for (int32_t i = 0; i < op->num_subtasks; ++i) {
      Scope s(this, "subtasks", i);
      OperatorSubtaskState& st = AppendElement(&op->subtasks, op->num_subtasks);
      const uint64_t st_start = in_.position();
      FLINKSTATE_RETURN_IF_ERROR(I32(&st.subtask_index));
      if (version_ >= 3 && st.subtask_index < 0) {
        st.finished = true;
        // `-(i + 1)`, not `-i - 1`: the same value (Java's wrap-around
        // gives INT_MAX for INT_MIN too) without signed overflow.
        st.subtask_index = -(st.subtask_index + 1);
      } else if (st.subtask_index < 0) {
        return Invalid(absl::StrCat("negative subtask index ", st.subtask_index));
      } else if (version_ == 1) {
        FLINKSTATE_RETURN_IF_ERROR(ReadSubtaskV1(&st));
      } else {
        if (version_ == 2) {
          FLINKSTATE_RETURN_IF_ERROR(I64(&st.duration));
          FLINKSTATE_RETURN_IF_ERROR(I32(&st.legacy_count));
          if (st.legacy_count < 0 || st.legacy_count > 1) {
            return Invalid(absl::StrCat("legacy state count ", st.legacy_count,
                                        " (expected 0 or 1)"));
          }
          if (st.legacy_count == 1) {
            Scope l(this, "legacyOperatorState");
            FLINKSTATE_RETURN_IF_ERROR(
                Charge(1, sizeof(StreamStateHandle), "legacy handle"));
            st.legacy.emplace_back();
            FLINKSTATE_RETURN_IF_ERROR(ReadStreamHandle(&st.legacy.back()));
          }
        }
        FLINKSTATE_RETURN_IF_ERROR(ReadSubtaskCommon(&st));
        if (version_ >= 3) FLINKSTATE_RETURN_IF_ERROR(ReadChannelLists(&st));
        if (version_ >= 7) {
          uint8_t marker;
          FLINKSTATE_RETURN_IF_ERROR(U8(&marker));
          if (marker > 1) {
            return Invalid(absl::StrCat("bad refCheckpointId marker ", marker));
          }
          st.has_ref_checkpoint_id = marker == 1;
          if (st.has_ref_checkpoint_id) {
            FLINKSTATE_RETURN_IF_ERROR(I64(&st.ref_checkpoint_id));
          }
        }
      }
      st.range = {st_start, in_.position() - st_start};
    }
  }
  op->range = {start, in_.position() - start};
  return absl::OkStatus();
}

absl::Status MetadataDecoder::ReadHandleList(
    const char* what, std::vector<OperatorStateHandle>* out, int32_t* count) {
  Scope s(this, what);
  return ReadCountedList(
      "handle", 1, out, [this](OperatorStateHandle* h) { return ReadOperatorHandle(h); }, count);
}

absl::Status MetadataDecoder::ReadSubtaskV1(OperatorSubtaskState* st) {
  FLINKSTATE_RETURN_IF_ERROR(I64(&st->duration));
  {
    Scope s(this, "legacyOperatorState");
    FLINKSTATE_RETURN_IF_ERROR(ReadCountedList(
        "handle", 1, &st->legacy, [this](StreamStateHandle* h) { return ReadStreamHandle(h); },
        &st->legacy_count));
  }
  FLINKSTATE_RETURN_IF_ERROR(ReadHandleList("managedOperatorState",
                                            &st->managed_operator_state,
                                            &st->has_managed_operator_state));
  FLINKSTATE_RETURN_IF_ERROR(ReadHandleList("rawOperatorState",
                                            &st->raw_operator_state,
                                            &st->has_raw_operator_state));
  return ReadKeyedSlots(st);
}

// The managed and the raw keyed-state slot: one keyed handle each (tag 0 when
// empty), in every version.
absl::Status MetadataDecoder::ReadKeyedSlots(OperatorSubtaskState* st) {
  for (const auto& [slot, list] :
       {std::pair{"managedKeyedState", &st->managed_keyed_state},
        std::pair{"rawKeyedState", &st->raw_keyed_state}}) {
    Scope s(this, slot);
    FLINKSTATE_RETURN_IF_ERROR(Charge(1, sizeof(KeyedStateHandle), "keyed handle"));
    list->emplace_back();
    FLINKSTATE_RETURN_IF_ERROR(ReadKeyedHandle(&list->back()));
  }
  return absl::OkStatus();
}

absl::Status MetadataDecoder::ReadSubtaskCommon(OperatorSubtaskState* st) {
  // Managed, then raw: an i32 flag and, if set, one operator handle.
  for (const auto& [slot, has, list] :
       {std::tuple{"managedOperatorState", &st->has_managed_operator_state,
                   &st->managed_operator_state},
        std::tuple{"rawOperatorState", &st->has_raw_operator_state, &st->raw_operator_state}}) {
    FLINKSTATE_RETURN_IF_ERROR(I32(has));
    if (*has == 0) continue;
    Scope s(this, slot);
    FLINKSTATE_RETURN_IF_ERROR(Charge(1, sizeof(OperatorStateHandle), "operator handle"));
    list->emplace_back();
    FLINKSTATE_RETURN_IF_ERROR(ReadOperatorHandle(&list->back()));
  }
  return ReadKeyedSlots(st);
}

absl::Status MetadataDecoder::ReadChannelLists(OperatorSubtaskState* st) {
  for (bool input : {true, false}) {
    Scope s(this, input ? "inputChannelState" : "resultSubpartitionState");
    FLINKSTATE_RETURN_IF_ERROR(ReadCountedList(
        "channel handle", 17, input ? &st->input_channel_state : &st->result_subpartition_state,
        [&](ChannelStateHandle* h) { return ReadChannelHandle(input, h); }));
  }
  return absl::OkStatus();
}

absl::Status MetadataDecoder::ReadStreamHandle(StreamStateHandle* h) {
  return ReadNested(h, &MetadataDecoder::ReadStreamHandleBody);
}

absl::Status MetadataDecoder::ReadStreamHandleBody(StreamStateHandle* h) {
  FLINKSTATE_RETURN_IF_ERROR(U8(&h->tag));
  switch (static_cast<HandleTag>(h->tag)) {
    case HandleTag::kNull:
    case HandleTag::kEmptySegmentFile:
      return absl::OkStatus();
    case HandleTag::kByteStream:
      FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&h->name));
      return ReadBlob(&h->data);
    case HandleTag::kFileStream:
      FLINKSTATE_RETURN_IF_ERROR(I64(&h->state_size));
      return ReadUtf(&h->path);
    case HandleTag::kRelativeStream:
      FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&h->path));
      return I64(&h->state_size);
    case HandleTag::kKeyGroups:
      return ReadKeyGroupsBody(&h->start_key_group, &h->num_key_groups,
                               &h->key_group_offsets, &h->delegate);
    case HandleTag::kSegmentFile:
      FLINKSTATE_RETURN_IF_ERROR(I64(&h->start_pos));
      FLINKSTATE_RETURN_IF_ERROR(I64(&h->state_size));
      FLINKSTATE_RETURN_IF_ERROR(I32(&h->scope_ordinal));
      FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&h->path));
      return ReadUtf(&h->logical_file_id);
    default:
      return InvalidAt(absl::StrCat("unknown stream state handle tag ", h->tag),
                       in_.position() - 1);
  }
}

absl::Status MetadataDecoder::ReadKeyGroupsBody(
    int32_t* start, int32_t* num, OffsetsArray* offsets,
    std::unique_ptr<StreamStateHandle>* delegate) {
  FLINKSTATE_RETURN_IF_ERROR(I32(start));
  // numKeyGroups is written before the offsets and must equal their count.
  const uint64_t num_at = in_.position();
  FLINKSTATE_RETURN_IF_ERROR(I32(num));
  if (*num < 0) return Invalid(absl::StrCat("negative key-group count ", *num));
  FLINKSTATE_RETURN_IF_ERROR(Wrap(in_.Seek(num_at)));
  FLINKSTATE_RETURN_IF_ERROR(ReadOffsets(offsets));
  Scope s(this, "delegate");
  FLINKSTATE_RETURN_IF_ERROR(Charge(1, sizeof(StreamStateHandle), "stream handle"));
  *delegate = std::make_unique<StreamStateHandle>();
  return ReadStreamHandle(delegate->get());
}

absl::Status MetadataDecoder::ReadNamedHandles(
    std::vector<NamedStreamHandle>* out) {
  return ReadCountedList("state handle", 3, out,
                         [this](NamedStreamHandle* named) -> absl::Status {
                           FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&named->local_path));
                           return ReadStreamHandle(&named->handle);
                         });
}

absl::Status MetadataDecoder::ReadKeyedHandle(KeyedStateHandle* h) {
  return ReadNested(h, &MetadataDecoder::ReadKeyedHandleBody);
}

absl::Status MetadataDecoder::ReadKeyedHandleBody(KeyedStateHandle* h) {
  FLINKSTATE_RETURN_IF_ERROR(U8(&h->tag));
  switch (static_cast<HandleTag>(h->tag)) {
    case HandleTag::kNull:
      return absl::OkStatus();
    case HandleTag::kKeyGroups:
    case HandleTag::kSavepointKeyGroups:
    case HandleTag::kKeyGroupsV2:
      FLINKSTATE_RETURN_IF_ERROR(
          ReadKeyGroupsBody(&h->start_key_group, &h->num_key_groups,
                            &h->key_group_offsets, &h->delegate));
      if (h->tag == static_cast<uint8_t>(HandleTag::kKeyGroupsV2)) {
        return ReadUtf(&h->state_handle_id);
      }
      return absl::OkStatus();
    case HandleTag::kIncrementalKeyGroups:
    case HandleTag::kIncrementalKeyGroupsV2: {
      const bool v2 = h->tag == static_cast<uint8_t>(HandleTag::kIncrementalKeyGroupsV2);
      FLINKSTATE_RETURN_IF_ERROR(I64(&h->checkpoint_id));
      FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&h->backend_identifier));
      FLINKSTATE_RETURN_IF_ERROR(I32(&h->start_key_group));
      FLINKSTATE_RETURN_IF_ERROR(I32(&h->num_key_groups));
      if (v2) FLINKSTATE_RETURN_IF_ERROR(I64(&h->checkpointed_size));
      {
        Scope s(this, "metaDataState");
        FLINKSTATE_RETURN_IF_ERROR(Charge(1, sizeof(StreamStateHandle), "stream handle"));
        h->meta_data = std::make_unique<StreamStateHandle>();
        FLINKSTATE_RETURN_IF_ERROR(ReadStreamHandle(h->meta_data.get()));
      }
      {
        Scope s(this, "sharedState");
        FLINKSTATE_RETURN_IF_ERROR(ReadNamedHandles(&h->shared_state));
      }
      {
        Scope s(this, "privateState");
        FLINKSTATE_RETURN_IF_ERROR(ReadNamedHandles(&h->private_state));
      }
      if (v2) return ReadUtf(&h->state_handle_id);
      return absl::OkStatus();
    }
    case HandleTag::kChangelog:
    case HandleTag::kChangelogV2: {
      FLINKSTATE_RETURN_IF_ERROR(I32(&h->start_key_group));
      FLINKSTATE_RETURN_IF_ERROR(I32(&h->num_key_groups));
      FLINKSTATE_RETURN_IF_ERROR(I64(&h->checkpointed_size));
      for (bool materialized : {true, false}) {
        Scope s(this, materialized ? "materialized" : "nonMaterialized");
        FLINKSTATE_RETURN_IF_ERROR(ReadCountedList(
            "keyed handle", 1, materialized ? &h->materialized : &h->non_materialized,
            [this](KeyedStateHandle* k) { return ReadKeyedHandle(k); }));
      }
      FLINKSTATE_RETURN_IF_ERROR(I64(&h->materialization_id));
      if (h->tag == static_cast<uint8_t>(HandleTag::kChangelogV2)) {
        FLINKSTATE_RETURN_IF_ERROR(I64(&h->checkpoint_id));
      }
      return ReadUtf(&h->state_handle_id);
    }
    case HandleTag::kChangelogByteIncrement: {
      FLINKSTATE_RETURN_IF_ERROR(I32(&h->start_key_group));
      FLINKSTATE_RETURN_IF_ERROR(I32(&h->num_key_groups));
      FLINKSTATE_RETURN_IF_ERROR(I64(&h->from));
      FLINKSTATE_RETURN_IF_ERROR(I64(&h->to));
      int32_t n;
      FLINKSTATE_RETURN_IF_ERROR(ReadCount("change", 8, &n));
      h->num_changes = static_cast<uint32_t>(n);
      const uint64_t changes_at = in_.position();
      for (int32_t i = 0; i < n; ++i) {
        Scope e(this, "changes", i);
        int32_t key_group;
        SourceRange change;
        FLINKSTATE_RETURN_IF_ERROR(I32(&key_group));
        FLINKSTATE_RETURN_IF_ERROR(ReadBlob(&change));
      }
      h->changes = {changes_at, in_.position() - changes_at};
      return ReadUtf(&h->state_handle_id);
    }
    case HandleTag::kChangelogFileIncrement:
    case HandleTag::kChangelogFileIncrementV2: {
      FLINKSTATE_RETURN_IF_ERROR(I32(&h->start_key_group));
      FLINKSTATE_RETURN_IF_ERROR(I32(&h->num_key_groups));
      FLINKSTATE_RETURN_IF_ERROR(ReadCountedList(
          "increment", 9, &h->increments,
          [this](OffsetStreamHandle* inc) -> absl::Status {
            FLINKSTATE_RETURN_IF_ERROR(I64(&inc->offset));
            return ReadStreamHandle(&inc->handle);
          },
          nullptr, "increments"));
      // Both tags carry the checkpointed size and the id (Flink 1.15 files
      // with tag 10 show it); only tag 13 adds the storage identifier.
      FLINKSTATE_RETURN_IF_ERROR(I64(&h->state_size));
      FLINKSTATE_RETURN_IF_ERROR(I64(&h->checkpointed_size));
      FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&h->state_handle_id));
      if (h->tag == static_cast<uint8_t>(HandleTag::kChangelogFileIncrementV2)) {
        return ReadUtf(&h->storage_identifier);
      }
      return absl::OkStatus();
    }
    default:
      return InvalidAt(absl::StrCat("unknown keyed state handle tag ", h->tag), in_.position() - 1);
  }
}

absl::Status MetadataDecoder::ReadOperatorHandle(OperatorStateHandle* h) {
  FLINKSTATE_RETURN_IF_ERROR(Enter());
  const uint64_t start = in_.position();
  FLINKSTATE_RETURN_IF_ERROR(U8(&h->tag));
  const auto tag = static_cast<HandleTag>(h->tag);
  if (tag != HandleTag::kNull && tag != HandleTag::kPartitionableOperator &&
      tag != HandleTag::kSegmentPartitionableOperator) {
    return InvalidAt(absl::StrCat("unknown operator state handle tag ", h->tag), start);
  }
  if (tag != HandleTag::kNull) {
    h->count_range = {in_.position(), 4};
    int32_t n;
    // An entry is at least a 2-byte name, a mode byte and an i32 count.
    FLINKSTATE_RETURN_IF_ERROR(ReadCount("state name", 7, &n, sizeof(StateNameEntry)));
    for (int32_t i = 0; i < n; ++i) {
      Scope e(this, "stateNameToPartitionOffsets", i);
      StateNameEntry& entry = AppendElement(&h->states, n);
      const uint64_t entry_start = in_.position();
      FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&entry.name));
      FLINKSTATE_RETURN_IF_ERROR(U8(&entry.mode));
      if (entry.mode > 2) {
        return InvalidAt(
            absl::StrCat("state '", options_.decode_strings ? entry.name.value : scratch_,
                         "' has distribution mode ", entry.mode, " (0, 1 or 2 expected)"),
            in_.position() - 1);
      }
      FLINKSTATE_RETURN_IF_ERROR(ReadOffsets(&entry.offsets));
      entry.range = {entry_start, in_.position() - entry_start};
    }
    if (tag == HandleTag::kSegmentPartitionableOperator) {
      FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&h->task_owned_directory));
      FLINKSTATE_RETURN_IF_ERROR(ReadUtf(&h->shared_directory));
      FLINKSTATE_RETURN_IF_ERROR(Bool(&h->is_empty));
    }
    Scope d(this, "delegate");
    FLINKSTATE_RETURN_IF_ERROR(Charge(1, sizeof(StreamStateHandle), "stream handle"));
    h->delegate = std::make_unique<StreamStateHandle>();
    FLINKSTATE_RETURN_IF_ERROR(ReadStreamHandle(h->delegate.get()));
    if (tag == HandleTag::kSegmentPartitionableOperator &&
        h->delegate->tag != static_cast<uint8_t>(HandleTag::kSegmentFile) &&
        h->delegate->tag != static_cast<uint8_t>(HandleTag::kEmptySegmentFile)) {
      return InvalidAt(absl::StrCat("file-merging operator handle needs a segment delegate "
                                    "(tag 15 or 16), found tag ",
                                    h->delegate->tag),
                       h->delegate->range.offset);
    }
  }
  h->range = {start, in_.position() - start};
  --depth_;
  return absl::OkStatus();
}

absl::Status MetadataDecoder::ReadChannelHandleV1Body(ChannelStateHandle* h) {
  FLINKSTATE_RETURN_IF_ERROR(I32(&h->subtask_index));
  FLINKSTATE_RETURN_IF_ERROR(I32(&h->info_a));
  FLINKSTATE_RETURN_IF_ERROR(I32(&h->info_b));
  FLINKSTATE_RETURN_IF_ERROR(ReadOffsets(&h->offsets));
  FLINKSTATE_RETURN_IF_ERROR(I64(&h->state_size));
  Scope d(this, "delegate");
  return ReadStreamHandle(&h->delegate);
}

absl::Status MetadataDecoder::ReadMergedChannelOffsets(ChannelStateHandle* h) {
  FLINKSTATE_RETURN_IF_ERROR(ReadBlob(&h->serialized_channel_offsets));
  // Validate the table inside the blob without keeping it.
  DataInput table(serde::Slice(in_.data(),
                               {h->serialized_channel_offsets.offset -
                                    in_.base_offset(),
                                h->serialized_channel_offsets.size}),
                  h->serialized_channel_offsets.offset);
  Scope s(this, "serializedChannelOffsets");
  int32_t n;
  FLINKSTATE_RETURN_IF_ERROR(Wrap(table.ReadInt32(&n)));
  if (n < 0 || static_cast<uint64_t>(n) * 20 > table.remaining()) {
    return Wrap(table.Fail(absl::StatusCode::kInvalidArgument,
                           absl::StrCat("bad merged channel count ", n)));
  }
  h->merged_channels = static_cast<uint32_t>(n);
  for (int32_t i = 0; i < n; ++i) {
    int32_t a, b, count;
    int64_t size;
    FLINKSTATE_RETURN_IF_ERROR(Wrap(table.ReadInt32(&a)));
    FLINKSTATE_RETURN_IF_ERROR(Wrap(table.ReadInt32(&b)));
    FLINKSTATE_RETURN_IF_ERROR(Wrap(table.ReadInt64(&size)));
    FLINKSTATE_RETURN_IF_ERROR(Wrap(table.ReadInt32(&count)));
    if (count < 0) {
      return Wrap(table.Fail(absl::StatusCode::kInvalidArgument,
                             absl::StrCat("negative offset count ", count)));
    }
    FLINKSTATE_RETURN_IF_ERROR(Wrap(table.SkipArray(count, 8)));
  }
  if (!table.at_end()) {
    return Wrap(table.Fail(absl::StatusCode::kInvalidArgument,
                           "bytes left after the merged channel table"));
  }
  return absl::OkStatus();
}

absl::Status MetadataDecoder::ReadChannelHandle(bool input,
                                                ChannelStateHandle* h) {
  const uint64_t start = in_.position();
  if (version_ >= 6) {
    FLINKSTATE_RETURN_IF_ERROR(U8(&h->type));
    const bool ok = input ? (h->type == 1 || h->type == 3)
                          : (h->type == 2 || h->type == 4);
    if (!ok) {
      return InvalidAt(absl::StrCat("channel handle type ", h->type, " not allowed in the ",
                                    input ? "input channel" : "result subpartition", " list"),
                       start);
    }
    if (h->type >= 3) {
      FLINKSTATE_RETURN_IF_ERROR(I32(&h->subtask_index));
      FLINKSTATE_RETURN_IF_ERROR(I64(&h->state_size));
      {
        Scope d(this, "delegate");
        FLINKSTATE_RETURN_IF_ERROR(ReadStreamHandle(&h->delegate));
      }
      FLINKSTATE_RETURN_IF_ERROR(ReadMergedChannelOffsets(h));
      h->range = {start, in_.position() - start};
      return absl::OkStatus();
    }
  }
  FLINKSTATE_RETURN_IF_ERROR(ReadChannelHandleV1Body(h));
  h->range = {start, in_.position() - start};
  return absl::OkStatus();
}

absl::Status MetadataDecoder::ReadSnapshot(OperatorSnapshot* snap) {
  version_ = 3;  // handles use the v3 encodings (channel serializer V1)
  FLINKSTATE_RETURN_IF_ERROR(I32(&snap->header));
  if (snap->header != 0 && snap->header != 3) {
    return Wrap(serde::DecodeError(
        absl::StatusCode::kInvalidArgument, "serde", "",
        absl::StrCat("not an operator snapshot (header ", snap->header, ", expected 0 or 3)"),
        0));
  }
  {
    Scope s(this, "legacyOperatorState");
    FLINKSTATE_RETURN_IF_ERROR(ReadStreamHandle(&snap->legacy));
  }
  OperatorSubtaskState& st = snap->state;
  const auto read_operator = [this](OperatorStateHandle* h) { return ReadOperatorHandle(h); };
  const auto read_keyed = [this](KeyedStateHandle* h) { return ReadKeyedHandle(h); };
  FLINKSTATE_RETURN_IF_ERROR(ReadSnapshotList("rawOperatorState", &snap->raw_operator_count,
                                              &st.raw_operator_state, read_operator));
  FLINKSTATE_RETURN_IF_ERROR(ReadSnapshotList(
      "managedOperatorState", &snap->managed_operator_count, &st.managed_operator_state,
      read_operator));
  FLINKSTATE_RETURN_IF_ERROR(ReadSnapshotList("rawKeyedState", &snap->raw_keyed_count,
                                              &st.raw_keyed_state, read_keyed));
  FLINKSTATE_RETURN_IF_ERROR(ReadSnapshotList("managedKeyedState", &snap->managed_keyed_count,
                                              &st.managed_keyed_state, read_keyed));
  if (snap->header == 3) {
    for (bool input : {true, false}) {
      Scope s(this, input ? "inputChannelState" : "resultSubpartitionState");
      int32_t* count = input ? &snap->input_channel_count
                             : &snap->result_subpartition_count;
      FLINKSTATE_RETURN_IF_ERROR(I32(count));
      // The writer repeats the input count before the output list; the
      // reader reads that many output handles.
      FLINKSTATE_RETURN_IF_ERROR(
          Wrap(in_.Seek(in_.position() - 4)));
      FLINKSTATE_RETURN_IF_ERROR(ReadCountedList(
          "channel handle", 17, input ? &st.input_channel_state : &st.result_subpartition_state,
          [&](ChannelStateHandle* h) { return ReadChannelHandle(input, h); }));
    }
  }
  snap->trailing = {in_.position(), in_.remaining()};
  if (!in_.at_end()) {
    return Invalid(absl::StrCat(in_.remaining(),
                                " unexpected bytes after the operator snapshot"));
  }
  return absl::OkStatus();
}

// Both `_metadata` entry points: the whole model, or (`on_operator`) the
// header with each operator handed over as it is decoded.
absl::StatusOr<CheckpointMetadata> DecodeMetadata(ByteView input,
                                                  const MetadataReadOptions& options,
                                                  const OperatorCallback* on_operator) {
  CheckpointMetadata m;
  MetadataDecoder d(input, options);
  FLINKSTATE_RETURN_IF_ERROR(d.ReadMetadata(&m, on_operator));
  return m;
}

}  // namespace

absl::StatusOr<CheckpointMetadata> ReadCheckpointMetadata(
    ByteView input, const MetadataReadOptions& options) {
  return DecodeMetadata(input, options, nullptr);
}

absl::StatusOr<CheckpointMetadata> ReadCheckpointMetadataStreaming(
    ByteView input, const OperatorCallback& on_operator,
    const MetadataReadOptions& options) {
  return DecodeMetadata(input, options, &on_operator);
}

absl::StatusOr<OperatorSnapshot> ReadOperatorSnapshot(
    ByteView input, const MetadataReadOptions& options) {
  OperatorSnapshot s;
  MetadataDecoder d(input, options);
  FLINKSTATE_RETURN_IF_ERROR(d.ReadSnapshot(&s));
  return s;
}

absl::StatusOr<StateFile> ReadStateFile(ByteView input,
                                        const MetadataReadOptions& options) {
  StateFile f;
  f.size = input.size();
  if (HasMetadataMagic(input)) {
    f.kind = StateFileKind::kMetadata;
    FLINKSTATE_ASSIGN_OR_RETURN(f.metadata, ReadCheckpointMetadata(input, options));
    return f;
  }
  if (input.size() >= 4 && serde::DecodeBigEndian16(input.data()) == javaobj::kStreamMagic) {
    return serde::DecodeError(absl::StatusCode::kInvalidArgument, "metadata", "header",
                              "this is a Java serialization stream (AC ED), not a Flink "
                              "metadata or operator-snapshot file",
                              0);
  }
  if (input.size() >= 4 && input[0] == 0 && input[1] == 0 && input[2] == 0 &&
      (input[3] == 0 || input[3] == 3)) {
    f.kind = StateFileKind::kOperatorSnapshot;
    FLINKSTATE_ASSIGN_OR_RETURN(f.snapshot, ReadOperatorSnapshot(input, options));
    return f;
  }
  return serde::DecodeError(absl::StatusCode::kInvalidArgument, "metadata", "header",
                            "neither a Flink metadata file (magic 49 60 67 2d) nor an "
                            "operator snapshot (header 0 or 3)",
                            0);
}

}  // namespace flinkstate
