// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/javaobj/layouts.h"

#include <optional>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "flinkstate/javaobj/stream_constants.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate::javaobj {
namespace {

absl::Status Bad(absl::string_view cls, absl::string_view what,
                 uint64_t offset) {
  return serde::DecodeError(absl::StatusCode::kInvalidArgument, "javaobj", "",
                            absl::StrCat(cls, " data: ", what), offset);
}

// The class data of `desc_name` in object `obj`, or nullopt.
std::optional<ClassData> FindClassData(const Stream& s, ItemId obj,
                                       absl::string_view desc_name) {
  for (const ClassData& cd : s.class_data(obj)) {
    if (s.desc(cd.desc).name == desc_name) return cd;
  }
  return std::nullopt;
}

ContainerEntry EntryOf(const Stream& s, ItemId key, ItemId value) {
  ContainerEntry e;
  e.key = key;
  e.value = value;
  uint64_t begin = s.item(key != kNoItem ? key : value).range.offset;
  e.range = {begin, s.item(value).range.end() - begin};
  return e;
}

}  // namespace

absl::Status AnnotationCursor::NextByte(uint8_t* b, uint64_t* offset) {
  while (index_ < items_.size()) {
    const Item& it = s_.item(items_[index_]);
    if (it.kind != ItemKind::kBlockData) {
      return serde::DecodeError(absl::StatusCode::kInvalidArgument, "javaobj", "",
                                absl::StrCat("expected block data, found ", ItemKindName(it.kind)),
                                it.range.offset);
    }
    if (in_block_ < it.count) {
      *offset = it.payload.offset + in_block_;
      *b = s_.input()[*offset];
      ++in_block_;
      return absl::OkStatus();
    }
    ++index_;
    in_block_ = 0;
  }
  return absl::InvalidArgumentError("javaobj: block data ends early");
}

absl::Status AnnotationCursor::ReadInt32(
    int32_t* out, std::vector<serde::SourceRange>* where) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    uint8_t b;
    uint64_t off;
    FLINKSTATE_RETURN_IF_ERROR(NextByte(&b, &off));
    v = (v << 8) | b;
    if (where) {
      if (!where->empty() && where->back().end() == off) {
        ++where->back().size;
      } else {
        where->push_back({off, 1});
      }
    }
  }
  *out = static_cast<int32_t>(v);
  return absl::OkStatus();
}

absl::Status AnnotationCursor::SkipBytes(uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    uint8_t b;
    uint64_t off;
    FLINKSTATE_RETURN_IF_ERROR(NextByte(&b, &off));
  }
  return absl::OkStatus();
}

bool AnnotationCursor::AtEnd() {
  while (index_ < items_.size()) {
    const Item& it = s_.item(items_[index_]);
    if (it.kind != ItemKind::kBlockData || in_block_ < it.count) return false;
    ++index_;
    in_block_ = 0;
  }
  return true;
}

absl::Status AnnotationCursor::ReadObject(ItemId* out) {
  // Finish the current (used-up) block and skip empty ones.
  while (index_ < items_.size()) {
    const Item& it = s_.item(items_[index_]);
    if (it.kind != ItemKind::kBlockData) break;
    if (in_block_ < it.count) {
      return serde::DecodeError(absl::StatusCode::kInvalidArgument, "javaobj", "",
                                "unread block data where an object is expected",
                                it.payload.offset + in_block_);
    }
    ++index_;
    in_block_ = 0;
  }
  if (index_ >= items_.size()) {
    return absl::InvalidArgumentError("javaobj: custom data ends early");
  }
  *out = items_[index_++];
  return absl::OkStatus();
}

