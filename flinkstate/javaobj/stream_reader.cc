// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/javaobj/stream_reader.h"

#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "flinkstate/javaobj/stream_constants.h"
#include "flinkstate/serde/data_input.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/modified_utf8.h"
#include "flinkstate/serde/status_macros.h"
#include "flinkstate/serde/error_location.h"

namespace flinkstate::javaobj {

class StreamReader {
 public:
  // `visitor` null: builds the model. Else a scan (`ScanStream`): no item
  // is stored, each is reported to `visitor`, and the handle table keeps the
  // defining item's offset per handle of the current epoch only.
  StreamReader(serde::ByteView input, const DecodeOptions& options,
               StreamVisitor* visitor = nullptr)
      : in_(input), limits_(options.limits), options_(options), visitor_(visitor) {
    s_.input_ = input;
  }

  absl::StatusOr<Stream> Read();
  // After a successful `Read` in scan mode.
  StreamScan TakeScan() {
    StreamScan r;
    r.num_items = s_.num_items_;
    r.num_top_level = top_count_;
    r.num_epochs = static_cast<uint32_t>(s_.epoch_begin_.size());
    r.handles_assigned = handles_total_;
    r.max_handles_per_epoch = std::max(max_handles_, HandleCount());
    r.aborted = s_.aborted_;
    r.trailing = s_.trailing_;
    r.descs = std::move(s_.descs_);
    return r;
  }

 private:
  enum class Expect : uint8_t { kObject, kTypeString, kEnumName };
  enum class Seg : uint8_t {
    kRoot, kObject, kField, kData, kElement, kClassDesc, kSuper, kTypeString,
    kEnumName, kException, kAnnotation
  };
  struct PathSeg {
    Seg kind;
    uint32_t a;  // index / desc id
    uint32_t b;  // field index
  };

  // --- error helpers -------------------------------------------------------
  std::string PathString() const;
  absl::Status Fail(absl::StatusCode code, absl::string_view what,
                    uint64_t offset) const {
    return serde::DecodeError(code, "javaobj", PathString(), what, offset);
  }
  // Re-labels a serde error with the construct path.
  // The path is built only for a failure (`Wrap` runs on successful reads).
  absl::Status Wrap(const absl::Status& s) const {
    if (ABSL_PREDICT_TRUE(s.ok())) return s;
    return serde::Relabel(s, "javaobj", PathString());
  }

