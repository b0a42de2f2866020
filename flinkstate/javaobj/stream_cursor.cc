// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/javaobj/stream_cursor.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/modified_utf8.h"

namespace flinkstate::javaobj {
namespace {

// A visitor that reads nothing of an object's class data but its structure.
struct SkipVisitor {
  StreamCursor& c;
  void Class(DescId, uint64_t) {}
  bool Field(DescId, uint32_t) { return c.Skip(); }
  bool Annotation(DescId) { return c.SkipAnnotation(); }
};

// Reports nothing: `CanonicalError` needs only the scan's verdict.
class NoVisitor : public StreamVisitor {
 public:
  void BeginItem(uint8_t, uint64_t) override {}
  void EndItem(uint64_t, const ClassDesc*) override {}
};

bool IsBlockTag(uint8_t t) { return t == kTcBlockData || t == kTcBlockDataLong; }

}  // namespace

StreamCursor::StreamCursor(serde::ByteView input, const DecodeOptions& options,
                           const CursorLimits& limits)
    : base_(input.data()),
      p_(input.data()),
      end_(input.data() + input.size()),
      size_(input.size()),
      options_(options),
      climits_(limits),
      max_depth_(options.limits.max_depth),
      max_items_(options.limits.max_items),
      wide_(input.size() > 0xFFFFFFFFull),
      max_replayed_(limits.max_replay_multiple * input.size() + (uint64_t{1} << 20)) {}

// --- errors ------------------------------------------------------------------

bool StreamCursor::Fail(absl::StatusCode code, absl::string_view what, uint64_t at) {
  if (status_.ok()) status_ = serde::DecodeError(code, "javaobj", "", what, at);
  return false;
}

bool StreamCursor::Truncated(uint64_t at) {
  return Fail(absl::StatusCode::kOutOfRange, "input ends inside an item", at);
}

bool StreamCursor::LayoutFail(absl::string_view what, uint64_t at) {
  // Not sticky: the bytes are a valid stream so far, only not the layout the
  // caller expected; the position is at an item boundary of the annotation.
  layout_error_ = serde::DecodeError(absl::StatusCode::kInvalidArgument, "javaobj", "", what, at);
  return false;
}

bool StreamCursor::DepthFail() {
  return Fail(absl::StatusCode::kResourceExhausted,
              absl::StrCat("nesting deeper than ", max_depth_), position());
}

bool StreamCursor::ItemsFail() {
  return Fail(absl::StatusCode::kResourceExhausted, absl::StrCat("more than ", max_items_, " items"),
              position());
}

bool StreamCursor::SetError(absl::Status status) {
  if (status_.ok()) status_ = std::move(status);
  if (status_.ok()) status_ = absl::InternalError("javaobj: cursor: SetError(OK)");
  return false;
}

absl::Status StreamCursor::CanonicalError() const {
  NoVisitor none;
  return ScanStream(input(), none, options_).status();
}

// --- handles -----------------------------------------------------------------

void StreamCursor::PushHandle(uint64_t offset) {
  const uint64_t h = handles_size_;
  const uint64_t k = h & (kHandleChunk - 1);
  if (wide_) {
    if (k == 0 && (h >> kHandleChunkBits) == wide_chunks_.size()) {
      wide_chunks_.emplace_back(new uint64_t[kHandleChunk]);
    }
    wide_chunks_[h >> kHandleChunkBits][k] = offset;
  } else {
    if (k == 0 && (h >> kHandleChunkBits) == narrow_chunks_.size()) {
      narrow_chunks_.emplace_back(new uint32_t[kHandleChunk]);
    }
    narrow_chunks_[h >> kHandleChunkBits][k] = static_cast<uint32_t>(offset);
  }
  ++handles_size_;
  ++handles_total_;
}

bool StreamCursor::AssignHandleSlow(uint64_t offset, uint64_t* h) {
  if (replay_depth_ > 0) {
    *h = replay_next_++;
    if (ABSL_PREDICT_FALSE(*h >= handles_size_ || handle_offset(*h) != offset)) {
      return SetError(serde::DecodeError(absl::StatusCode::kInternal, "javaobj", "",
                                         "cursor: a replayed definition assigns another handle",
                                         offset));
    }
    if (observer_ != nullptr && observe_replays_) observer_->OnHandle(*h, offset);
    return true;
  }
  if (ABSL_PREDICT_FALSE(handles_size_ >= options_.limits.max_handles)) {
    return Fail(absl::StatusCode::kResourceExhausted,
                absl::StrCat("more than ", options_.limits.max_handles, " handles"), position());
  }
  *h = handles_size_;
  PushHandle(offset);
  if (observer_ != nullptr) observer_->OnHandle(*h, offset);
  return true;
}

void StreamCursor::NewEpoch() {
  ++epoch_;
  // The chunks are kept for the next epoch's handles.
  handles_size_ = 0;
  desc_by_handle_.clear();
  if (observer_ != nullptr) observer_->OnReset();
}

void StreamCursor::NoteDescHandle(DescId did, uint64_t h) { desc_handles_[did] = h; }

void StreamCursor::NoteCompleteDesc(DescId did) {
  const uint64_t h = desc_handles_[did];
  // Only if the handle is still the descriptor's (no TC_RESET or
  // TC_EXCEPTION began another epoch while it was read).
  if (h >= kDescByHandleMax || h >= handles_size_ || handle_offset(h) != desc_offsets_[did]) {
    return;
  }
  if (desc_by_handle_.size() <= h) desc_by_handle_.resize(h + 1, kNoDesc);
  desc_by_handle_[h] = did;
}

DescId StreamCursor::DescAt(uint64_t offset) const {
  auto it = std::lower_bound(desc_offsets_.begin(), desc_offsets_.end(), offset);
  if (it == desc_offsets_.end() || *it != offset) return kNoDesc;
  return static_cast<DescId>(it - desc_offsets_.begin());
}

DescId StreamCursor::DescOfDefinition(uint64_t def) const {
  if (def + 1 >= size_) return kNoDesc;
  const uint8_t t = base_[def + 1];
  if (t == kTcClassDesc || t == kTcProxyClassDesc) return DescAt(def + 1);
  if (t == kTcReference && def + 6 <= size_) {
    const int64_t h = static_cast<int64_t>(static_cast<int32_t>(
                          serde::DecodeBigEndian32(base_ + def + 2))) -
                      kBaseWireHandle;
    if (h < 0 || static_cast<uint64_t>(h) >= handles_size_) return kNoDesc;
    return DescAt(handle_offset(static_cast<uint64_t>(h)));
  }
  return kNoDesc;
}

uint64_t StreamCursor::FirstHandleOfDefinition(const CursorValue& v) const {
  const uint8_t t = base_[v.def];
  if ((t == kTcObject || t == kTcArray || t == kTcEnum || t == kTcClass) && v.def + 1 < size_ &&
      (base_[v.def + 1] == kTcClassDesc || base_[v.def + 1] == kTcProxyClassDesc)) {
    const DescId d = DescAt(v.def + 1);
    if (d != kNoDesc) return desc_handles_[d];
  }
  return v.handle;
}

// --- stream level ------------------------------------------------------------

bool StreamCursor::ReadHeader() {
  if (size_ > options_.limits.max_total_bytes) {
    return Fail(absl::StatusCode::kResourceExhausted,
                absl::StrCat("input larger than ", options_.limits.max_total_bytes, " bytes"), 0);
  }
  if (!Need(4)) return false;
  if (serde::DecodeBigEndian16(p_) != kStreamMagic) {
    return Fail(absl::StatusCode::kInvalidArgument,
                absl::StrFormat("invalid stream header: magic 0x%04X",
                                serde::DecodeBigEndian16(p_)),
                0);
  }
  if (serde::DecodeBigEndian16(p_ + 2) != kStreamVersion) {
    return Fail(absl::StatusCode::kInvalidArgument,
                absl::StrCat("unsupported stream version ", serde::DecodeBigEndian16(p_ + 2)), 2);
  }
  p_ += 4;
  return true;
}

bool StreamCursor::AtStreamEnd() {
  if (!ok()) return false;
  if (aborted_) {
    any_aborted_ = true;
    aborted_ = false;
  }
  if (p_ == end_) return true;
  const uint8_t tag = *p_;
  if ((tag < kTcBase || tag > kTcEnum) && top_count_ > 0) {
    if (!options_.allow_trailing_data) {
      return Fail(absl::StatusCode::kInvalidArgument,
                  absl::StrFormat("%d trailing bytes after the last object (type code 0x%02X "
                                  "is not a content item)",
                                  remaining(), tag),
                  position());
    }
    trailing_ = {position(), remaining()};
    return true;
  }
  return false;
}

bool StreamCursor::ReadBlockHeader(uint64_t* len, uint64_t* payload) {
  const uint64_t at = position();
  if (!Need(1) || !CountItem()) return false;
  const uint8_t tag = *p_++;
  int64_t l;
  if (tag == kTcBlockData) {
    if (!Need(1)) return false;
    l = *p_++;
  } else {
    if (!Need(4)) return false;
    l = static_cast<int32_t>(serde::DecodeBigEndian32(p_));
    p_ += 4;
  }
  if (!CheckLength("block data", l, options_.limits.max_block_bytes, at)) return false;
  *len = static_cast<uint64_t>(l);
  *payload = position();
  return true;
}

bool StreamCursor::ReadContent(CursorValue* v) {
  if (!ok()) return false;
  if (aborted_) {
    any_aborted_ = true;
    aborted_ = false;
  }
  if (!Need(1)) return false;
  ++top_count_;
  const uint8_t tag = *p_;
  *v = CursorValue();
  v->offset = v->def = position();
  v->tag = tag;
  if (IsBlockTag(tag)) {
    uint64_t len, at;
    if (!ReadBlockHeader(&len, &at)) return false;
    v->payload = {at, len};
    p_ += len;
    v->end = position();
    return true;
  }
  if (tag == kTcReset) {
    if (!CountItem()) return false;
    ++p_;
    NewEpoch();
    v->end = position();
    return true;
  }
  return ReadValue(v);
}

// --- values ------------------------------------------------------------------

bool StreamCursor::ReadValue(CursorValue* v) {
  if (!ok()) return false;
  if (!Need(1)) return false;
  *v = CursorValue();
  const uint64_t at = position();
  v->offset = v->def = at;
  const uint8_t tag = *p_;
  v->tag = tag;
  if (!Enter()) return false;
  switch (tag) {
    case kTcNull:
      if (!CountItem()) return false;
      ++p_;
      v->end = position();
      --depth_;
      return true;
    case kTcReference:
      if (!ReadReference(v)) return false;
      if (v->tag == kTcClassDesc || v->tag == kTcProxyClassDesc) {
        return Fail(absl::StatusCode::kInvalidArgument,
                    WrongReferenceProblem(static_cast<uint32_t>(v->handle + kBaseWireHandle),
                                          "class descriptor", "an object"),
                    at);
      }
      --depth_;
      return true;
    case kTcClassDesc:
    case kTcProxyClassDesc: {
      DescId d;
      if (!(tag == kTcClassDesc ? ReadNewClassDesc(&d) : ReadNewProxyClassDesc(&d))) {
        return false;
      }
      v->desc = d;
      v->handle = desc_handles_[d];
      v->end = position();
      --depth_;
      return true;
    }
    case kTcObject:
      if (ABSL_PREDICT_FALSE(releaser_ != nullptr) && at >= next_release_ && replay_depth_ == 0) {
        releaser_->Upto(at);
        next_release_ = at + (uint64_t{8} << 20);
      }
      return ReadNewObjectHead(v);
    case kTcString:
    case kTcLongString:
      if (!ReadNewString(v)) return false;
      --depth_;
      return true;
    case kTcArray:
      return ReadNewArrayHead(v);
    case kTcEnum:
      if (!ReadNewEnum(v)) return false;
      --depth_;
      return true;
    case kTcClass:
      if (!ReadNewClass(v)) return false;
      --depth_;
      return true;
    case kTcException:
      if (!ReadException(v)) return false;
      --depth_;
      return true;
    default:
      return Fail(absl::StatusCode::kInvalidArgument, NotAnObjectProblem(tag, depth_), at);
  }
}

bool StreamCursor::ReadReference(CursorValue* v) {
  const uint64_t at = position();
  if (!CountItem() || !Need(5)) return false;
  const int64_t h =
      static_cast<int64_t>(static_cast<int32_t>(serde::DecodeBigEndian32(p_ + 1))) -
      kBaseWireHandle;
  p_ += 5;
  if (h < 0 || static_cast<uint64_t>(h) >= handles_size_) {
    return Fail(absl::StatusCode::kInvalidArgument,
                absl::StrFormat("invalid handle value 0x%08X (%d handles assigned so far)",
                                static_cast<uint32_t>(h + kBaseWireHandle), handles_size_),
                at);
  }
  const uint64_t def = handle_offset(static_cast<uint64_t>(h));
  if (observer_ != nullptr && (replay_depth_ == 0 || observe_replays_)) {
    observer_->OnReference(static_cast<uint64_t>(h), at);
  }
  v->reference = true;
  v->handle = static_cast<uint64_t>(h);
  v->def = def;
  v->end = position();
  v->tag = base_[def];
  switch (v->tag) {
    case kTcString:
      v->payload = {def + 3, serde::DecodeBigEndian16(base_ + def + 1)};
      v->count = v->payload.size;
      break;
    case kTcLongString:
      v->payload = {def + 9, serde::DecodeBigEndian64(base_ + def + 1)};
      v->count = v->payload.size;
      break;
    case kTcClassDesc:
    case kTcProxyClassDesc:
      v->desc = DescAt(def);
      break;
    case kTcObject:
    case kTcClass:
      v->desc = DescOfDefinition(def);
      break;
    case kTcArray:
    case kTcEnum: {
      v->desc = DescOfDefinition(def);
      if (v->desc == kNoDesc) break;
      // The value's own bytes follow its classDesc: a reference (5 bytes) or
      // the descriptor defined there.
      uint64_t q = def + 6;
      if (base_[def + 1] != kTcReference) {
        const DescId inline_desc = DescAt(def + 1);
        if (inline_desc == kNoDesc) break;
        q = desc_ends_[inline_desc];
      }
      if (v->tag == kTcEnum) {
        // The constant name: a new TC_STRING or TC_LONGSTRING (the grammar
        // allows no reference there).
        if (base_[q] == kTcString) {
          v->payload = {q + 3, serde::DecodeBigEndian16(base_ + q + 1)};
        } else {
          v->payload = {q + 9, serde::DecodeBigEndian64(base_ + q + 1)};
        }
      } else {
        const ClassDesc& d = descs_[v->desc];
        v->element_type = d.name.size() > 1 ? d.name[1] : 0;
        v->count = serde::DecodeBigEndian32(base_ + q);
        const int w = PrimitiveSize(v->element_type);
        if (w != 0) v->payload = {q + 4, v->count * static_cast<uint64_t>(w)};
      }
      break;
    }
    default:
      break;
  }
  return true;
}

bool StreamCursor::DefinitionEnd(const CursorValue& v, uint64_t* end) {
  if (!v.reference && v.end != 0) {
    *end = v.end;
    return true;
  }
  return AtDefinition(v, [&](CursorValue* d) {
    if (!FinishValue(d)) return false;
    *end = d->end;
    return true;
  });
}

bool StreamCursor::CheckModifiedUtf8(const uint8_t* body, uint64_t n) {
  // Plain 7-bit bytes (NUL included: `readUTF` takes a raw 0x00) are valid:
  // eight at a time.
  constexpr uint64_t kHighs = 0x8080808080808080ULL;
  const uint8_t* q = body;
  uint64_t left = n;
  for (; left >= 8; q += 8, left -= 8) {
    uint64_t w;
    std::memcpy(&w, q, 8);
    if (w & kHighs) break;
  }
  bool plain = left < 8;
  for (uint64_t i = 0; plain && i < left; ++i) plain = q[i] < 0x80;
  if (plain) return true;
  const size_t bad = serde::FindInvalidModifiedUtf8(serde::ByteView(body, n));
  if (bad == n) return true;
  return Fail(absl::StatusCode::kInvalidArgument, "malformed modified UTF-8 in string",
              Off(body) + bad);
}

bool StreamCursor::ReadNewString(CursorValue* v) {
  const uint64_t at = position();
  if (!CountItem()) return false;
  const uint8_t tag = *p_++;
  uint64_t h;
  if (!AssignHandle(at, &h)) return false;
  v->handle = h;
  int64_t l;
  if (tag == kTcString) {
    if (!Need(2)) return false;
    l = serde::DecodeBigEndian16(p_);
    p_ += 2;
  } else {
    if (!Need(8)) return false;
    l = static_cast<int64_t>(serde::DecodeBigEndian64(p_));
    p_ += 8;
  }
  if (!CheckLength("string", l, options_.limits.max_string_bytes, at)) return false;
  const uint64_t len = static_cast<uint64_t>(l);
  if (!CheckModifiedUtf8(p_, len)) return false;
  v->payload = {position(), len};
  v->count = len;
  p_ += len;
  v->end = position();
  return true;
}

bool StreamCursor::ReadUtf(serde::SourceRange* body, std::string* text, bool want_text) {
  if (!Need(2)) return false;
  const uint64_t len = serde::DecodeBigEndian16(p_);
  p_ += 2;
  if (!Need(len)) return false;
  const uint8_t* b = p_;
  *body = {position(), len};
  p_ += len;
  if (serde::IsPlainAscii(serde::ByteView(b, len))) {
    if (want_text) text->assign(reinterpret_cast<const char*>(b), len);
    return true;
  }
  absl::StatusOr<std::string> s = serde::ModifiedUtf8ToUtf8(serde::ByteView(b, len));
  if (!s.ok()) {
    return Fail(absl::StatusCode::kInvalidArgument, "malformed modified UTF-8 in a name",
                Off(b) - 2);
  }
  if (want_text) *text = *std::move(s);
  return true;
}

bool StreamCursor::ReadClassDescSlow(DescId* out) {
  if (!Need(1)) return false;
  const uint64_t at = position();
  const uint8_t tag = *p_;
  *out = kNoDesc;
  switch (tag) {
    case kTcNull:
      if (!CountItem()) return false;
      ++p_;
      return true;
    case kTcClassDesc:
    case kTcProxyClassDesc: {
      if (!Enter()) return false;
      if (!(tag == kTcClassDesc ? ReadNewClassDesc(out) : ReadNewProxyClassDesc(out))) {
        return false;
      }
      --depth_;
      return true;
    }
    case kTcReference: {
      // A reference to a complete descriptor with nobody observing was read
      // inline (ReadClassDesc); here the rest. A short input is truncation.
      if (!Need(5)) return false;
      CursorValue r;
      if (!ReadReference(&r)) return false;
      if (r.tag != kTcClassDesc && r.tag != kTcProxyClassDesc) {
        return WrongReference(r, "a class descriptor", at);
      }
      if (r.desc == kNoDesc || !descs_[r.desc].complete) {
        return Fail(absl::StatusCode::kInvalidArgument,
                    absl::StrFormat("reference 0x%08X to a class descriptor that is still "
                                    "being read",
                                    static_cast<uint32_t>(r.handle + kBaseWireHandle)),
                    at);
      }
      *out = r.desc;
      return true;
    }
    default:
      return Fail(absl::StatusCode::kInvalidArgument,
                  absl::StrFormat("invalid type code 0x%02X (%s) where a class descriptor is "
                                  "expected",
                                  tag, TypeCodeName(tag)),
                  at);
  }
}

bool StreamCursor::BeginClassDesc(uint64_t at, DescId* out) {
  if (!CountItem()) return false;
  if (replay_depth_ > 0) {
    *out = DescAt(at);
    if (*out == kNoDesc) {
      return SetError(serde::DecodeError(absl::StatusCode::kInternal, "javaobj", "",
                                         "cursor: a replayed descriptor was not read before", at));
    }
  } else {
    *out = static_cast<DescId>(descs_.size());
    descs_.emplace_back();
    desc_offsets_.push_back(at);
    layouts_.emplace_back();
    desc_ends_.push_back(0);
    desc_handles_.push_back(kNoHandle);
    descs_[*out].item = static_cast<ItemId>(items_ - 1);
  }
  ++p_;  // the type code
  return true;
}

bool StreamCursor::ReadNewClassDesc(DescId* out) {
  const uint64_t at = position();
  DescId did;
  if (!BeginClassDesc(at, &did)) return false;
  const bool replay = replay_depth_ > 0;
  *out = did;
  serde::SourceRange name_range;
  std::string name;
  if (!ReadUtf(&name_range, &name, !replay)) return false;
  if (!Need(8)) return false;
  const int64_t suid = static_cast<int64_t>(serde::DecodeBigEndian64(p_));
  p_ += 8;
  if (!replay) {
    ClassDesc& d = descs_[did];
    d.forbidden_as_object = name == "java.lang.String" || name == "java.lang.Class" ||
                            name == "java.io.ObjectStreamClass";
    d.name = std::move(name);
    d.name_range = name_range;
    d.suid = suid;
  }
  uint64_t h;
  if (!AssignHandle(at, &h)) return false;
  if (!replay) NoteDescHandle(did, h);
  if (!Need(3)) return false;
  const uint8_t flags = p_[0];
  const uint64_t flags_at = position();
  const uint16_t nfields = serde::DecodeBigEndian16(p_ + 1);
  p_ += 3;
  if ((flags & kScSerializable) && (flags & kScExternalizable)) {
    return Fail(absl::StatusCode::kInvalidArgument,
                "serializable and externalizable flags conflict", flags_at);
  }
  if (nfields > remaining() / 3) {
    return Fail(absl::StatusCode::kOutOfRange,
                absl::StrCat("field count ", nfields, " exceeds the remaining input"),
                position() - 2);
  }
  if ((flags & kScEnum) && (nfields != 0 || suid != 0)) {
    return Fail(absl::StatusCode::kInvalidArgument,
                "enum descriptor has fields or a non-zero serialVersionUID", flags_at);
  }
  std::vector<FieldDesc> fields;
  if (!replay) fields.reserve(nfields);
  uint32_t prim_bytes = 0, nobj = 0;
  for (uint32_t i = 0; i < nfields; ++i) {
    const uint64_t fat = position();
    if (!Need(1)) return false;
    FieldDesc f;
    f.type_code = static_cast<char>(*p_++);
    if (PrimitiveSize(f.type_code) == 0 && f.type_code != 'L' && f.type_code != '[') {
      return Fail(absl::StatusCode::kInvalidArgument,
                  absl::StrFormat("invalid field type code 0x%02X",
                                  static_cast<uint8_t>(f.type_code)),
                  fat);
    }
    if (!ReadUtf(&f.name_range, &f.name, !replay)) return false;
    if (f.is_primitive()) {
      if (nobj > 0) {
        return Fail(absl::StatusCode::kInvalidArgument,
                    absl::StrCat("illegal field order: primitive field ", f.name,
                                 " after an object field"),
                    fat);
      }
      f.prim_offset = prim_bytes;
      prim_bytes += PrimitiveSize(f.type_code);
    } else {
      ++nobj;
      // `className1`: a new string or a reference to one.
      const uint64_t t_at = position();
      if (!Need(1)) return false;
      const uint8_t t = *p_;
      if (t != kTcString && t != kTcLongString && t != kTcReference) {
        return Fail(absl::StatusCode::kInvalidArgument,
                    absl::StrFormat("field type must be a string, found type code 0x%02X (%s)", t,
                                    TypeCodeName(t)),
                    t_at);
      }
      if (!Enter()) return false;
      CursorValue tv;
      tv.offset = tv.def = t_at;
      tv.tag = t;
      if (t == kTcReference) {
        if (!ReadReference(&tv)) return false;
        if (tv.tag != kTcString && tv.tag != kTcLongString) {
          return WrongReference(tv, "a field type string", t_at);
        }
      } else if (!ReadNewString(&tv)) {
        return false;
      }
      --depth_;
      f.type_item = static_cast<ItemId>(items_ - 1);
      if (!replay) {
        const serde::ByteView body(base_ + tv.payload.offset, tv.payload.size);
        if (serde::IsPlainAscii(body)) {
          f.type_name.assign(reinterpret_cast<const char*>(body.data()), body.size());
        } else {
          absl::StatusOr<std::string> s = serde::ModifiedUtf8ToUtf8(body);
          if (!s.ok()) {
            return Fail(absl::StatusCode::kInvalidArgument,
                        "malformed modified UTF-8 in a field type", tv.payload.offset);
          }
          f.type_name = *std::move(s);
        }
      }
    }
    if (!replay) fields.push_back(std::move(f));
  }
  if (!replay) {
    ClassDesc& d = descs_[did];
    d.flags = flags;
    d.fields = std::move(fields);
    d.prim_bytes = prim_bytes;
    d.num_object_fields = nobj;
  }
  return ReadClassDescTail(did);
}

bool StreamCursor::ReadNewProxyClassDesc(DescId* out) {
  const uint64_t at = position();
  DescId did;
  if (!BeginClassDesc(at, &did)) return false;
  const bool replay = replay_depth_ > 0;
  if (!replay) {
    descs_[did].is_proxy = true;
    descs_[did].flags = kScSerializable;
  }
  *out = did;
  uint64_t h;
  if (!AssignHandle(at, &h)) return false;
  if (!replay) NoteDescHandle(did, h);
  if (!Need(4)) return false;
  const int32_t n = static_cast<int32_t>(serde::DecodeBigEndian32(p_));
  p_ += 4;
  if (n < 0 || n > 65535 || static_cast<uint64_t>(n) > remaining() / 2) {
    return Fail(absl::StatusCode::kInvalidArgument,
                absl::StrCat("invalid proxy interface count ", n), position() - 4);
  }
  for (int32_t i = 0; i < n; ++i) {
    serde::SourceRange r;
    std::string iface;
    if (!ReadUtf(&r, &iface, !replay)) return false;
    if (!replay) {
      descs_[did].interfaces.push_back(std::move(iface));
      descs_[did].interface_ranges.push_back(r);
    }
  }
  return ReadClassDescTail(did);
}

bool StreamCursor::ReadClassDescTail(DescId did) {
  // classAnnotation: items up to TC_ENDBLOCKDATA (`skipCustomData`).
  if (p_ < end_ && *p_ != kTcEndBlockData) annotated_descs_ = true;
  if (!FinishAnnotation(false)) return false;
  DescId super;
  if (!ReadClassDesc(&super)) return false;
  if (replay_depth_ == 0) {
    ClassDesc& d = descs_[did];
    d.super = super;
    if (super != kNoDesc) d.chain = descs_[super].chain;
    d.chain.push_back(did);
    d.complete = true;
    layouts_[did] = {d.prim_bytes,
                     static_cast<uint32_t>(d.fields.size()) - d.num_object_fields,
                     static_cast<uint32_t>(d.fields.size()), d.flags};
    desc_ends_[did] = position();
    NoteCompleteDesc(did);
  }
  return true;
}

bool StreamCursor::ReadNewObjectHead(CursorValue* v) {
  uint64_t at;
  DescId did;
  if (!ReadItemHead(&at, &did, "TC_OBJECT with a null class descriptor")) return false;
  const ClassDesc& d = descs_[did];
  if (d.forbidden_as_object) {
    return Fail(absl::StatusCode::kInvalidArgument,
                absl::StrCat("invalid class descriptor ", d.name, " for TC_OBJECT"), at);
  }
  if (d.is_enum()) {
    return Fail(absl::StatusCode::kInvalidArgument, absl::StrCat("TC_OBJECT of enum class ", d.name),
                at);
  }
  if (!SetDescAndHandle(at, did, v)) return false;
  if (aborted_) {
    // A TC_EXCEPTION inside the descriptor: the object ends here.
    v->end = position();
    --depth_;
  }
  return true;
}

bool StreamCursor::WrongReference(const CursorValue& r, absl::string_view expected,
                                  uint64_t at) {
  return Fail(absl::StatusCode::kInvalidArgument,
              WrongReferenceProblem(static_cast<uint32_t>(r.handle + kBaseWireHandle),
                                    ItemKindName(ItemKindOfTag(r.tag)), expected),
              at);
}

bool StreamCursor::LengthFail(absl::string_view what, int64_t len, uint64_t limit,
                              uint64_t at) {
  const absl::Status bad = CheckItemLength(what, len, limit, remaining());
  return Fail(bad.code(), bad.message(), at);
}

bool StreamCursor::ReadNewArrayHead(CursorValue* v) {
  uint64_t at;
  DescId did;
  if (!ReadItemHead(&at, &did)) return false;
  if (did == kNoDesc || descs_[did].is_proxy || descs_[did].name.size() < 2 ||
      descs_[did].name[0] != '[') {
    return Fail(absl::StatusCode::kInvalidArgument,
                "TC_ARRAY whose class descriptor is not an array class", at);
  }
  const char et = descs_[did].name[1];
  if (PrimitiveSize(et) == 0 && et != 'L' && et != '[') {
    return Fail(absl::StatusCode::kInvalidArgument,
                absl::StrCat("invalid array class name ", descs_[did].name), at);
  }
  v->element_type = et;
  if (!SetDescAndHandle(at, did, v)) return false;
  const uint64_t len_at = position();
  if (!Need(4)) return false;
  const int32_t len = static_cast<int32_t>(serde::DecodeBigEndian32(p_));
  p_ += 4;
  if (len < 0) {
    return Fail(absl::StatusCode::kInvalidArgument,
                absl::StrCat("array length is negative (", len, ")"), len_at);
  }
  if (len > options_.limits.max_array_length) {
    return Fail(absl::StatusCode::kResourceExhausted,
                absl::StrCat("array length ", len, " exceeds the limit"), len_at);
  }
  const int width = PrimitiveSize(et);
  const uint64_t min_bytes = static_cast<uint64_t>(len) * (width ? width : 1);
  if (min_bytes > remaining()) {
    return Fail(absl::StatusCode::kOutOfRange,
                absl::StrCat("array of ", len, " elements exceeds the ", remaining(),
                             " remaining bytes"),
                len_at);
  }
  v->count = static_cast<uint64_t>(len);
  if (width) {
    v->payload = {position(), min_bytes};
    p_ += min_bytes;
    v->end = position();
    --depth_;
  }
  return true;
}

bool StreamCursor::ReadNewEnum(CursorValue* v) {
  uint64_t at;
  DescId did;
  if (!ReadItemHead(&at, &did)) return false;
  if (did == kNoDesc || !descs_[did].is_enum()) {
    return Fail(absl::StatusCode::kInvalidArgument,
                "TC_ENUM whose class descriptor is not an enum class", at);
  }
  if (!SetDescAndHandle(at, did, v)) return false;
  if (!Need(1)) return false;
  const uint8_t t = *p_;
  if (t != kTcString && t != kTcLongString) {
    return Fail(absl::StatusCode::kInvalidArgument,
                absl::StrFormat("enum constant name must be a new string, found type code "
                                "0x%02X (%s)",
                                t, TypeCodeName(t)),
                position());
  }
  if (!Enter()) return false;
  CursorValue name;
  name.offset = name.def = position();
  if (!ReadNewString(&name)) return false;
  --depth_;
  v->payload = name.payload;
  v->end = position();
  return true;
}

bool StreamCursor::ReadNewClass(CursorValue* v) {
  uint64_t at;
  DescId did;
  if (!ReadItemHead(&at, &did, "TC_CLASS with a null class descriptor")) return false;
  if (!SetDescAndHandle(at, did, v)) return false;
  v->end = position();
  return true;
}

bool StreamCursor::ReadException(CursorValue* v) {
  const uint64_t at = position();
  if (!CountItem()) return false;
  ++p_;
  if (replay_depth_ == 0) NewEpoch();
  if (!Need(1)) return false;
  if (*p_ != kTcObject) {
    return Fail(absl::StatusCode::kInvalidArgument, "TC_EXCEPTION not followed by a new object",
                position());
  }
  if (!Skip()) return false;
  if (replay_depth_ == 0) NewEpoch();
  if (!any_aborted_ && !aborted_) first_exception_ = at;
  aborted_ = true;
  v->tag = kTcException;
  v->end = position();
  return true;
}

bool StreamCursor::FinishValue(CursorValue* v) {
  if (!ok()) return false;
  if (v->end != 0) return true;
  if (v->tag == kTcObject) {
    SkipVisitor skip{*this};
    return ReadObjectData(v, skip);
  }
  if (v->tag == kTcArray) {
    return ReadElements(v, [this](uint64_t) { return Skip(); });
  }
  return SetError(absl::InternalError("javaobj: cursor: nothing left to finish"));
}

// --- annotations ---------------------------------------------------------------

bool StreamCursor::ReadBlockBytes(uint8_t* out, uint64_t n,
                                  std::vector<serde::SourceRange>* where) {
  while (n > 0) {
    if (!ok()) return false;
    if (block_left_ == 0) {
      if (!Need(1)) return false;
      if (!IsBlockTag(*p_)) {
        return LayoutFail(*p_ == kTcEndBlockData ? "block data ends early"
                                                 : "expected block data, found an object",
                          position());
      }
      uint64_t len, at;
      if (!ReadBlockHeader(&len, &at)) return false;
      block_left_ = len;
      continue;
    }
    const uint64_t take = std::min(n, block_left_);
    if (out != nullptr) {
      std::memcpy(out, p_, take);
      out += take;
    }
    if (where != nullptr) {
      if (!where->empty() && where->back().end() == position()) {
        where->back().size += take;
      } else {
        where->push_back({position(), take});
      }
    }
    p_ += take;
    block_left_ -= take;
    n -= take;
  }
  return ok();
}

bool StreamCursor::NextAnnotationObject() {
  if (!ok()) return false;
  if (block_left_ > 0) {
    return LayoutFail("unread block data where an object is expected", position());
  }
  for (;;) {
    if (!Need(1)) return false;
    const uint8_t t = *p_;
    if (t == kTcEndBlockData) return LayoutFail("custom data ends early", position());
    if (!IsBlockTag(t)) return true;
    uint64_t len, at;
    if (!ReadBlockHeader(&len, &at)) return false;
    if (len > 0) {
      block_left_ = len;
      return LayoutFail("unread block data where an object is expected", at);
    }
  }
}

bool StreamCursor::NextAnnotationItem(bool* at_end) {
  if (!ok()) return false;
  p_ += block_left_;
  block_left_ = 0;
  for (;;) {
    if (aborted_) {
      *at_end = true;
      return true;
    }
    if (!Need(1)) return false;
    const uint8_t t = *p_;
    if (t == kTcEndBlockData) {
      ++p_;
      *at_end = true;
      return true;
    }
    if (!IsBlockTag(t)) {
      *at_end = false;
      return true;
    }
    uint64_t len, at;
    if (!ReadBlockHeader(&len, &at)) return false;
    p_ += len;
  }
}

bool StreamCursor::FinishAnnotation(bool expect_end) {
  if (!ok()) return false;
  if (expect_end && block_left_ > 0) {
    return LayoutFail("unexpected items after the entries", position());
  }
  // A caller may stop inside a block: the rest of it is skipped.
  p_ += block_left_;
  block_left_ = 0;
  for (;;) {
    if (aborted_) return true;
    if (!Need(1)) return false;
    const uint8_t t = *p_;
    if (t == kTcEndBlockData) {
      ++p_;
      return true;
    }
    if (IsBlockTag(t)) {
      uint64_t len, at;
      if (!ReadBlockHeader(&len, &at)) return false;
      if (expect_end && len > 0) {
        block_left_ = len;
        return LayoutFail("unexpected items after the entries", at);
      }
      p_ += len;
      continue;
    }
    if (expect_end) return LayoutFail("unexpected items after the entries", position());
    if (!Skip()) return false;
  }
}

}  // namespace flinkstate::javaobj