bool IsKnownContainerClass(absl::string_view n) {
  return n == "java.util.HashMap" || n == "java.util.LinkedHashMap" ||
         n == "java.util.HashSet" || n == "java.util.LinkedHashSet" ||
         n == "java.util.ArrayList" || n == "java.util.LinkedList" ||
         n == "java.util.ArrayDeque" || n == "java.util.TreeMap" ||
         n == "java.util.TreeSet" || n == "java.util.CollSer" ||
         n == "java.util.Arrays$ArrayList" ||
         n == "java.util.Collections$SingletonList" ||
         n == "java.util.Collections$SingletonSet" ||
         n == "java.util.Collections$SingletonMap" ||
         n == "java.util.Collections$EmptyList" ||
         n == "java.util.Collections$EmptySet" ||
         n == "java.util.Collections$EmptyMap";
}

ItemId UnwrapCollection(const Stream& s, ItemId id) {
  for (int guard = 0; guard < 64; ++guard) {
    id = s.Resolve(id);
    const Item& it = s.item(id);
    if (it.kind != ItemKind::kObject) return id;
    const std::string& n = s.desc(it.desc).name;
    if (!absl::StartsWith(n, "java.util.Collections$Unmodifiable") &&
        !absl::StartsWith(n, "java.util.Collections$Synchronized") &&
        !absl::StartsWith(n, "java.util.Collections$Checked")) {
      return id;
    }
    ItemId inner = kNoItem;
    for (const char* f : {"m", "list", "s", "c"}) {
      inner = s.FieldValue(id, f);
      if (inner != kNoItem) break;
    }
    if (inner == kNoItem || s.item(s.Resolve(inner)).kind != ItemKind::kObject) {
      return id;
    }
    id = inner;
  }
  return id;
}

