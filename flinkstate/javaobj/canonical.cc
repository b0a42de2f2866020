// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/javaobj/canonical.h"

#include <cstdio>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "flinkstate/javaobj/layouts.h"
#include "flinkstate/javaobj/stream_constants.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate::javaobj {

std::string EscapeJavaString(serde::ByteView b) {
  std::string out;
  out.reserve(b.size());
  size_t i = 0;
  while (i < b.size()) {
    uint32_t c = b[i];
    uint32_t unit;
    if (c < 0x80) {
      unit = c;
      i += 1;
    } else if ((c & 0xE0) == 0xC0 && i + 1 < b.size()) {
      unit = ((c & 0x1F) << 6) | (b[i + 1] & 0x3F);
      i += 2;
    } else if (i + 2 < b.size()) {
      unit = ((c & 0x0F) << 12) | ((b[i + 1] & 0x3F) << 6) | (b[i + 2] & 0x3F);
      i += 3;
    } else {
      unit = 0xFFFD;
      i = b.size();
    }
    if (unit >= 0x20 && unit < 0x7F && unit != '"' && unit != '\\') {
      out.push_back(static_cast<char>(unit));
    } else {
      absl::StrAppendFormat(&out, "\\u%04X", unit);
    }
  }
  return out;
}

namespace {

std::string Hex(serde::ByteView b) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  out.reserve(b.size() * 2);
  for (uint8_t c : b) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::string Primitive(char type, const uint8_t* p) {
  switch (type) {
    case 'B': return absl::StrCat("byte ", static_cast<int8_t>(p[0]));
    case 'Z': return p[0] ? "boolean true" : "boolean false";
    case 'C': return absl::StrFormat("char 0x%04X", serde::DecodeBigEndian16(p));
    case 'S': return absl::StrCat("short ", static_cast<int16_t>(serde::DecodeBigEndian16(p)));
    case 'I': return absl::StrCat("int ", static_cast<int32_t>(serde::DecodeBigEndian32(p)));
    case 'F': return absl::StrFormat("float 0x%08x", serde::DecodeBigEndian32(p));
    case 'J': return absl::StrCat("long ", static_cast<int64_t>(serde::DecodeBigEndian64(p)));
    case 'D': return absl::StrFormat("double 0x%016x", serde::DecodeBigEndian64(p));
  }
  return "?";
}

class Describer {
 public:
  Describer(const Stream& s, uint64_t max_bytes)
      : s_(s), number_(s.num_items(), -1), max_bytes_(max_bytes) {}

  absl::Status Value(ItemId id, int depth);
  absl::Status Top() {
    Line(0, "stream");
    return Merged(
        s_.top_level(),
        [&](absl::string_view block) {
          Line(1, absl::StrCat("block ", Hex(serde::AsBytes(block))));
        },
        [&](ItemId id) -> absl::Status {
          if (s_.item(id).kind == ItemKind::kReset) {
            Line(1, "reset");
            return absl::OkStatus();
          }
          Line(1, "top");
          return Value(id, 2);
        });
  }
  // The text, or `ResourceExhausted` if a line did not fit in `max_bytes`.
  absl::StatusOr<std::string> Take() {
    if (exceeded_) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "javaobj: description: the text would exceed ", max_bytes_,
          " bytes (DescribeOptions::max_bytes)"));
    }
    return std::move(out_);
  }

 private:
  // Appends one line unless it would pass `max_bytes_`; from then on every
  // line is dropped and `Value` stops descending.
  void Line(int depth, absl::string_view text) {
    if (exceeded_ ||
        out_.size() + static_cast<uint64_t>(depth) * 2 + text.size() + 1 > max_bytes_) {
      exceeded_ = true;
      return;
    }
    out_.append(depth * 2, ' ');
    out_.append(text.data(), text.size());
    out_.push_back('\n');
  }
  absl::Status Data(absl::Span<const ItemId> items, int depth);
  // `items` in order, consecutive block data items merged (the block data
  // stream reads across block boundaries): `block(bytes)` for each run of
  // them, `other(id)` for every other item.
  template <typename Items, typename Block, typename Other>
  absl::Status Merged(const Items& items, Block&& block, Other&& other) {
    std::string bytes;
    bool in_block = false;
    for (ItemId id : items) {
      const Item& it = s_.item(id);
      if (it.kind == ItemKind::kBlockData) {
        serde::ByteView p = serde::Slice(s_.input(), it.payload);
        bytes.append(reinterpret_cast<const char*>(p.data()), p.size());
        in_block = true;
        continue;
      }
      if (in_block) {
        block(absl::string_view(bytes));
        bytes.clear();
        in_block = false;
      }
      FLINKSTATE_RETURN_IF_ERROR(other(id));
    }
    if (in_block) block(absl::string_view(bytes));
    return absl::OkStatus();
  }
  absl::Status KnownLayout(const std::string& cls, absl::Span<const ItemId> items,
                           int depth, bool* done);

  const Stream& s_;
  std::vector<int64_t> number_;
  int64_t next_ = 0;
  std::string out_;
  const uint64_t max_bytes_;
  bool exceeded_ = false;
};