  // --- model helpers -------------------------------------------------------
  absl::StatusOr<ItemId> NewItem(ItemKind kind, uint8_t tag, uint64_t offset) {
    if (s_.num_items_ >= limits_.max_items) {
      return Fail(absl::StatusCode::kResourceExhausted,
                  absl::StrCat("more than ", limits_.max_items, " items"),
                  offset);
    }
    ItemId id = static_cast<ItemId>(s_.num_items_);
    (void)kind;  // the kind is the type code's (`ItemKindOfTag(tag)`)
    if (visitor_ != nullptr) {
      ++s_.num_items_;
      open_.push_back({offset, kNoDesc});
      visitor_->BeginItem(tag, offset);
    } else {
      s_.AppendItem(offset, tag);
    }
    return id;
  }
  // Scan mode: the innermost open item ends here.
  void EndScanned() {
    const DescId d = open_.back().desc;
    open_.pop_back();
    visitor_->EndItem(in_.position(), d == kNoDesc ? nullptr : &s_.descs_[d]);
  }
  // The descriptor of the value `id` (the innermost open item).
  void SetDesc(ItemId id, DescId did) {
    if (visitor_ != nullptr) {
      open_.back().desc = did;
    } else {
      s_.MutableNode(id)->desc = did;
    }
  }
  void AddChild(ItemId id) {
    if (visitor_ == nullptr) scratch_.push_back(id);
  }
  // Handles assigned in the current epoch.
  uint64_t HandleCount() const {
    return (visitor_ != nullptr ? scan_handles_.size() : s_.handle_items_.size()) -
           s_.epoch_begin_.back();
  }
  // What handle `index` (< HandleCount()) of the current epoch defines: its
  // type code, its descriptor (descriptor items) and its offset.
  struct HandleTarget {
    uint8_t tag;
    DescId desc;
    uint64_t offset;
  };
  HandleTarget TargetOf(uint64_t index) const {
    const size_t at = s_.epoch_begin_.back() + index;
    if (visitor_ == nullptr) {
      const ItemId t = s_.handle_items_[at];
      return {s_.Tag(t), s_.desc_of(t), s_.Offset(t)};
    }
    const uint64_t off = scan_handles_[at];
    const uint8_t tag = in_.data()[off - in_.base_offset()];
    DescId d = kNoDesc;
    if (tag == kTcClassDesc || tag == kTcProxyClassDesc) {
      // Descriptors are numbered in stream order, so their offsets ascend.
      d = static_cast<DescId>(
          std::lower_bound(desc_offsets_.begin(), desc_offsets_.end(), off) -
          desc_offsets_.begin());
    }
    return {tag, d, off};
  }
  // Records the end of item `id` and moves its children from the scratch
  // stack (entries from `mark` on) into the arena.
  void Finish(ItemId id, size_t mark) {
    if (visitor_ != nullptr) {
      EndScanned();
      return;
    }
    if (Stream::Node* n = s_.MutableNode(id)) {
      n->num_children = static_cast<uint32_t>(scratch_.size() - mark);
      n->kids = s_.kids_.Append(scratch_.data() + mark, n->num_children);
      n->size = in_.position() - s_.Offset(id);
      n->subtree_end = static_cast<ItemId>(s_.num_items_);
    }
    // Leaves need nothing: their sizes are in their headers.
    scratch_.resize(mark);
    if (aborted_) s_.aborted_items_.push_back(id);
  }
  // `Finish` for a compound item whose children were written to `run`.
  void FinishRun(ItemId id, const ItemId* run, uint32_t n) {
    if (visitor_ != nullptr) {
      EndScanned();
      return;
    }
    Stream::Node* node = s_.MutableNode(id);
    node->num_children = n;
    node->kids = run;
    node->size = in_.position() - s_.Offset(id);
    node->subtree_end = static_cast<ItemId>(s_.num_items_);
    if (aborted_) s_.aborted_items_.push_back(id);
  }
  absl::Status AssignHandle(ItemId id, size_t mark) {
    uint64_t n = HandleCount();
    if (n >= limits_.max_handles) {
      return Fail(absl::StatusCode::kResourceExhausted,
                  absl::StrCat("more than ", limits_.max_handles, " handles"),
                  in_.position());
    }
    ++handles_total_;
    if (visitor_ != nullptr) {
      scan_handles_.push_back(open_.back().offset);
      return absl::OkStatus();
    }
    s_.handle_items_.push_back(id);
    // `assign_at` (`scratch_.size() - mark`) is implied by the kind: 0 for
    // strings and descriptors, 1 (after the class descriptor) otherwise.
    (void)mark;
    if (Stream::Node* node = s_.MutableNode(id)) {
      node->handle = static_cast<int32_t>(n);
    } else {
      s_.aux_[static_cast<size_t>(s_.AuxIndex(id))] = static_cast<uint32_t>(n);
    }
    return absl::OkStatus();
  }
  void NewEpoch() {
    ++epoch_;
    max_handles_ = std::max(max_handles_, HandleCount());
    if (visitor_ != nullptr) {
      // Handles of earlier epochs are never referenced again.
      scan_handles_.clear();
      s_.epoch_begin_.push_back(0);
      s_.epoch_first_.push_back(static_cast<ItemId>(s_.num_items_));
      return;
    }
    s_.epoch_begin_.push_back(static_cast<uint32_t>(s_.handle_items_.size()));
    s_.epoch_first_.push_back(static_cast<ItemId>(s_.num_items_));
  }
  absl::Status Enter(uint64_t offset) {
    if (++depth_ > limits_.max_depth) {
      return Fail(absl::StatusCode::kResourceExhausted,
                  absl::StrCat("nesting deeper than ", limits_.max_depth),
                  offset);
    }
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> ReadUtfName(serde::SourceRange* range,
                                          absl::string_view what);

  // --- grammar rules -------------------------------------------------------
  absl::Status ReadContent(ItemId* out);
  absl::Status ReadObject(Expect expect, ItemId* out);
  absl::Status ReadClassDesc(ItemId* out, DescId* desc);
  absl::Status ReadNewClassDesc(ItemId* out);
  absl::Status ReadClassDescTail(ItemId id, size_t mark, DescId did);
  absl::Status ReadNewProxyClassDesc(ItemId* out);
  // The head newObject, newClass and newEnum share: the item at its TC byte
  // `tc` (skipped), then its classDesc read as the item's first child.
  struct ItemHead {
    uint64_t at = 0;   // offset of the TC byte
    size_t mark = 0;   // scratch_ size before the item's children
    ItemId id = 0;
    DescId desc = 0;   // kNoDesc for a null classDesc (the caller says why that is wrong)
  };
  // With `null_refusal`, a null classDesc is refused with that message
  // (located at the TC byte).
  absl::StatusOr<ItemHead> ReadItemHead(ItemKind kind, uint8_t tc, ItemId* out,
                                        const char* null_refusal = nullptr);
  // The type code at the current position read and an item of `kind` opened
  // for it (`*out`); `*at` its offset.
  absl::Status OpenTaggedItem(ItemKind kind, ItemId* out, uint64_t* at, uint8_t* tag);
  absl::Status ReadNewObject(ItemId* out);
  absl::Status ReadNewString(ItemId* out);
  absl::Status ReadNewArray(ItemId* out);
  absl::Status ReadNewEnum(ItemId* out);
  absl::Status ReadNewClass(ItemId* out);
  absl::Status ReadPrevObject(Expect expect, ItemId* out);
  absl::Status ReadReference(uint64_t at, ItemId* out, int32_t* handle, uint64_t* index);
  absl::Status ReadException(ItemId* out);
  absl::Status ReadBlockData(ItemId* out);
  template <typename L>
  absl::Status ReadLength(absl::string_view what, uint64_t limit, uint64_t at, uint64_t* len);
  absl::Status ReadNull(ItemId* out);
  // Annotation items up to and including TC_ENDBLOCKDATA
  // (`ObjectInputStream.skipCustomData` / the objectAnnotation rule).
  // Returns the offset of the TC_ENDBLOCKDATA byte in `*end_offset`.
  absl::Status ReadAnnotation(uint64_t* end_offset, uint32_t* count);
  absl::Status PeekTag(uint8_t* tag);
  // Scan mode: the value of the field type string at `at` (a TC_STRING /
  // TC_LONGSTRING or a TC_REFERENCE to one, already checked by ReadObject).
  absl::StatusOr<std::string> ScannedStringAt(uint64_t at) const;
  DescId finished_desc_ = kNoDesc;

  serde::DataInput in_;
  DecodeLimits limits_;
  DecodeOptions options_;
  Stream s_;
  std::vector<ItemId> scratch_;
  std::vector<ClassData> cd_scratch_;
  std::vector<PathSeg> path_;
  uint32_t depth_ = 0;
  uint32_t epoch_ = 0;
  bool aborted_ = false;
  uint64_t top_count_ = 0;
  uint64_t handles_total_ = 0;
  uint64_t max_handles_ = 0;
  // Scan mode only.
  StreamVisitor* visitor_ = nullptr;
  struct OpenItem {
    uint64_t offset;
    DescId desc;
  };
  std::vector<OpenItem> open_;
  // Offset of the item defining each handle of the current epoch.
  std::vector<uint64_t> scan_handles_;
  // Offset of each descriptor's item, by DescId.
  std::vector<uint64_t> desc_offsets_;
};

namespace {
std::string SimpleName(const std::string& name) {
  size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}
}  // namespace

namespace {

// A name from the stream as it appears in an error path: at most 80 bytes
// (whole characters), so a 64 KiB class name does not flood the message.
std::string ShortName(absl::string_view name) {
  constexpr size_t kMax = 80;
  if (name.size() <= kMax) return std::string(name);
  return absl::StrCat(name.substr(0, serde::Utf8PrefixLength(name, kMax)), "...");
}

}  // namespace

// The construct path of an error. Deep graphs
// (hostile ones, up to `max_depth` levels) show their first 24 and last 24
// levels around "...(N levels)..."; Flink's graphs are far shallower.
std::string StreamReader::PathString() const {
  std::string out;
  constexpr size_t kHead = 24, kTail = 24;
  for (size_t i = 0; i < path_.size(); ++i) {
    if (path_.size() > kHead + kTail && i == kHead) {
      absl::StrAppend(&out, "...(", path_.size() - kHead - kTail, " levels)...");
      i = path_.size() - kTail - 1;
      continue;
    }
    const PathSeg& seg = path_[i];
    switch (seg.kind) {
      case Seg::kRoot:
        absl::StrAppend(&out, seg.a == 0 ? "root" : absl::StrCat("root#", seg.a));
        break;
      case Seg::kObject:
        absl::StrAppend(&out, "[",
                        seg.a < s_.descs_.size()
                            ? ShortName(SimpleName(s_.descs_[seg.a].DisplayName()))
                            : "?",
                        "]");
        break;
      case Seg::kField:
        absl::StrAppend(&out, ".field ",
                        seg.a < s_.descs_.size() &&
                                seg.b < s_.descs_[seg.a].fields.size()
                            ? ShortName(s_.descs_[seg.a].fields[seg.b].name)
                            : "?");
        break;
      case Seg::kData:
        absl::StrAppend(&out, ".data[", seg.a, "]");
        break;
      case Seg::kAnnotation:
        absl::StrAppend(&out, ".classAnnotation[", seg.a, "]");
        break;
      case Seg::kElement:
        absl::StrAppend(&out, "[", seg.a, "]");
        break;
      case Seg::kClassDesc:
        absl::StrAppend(&out, ".classDesc");
        break;
      case Seg::kSuper:
        absl::StrAppend(&out, ".super");
        break;
      case Seg::kTypeString:
        absl::StrAppend(&out, ".fieldType");
        break;
      case Seg::kEnumName:
        absl::StrAppend(&out, ".enumName");
        break;
      case Seg::kException:
        absl::StrAppend(&out, ".exception");
        break;
    }
  }
  if (out.empty()) out = "stream";
  return out;
}

absl::Status StreamReader::PeekTag(uint8_t* tag) {
  if (in_.at_end()) {
    return Fail(absl::StatusCode::kOutOfRange,
                "input ends where a type code is expected", in_.position());
  }
  *tag = in_.data()[in_.position() - in_.base_offset()];
  return absl::OkStatus();
}

absl::StatusOr<std::string> StreamReader::ReadUtfName(serde::SourceRange* range,
                                                      absl::string_view what) {
  serde::ByteView body;
  uint64_t at = in_.position();
  if (absl::Status st = in_.ReadModifiedUtf8Raw(&body, range); !st.ok()) {
    return Wrap(serde::Annotate(st, what));
  }
  if (serde::IsPlainAscii(body)) return std::string(serde::AsStringView(body));
  absl::StatusOr<std::string> s = serde::ModifiedUtf8ToUtf8(body);
  if (!s.ok()) {
    return Fail(absl::StatusCode::kInvalidArgument,
                absl::StrCat("malformed modified UTF-8 in ", what), at);
  }
  return s;
}

absl::StatusOr<Stream> StreamReader::Read() {
  if (in_.remaining() > limits_.max_total_bytes) {
    return Fail(absl::StatusCode::kResourceExhausted,
                absl::StrCat("input larger than ", limits_.max_total_bytes,
                             " bytes"),
                0);
  }
  uint16_t magic = 0, version = 0;
  if (absl::Status st = in_.ReadUint16(&magic); !st.ok()) return Wrap(st);
  if (magic != kStreamMagic) {
    return Fail(absl::StatusCode::kInvalidArgument,
                absl::StrFormat("invalid stream header: magic 0x%04X", magic), 0);
  }
  if (absl::Status st = in_.ReadUint16(&version); !st.ok()) return Wrap(st);
  if (version != kStreamVersion) {
    return Fail(absl::StatusCode::kInvalidArgument,
                absl::StrCat("unsupported stream version ", version), 2);
  }
  s_.epoch_begin_.push_back(0);
  s_.epoch_first_.push_back(0);
  uint32_t index = 0;
  while (!in_.at_end()) {
    // Bytes that cannot start a content item end the stream after its first
    // item (before it they are an invalid type code): the JDK's
    // `readObject` would stop at the last object and never look at them
    // (a carved file, a length-prefixed frame with slack). Their range is
    // kept, so the stream still re-encodes byte for byte.
    uint8_t tag;
    FLINKSTATE_RETURN_IF_ERROR(PeekTag(&tag));
    if ((tag < kTcBase || tag > kTcEnum) && top_count_ > 0) {
      const uint64_t at = in_.position();
      if (!options_.allow_trailing_data) {
        return Fail(absl::StatusCode::kInvalidArgument,
                    absl::StrFormat("%d trailing bytes after the last object "
                                    "(type code 0x%02X is not a content item)",
                                    in_.remaining(), tag),
                    at);
      }
      s_.trailing_ = {at, in_.remaining()};
      break;
    }
    path_.push_back({Seg::kRoot, index++, 0});
    ItemId id;
    FLINKSTATE_RETURN_IF_ERROR(ReadContent(&id));
    path_.pop_back();
    ++top_count_;
    if (visitor_ == nullptr) s_.top_level_.push_back(id);
    // `ObjectOutputStream.writeFatalException` clears the handle table and
    // the writer may go on: the reader's `readObject` throws
    // WriteAbortedException for this item, and the next call reads on.
    if (aborted_) {
      s_.aborted_ = true;
      aborted_ = false;
    }
  }
  std::sort(s_.aborted_items_.begin(), s_.aborted_items_.end());
  if (visitor_ != nullptr) return Stream();
  return std::move(s_);
}

// `content := object | blockdata`, plus TC_RESET at depth 0
// (`ObjectInputStream.readObject0` with `handleReset`).
absl::Status StreamReader::ReadContent(ItemId* out) {
  uint8_t tag;
  FLINKSTATE_RETURN_IF_ERROR(PeekTag(&tag));
  if (tag == kTcBlockData || tag == kTcBlockDataLong) return ReadBlockData(out);
  if (tag == kTcReset) {
    FLINKSTATE_ASSIGN_OR_RETURN(*out,
                                NewItem(ItemKind::kReset, tag, in_.position()));
    FLINKSTATE_RETURN_IF_ERROR(in_.Skip(1));
    NewEpoch();
    Finish(*out, scratch_.size());
    return absl::OkStatus();
  }
  return ReadObject(Expect::kObject, out);
}

// `object` (`ObjectInputStream.readObject0`).
absl::Status StreamReader::ReadObject(Expect expect, ItemId* out) {
  uint8_t tag;
  FLINKSTATE_RETURN_IF_ERROR(PeekTag(&tag));
  uint64_t at = in_.position();
  if (expect == Expect::kEnumName && tag != kTcString && tag != kTcLongString) {
    return Fail(absl::StatusCode::kInvalidArgument,
                absl::StrFormat("enum constant name must be a new string, "
                                "found type code 0x%02X (%s)",
                                tag, TypeCodeName(tag)),
                at);
  }
  if (expect == Expect::kTypeString && tag != kTcString &&
      tag != kTcLongString && tag != kTcReference) {
    return Fail(absl::StatusCode::kInvalidArgument,
                absl::StrFormat("field type must be a string, found type code "
                                "0x%02X (%s)",
                                tag, TypeCodeName(tag)),
                at);
  }
  FLINKSTATE_RETURN_IF_ERROR(Enter(at));
  absl::Status st;
  switch (tag) {
    case kTcNull: st = ReadNull(out); break;
    case kTcReference: st = ReadPrevObject(expect, out); break;
    case kTcClassDesc: st = ReadNewClassDesc(out); break;
    case kTcProxyClassDesc: st = ReadNewProxyClassDesc(out); break;
    case kTcObject: st = ReadNewObject(out); break;
    case kTcString:
    case kTcLongString: st = ReadNewString(out); break;
    case kTcArray: st = ReadNewArray(out); break;
    case kTcEnum: st = ReadNewEnum(out); break;
    case kTcClass: st = ReadNewClass(out); break;
    case kTcException: st = ReadException(out); break;
    default:
      return Fail(absl::StatusCode::kInvalidArgument, NotAnObjectProblem(tag, depth_), at);
  }
  FLINKSTATE_RETURN_IF_ERROR(st);
  --depth_;
  return absl::OkStatus();
}

absl::Status StreamReader::ReadNull(ItemId* out) {
  FLINKSTATE_ASSIGN_OR_RETURN(*out,
                              NewItem(ItemKind::kNull, kTcNull, in_.position()));
  FLINKSTATE_RETURN_IF_ERROR(in_.Skip(1));
  Finish(*out, scratch_.size());
  return absl::OkStatus();
}

// `TC_REFERENCE handle(i4)` at `at`: the reference item in `*out`, the wire
// value in `*handle` and, checked against the handles assigned so far in this
// epoch, its index in the handle table in `*index`.
absl::Status StreamReader::ReadReference(uint64_t at, ItemId* out, int32_t* handle,
                                         uint64_t* index) {
  FLINKSTATE_ASSIGN_OR_RETURN(*out, NewItem(ItemKind::kReference, kTcReference, at));
  FLINKSTATE_RETURN_IF_ERROR(in_.Skip(1));
  if (absl::Status st = in_.ReadInt32(handle); !st.ok()) return Wrap(st);
  const uint64_t table = HandleCount();
  const int64_t i = static_cast<int64_t>(*handle) - kBaseWireHandle;
  if (i < 0 || static_cast<uint64_t>(i) >= table) {
    return Fail(absl::StatusCode::kInvalidArgument,
                absl::StrFormat("invalid handle value 0x%08X (%d handles "
                                "assigned so far)",
                                static_cast<uint32_t>(*handle), table),
                at);
  }
  *index = static_cast<uint64_t>(i);
  return absl::OkStatus();
}

// `prevObject := TC_REFERENCE handle(i4)` (`ObjectInputStream.readHandle`).
absl::Status StreamReader::ReadPrevObject(Expect expect, ItemId* out) {
  uint64_t at = in_.position();
  int32_t handle;
  uint64_t index;
  FLINKSTATE_RETURN_IF_ERROR(ReadReference(at, out, &handle, &index));
  const ItemKind tkind = ItemKindOfTag(TargetOf(index).tag);
  bool is_desc =
      tkind == ItemKind::kClassDesc || tkind == ItemKind::kProxyClassDesc;
  if (expect == Expect::kObject && is_desc) {
    return Fail(absl::StatusCode::kInvalidArgument,
                WrongReferenceProblem(static_cast<uint32_t>(handle), "class descriptor",
                                      "an object"),
                at);
  }
  if (expect == Expect::kTypeString && tkind != ItemKind::kString) {
    return Fail(absl::StatusCode::kInvalidArgument,
                WrongReferenceProblem(static_cast<uint32_t>(handle), ItemKindName(tkind),
                                      "a field type string"),
                at);
  }
  // The target is implied by the handle value and the epoch.
  Finish(*out, scratch_.size());
  return absl::OkStatus();
}

// `classDesc := newClassDesc | prevObject | nullRef`
// (`ObjectInputStream.readClassDesc`).
absl::Status StreamReader::ReadClassDesc(ItemId* out, DescId* desc) {
  uint8_t tag;
  FLINKSTATE_RETURN_IF_ERROR(PeekTag(&tag));
  uint64_t at = in_.position();
  *desc = kNoDesc;
  switch (tag) {
    case kTcNull:
      return ReadNull(out);
    case kTcClassDesc:
    case kTcProxyClassDesc: {
      FLINKSTATE_RETURN_IF_ERROR(Enter(at));
      FLINKSTATE_RETURN_IF_ERROR(tag == kTcClassDesc ? ReadNewClassDesc(out)
                                                     : ReadNewProxyClassDesc(out));
      --depth_;
      *desc = finished_desc_;
      return absl::OkStatus();
    }
    case kTcReference: {
      int32_t handle;
      uint64_t index;
      FLINKSTATE_RETURN_IF_ERROR(ReadReference(at, out, &handle, &index));
      const HandleTarget target = TargetOf(index);
      const ItemKind tkind = ItemKindOfTag(target.tag);
      const DescId tdesc = target.desc;
      if (tkind != ItemKind::kClassDesc && tkind != ItemKind::kProxyClassDesc) {
        return Fail(absl::StatusCode::kInvalidArgument,
                    WrongReferenceProblem(static_cast<uint32_t>(handle), ItemKindName(tkind),
                                          "a class descriptor"),
                    at);
      }
      if (!s_.descs_[tdesc].complete) {
        return Fail(absl::StatusCode::kInvalidArgument,
                    absl::StrFormat("reference 0x%08X to a class descriptor "
                                    "that is still being read",
                                    static_cast<uint32_t>(handle)),
                    at);
      }
      Finish(*out, scratch_.size());
      *desc = tdesc;
      return absl::OkStatus();
    }
    default:
      return Fail(absl::StatusCode::kInvalidArgument,
                  absl::StrFormat("invalid type code 0x%02X (%s) where a class "
                                  "descriptor is expected",
                                  tag, TypeCodeName(tag)),
                  at);
  }
}

// `newClassDesc := TC_CLASSDESC className serialVersionUID [H] classDescInfo`
// (`ObjectInputStream.readNonProxyDesc`, `ObjectStreamClass.readNonProxy`).
absl::Status StreamReader::ReadNewClassDesc(ItemId* out) {
  uint64_t at = in_.position();
  size_t mark = scratch_.size();
  FLINKSTATE_ASSIGN_OR_RETURN(ItemId id, NewItem(ItemKind::kClassDesc, kTcClassDesc, at));
  *out = id;
  DescId did = static_cast<DescId>(s_.descs_.size());
  s_.descs_.emplace_back();
  s_.descs_[did].item = id;
  if (visitor_ != nullptr) desc_offsets_.push_back(at);
  SetDesc(id, did);
  path_.push_back({Seg::kClassDesc, did, 0});
  FLINKSTATE_RETURN_IF_ERROR(in_.Skip(1));
  serde::SourceRange name_range;
  FLINKSTATE_ASSIGN_OR_RETURN(std::string name,
                              ReadUtfName(&name_range, "class name"));
  s_.descs_[did].forbidden_as_object =
      name == "java.lang.String" || name == "java.lang.Class" ||
      name == "java.io.ObjectStreamClass";
  s_.descs_[did].name = std::move(name);
  s_.descs_[did].name_range = name_range;
  int64_t suid;
  if (absl::Status st = in_.ReadInt64(&suid); !st.ok()) return Wrap(st);
  s_.descs_[did].suid = suid;
  FLINKSTATE_RETURN_IF_ERROR(AssignHandle(id, mark));
  uint8_t flags;
  uint16_t nfields;
  if (absl::Status st = in_.ReadUint8(&flags); !st.ok()) return Wrap(st);
  s_.descs_[did].flags = flags;
  uint64_t flags_at = in_.position() - 1;
  if ((flags & kScSerializable) && (flags & kScExternalizable)) {
    return Fail(absl::StatusCode::kInvalidArgument,
                "serializable and externalizable flags conflict", flags_at);
  }
  if (absl::Status st = in_.ReadUint16(&nfields); !st.ok()) return Wrap(st);
  if (nfields > in_.remaining() / 3) {
    return Fail(absl::StatusCode::kOutOfRange,
                absl::StrCat("field count ", nfields,
                             " exceeds the remaining input"),
                in_.position() - 2);
  }
  if ((flags & kScEnum) && (nfields != 0 || suid != 0)) {
    return Fail(absl::StatusCode::kInvalidArgument,
                "enum descriptor has fields or a non-zero serialVersionUID",
                flags_at);
  }
  std::vector<FieldDesc> fields;
  fields.reserve(nfields);
  uint32_t prim_bytes = 0, nobj = 0;
  for (uint32_t i = 0; i < nfields; ++i) {
    uint64_t fat = in_.position();
    uint8_t code;
    if (absl::Status st = in_.ReadUint8(&code); !st.ok()) return Wrap(st);
    FieldDesc f;
    f.type_code = static_cast<char>(code);
    if (PrimitiveSize(f.type_code) == 0 && code != 'L' && code != '[') {
      return Fail(absl::StatusCode::kInvalidArgument,
                  absl::StrFormat("invalid field type code 0x%02X", code), fat);
    }
    FLINKSTATE_ASSIGN_OR_RETURN(f.name, ReadUtfName(&f.name_range, "field name"));
    if (f.is_primitive()) {
      if (nobj > 0) {
        return Fail(absl::StatusCode::kInvalidArgument,
                    absl::StrCat("illegal field order: primitive field ",
                                 f.name, " after an object field"),
                    fat);
      }
      f.prim_offset = prim_bytes;
      prim_bytes += PrimitiveSize(f.type_code);
    } else {
      ++nobj;
      path_.push_back({Seg::kTypeString, did, i});
      ItemId t;
      const uint64_t t_at = in_.position();
      FLINKSTATE_RETURN_IF_ERROR(ReadObject(Expect::kTypeString, &t));
      path_.pop_back();
      AddChild(t);
      f.type_item = t;
      if (visitor_ == nullptr) {
        FLINKSTATE_ASSIGN_OR_RETURN(f.type_name, s_.StringValue(t));
      } else {
        FLINKSTATE_ASSIGN_OR_RETURN(f.type_name, ScannedStringAt(t_at));
      }
    }
    fields.push_back(std::move(f));
  }
  ClassDesc& d = s_.descs_[did];
  d.fields = std::move(fields);
  d.prim_bytes = prim_bytes;
  d.num_object_fields = nobj;
  return ReadClassDescTail(id, mark, did);
}

// `TC_PROXYCLASSDESC [H] count(i4) interfaceName* classAnnotation superClassDesc`
// (`ObjectInputStream.readProxyDesc`).
absl::Status StreamReader::ReadNewProxyClassDesc(ItemId* out) {
  uint64_t at = in_.position();
  size_t mark = scratch_.size();
  FLINKSTATE_ASSIGN_OR_RETURN(ItemId id, NewItem(ItemKind::kProxyClassDesc,
                                                 kTcProxyClassDesc, at));
  *out = id;
  DescId did = static_cast<DescId>(s_.descs_.size());
  s_.descs_.emplace_back();
  s_.descs_[did].item = id;
  s_.descs_[did].is_proxy = true;
  s_.descs_[did].flags = kScSerializable;
  if (visitor_ != nullptr) desc_offsets_.push_back(at);
  SetDesc(id, did);
  path_.push_back({Seg::kClassDesc, did, 0});
  FLINKSTATE_RETURN_IF_ERROR(in_.Skip(1));
  FLINKSTATE_RETURN_IF_ERROR(AssignHandle(id, mark));
  int32_t n;
  if (absl::Status st = in_.ReadInt32(&n); !st.ok()) return Wrap(st);
  if (n < 0 || n > 65535 || static_cast<uint64_t>(n) > in_.remaining() / 2) {
    return Fail(absl::StatusCode::kInvalidArgument,
                absl::StrCat("invalid proxy interface count ", n),
                in_.position() - 4);
  }
  for (int32_t i = 0; i < n; ++i) {
    serde::SourceRange r;
    FLINKSTATE_ASSIGN_OR_RETURN(std::string iface,
                                ReadUtfName(&r, "proxy interface name"));
    s_.descs_[did].interfaces.push_back(std::move(iface));
    s_.descs_[did].interface_ranges.push_back(r);
  }
  return ReadClassDescTail(id, mark, did);
}

absl::Status StreamReader::ReadAnnotation(uint64_t* end_offset,
                                          uint32_t* count) {
  *count = 0;
  for (;;) {
    if (aborted_) return absl::OkStatus();
    uint8_t tag;
    FLINKSTATE_RETURN_IF_ERROR(PeekTag(&tag));
    if (tag == kTcEndBlockData) {
      *end_offset = in_.position();
      return in_.Skip(1);
    }
    path_.push_back({Seg::kData, *count, 0});
    ItemId child;
    if (tag == kTcBlockData || tag == kTcBlockDataLong) {
      FLINKSTATE_RETURN_IF_ERROR(ReadBlockData(&child));
    } else {
      FLINKSTATE_RETURN_IF_ERROR(ReadObject(Expect::kObject, &child));
    }
    path_.pop_back();
    AddChild(child);
    ++*count;
  }
}

// The length field of a block data or string header (u1/i4, u2/i8), checked:
// not negative, within `limit`, and within the remaining bytes. `what` names
// the construct in the error; `at` is the header's offset.
template <typename L>
absl::Status StreamReader::ReadLength(absl::string_view what, uint64_t limit, uint64_t at,
                                      uint64_t* len) {
  L l;
  absl::Status st;
  if constexpr (std::is_same_v<L, uint8_t>) {
    st = in_.ReadUint8(&l);
  } else if constexpr (std::is_same_v<L, uint16_t>) {
    st = in_.ReadUint16(&l);
  } else if constexpr (std::is_same_v<L, int32_t>) {
    st = in_.ReadInt32(&l);
  } else {
    static_assert(std::is_same_v<L, int64_t>);
    st = in_.ReadInt64(&l);
  }
  if (!st.ok()) return Wrap(st);
  if (absl::Status bad = CheckItemLength(what, static_cast<int64_t>(l), limit, in_.remaining());
      !bad.ok()) {
    return Fail(bad.code(), bad.message(), at);
  }
  *len = static_cast<uint64_t>(l);
  return absl::OkStatus();
}

// `blockdata := TC_BLOCKDATA len(u1) bytes | TC_BLOCKDATALONG len(i4) bytes`
// (`ObjectInputStream.BlockDataInputStream.readBlockHeader`).
absl::Status StreamReader::ReadBlockData(ItemId* out) {
  uint64_t at;
  uint8_t tag;
  FLINKSTATE_RETURN_IF_ERROR(OpenTaggedItem(ItemKind::kBlockData, out, &at, &tag));
  uint64_t len;
  if (tag == kTcBlockData) {
    FLINKSTATE_RETURN_IF_ERROR(ReadLength<uint8_t>("block data", limits_.max_block_bytes, at, &len));
  } else {
    FLINKSTATE_RETURN_IF_ERROR(ReadLength<int32_t>("block data", limits_.max_block_bytes, at, &len));
  }
  // The payload and its length are implied by the header.
  FLINKSTATE_RETURN_IF_ERROR(in_.Skip(len));
  Finish(*out, scratch_.size());
  return absl::OkStatus();
}

// `newString := TC_STRING [H] len(u2) bytes | TC_LONGSTRING [H] len(i8) bytes`
// (`ObjectInputStream.readString`).
absl::Status StreamReader::ReadNewString(ItemId* out) {
  uint64_t at;
  uint8_t tag;
  FLINKSTATE_RETURN_IF_ERROR(OpenTaggedItem(ItemKind::kString, out, &at, &tag));
  FLINKSTATE_RETURN_IF_ERROR(AssignHandle(*out, scratch_.size()));
  uint64_t len;
  if (tag == kTcString) {
    FLINKSTATE_RETURN_IF_ERROR(ReadLength<uint16_t>("string", limits_.max_string_bytes, at, &len));
  } else {
    FLINKSTATE_RETURN_IF_ERROR(ReadLength<int64_t>("string", limits_.max_string_bytes, at, &len));
  }
  serde::ByteView body;
  uint64_t body_at = in_.position();
  FLINKSTATE_RETURN_IF_ERROR(in_.ReadBytes(len, &body));
  size_t bad = serde::FindInvalidModifiedUtf8(body);
  if (bad != body.size()) {
    return Fail(absl::StatusCode::kInvalidArgument,
                "malformed modified UTF-8 in string", body_at + bad);
  }
  Finish(*out, scratch_.size());
  return absl::OkStatus();
}

// `classAnnotation superClassDesc`, the end that newClassDesc and
// newProxyClassDesc share; completes descriptor `did` (its superclass chain)
// and item `id`. `path_` ends in the descriptor's segment, which this pops.
absl::Status StreamReader::ReadClassDescTail(ItemId id, size_t mark, DescId did) {
  uint64_t end_offset;
  uint32_t count;
  FLINKSTATE_RETURN_IF_ERROR(ReadAnnotation(&end_offset, &count));
  ItemId super_item;
  DescId super;
  path_.back().kind = Seg::kSuper;
  FLINKSTATE_RETURN_IF_ERROR(ReadClassDesc(&super_item, &super));
  path_.pop_back();
  AddChild(super_item);
  ClassDesc& d = s_.descs_[did];
  d.super = super;
  if (super != kNoDesc) d.chain = s_.descs_[super].chain;
  d.chain.push_back(did);
  d.complete = true;
  finished_desc_ = did;
  Finish(id, mark);
  return absl::OkStatus();
}

// See the declaration: `TC_x classDesc`, the part of `newObject`, `newArray`,
// `newClass` and `newEnum` before their handle.
absl::StatusOr<StreamReader::ItemHead> StreamReader::ReadItemHead(ItemKind kind, uint8_t tc,
                                                                  ItemId* out,
                                                                  const char* null_refusal) {
  ItemHead h;
  h.at = in_.position();
  h.mark = scratch_.size();
  FLINKSTATE_ASSIGN_OR_RETURN(h.id, NewItem(kind, tc, h.at));
  *out = h.id;
  FLINKSTATE_RETURN_IF_ERROR(in_.Skip(1));
  ItemId desc_item;
  path_.push_back({Seg::kClassDesc, 0, 0});
  FLINKSTATE_RETURN_IF_ERROR(ReadClassDesc(&desc_item, &h.desc));
  path_.pop_back();
  AddChild(desc_item);
  if (null_refusal != nullptr && h.desc == kNoDesc) {
    return Fail(absl::StatusCode::kInvalidArgument, null_refusal, h.at);
  }
  return h;
}

absl::Status StreamReader::OpenTaggedItem(ItemKind kind, ItemId* out, uint64_t* at,
                                          uint8_t* tag) {
  *at = in_.position();
  if (absl::Status st = in_.ReadUint8(tag); !st.ok()) return Wrap(st);
  FLINKSTATE_ASSIGN_OR_RETURN(*out, NewItem(kind, *tag, *at));
  return absl::OkStatus();
}

// `newObject := TC_OBJECT classDesc [H] classdata*`
// (`ObjectInputStream.readOrdinaryObject`, `readSerialData`,
// `readExternalData`).
absl::Status StreamReader::ReadNewObject(ItemId* out) {
  FLINKSTATE_ASSIGN_OR_RETURN(
      const ItemHead head,
      ReadItemHead(ItemKind::kObject, kTcObject, out, "TC_OBJECT with a null class descriptor"));
  const auto [at, mark, id, did] = head;
  {
    const ClassDesc& d = s_.descs_[did];
    if (d.forbidden_as_object) {
      return Fail(absl::StatusCode::kInvalidArgument,
                  absl::StrCat("invalid class descriptor ", d.name,
                               " for TC_OBJECT"),
                  at);
    }
    if (d.is_enum()) {
      return Fail(absl::StatusCode::kInvalidArgument,
                  absl::StrCat("TC_OBJECT of enum class ", d.name), at);
    }
  }
  SetDesc(id, did);
  FLINKSTATE_RETURN_IF_ERROR(AssignHandle(id, mark));
  if (aborted_) {
    Finish(id, mark);
    return absl::OkStatus();
  }
  path_.push_back({Seg::kObject, did, 0});
  size_t cd_mark = cd_scratch_.size();
  // Indexes, not references: `descs_` may grow while the data is read.
  const size_t chain_len = s_.descs_[did].chain.size();
  if (s_.descs_[did].is_externalizable()) {
    if (!(s_.descs_[did].flags & kScBlockData)) {
      return Fail(absl::StatusCode::kUnimplemented,
                  "externalizable data written with PROTOCOL_VERSION_1 cannot "
                  "be decoded without the class",
                  in_.position());
    }
    ClassData cd;
    cd.desc = did;
    cd.prim_values = {in_.position(), 0};
    cd.first_field = cd.first_annotation =
        static_cast<uint32_t>(scratch_.size() - mark);
    cd.has_annotation = true;
    FLINKSTATE_RETURN_IF_ERROR(ReadAnnotation(&cd.end_offset, &cd.num_annotation));
    cd_scratch_.push_back(cd);
  } else {
    for (size_t ci = 0; ci < chain_len; ++ci) {
      DescId cdid = s_.descs_[did].chain[ci];
      if (aborted_) break;
      ClassData cd;
      cd.desc = cdid;
      uint32_t prim = s_.descs_[cdid].prim_bytes;
      path_.back().a = cdid;
      if (prim > in_.remaining()) {
        return Fail(absl::StatusCode::kOutOfRange,
                    absl::StrCat("input ends inside the ", prim,
                                 " bytes of primitive field values"),
                    in_.position());
      }
      cd.prim_values = {in_.position(), prim};
      FLINKSTATE_RETURN_IF_ERROR(in_.Skip(prim));
      cd.first_field = static_cast<uint32_t>(scratch_.size() - mark);
      uint32_t nfields = static_cast<uint32_t>(s_.descs_[cdid].fields.size());
      for (uint32_t f = 0; f < nfields && !aborted_; ++f) {
        if (s_.descs_[cdid].fields[f].is_primitive()) continue;
        path_.push_back({Seg::kField, cdid, f});
        ItemId v;
        FLINKSTATE_RETURN_IF_ERROR(ReadObject(Expect::kObject, &v));
        path_.pop_back();
        AddChild(v);
        ++cd.num_fields;
      }
      cd.first_annotation = static_cast<uint32_t>(scratch_.size() - mark);
      if (s_.descs_[cdid].has_write_method() && !aborted_) {
        cd.has_annotation = true;
        FLINKSTATE_RETURN_IF_ERROR(
            ReadAnnotation(&cd.end_offset, &cd.num_annotation));
      }
      cd_scratch_.push_back(cd);
    }
  }
  path_.pop_back();
  if (visitor_ != nullptr) {
    cd_scratch_.resize(cd_mark);
    Finish(id, mark);
    return absl::OkStatus();
  }
  // Complete class data is derived from the children (`Stream::class_data`);
  // only an object the writer aborted keeps what was read of it.
  if (aborted_) {
    s_.aborted_class_data_[id].assign(cd_scratch_.begin() + cd_mark, cd_scratch_.end());
  }
  cd_scratch_.resize(cd_mark);
  Finish(id, mark);
  return absl::OkStatus();
}

// `newArray := TC_ARRAY classDesc [H] size(i4) values`
// (`ObjectInputStream.readArray`).
absl::Status StreamReader::ReadNewArray(ItemId* out) {
  FLINKSTATE_ASSIGN_OR_RETURN(const ItemHead head, ReadItemHead(ItemKind::kArray, kTcArray, out));
  const auto [at, mark, id, did] = head;
  if (did == kNoDesc || s_.descs_[did].is_proxy ||
      s_.descs_[did].name.size() < 2 || s_.descs_[did].name[0] != '[') {
    return Fail(absl::StatusCode::kInvalidArgument,
                "TC_ARRAY whose class descriptor is not an array class", at);
  }
  char et = s_.descs_[did].name[1];
  if (PrimitiveSize(et) == 0 && et != 'L' && et != '[') {
    return Fail(absl::StatusCode::kInvalidArgument,
                absl::StrCat("invalid array class name ", s_.descs_[did].name),
                at);
  }
  SetDesc(id, did);
  FLINKSTATE_RETURN_IF_ERROR(AssignHandle(id, mark));
  uint64_t len_at = in_.position();
  int32_t len;
  if (absl::Status st = in_.ReadInt32(&len); !st.ok()) return Wrap(st);
  if (len < 0) {
    return Fail(absl::StatusCode::kInvalidArgument,
                absl::StrCat("array length is negative (", len, ")"), len_at);
  }
  if (len > limits_.max_array_length) {
    return Fail(absl::StatusCode::kResourceExhausted,
                absl::StrCat("array length ", len, " exceeds the limit"),
                len_at);
  }
  int width = PrimitiveSize(et);
  uint64_t min_bytes = static_cast<uint64_t>(len) * (width ? width : 1);
  if (min_bytes > in_.remaining()) {
    return Fail(absl::StatusCode::kOutOfRange,
                absl::StrCat("array of ", len, " elements exceeds the ",
                             in_.remaining(), " remaining bytes"),
                len_at);
  }
  if (width) {
    // The payload is the last `min_bytes` of the item (`Stream::item`).
    FLINKSTATE_RETURN_IF_ERROR(in_.Skip(min_bytes));
  } else if (visitor_ != nullptr) {
    for (int32_t i = 0; i < len && !aborted_; ++i) {
      path_.push_back({Seg::kElement, static_cast<uint32_t>(i), 0});
      ItemId v;
      FLINKSTATE_RETURN_IF_ERROR(ReadObject(Expect::kObject, &v));
      path_.pop_back();
    }
  } else {
    // The element count is known (and bounded by the remaining input): the
    // children go straight into their run instead of through `scratch_`,
    // which would double the cost of a flood of null elements.
    ItemId* run = s_.kids_.Reserve(static_cast<size_t>(len) + 1);
    run[0] = scratch_[mark];  // the class descriptor
    scratch_.resize(mark);
    uint32_t n = 1;
    for (int32_t i = 0; i < len && !aborted_; ++i) {
      path_.push_back({Seg::kElement, static_cast<uint32_t>(i), 0});
      ItemId v;
      FLINKSTATE_RETURN_IF_ERROR(ReadObject(Expect::kObject, &v));
      path_.pop_back();
      run[n++] = v;
    }
    FinishRun(id, run, n);
    return absl::OkStatus();
  }
  Finish(id, mark);
  return absl::OkStatus();
}

// `newEnum := TC_ENUM classDesc [H] enumConstantName`
// (`ObjectInputStream.readEnum`).
absl::Status StreamReader::ReadNewEnum(ItemId* out) {
  FLINKSTATE_ASSIGN_OR_RETURN(const ItemHead head, ReadItemHead(ItemKind::kEnum, kTcEnum, out));
  const auto [at, mark, id, did] = head;
  if (did == kNoDesc || !s_.descs_[did].is_enum()) {
    return Fail(absl::StatusCode::kInvalidArgument,
                "TC_ENUM whose class descriptor is not an enum class", at);
  }
  SetDesc(id, did);
  FLINKSTATE_RETURN_IF_ERROR(AssignHandle(id, mark));
  path_.push_back({Seg::kEnumName, 0, 0});
  ItemId name;
  FLINKSTATE_RETURN_IF_ERROR(ReadObject(Expect::kEnumName, &name));
  path_.pop_back();
  AddChild(name);
  Finish(id, mark);
  return absl::OkStatus();
}

// `newClass := TC_CLASS classDesc [H]` (`ObjectInputStream.readClass`).
absl::Status StreamReader::ReadNewClass(ItemId* out) {
  FLINKSTATE_ASSIGN_OR_RETURN(
      const ItemHead head,
      ReadItemHead(ItemKind::kClass, kTcClass, out, "TC_CLASS with a null class descriptor"));
  const auto [at, mark, id, did] = head;
  SetDesc(id, did);
  FLINKSTATE_RETURN_IF_ERROR(AssignHandle(id, mark));
  Finish(id, mark);
  return absl::OkStatus();
}

// `exception := TC_EXCEPTION reset object reset`
// (`ObjectInputStream.readFatalException`). The item being written when the
// writer failed ends here: every enclosing item is marked `aborted`; the next
// top-level content (if the writer went on) is read normally.
absl::Status StreamReader::ReadException(ItemId* out) {
  uint64_t at = in_.position();
  size_t mark = scratch_.size();
  FLINKSTATE_ASSIGN_OR_RETURN(ItemId id, NewItem(ItemKind::kException, kTcException, at));
  *out = id;
  FLINKSTATE_RETURN_IF_ERROR(in_.Skip(1));
  NewEpoch();  // the exception item belongs to this epoch (`Stream::EpochOf`)
  uint8_t tag;
  FLINKSTATE_RETURN_IF_ERROR(PeekTag(&tag));
  if (tag != kTcObject) {
    return Fail(absl::StatusCode::kInvalidArgument,
                "TC_EXCEPTION not followed by a new object", in_.position());
  }
  path_.push_back({Seg::kException, 0, 0});
  ItemId thr;
  FLINKSTATE_RETURN_IF_ERROR(ReadObject(Expect::kObject, &thr));
  path_.pop_back();
  AddChild(thr);
  NewEpoch();
  Finish(id, mark);
  aborted_ = true;
  return absl::OkStatus();
}

absl::StatusOr<std::string> StreamReader::ScannedStringAt(uint64_t at) const {
  const uint8_t* base = in_.data().data();  // base_offset() is 0 here
  uint64_t off = at;
  if (base[off] == kTcReference) {
    const int64_t index =
        static_cast<int64_t>(static_cast<int32_t>(serde::DecodeBigEndian32(base + off + 1))) -
        kBaseWireHandle;
    off = TargetOf(static_cast<uint64_t>(index)).offset;
  }
  serde::ByteView body =
      base[off] == kTcString
          ? serde::ByteView(base + off + 3, serde::DecodeBigEndian16(base + off + 1))
          : serde::ByteView(base + off + 9, serde::DecodeBigEndian64(base + off + 1));
  if (serde::IsPlainAscii(body)) return std::string(serde::AsStringView(body));
  return serde::ModifiedUtf8ToUtf8(body);
}

absl::StatusOr<Stream> DecodeStream(serde::ByteView input,
                                    const DecodeOptions& options) {
  StreamReader reader(input, options);
  return reader.Read();
}

absl::StatusOr<StreamScan> ScanStream(serde::ByteView input, StreamVisitor& visitor,
                                      const DecodeOptions& options) {
  StreamReader reader(input, options, &visitor);
  FLINKSTATE_RETURN_IF_ERROR(reader.Read().status());
  return reader.TakeScan();
}

}  // namespace flinkstate::javaobj
