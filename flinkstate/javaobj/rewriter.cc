// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/javaobj/rewriter.h"

#include <iterator>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "flinkstate/javaobj/stream_constants.h"
#include "flinkstate/javaobj/stream_writer.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate::javaobj {

absl::StatusOr<std::vector<MapEntryRef>> FindMapEntriesByStringKey(
    const Stream& s, absl::string_view owner_class, absl::string_view field,
    absl::string_view key) {
  std::vector<MapEntryRef> out;
  std::set<ItemId> seen_maps;
  for (ItemId id = 0; id < s.num_items(); ++id) {
    const Item& it = s.item(id);
    if (it.kind != ItemKind::kObject || s.desc(it.desc).name != owner_class) {
      continue;
    }
    ItemId v = s.FieldValue(id, field);
    if (v == kNoItem || s.item(s.Resolve(v)).kind == ItemKind::kNull) continue;
    ItemId m = UnwrapCollection(s, v);
    if (!seen_maps.insert(m).second) continue;
    absl::StatusOr<ContainerView> view = ViewContainer(s, m);
    if (!view.ok()) {
      return serde::WithLocation(
          absl::InvalidArgumentError(absl::StrCat("javaobj: field ", field, " of ", owner_class,
                                                  " at byte ", it.range.offset, ": ",
                                                  view.status().message())),
          "javaobj", "", it.range.offset);
    }
    if (view->kind != ContainerKind::kMap) continue;
    for (size_t i = 0; i < view->entries.size(); ++i) {
      if (s.StringEquals(view->entries[i].key, key)) {
        out.push_back({id, m, i, view->entries[i]});
      }
    }
  }
  return out;
}

StreamRewriter::StreamRewriter(const Stream& stream)
    : s_(stream),
      parent_(stream.num_items(), kNoItem),
      edit_(stream.num_items(), kNone) {
  for (ItemId id = 0; id < s_.num_items(); ++id) {
    for (ItemId c : s_.children(id)) parent_[c] = id;
  }
}

absl::Status StreamRewriter::MarkEdited(ItemId id, EditKind kind) {
  if (id >= s_.num_items()) {
    return absl::FailedPreconditionError(
        absl::StrCat("javaobj: rewrite: no item ", id));
  }
  if (edit_[id] != kNone) {
    return serde::WithLocation(
        absl::FailedPreconditionError(absl::StrCat(
            "javaobj: rewrite: item at byte ", s_.item(id).range.offset, " is already edited")),
        "javaobj", "", s_.item(id).range.offset);
  }
  if (edited_in_place_.count(id) != 0) {
    return serde::WithLocation(
        absl::FailedPreconditionError(absl::StrCat(
            "javaobj: rewrite: item at byte ", s_.range(id).offset,
            " is edited in place already; it cannot also be removed or replaced")),
        "javaobj", "", s_.range(id).offset);
  }
  edit_[id] = kind;
  return absl::OkStatus();
}

absl::Status StreamRewriter::AddPatch(uint64_t offset, uint64_t size, std::string bytes) {
  auto next = patches_.lower_bound(offset);
  const bool overlaps_next =
      next != patches_.end() && (next->first < offset + size ||
                                 (next->first == offset && (size == 0 || next->second.size == 0)));
  bool overlaps_prev = false;
  if (next != patches_.begin()) {
    auto prev = std::prev(next);
    overlaps_prev = prev->first + prev->second.size > offset;
  }
  if (overlaps_next || overlaps_prev) {
    return serde::WithLocation(
        absl::FailedPreconditionError(absl::StrCat(
            "javaobj: rewrite: two edits of the bytes at byte ", offset, " overlap")),
        "javaobj", "", offset);
  }
  patches_.emplace(offset, Patch{size, std::move(bytes)});
  return absl::OkStatus();
}