absl::Status Describer::Data(absl::Span<const ItemId> items, int depth) {
  return Merged(
      items,
      [&](absl::string_view block) {
        if (!block.empty()) Line(depth, absl::StrCat("block ", Hex(serde::AsBytes(block))));
      },
      [&](ItemId id) { return Value(id, depth); });
}

absl::Status Describer::KnownLayout(const std::string& cls,
                                    absl::Span<const ItemId> items, int depth,
                                    bool* done) {
  *done = false;
  int skip = -1;
  bool pairs = false, comparator = false;
  if (cls == "java.util.HashMap") {
    skip = 4;
    pairs = true;
  } else if (cls == "java.util.HashSet") {
    skip = 8;
  } else if (cls == "java.util.ArrayList" || cls == "java.util.LinkedList" ||
             cls == "java.util.CollSer") {
    skip = 0;
  } else if (cls == "java.util.TreeMap") {
    skip = 0;
    pairs = true;
  } else if (cls == "java.util.TreeSet") {
    skip = 0;
    comparator = true;
  } else {
    return absl::OkStatus();
  }
  AnnotationCursor cur(s_, items);
  ItemId comp = kNoItem;
  if (comparator && !cur.ReadObject(&comp).ok()) return absl::OkStatus();
  int32_t n;
  if (!cur.SkipBytes(skip).ok() || !cur.ReadInt32(&n, nullptr).ok() || n < 0) {
    return absl::OkStatus();
  }
  std::vector<ItemId> objs;
  for (int64_t i = 0; i < static_cast<int64_t>(n) * (pairs ? 2 : 1); ++i) {
    ItemId o;
    if (!cur.ReadObject(&o).ok()) return absl::OkStatus();
    objs.push_back(o);
  }
  if (!cur.AtEnd()) return absl::OkStatus();
  *done = true;
  if (comparator) {
    Line(depth, "comparator");
    FLINKSTATE_RETURN_IF_ERROR(Value(comp, depth + 1));
  }
  Line(depth, absl::StrCat(pairs ? "entries " : "elements ", n));
  for (size_t i = 0; i < objs.size(); ++i) {
    if (pairs) Line(depth + 1, i % 2 == 0 ? "key" : "value");
    FLINKSTATE_RETURN_IF_ERROR(Value(objs[i], depth + (pairs ? 2 : 1)));
  }
  return absl::OkStatus();
}

