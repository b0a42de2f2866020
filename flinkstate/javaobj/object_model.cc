// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/javaobj/object_model.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "flinkstate/javaobj/stream_constants.h"
#include "flinkstate/serde/endian.h"
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

uint32_t Stream::num_handles(uint32_t epoch) const {
  uint64_t end = epoch + 1 < epoch_begin_.size() ? epoch_begin_[epoch + 1]
                                                 : handle_items_.size();
  return static_cast<uint32_t>(end - epoch_begin_[epoch]);
}

std::string Stream::ClassNameOf(ItemId id) const {
  const Item& it = items_[Resolve(id)];
  switch (it.kind) {
    case ItemKind::kString: return "java.lang.String";
    case ItemKind::kObject:
    case ItemKind::kArray:
    case ItemKind::kEnum: return descs_[it.desc].DisplayName();
    case ItemKind::kClass: return "java.lang.Class";
    default: return "";
  }
}

bool Stream::IsInstanceOf(ItemId id, absl::string_view class_name) const {
  const Item& it = items_[Resolve(id)];
  return (it.kind == ItemKind::kObject || it.kind == ItemKind::kEnum) &&
         descs_[it.desc].name == class_name;
}

absl::StatusOr<std::string> Stream::StringValue(ItemId id) const {
  const Item& it = items_[Resolve(id)];
  if (it.kind != ItemKind::kString) {
    return absl::InvalidArgumentError(
        absl::StrCat("javaobj: item at byte ", it.range.offset,
                     " is a ", ItemKindName(it.kind), ", not a string"));
  }
  serde::ByteView body = serde::Slice(input_, it.payload);
  if (serde::IsPlainAscii(body)) return std::string(serde::AsStringView(body));
  return serde::ModifiedUtf8ToUtf8(body);
}

bool Stream::StringEquals(ItemId id, absl::string_view utf8) const {
  const Item& it = items_[Resolve(id)];
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
  if (items_[obj].kind != ItemKind::kObject) return kNoItem;
  absl::Span<const ClassData> cds = class_data(obj);
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
  if (items_[obj].kind != ItemKind::kObject) return {};
  absl::Span<const ClassData> cds = class_data(obj);
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
  if (items_[e].kind != ItemKind::kEnum || items_[e].num_children < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "javaobj: item at byte ", items_[e].range.offset, " is not an enum"));
  }
  return StringValue(children(e)[1]);
}

}  // namespace flinkstate::javaobj
