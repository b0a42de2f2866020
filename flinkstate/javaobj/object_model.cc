// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/javaobj/object_model.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "flinkstate/javaobj/stream_constants.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/modified_utf8.h"

namespace flinkstate::javaobj {

const char* ItemKindName(ItemKind kind) {
  switch (kind) {
    case ItemKind::kNull: return "null";
    case ItemKind::kReference: return "reference";
    case ItemKind::kClassDesc: return "class descriptor";
    case ItemKind::kProxyClassDesc: return "proxy class descriptor";
    case ItemKind::kObject: return "object";
    case ItemKind::kString: return "string";
    case ItemKind::kArray: return "array";
    case ItemKind::kEnum: return "enum constant";
    case ItemKind::kClass: return "class object";
    case ItemKind::kBlockData: return "block data";
    case ItemKind::kReset: return "reset";
    case ItemKind::kException: return "exception";
  }
  return "?";
}

ItemKind ItemKindOfTag(uint8_t tag) {
  switch (tag) {
    case kTcReference: return ItemKind::kReference;
    case kTcClassDesc: return ItemKind::kClassDesc;
    case kTcProxyClassDesc: return ItemKind::kProxyClassDesc;
    case kTcObject: return ItemKind::kObject;
    case kTcString:
    case kTcLongString: return ItemKind::kString;
    case kTcArray: return ItemKind::kArray;
    case kTcEnum: return ItemKind::kEnum;
    case kTcClass: return ItemKind::kClass;
    case kTcBlockData:
    case kTcBlockDataLong: return ItemKind::kBlockData;
    case kTcReset: return ItemKind::kReset;
    case kTcException: return ItemKind::kException;
    default: return ItemKind::kNull;
  }
}

std::string ClassDesc::DisplayName() const {
  if (!is_proxy) return name;
  return absl::StrCat("proxy(", absl::StrJoin(interfaces, ","), ")");
}

int ClassDesc::FindField(absl::string_view field_name) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].name == field_name) return static_cast<int>(i);
  }
  return -1;
}

void Stream::AppendItem(uint64_t offset, uint8_t tag) {
  const size_t id = num_items_++;
  const size_t k = id & 15;
  if (k == 0) {
    OffsetGroup& g = groups_.emplace_back();
    g.base = offset;
    g.aux_rank = static_cast<uint32_t>(aux_.size());
  }
  OffsetGroup& g = groups_[id >> 4];
  const uint64_t rel = offset - g.base;
  uint8_t& narrow = narrow_.emplace_back();
  if (g.wide == kNarrow && rel <= 0xFF) {
    narrow = static_cast<uint8_t>(rel);
  } else {
    if (g.wide == kNarrow) {  // the group spans over 255 bytes: go wide
      g.wide = static_cast<uint32_t>(wide_.size() >> 4);
      for (size_t j = 0; j < 16; ++j) {
        wide_.emplace_back() = j < k ? narrow_[id - k + j] : 0;
      }
    }
    wide_[(size_t{g.wide} << 4) | k] = rel;
  }
  if (tag == kTcString || tag == kTcLongString) {
    g.aux_mask |= static_cast<uint16_t>(1u << k);
    aux_.emplace_back() = 0;  // the handle, set by AssignHandle
  } else if (!IsLeafTag(tag)) {
    g.aux_mask |= static_cast<uint16_t>(1u << k);
    aux_.emplace_back() = static_cast<uint32_t>(nodes_.size());
    nodes_.emplace_back() = Node();
  }
}

uint64_t Stream::Size(ItemId id) const {
  const uint64_t at = Offset(id);
  const uint8_t* p = input_.data() + at;
  switch (p[0]) {
    case kTcNull:
    case kTcReset: return 1;
    case kTcReference: return 5;
    case kTcString: return 3 + serde::DecodeBigEndian16(p + 1);
    case kTcLongString: return 9 + serde::DecodeBigEndian64(p + 1);
    case kTcBlockData: return 2 + p[1];
    case kTcBlockDataLong: return 5 + serde::DecodeBigEndian32(p + 1);
    default: {
      const Node* n = NodeOf(id);
      return n ? n->size : 0;
    }
  }
}