absl::Status Describer::Value(ItemId id, int depth) {
  if (exceeded_) return absl::OkStatus();  // reported by Take()
  const Item& it0 = s_.item(id);
  if (it0.kind == ItemKind::kNull) {
    Line(depth, "null");
    return absl::OkStatus();
  }
  ItemId def = s_.Resolve(id);
  if (number_[def] >= 0) {
    Line(depth, absl::StrCat("ref #", number_[def]));
    return absl::OkStatus();
  }
  const Item& it = s_.item(def);
  absl::Span<const ItemId> kids = s_.children(def);
  if (it.kind == ItemKind::kException) {
    Line(depth, "exception");
    return Value(kids[0], depth + 1);
  }
  int64_t n = next_++;
  number_[def] = n;
  switch (it.kind) {
    case ItemKind::kString:
      Line(depth, absl::StrCat("#", n, " string \"",
                               EscapeJavaString(serde::Slice(s_.input(), it.payload)),
                               "\""));
      return absl::OkStatus();
    case ItemKind::kEnum: {
      FLINKSTATE_ASSIGN_OR_RETURN(std::string name, s_.EnumName(def));
      Line(depth, absl::StrCat("#", n, " enum ", s_.desc(it.desc).name, " ", name));
      return absl::OkStatus();
    }
    case ItemKind::kClass:
      Line(depth, absl::StrCat("#", n, " class ", s_.desc(it.desc).DisplayName()));
      return absl::OkStatus();
    case ItemKind::kClassDesc:
    case ItemKind::kProxyClassDesc:
      Line(depth, absl::StrCat("#", n, " classdesc ", s_.desc(it.desc).DisplayName()));
      return absl::OkStatus();
    case ItemKind::kArray: {
      Line(depth, absl::StrCat("#", n, " array ", s_.desc(it.desc).name,
                               " length=", it.count));
      int w = PrimitiveSize(it.element_type);
      if (w == 0) {
        for (size_t i = 1; i < kids.size(); ++i) {
          FLINKSTATE_RETURN_IF_ERROR(Value(kids[i], depth + 1));
        }
      } else if (it.count <= 32) {
        std::string v = "values";
        serde::ByteView p = serde::Slice(s_.input(), it.payload);
        for (uint64_t i = 0; i < it.count; ++i) {
          std::string prim = Primitive(it.element_type, p.data() + i * w);
          absl::StrAppend(&v, " ", prim.substr(prim.find(' ') + 1));
        }
        Line(depth + 1, v);
      } else {
        uint64_t h = 0xcbf29ce484222325ULL;
        for (uint8_t c : serde::Slice(s_.input(), it.payload)) {
          h ^= c;
          h *= 0x100000001b3ULL;
        }
        Line(depth + 1, absl::StrFormat("fnv64=%016x", h));
      }
      return absl::OkStatus();
    }
    case ItemKind::kObject: {
      const ClassDesc& d = s_.desc(it.desc);
      Line(depth, absl::StrCat("#", n, " object ", d.DisplayName()));
      for (const ClassData& cd : s_.class_data(def)) {
        const ClassDesc& cdd = s_.desc(cd.desc);
        if (cdd.is_externalizable()) {
          Line(depth + 1, "external");
          FLINKSTATE_RETURN_IF_ERROR(Data(
              kids.subspan(cd.first_annotation, cd.num_annotation), depth + 2));
          continue;
        }
        Line(depth + 1, absl::StrCat("class ", cdd.DisplayName()));
        serde::ByteView prim = serde::Slice(s_.input(), cd.prim_values);
        uint32_t k = 0;
        for (const FieldDesc& f : cdd.fields) {
          if (f.is_primitive()) {
            if (prim.size() >= f.prim_offset + PrimitiveSize(f.type_code)) {
              Line(depth + 2, absl::StrCat(f.name, " = ",
                                           Primitive(f.type_code, prim.data() + f.prim_offset)));
            }
          } else if (k < cd.num_fields) {
            Line(depth + 2, absl::StrCat(f.name, " ="));
            FLINKSTATE_RETURN_IF_ERROR(Value(kids[cd.first_field + k], depth + 3));
            ++k;
          }
        }
        if (cd.has_annotation) {
          absl::Span<const ItemId> ann =
              kids.subspan(cd.first_annotation, cd.num_annotation);
          bool done;
          FLINKSTATE_RETURN_IF_ERROR(KnownLayout(cdd.name, ann, depth + 2, &done));
          if (!done) {
            Line(depth + 2, "data");
            FLINKSTATE_RETURN_IF_ERROR(Data(ann, depth + 3));
          }
        }
      }
      return absl::OkStatus();
    }
    default:
      return absl::InternalError("javaobj: unexpected item in a value position");
  }
}

}  // namespace

absl::StatusOr<std::string> DescribeStream(const Stream& stream,
                                           const DescribeOptions& options) {
  Describer d(stream, options.max_bytes);
  FLINKSTATE_RETURN_IF_ERROR(d.Top());
  return d.Take();
}

absl::StatusOr<std::string> DescribeValue(const Stream& stream, ItemId id,
                                          const DescribeOptions& options) {
  Describer d(stream, options.max_bytes);
  FLINKSTATE_RETURN_IF_ERROR(d.Value(id, 0));
  return d.Take();
}

}  // namespace flinkstate::javaobj