namespace {

// `ViewContainer`; with `keep_entries` false the entries are checked but not
// stored (`CheckLayouts` needs only the verdict: a map of a million entries
// would otherwise cost a 24-byte entry each).
absl::StatusOr<ContainerView> View(const Stream& s, ItemId id, bool keep_entries) {
  ContainerView v;
  id = s.Resolve(id);
  v.object = id;
  const Item& it = s.item(id);
  absl::Span<const ItemId> kids = s.children(id);
  if (it.kind == ItemKind::kArray && PrimitiveSize(it.element_type) == 0) {
    v.class_name = s.desc(it.desc).name;
    v.size = static_cast<int64_t>(it.count);
    for (size_t i = 1; i < kids.size(); ++i) {
      if (keep_entries) v.entries.push_back(EntryOf(s, kNoItem, kids[i]));
    }
    CountLocation c;
    // The i4 length follows the class descriptor item.
    c.pieces.push_back({s.item(kids[0]).range.end(), 4});
    c.value = static_cast<int32_t>(it.count);
    v.counts.push_back(std::move(c));
    v.append_offset = it.range.end();
    return v;
  }
  if (it.kind != ItemKind::kObject) {
    return serde::WithLocation(
        absl::NotFoundError(absl::StrCat("javaobj: ", ItemKindName(it.kind), " at byte ",
                                         it.range.offset, " is not a known container")),
        "javaobj", "", it.range.offset);
  }
  const std::string& name = s.desc(it.desc).name;
  v.class_name = name;
  uint64_t at = it.range.offset;

  // Reads `n` (key, value) pairs or `n` elements from `cur`.
  auto read_entries = [&](AnnotationCursor& cur, int64_t n, bool pairs,
                          absl::string_view cls) -> absl::Status {
    if (n < 0) return Bad(cls, absl::StrCat("negative size ", n), at);
    for (int64_t i = 0; i < n; ++i) {
      ItemId k = kNoItem, val;
      if (pairs) {
        absl::Status st = cur.ReadObject(&k);
        if (!st.ok()) return Bad(cls, st.message(), at);
      }
      absl::Status st = cur.ReadObject(&val);
      if (!st.ok()) return Bad(cls, st.message(), at);
      if (keep_entries) v.entries.push_back(EntryOf(s, k, val));
    }
    if (!cur.AtEnd()) return Bad(cls, "unexpected items after the entries", at);
    return absl::OkStatus();
  };
  auto annotation = [&](const ClassData& cd) {
    return kids.subspan(cd.first_annotation, cd.num_annotation);
  };
  auto count_at = [&](AnnotationCursor& cur, absl::string_view cls,
                      int32_t scale) -> absl::StatusOr<int32_t> {
    CountLocation c;
    c.scale = scale;
    absl::Status st = cur.ReadInt32(&c.value, &c.pieces);
    if (!st.ok()) return Bad(cls, st.message(), at);
    v.counts.push_back(c);
    return c.value;
  };

  if (name == "java.util.HashMap" || name == "java.util.LinkedHashMap" ||
      name == "java.util.HashSet" || name == "java.util.LinkedHashSet") {
    bool is_map = absl::EndsWith(name, "Map");
    const char* base = is_map ? "java.util.HashMap" : "java.util.HashSet";
    const std::optional<ClassData> cd = FindClassData(s, id, base);
    if (!cd.has_value() || !cd->has_annotation) {
      return Bad(name, absl::StrCat("no ", base, " class data"), at);
    }
    v.kind = is_map ? ContainerKind::kMap : ContainerKind::kSet;
    AnnotationCursor cur(s, annotation(*cd));
    if (!cur.SkipBytes(is_map ? 4 : 8).ok()) {
      return Bad(name, "block data too short", at);
    }
    FLINKSTATE_ASSIGN_OR_RETURN(int32_t n, count_at(cur, name, 1));
    v.size = n;
    FLINKSTATE_RETURN_IF_ERROR(read_entries(cur, n, is_map, name));
    v.append_offset = cd->end_offset;
    return v;
  }
  if (name == "java.util.ArrayList" || name == "java.util.LinkedList" ||
      name == "java.util.ArrayDeque" || name == "java.util.TreeMap" ||
      name == "java.util.TreeSet" || name == "java.util.CollSer") {
    const std::optional<ClassData> cd = FindClassData(s, id, name);
    if (!cd.has_value() || !cd->has_annotation) {
      return Bad(name, "no custom data", at);
    }
    AnnotationCursor cur(s, annotation(*cd));
    v.kind = ContainerKind::kList;
    int32_t scale = 1;
    bool pairs = false;
    if (name == "java.util.TreeMap") {
      v.kind = ContainerKind::kMap;
      pairs = true;
    } else if (name == "java.util.TreeSet") {
      v.kind = ContainerKind::kSet;
      ItemId comparator;
      if (!cur.ReadObject(&comparator).ok()) {
        return Bad(name, "missing comparator", at);
      }
    } else if (name == "java.util.CollSer") {
      absl::StatusOr<int64_t> tag = s.PrimFieldInt(id, "tag");
      if (!tag.ok()) return Bad(name, "missing field tag", at);
      int t = static_cast<int>(*tag & 0xFF);
      if (t == 3) {
        v.kind = ContainerKind::kMap;
        pairs = true;
        scale = 2;
      } else if (t == 2) {
        v.kind = ContainerKind::kSet;
      } else if (t != 1 && t != 4) {
        return Bad(name, absl::StrCat("unknown tag ", t), at);
      }
    }
    FLINKSTATE_ASSIGN_OR_RETURN(int32_t n, count_at(cur, name, scale));
    if (n < 0 || n % scale != 0) {
      return Bad(name, absl::StrCat("invalid count ", n), at);
    }
    v.size = n / scale;
    if (name == "java.util.ArrayList") {
      absl::StatusOr<int64_t> field = s.PrimFieldInt(id, "size");
      if (!field.ok()) return Bad(name, "missing field size", at);
      CountLocation c;
      c.pieces.push_back(s.PrimFieldRange(id, "size"));
      c.value = static_cast<int32_t>(*field);
      v.counts.push_back(c);
      v.size = *field;  // the reader uses the field (spec §13)
    }
    FLINKSTATE_RETURN_IF_ERROR(read_entries(cur, v.size, pairs, name));
    v.append_offset = cd->end_offset;
    return v;
  }
  if (name == "java.util.Arrays$ArrayList") {
    ItemId a = s.FieldValue(id, "a");
    if (a == kNoItem || s.item(s.Resolve(a)).kind != ItemKind::kArray) {
      return Bad(name, "field a is not an array", at);
    }
    FLINKSTATE_ASSIGN_OR_RETURN(ContainerView inner, View(s, a, keep_entries));
    inner.object = id;
    inner.class_name = name;
    return inner;
  }
  v.resizable = false;
  v.append_offset = it.range.end();
  if (name == "java.util.Collections$SingletonList" ||
      name == "java.util.Collections$SingletonSet") {
    v.kind = absl::EndsWith(name, "List") ? ContainerKind::kList
                                          : ContainerKind::kSet;
    ItemId e = s.FieldValue(id, "element");
    if (e == kNoItem) return Bad(name, "missing field element", at);
    v.size = 1;
    if (keep_entries) v.entries.push_back(EntryOf(s, kNoItem, e));
    return v;
  }
  if (name == "java.util.Collections$SingletonMap") {
    v.kind = ContainerKind::kMap;
    ItemId k = s.FieldValue(id, "k"), val = s.FieldValue(id, "v");
    if (k == kNoItem || val == kNoItem) return Bad(name, "missing field k or v", at);
    v.size = 1;
    if (keep_entries) v.entries.push_back(EntryOf(s, k, val));
    return v;
  }
  if (name == "java.util.Collections$EmptyList") return v;
  if (name == "java.util.Collections$EmptySet") {
    v.kind = ContainerKind::kSet;
    return v;
  }
  if (name == "java.util.Collections$EmptyMap") {
    v.kind = ContainerKind::kMap;
    return v;
  }
  return absl::NotFoundError(
      absl::StrCat("javaobj: no known layout for ", name));
}

}  // namespace