uint32_t Stream::EpochOf(ItemId id) const {
  // Largest e with epoch_first_[e] <= id (epoch_first_[0] == 0).
  size_t lo = 0, hi = epoch_first_.size();
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    if (epoch_first_[mid] <= id) lo = mid; else hi = mid;
  }
  uint32_t e = static_cast<uint32_t>(lo);
  // A TC_EXCEPTION belongs to the epoch its first table clear opens.
  if (Tag(id) == kTcException) ++e;
  return e;
}

ItemId Stream::Target(ItemId id) const {
  const uint64_t at = Offset(id);
  const int64_t index =
      static_cast<int64_t>(static_cast<int32_t>(
          serde::DecodeBigEndian32(input_.data() + at + 1))) -
      kBaseWireHandle;
  const uint32_t e = epoch_first_.size() == 1 ? 0 : EpochOf(id);
  return handle_items_[epoch_begin_[e] + static_cast<uint64_t>(index)];
}

bool Stream::IsAborted(ItemId id) const {
  if (aborted_items_.empty()) return false;
  return std::binary_search(aborted_items_.begin(), aborted_items_.end(), id);
}

Item Stream::item(ItemId id) const {
  Item it;
  const uint64_t at = Offset(id);
  const uint8_t* p = input_.data() + at;
  it.tag = p[0];
  it.kind = ItemKindOfTag(it.tag);
  it.range.offset = at;
  it.subtree_end = id + 1;
  it.epoch = epoch_first_.size() == 1 ? 0 : EpochOf(id);
  switch (it.tag) {
    case kTcNull:
    case kTcReset: it.range.size = 1; return it;
    case kTcReference:
      it.range.size = 5;
      it.target = Target(id);
      return it;
    case kTcString:
    case kTcLongString:
    case kTcBlockData:
    case kTcBlockDataLong: {
      const uint64_t head = it.tag == kTcString ? 3
                            : it.tag == kTcLongString ? 9
                            : it.tag == kTcBlockData ? 2 : 5;
      it.range.size = Size(id);
      it.count = it.range.size - head;
      it.payload = {at + head, it.count};
      if (it.kind == ItemKind::kString) {
        it.handle = static_cast<int32_t>(aux_[AuxIndex(id)]);
      }
      return it;
    }
    default: break;
  }
  const Node* n = NodeOf(id);
  if (n == nullptr) return it;
  it.range.size = n->size;
  it.subtree_end = n->subtree_end;
  it.num_children = n->num_children;
  it.desc = n->desc;
  it.handle = n->handle;
  if (it.kind == ItemKind::kObject) {
    // What `class_data(id).size()` returns, without deriving the entries.
    auto ab = aborted_class_data_.find(id);
    if (ab != aborted_class_data_.end()) {
      it.num_class_data = static_cast<uint32_t>(ab->second.size());
    } else if (n->desc != kNoDesc && n->num_children != 0 && !IsAborted(id)) {
      const ClassDesc& d = descs_[n->desc];
      it.num_class_data = d.is_externalizable() ? 1 : static_cast<uint32_t>(d.chain.size());
    }
  }
  // Where the reader assigns the handle: before any child of a descriptor,
  // after the class descriptor of everything else (no handle: 0).
  it.assign_at = (n->handle < 0 || it.kind == ItemKind::kClassDesc ||
                  it.kind == ItemKind::kProxyClassDesc) ? 0 : 1;
  if (it.kind == ItemKind::kArray) {
    it.count = ArrayCount(*n);
    if (n->desc != kNoDesc && descs_[n->desc].name.size() >= 2) {
      it.element_type = descs_[n->desc].name[1];
      const int w = PrimitiveSize(it.element_type);
      if (w != 0) {
        const uint64_t bytes = it.count * static_cast<uint64_t>(w);
        it.payload = {at + n->size - bytes, bytes};
      }
    }
  }
  it.aborted = IsAborted(id);
  return it;
}

uint32_t Stream::ArrayCount(const Node& n) const {
  if (n.num_children == 0) return 0;
  return serde::DecodeBigEndian32(input_.data() + End(n.kids[0]));
}