namespace {

// The defining item `id` checked for an in-place edit (`what` names the API).
absl::Status CheckInPlaceTarget(const Stream& s, ItemId id, ItemKind want,
                                const std::vector<uint8_t>& edit, absl::string_view what) {
  if (id >= s.num_items()) {
    return absl::FailedPreconditionError(absl::StrCat("javaobj: rewrite: ", what, ": no item ", id));
  }
  const uint64_t at = s.range(id).offset;
  if (s.kind(id) != want) {
    return serde::WithLocation(
        absl::FailedPreconditionError(absl::StrCat(
            "javaobj: rewrite: ", what, ": the ", ItemKindName(s.kind(id)), " at byte ", at,
            " is not a defining ", ItemKindName(want), " (edit the item a reference points to)")),
        "javaobj", "", at);
  }
  if (edit[id] != 0) {
    return serde::WithLocation(
        absl::FailedPreconditionError(absl::StrCat(
            "javaobj: rewrite: ", what, ": the ", ItemKindName(want), " at byte ", at,
            " is removed or replaced already")),
        "javaobj", "", at);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status StreamRewriter::EditArrayElements(ItemId array,
                                               std::vector<serde::Replacement> edits) {
  FLINKSTATE_RETURN_IF_ERROR(
      CheckInPlaceTarget(s_, array, ItemKind::kArray, edit_, "EditArrayElements"));
  const Item it = s_.item(array);
  const uint64_t at = it.range.offset;
  auto fail = [&](const std::string& why) {
    return serde::WithLocation(
        absl::FailedPreconditionError(absl::StrCat("javaobj: rewrite: EditArrayElements: array at byte ",
                                                   at, ": ", why)),
        "javaobj", "", at);
  };
  const int width = PrimitiveSize(it.element_type);
  if (width <= 0 || it.element_type == 'L' || it.element_type == '[') {
    return fail(absl::StrCat("elements of type '", std::string(1, it.element_type),
                             "' are not primitive"));
  }
  if (edited_in_place_.count(array) != 0) return fail("edited in place already");
  const serde::SourceRange payload = it.payload;
  int64_t size = static_cast<int64_t>(payload.size);
  uint64_t end = 0;
  for (const serde::Replacement& e : edits) {
    if (e.range.offset < end || e.range.offset > payload.size ||
        e.range.size > payload.size - e.range.offset) {
      return fail(absl::StrCat("edit at element byte ", e.range.offset,
                               " is out of order or outside the ", payload.size,
                               " element bytes"));
    }
    end = e.range.offset + e.range.size;
    size += static_cast<int64_t>(e.bytes.size()) - static_cast<int64_t>(e.range.size);
  }
  if (size % width != 0) {
    return fail(absl::StrCat("the edited elements are ", size, " bytes, not a whole number of ",
                             width, "-byte elements"));
  }
  const int64_t count = size / width;
  if (count > 0x7FFFFFFF) return fail(absl::StrCat(count, " elements do not fit an array length"));
  // The i32 `length` just before the elements (TC_ARRAY classDesc length values).
  if (payload.offset < 4) return fail("no length before the elements");
  std::vector<std::pair<uint64_t, Patch>> add;
  if (static_cast<uint64_t>(count) != it.count) {
    std::string len(4, '\0');
    serde::EncodeBigEndian32(static_cast<uint32_t>(count), reinterpret_cast<uint8_t*>(len.data()));
    add.push_back({payload.offset - 4, Patch{4, std::move(len)}});
  }
  for (serde::Replacement& e : edits) {
    if (e.range.size == 0 && e.bytes.empty()) continue;
    add.push_back({payload.offset + e.range.offset, Patch{e.range.size, std::move(e.bytes)}});
  }
  // An insertion at the very end of the elements lies at the array's last
  // byte boundary, outside the bytes the walk copies for the array: anchor it
  // on the patch or element byte before it.
  const uint64_t end_abs = payload.offset + payload.size;
  if (!add.empty() && add.back().second.size == 0 && add.back().first == end_abs) {
    std::string tail = std::move(add.back().second.bytes);
    add.pop_back();
    if (!add.empty() && add.back().first + add.back().second.size == end_abs) {
      add.back().second.bytes += tail;
    } else if (payload.size > 0) {
      std::string last(1, static_cast<char>(s_.input()[end_abs - 1]));
      add.push_back({end_abs - 1, Patch{1, last + tail}});
    } else {
      return absl::InternalError("javaobj: rewrite: EditArrayElements: no length patch");
    }
  }
  for (auto& [offset, patch] : add) {
    FLINKSTATE_RETURN_IF_ERROR(AddPatch(offset, patch.size, std::move(patch.bytes)));
  }
  edited_in_place_.insert(array);
  ++stats_.edited_in_place;
  return absl::OkStatus();
}

absl::Status StreamRewriter::SetPrimitiveField(ItemId object, absl::string_view field,
                                               int64_t value) {
  FLINKSTATE_RETURN_IF_ERROR(
      CheckInPlaceTarget(s_, object, ItemKind::kObject, edit_, "SetPrimitiveField"));
  const uint64_t at = s_.range(object).offset;
  auto fail = [&](const std::string& why) {
    return serde::WithLocation(
        absl::FailedPreconditionError(absl::StrCat("javaobj: rewrite: SetPrimitiveField: ",
                                                   s_.ClassNameOf(object), " at byte ", at,
                                                   ": field '", field, "' ", why)),
        "javaobj", "", at);
  };
  // The field's type code, as `PrimFieldRange` finds it (most derived first).
  char type = 0;
  const ClassDataList cds = s_.class_data(object);
  for (size_t c = cds.size(); c-- > 0 && type == 0;) {
    for (const FieldDesc& f : s_.desc(cds[c].desc).fields) {
      if (f.is_primitive() && f.name == field) {
        type = f.type_code;
        break;
      }
    }
  }
  const serde::SourceRange r = s_.PrimFieldRange(object, field);
  if (type == 0 || r.size == 0) return fail("is no primitive field of the object");
  if (type == 'F' || type == 'D') return fail("is a floating-point field");
  const int bits = 8 * static_cast<int>(r.size);
  const bool fits =
      type == 'Z' ? (value == 0 || value == 1)
      : type == 'C' ? (value >= 0 && value <= 0xFFFF)
      : bits == 64 || (value >= -(int64_t{1} << (bits - 1)) && value < (int64_t{1} << (bits - 1)));
  if (!fits) return fail(absl::StrCat("cannot hold ", value));
  std::string bytes(r.size, '\0');
  for (uint64_t i = 0; i < r.size; ++i) {
    bytes[r.size - 1 - i] = static_cast<char>((static_cast<uint64_t>(value) >> (8 * i)) & 0xFF);
  }
  FLINKSTATE_RETURN_IF_ERROR(AddPatch(r.offset, r.size, std::move(bytes)));
  edited_in_place_.insert(object);
  ++stats_.edited_in_place;
  return absl::OkStatus();
}

absl::Status StreamRewriter::RemoveEntry(const ContainerView& c, size_t index) {
  if (!c.resizable) {
    return absl::FailedPreconditionError(absl::StrCat(
        "javaobj: rewrite: ", c.class_name,
        " cannot shrink in place; replace the whole collection"));
  }
  if (index >= c.entries.size()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "javaobj: rewrite: entry ", index, " of ", c.class_name, " with ",
        c.entries.size(), " entries"));
  }
  const ContainerEntry& e = c.entries[index];
  if (e.key != kNoItem) FLINKSTATE_RETURN_IF_ERROR(MarkEdited(e.key, kDeleted));
  FLINKSTATE_RETURN_IF_ERROR(MarkEdited(e.value, kDeleted));
  CountChange& cc = count_changes_[c.object];
  cc.counts = c.counts;
  cc.size = c.size;
  --cc.delta;
  ++stats_.removed_items;
  return absl::OkStatus();
}

absl::Status StreamRewriter::RemoveMapEntries(
    const std::vector<MapEntryRef>& hits) {
  std::map<ItemId, std::set<size_t>> per_map;
  for (const MapEntryRef& h : hits) per_map[h.map].insert(h.index);
  for (const auto& [map, indexes] : per_map) {
    FLINKSTATE_ASSIGN_OR_RETURN(ContainerView view, ViewContainer(s_, map));
    for (size_t i : indexes) FLINKSTATE_RETURN_IF_ERROR(RemoveEntry(view, i));
  }
  return absl::OkStatus();
}

absl::Status StreamRewriter::RemoveItem(ItemId id) {
  if (id >= s_.num_items()) {
    return absl::FailedPreconditionError("javaobj: rewrite: no such item");
  }
  ItemId p = parent_[id];
  bool ok = p == kNoItem;
  if (!ok && s_.item(p).kind == ItemKind::kObject) {
    absl::Span<const ItemId> kids = s_.children(p);
    for (const ClassData& cd : s_.class_data(p)) {
      for (uint32_t k = 0; k < cd.num_annotation; ++k) {
        if (kids[cd.first_annotation + k] == id) ok = true;
      }
    }
  }
  if (!ok) {
    return serde::WithLocation(
        absl::FailedPreconditionError(absl::StrCat(
            "javaobj: rewrite: the ", ItemKindName(s_.item(id).kind), " at byte ",
            s_.item(id).range.offset,
            " is a field value, element or descriptor part; replace it instead or "
            "remove it through its container")),
        "javaobj", "", s_.item(id).range.offset);
  }
  // The JDK (and `DecodeStream`) reads trailing bytes only after a content
  // item: with every top-level item gone they would stand where the first
  // item must be, and the output would not be a stream.
  if (p == kNoItem && s_.trailing().size > 0 &&
      removed_top_level_ + 1 == s_.top_level().size()) {
    return serde::WithLocation(
        absl::FailedPreconditionError(absl::StrCat(
            "javaobj: rewrite: the ", ItemKindName(s_.kind(id)), " at byte ",
            s_.range(id).offset, " is the last top-level item before the ",
            s_.trailing().size, " trailing bytes at byte ", s_.trailing().offset,
            "; removing it would leave them where the first object must be")),
        "javaobj", "", s_.range(id).offset);
  }
  FLINKSTATE_RETURN_IF_ERROR(MarkEdited(id, kDeleted));
  if (p == kNoItem) ++removed_top_level_;
  ++stats_.removed_items;
  return absl::OkStatus();
}

absl::Status StreamRewriter::ReplaceValue(ItemId id, NewValue value) {
  if (id >= s_.num_items()) {
    return absl::FailedPreconditionError("javaobj: rewrite: no such item");
  }
  const Item& it = s_.item(id);
  bool desc_ref = it.kind == ItemKind::kReference &&
                  (s_.item(it.target).kind == ItemKind::kClassDesc ||
                   s_.item(it.target).kind == ItemKind::kProxyClassDesc);
  if (it.kind == ItemKind::kClassDesc || it.kind == ItemKind::kProxyClassDesc ||
      it.kind == ItemKind::kBlockData || it.kind == ItemKind::kReset ||
      desc_ref) {
    return serde::WithLocation(
        absl::FailedPreconditionError(absl::StrCat("javaobj: rewrite: cannot replace the ",
                                                   ItemKindName(it.kind), " at byte ",
                                                   it.range.offset, " with a value")),
        "javaobj", "", it.range.offset);
  }
  if (value.kind() == NewValue::Kind::kExisting &&
      value.item() >= s_.num_items()) {
    return absl::FailedPreconditionError("javaobj: rewrite: no such item");
  }
  FLINKSTATE_RETURN_IF_ERROR(MarkEdited(id, kReplaced));
  replacement_.emplace(id, std::move(value));
  return absl::OkStatus();
}

absl::Status StreamRewriter::AppendEntry(const ContainerView& c, NewValue key,
                                         NewValue value) {
  if (!c.resizable) {
    return absl::FailedPreconditionError(absl::StrCat(
        "javaobj: rewrite: ", c.class_name, " cannot grow in place"));
  }
  std::vector<NewValue>& at = inserts_[c.append_offset];
  if (c.kind == ContainerKind::kMap) at.push_back(std::move(key));
  at.push_back(std::move(value));
  CountChange& cc = count_changes_[c.object];
  cc.counts = c.counts;
  cc.size = c.size;
  ++cc.delta;
  return absl::OkStatus();
}

void StreamRewriter::Emit(serde::SourceRange range, std::string bytes,
                          std::string* buf) {
  if (buf != nullptr) {
    buf->append(bytes);
  } else {
    replacements_.push_back({range, std::move(bytes)});
  }
}

absl::Status StreamRewriter::Gap(uint64_t from, uint64_t to, std::string* buf) {
  serde::ByteView in = s_.input();
  auto copy = [&](uint64_t a, uint64_t b) {
    // Input bytes [a, b) with count patches applied.
    auto p = patches_.lower_bound(a);
    while (p != patches_.end() && p->first < b) {
      if (buf) {
        buf->append(reinterpret_cast<const char*>(in.data()) + a, p->first - a);
        buf->append(p->second.bytes);
      } else {
        replacements_.push_back({{p->first, p->second.size}, p->second.bytes});
      }
      a = p->first + p->second.size;
      ++p;
    }
    if (buf && b > a) {
      buf->append(reinterpret_cast<const char*>(in.data()) + a, b - a);
    }
  };
  if (!inserts_.empty()) {
    auto it = inserts_.lower_bound(from);
    while (it != inserts_.end() && it->first <= to) {
      uint64_t off = it->first;
      copy(from, off);
      std::vector<NewValue> values = std::move(it->second);
      inserts_.erase(it);
      std::string bytes;
      for (const NewValue& v : values) {
        int32_t h;
        FLINKSTATE_RETURN_IF_ERROR(EmitValue(v, &bytes, &h));
      }
      Emit({off, 0}, std::move(bytes), buf);
      from = off;
      it = inserts_.lower_bound(from);
    }
  }
  copy(from, to);
  return absl::OkStatus();
}

absl::Status StreamRewriter::EmitValue(const NewValue& v, std::string* out,
                                       int32_t* defined_handle) {
  *defined_handle = -1;
  switch (v.kind()) {
    case NewValue::Kind::kNull:
      out->push_back(static_cast<char>(kTcNull));
      return absl::OkStatus();
    case NewValue::Kind::kString:
      FLINKSTATE_RETURN_IF_ERROR(AppendNewString(v.text(), out));
      *defined_handle = next_handle_++;
      return absl::OkStatus();
    case NewValue::Kind::kExisting: {
      ItemId x = s_.Resolve(v.item());
      if (now_null_[x]) {
        out->push_back(static_cast<char>(kTcNull));
        return absl::OkStatus();
      }
      if (s_.item(x).handle < 0) {  // null
        return Walk(x, out, true);
      }
      if (new_handle_[x] < 0) {
        FLINKSTATE_RETURN_IF_ERROR(Walk(x, out, true));
        ++stats_.rematerialized;
      } else {
        AppendReference(static_cast<uint32_t>(new_handle_[x]), out);
      }
      *defined_handle = new_handle_[x];
      return absl::OkStatus();
    }
  }
  return absl::InternalError("javaobj: rewrite: bad value kind");
}

absl::Status StreamRewriter::WalkChildren(ItemId id, std::string* buf) {
  const Item& it = s_.item(id);
  absl::Span<const ItemId> kids = s_.children(id);
  uint64_t pos = it.range.offset;
  for (size_t i = 0; i < kids.size(); ++i) {
    if (it.handle >= 0 && i == it.assign_at) new_handle_[id] = next_handle_++;
    const Item& c = s_.item(kids[i]);
    FLINKSTATE_RETURN_IF_ERROR(Gap(pos, c.range.offset, buf));
    FLINKSTATE_RETURN_IF_ERROR(Walk(kids[i], buf, false));
    pos = c.range.end();
  }
  if (it.handle >= 0 && it.assign_at >= kids.size()) {
    new_handle_[id] = next_handle_++;
  }
  return Gap(pos, it.range.end(), buf);
}

absl::Status StreamRewriter::Walk(ItemId id, std::string* buf, bool force) {
  const Item& it = s_.item(id);
  if (!force && edit_[id] == kDeleted) {
    Emit(it.range, "", buf);
    return absl::OkStatus();
  }
  if (!force && edit_[id] == kReplaced) {
    std::string bytes;
    int32_t h;
    const NewValue& v = replacement_.at(id);
    FLINKSTATE_RETURN_IF_ERROR(EmitValue(v, &bytes, &h));
    ItemId def = s_.Resolve(id);
    if (it.kind != ItemKind::kReference && it.handle >= 0) {
      if (h >= 0) {
        new_handle_[def] = h;
      } else {
        now_null_[def] = 1;
      }
    }
    Emit(it.range, std::move(bytes), buf);
    return absl::OkStatus();
  }
  if (it.kind == ItemKind::kReference) {
    ItemId t = it.target;
    if (now_null_[t]) {
      Emit(it.range, std::string(1, static_cast<char>(kTcNull)), buf);
      return absl::OkStatus();
    }
    if (new_handle_[t] >= 0) {
      if (buf != nullptr) {
        AppendReference(static_cast<uint32_t>(new_handle_[t]), buf);
      } else if (new_handle_[t] != s_.item(t).handle) {
        std::string b(4, '\0');
        serde::EncodeBigEndian32(
            static_cast<uint32_t>(kBaseWireHandle + new_handle_[t]),
            reinterpret_cast<uint8_t*>(b.data()));
        Emit({it.range.offset + 1, 4}, std::move(b), nullptr);
        ++stats_.renumbered_references;
      }
      return absl::OkStatus();
    }
    // The definition is not in the output (it was removed): write it here.
    std::string def;
    FLINKSTATE_RETURN_IF_ERROR(Walk(t, &def, true));
    ++stats_.rematerialized;
    Emit(it.range, std::move(def), buf);
    return absl::OkStatus();
  }
  if (it.handle >= 0 && new_handle_[id] >= 0) {
    // Already written earlier in the output (inserted or re-materialised).
    std::string ref;
    AppendReference(static_cast<uint32_t>(new_handle_[id]), &ref);
    Emit(it.range, std::move(ref), buf);
    ++stats_.demoted_definitions;
    return absl::OkStatus();
  }
  if (it.kind == ItemKind::kReset) {
    next_handle_ = 0;
    if (buf) buf->push_back(static_cast<char>(kTcReset));
    return absl::OkStatus();
  }
  if (it.kind == ItemKind::kException) {
    next_handle_ = 0;
    FLINKSTATE_RETURN_IF_ERROR(WalkChildren(id, buf));
    next_handle_ = 0;
    return absl::OkStatus();
  }
  return WalkChildren(id, buf);
}

absl::StatusOr<serde::EditPlan> StreamRewriter::BuildPlan() {
  if (built_) {
    return absl::FailedPreconditionError("javaobj: rewrite: plan already built");
  }
  built_ = true;
  for (const auto& [obj, cc] : count_changes_) {
    int64_t n = cc.size + cc.delta;
    if (n < 0) {
      return absl::FailedPreconditionError(
          "javaobj: rewrite: container size would become negative");
    }
    for (const CountLocation& loc : cc.counts) {
      uint8_t be[4];
      serde::EncodeBigEndian32(static_cast<uint32_t>(n * loc.scale), be);
      size_t k = 0;
      for (const serde::SourceRange& piece : loc.pieces) {
        if (piece.size == 0) continue;
        FLINKSTATE_RETURN_IF_ERROR(AddPatch(
            piece.offset, piece.size,
            std::string(reinterpret_cast<const char*>(be) + k, piece.size)));
        k += piece.size;
      }
      if (k != 4) return absl::InternalError("javaobj: rewrite: bad count location");
      ++stats_.patched_counts;
    }
  }
  new_handle_.assign(s_.num_items(), -1);
  now_null_.assign(s_.num_items(), 0);
  next_handle_ = 0;
  uint64_t pos = 4;
  for (ItemId top : s_.top_level()) {
    FLINKSTATE_RETURN_IF_ERROR(Gap(pos, s_.item(top).range.offset, nullptr));
    FLINKSTATE_RETURN_IF_ERROR(Walk(top, nullptr, false));
    pos = s_.item(top).range.end();
  }
  FLINKSTATE_RETURN_IF_ERROR(Gap(pos, s_.input().size(), nullptr));
  if (!inserts_.empty()) {
    return absl::InternalError("javaobj: rewrite: an insertion point was not reached");
  }
  return serde::EditPlan::FromReplacements(s_.input().size(),
                                           std::move(replacements_));
}

}  // namespace flinkstate::javaobj