absl::StatusOr<ContainerView> ViewContainer(const Stream& s, ItemId id) {
  return View(s, id, /*keep_entries=*/true);
}

std::vector<LayoutFinding> CheckLayouts(const Stream& s) {
  std::vector<LayoutFinding> out;
  for (ItemId id = 0; id < s.num_items(); ++id) {
    const Item& it = s.item(id);
    if (it.kind != ItemKind::kObject || it.aborted) continue;
    const std::string& name = s.desc(it.desc).name;
    if (!IsKnownContainerClass(name)) continue;
    absl::StatusOr<ContainerView> v = View(s, id, /*keep_entries=*/false);
    if (v.ok() || v.status().code() == absl::StatusCode::kNotFound) continue;
    LayoutFinding f;
    f.object = id;
    f.class_name = name;
    f.offset = it.range.offset;
    f.problem = std::string(v.status().message());
    // `readObject` of these classes reads exactly the count it was given,
    // then `ObjectInputStream.skipCustomData` discards what is left before
    // TC_ENDBLOCKDATA; reading past the data's end meets TC_ENDBLOCKDATA.
    if (absl::StrContains(f.problem, "custom data ends early") ||
        absl::StrContains(f.problem, "block data ends early")) {
      f.jdk = absl::StrCat("the JDK throws java.io.OptionalDataException (eof=true) in ",
                           name, ".readObject: the count is larger than the elements written");
    } else if (absl::StrContains(f.problem, "unexpected items after the entries")) {
      f.jdk = absl::StrCat("the JDK reads only the counted elements of ", name,
                           " and silently drops the rest (skipCustomData)");
    } else if (absl::StrContains(f.problem, "negative size") ||
               absl::StrContains(f.problem, "invalid count")) {
      f.jdk = absl::StrCat("the JDK throws java.io.StreamCorruptedException or "
                           "IllegalArgumentException in ", name, ".readObject");
    } else {
      f.jdk = absl::StrCat("the JDK fails in ", name, ".readObject");
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace flinkstate::javaobj