ClassDataList Stream::class_data(ItemId object) const {
  ClassDataList out;
  const Node* n = NodeOf(object);
  if (n == nullptr || kind(object) != ItemKind::kObject) return out;
  if (!aborted_class_data_.empty()) {
    auto it = aborted_class_data_.find(object);
    if (it != aborted_class_data_.end()) {
      out.assign(it->second.begin(), it->second.end());
      return out;
    }
  }
  if (IsAborted(object) || n->num_children == 0 || n->desc == kNoDesc) {
    return out;  // ended before its class data (TC_EXCEPTION)
  }
  // The layout `StreamReader::ReadNewObject` reads: after the class
  // descriptor (child 0), per class of the chain its primitive values, one
  // child per object field, and (SC_WRITE_METHOD) annotation children up
  // to a TC_ENDBLOCKDATA byte; Externalizable data is annotation only.
  const uint8_t* in = input_.data();
  const ItemId* kids = n->kids;
  const uint32_t num = n->num_children;
  uint64_t pos = End(kids[0]);
  uint32_t k = 1;
  auto annotation = [&](ClassData& cd) {
    cd.has_annotation = true;
    cd.first_annotation = k;
    while (k < num && in[pos] != kTcEndBlockData) {
      pos = End(kids[k++]);
      ++cd.num_annotation;
    }
    cd.end_offset = pos++;
  };
  const ClassDesc& d = descs_[n->desc];
  if (d.is_externalizable()) {
    ClassData& cd = out.emplace_back();
    cd.desc = n->desc;
    cd.prim_values = {pos, 0};
    cd.first_field = k;
    annotation(cd);
    return out;
  }
  for (const DescId c : d.chain) {
    const ClassDesc& cdesc = descs_[c];
    ClassData& cd = out.emplace_back();
    cd.desc = c;
    cd.prim_values = {pos, cdesc.prim_bytes};
    pos += cdesc.prim_bytes;
    cd.first_field = k;
    cd.num_fields = cdesc.num_object_fields;
    for (uint32_t f = 0; f < cd.num_fields && k < num; ++f) pos = End(kids[k++]);
    cd.first_annotation = k;
    if (cdesc.has_write_method()) annotation(cd);
  }
  return out;
}

size_t Stream::ItemStorageBytes() const {
  size_t kids = 0;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    kids += nodes_[i].num_children * sizeof(ItemId);
  }
  size_t cds = 0;
  for (const auto& [id, v] : aborted_class_data_) cds += v.size() * sizeof(ClassData);
  return groups_.size() * sizeof(OffsetGroup) + narrow_.size() +
         wide_.size() * sizeof(uint64_t) + aux_.size() * sizeof(uint32_t) +
         nodes_.size() * sizeof(Node) + kids + cds +
         (top_level_.size() + handle_items_.size() + epoch_begin_.size() +
          epoch_first_.size()) * sizeof(uint32_t);
}

ItemId Stream::ItemAt(uint64_t offset) const {
  ItemId lo = 0, hi = static_cast<ItemId>(num_items_);
  while (lo < hi) {
    const ItemId mid = lo + (hi - lo) / 2;
    if (Offset(mid) < offset) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < num_items_ && Offset(lo) == offset ? lo : kNoItem;
}

uint32_t Stream::num_handles(uint32_t epoch) const {
  uint64_t end = epoch + 1 < epoch_begin_.size() ? epoch_begin_[epoch + 1]
                                                 : handle_items_.size();
  return static_cast<uint32_t>(end - epoch_begin_[epoch]);
}

std::string Stream::ClassNameOf(ItemId id) const {
  const ItemId r = Resolve(id);
  switch (kind(r)) {
    case ItemKind::kString: return "java.lang.String";
    case ItemKind::kObject:
    case ItemKind::kArray:
    case ItemKind::kEnum: return descs_[desc_of(r)].DisplayName();
    case ItemKind::kClass: return "java.lang.Class";
    default: return "";
  }
}

bool Stream::IsInstanceOf(ItemId id, absl::string_view class_name) const {
  const ItemId r = Resolve(id);
  const ItemKind k = kind(r);
  return (k == ItemKind::kObject || k == ItemKind::kEnum) &&
         descs_[desc_of(r)].name == class_name;
}

absl::StatusOr<std::string> Stream::StringValue(ItemId id) const {
  const Item it = item(Resolve(id));
  if (it.kind != ItemKind::kString) {
    return serde::WithLocation(
        absl::InvalidArgumentError(absl::StrCat("javaobj: item at byte ", it.range.offset,
                                                " is a ", ItemKindName(it.kind),
                                                ", not a string")),
        "javaobj", "", it.range.offset);
  }
  serde::ByteView body = serde::Slice(input_, it.payload);
  if (serde::IsPlainAscii(body)) return std::string(serde::AsStringView(body));
  return serde::ModifiedUtf8ToUtf8(body);
}

bool Stream::StringEquals(ItemId id, absl::string_view utf8) const {
  const Item it = item(Resolve(id));
  if (it.kind != ItemKind::kString) return false;
  serde::ByteView body = serde::Slice(input_, it.payload);
  if (body.size() == utf8.size() && serde::IsPlainAscii(body)) {
    return serde::AsStringView(body) == utf8;
  }
  absl::StatusOr<std::string> s = StringValue(id);
  return s.ok() && *s == utf8;
}

ItemId Stream::FieldValue(ItemId object, absl::string_view field) const {
  ItemId obj = Resolve(object);
  if (kind(obj) != ItemKind::kObject) return kNoItem;
  const ClassDataList cds = class_data(obj);
  absl::Span<const ItemId> kids = children(obj);
  for (size_t c = cds.size(); c-- > 0;) {
    const ClassDesc& d = descs_[cds[c].desc];
    uint32_t k = 0;
    for (const FieldDesc& f : d.fields) {
      if (f.is_primitive()) continue;
      if (k >= cds[c].num_fields) break;
      if (f.name == field) return kids[cds[c].first_field + k];
      ++k;
    }
  }
  return kNoItem;
}

serde::SourceRange Stream::PrimFieldRange(ItemId object,
                                          absl::string_view field) const {
  ItemId obj = Resolve(object);
  if (kind(obj) != ItemKind::kObject) return {};
  const ClassDataList cds = class_data(obj);
  for (size_t c = cds.size(); c-- > 0;) {
    const ClassDesc& d = descs_[cds[c].desc];
    for (const FieldDesc& f : d.fields) {
      if (!f.is_primitive() || f.name != field) continue;
      if (cds[c].prim_values.size < d.prim_bytes) return {};
      return {cds[c].prim_values.offset + f.prim_offset,
              static_cast<uint64_t>(PrimitiveSize(f.type_code))};
    }
  }
  return {};
}

serde::ByteView Stream::PrimFieldBytes(ItemId object,
                                       absl::string_view field) const {
  serde::SourceRange r = PrimFieldRange(object, field);
  if (r.size == 0) return {};
  return serde::Slice(input_, r);
}

absl::StatusOr<int64_t> Stream::PrimFieldInt(ItemId object,
                                             absl::string_view field) const {
  serde::ByteView b = PrimFieldBytes(object, field);
  switch (b.size()) {
    case 1: return static_cast<int64_t>(static_cast<int8_t>(b[0]));
    case 2: return static_cast<int64_t>(
        static_cast<int16_t>(serde::DecodeBigEndian16(b.data())));
    case 4: return static_cast<int64_t>(
        static_cast<int32_t>(serde::DecodeBigEndian32(b.data())));
    case 8: return static_cast<int64_t>(serde::DecodeBigEndian64(b.data()));
    default:
      return absl::NotFoundError(
          absl::StrCat("javaobj: object has no primitive field ", field));
  }
}

absl::StatusOr<std::string> Stream::EnumName(ItemId id) const {
  ItemId e = Resolve(id);
  if (kind(e) != ItemKind::kEnum || children(e).size() < 2) {
    return serde::WithLocation(absl::InvalidArgumentError(absl::StrCat(
                                   "javaobj: item at byte ", Offset(e), " is not an enum")),
                               "javaobj", "", Offset(e));
  }
  return StringValue(children(e)[1]);
}

}  // namespace flinkstate::javaobj
