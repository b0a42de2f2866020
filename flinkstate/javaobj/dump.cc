// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/javaobj/dump.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include <algorithm>
#include <utility>
#include <vector>

#include <map>
#include <unordered_map>
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "flinkstate/javaobj/canonical.h"
#include "flinkstate/javaobj/stream_constants.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/modified_utf8.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate::javaobj {
namespace {

std::string Flags(uint8_t f) {
  std::string s;
  auto add = [&](const char* n) { absl::StrAppend(&s, s.empty() ? "" : "|", n); };
  if (f & kScWriteMethod) add("WRITE_METHOD");
  if (f & kScSerializable) add("SERIALIZABLE");
  if (f & kScExternalizable) add("EXTERNALIZABLE");
  if (f & kScBlockData) add("BLOCK_DATA");
  if (f & kScEnum) add("ENUM");
  return s;
}

}  // namespace

namespace {

// `FormatJavaFloat` and `FormatJavaDouble`: `Bits` is the unsigned integer of
// `F`'s width, `canonical_nan` Java's NaN (`floatToIntBits(NaN)`), printed
// as "NaN"; another NaN shows its bits.
template <typename F, typename Bits>
std::string FormatJavaFloating(F v, Bits canonical_nan) {
  static_assert(sizeof(F) == sizeof(Bits));
  Bits bits;
  memcpy(&bits, &v, sizeof(bits));
  if (std::isnan(v)) {
    return bits == canonical_nan
               ? "NaN"
               : absl::StrCat("NaN(0x",
                              absl::Hex(bits, sizeof(bits) == 4 ? absl::kZeroPad8
                                                                : absl::kZeroPad16),
                              ")");
  }
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), v);
  std::string out(buf, r.ptr);
  if (out.find_first_of(".en") == std::string::npos) out += ".0";
  return out;
}

}  // namespace

std::string FormatJavaFloat(float f) { return FormatJavaFloating(f, uint32_t{0x7FC00000u}); }

std::string FormatJavaDouble(double d) {
  return FormatJavaFloating(d, uint64_t{0x7FF8000000000000ull});
}

namespace {

float FloatAt(const uint8_t* p) {
  uint32_t b = serde::DecodeBigEndian32(p);
  float f;
  memcpy(&f, &b, 4);
  return f;
}
double DoubleAt(const uint8_t* p) {
  uint64_t b = serde::DecodeBigEndian64(p);
  double d;
  memcpy(&d, &b, 8);
  return d;
}

std::string PrimValue(char t, const uint8_t* p) {
  switch (t) {
    case 'B': return absl::StrCat(static_cast<int8_t>(p[0]));
    case 'Z': return p[0] ? "true" : "false";
    case 'C': return absl::StrFormat("'\\u%04X'", serde::DecodeBigEndian16(p));
    case 'S': return absl::StrCat(static_cast<int16_t>(serde::DecodeBigEndian16(p)));
    case 'I': return absl::StrCat(static_cast<int32_t>(serde::DecodeBigEndian32(p)));
    case 'J': return absl::StrCat(static_cast<int64_t>(serde::DecodeBigEndian64(p)));
    case 'F': return FormatJavaFloat(FloatAt(p));
    case 'D': return FormatJavaDouble(DoubleAt(p));
  }
  return "?";
}

// One code point (or unpaired surrogate) into a JSON string body: its UTF-8,
// an unpaired surrogate as the escape `\uDXXX` (documented in
// docs/formats/java-serialization.md).
void AppendJsonCodePoint(uint32_t cp, std::string* o) {
  if (cp == '"' || cp == '\\') {
    o->push_back('\\');
    o->push_back(static_cast<char>(cp));
  } else if (cp < 0x20) {
    absl::StrAppendFormat(o, "\\u%04x", cp);
  } else if (cp >= 0xD800 && cp <= 0xDFFF) {
    absl::StrAppendFormat(o, "\\u%04X", cp);
  } else {
    serde::AppendCodePoint(cp, o);
  }
}

size_t Utf8Size(uint32_t cp) {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

// Result of writing a Java string as a JSON string.
struct JsonStringInfo {
  bool truncated = false;
  bool unpaired_surrogates = false;
  uint64_t utf16_length = 0;
};

// Decodes the UTF-16 code units of a modified UTF-8 body (already validated
// by the decoder) and writes them as a quoted JSON string, keeping whole
// characters up to `max_bytes` bytes of UTF-8 text.
JsonStringInfo AppendJsonJavaString(serde::ByteView b, uint64_t max_bytes, std::string* o) {
  JsonStringInfo info;
  o->push_back('"');
  uint64_t used = 0;
  size_t i = 0;
  auto unit_at = [&](size_t* at) -> uint32_t {
    uint32_t c = b[*at];
    if (c < 0x80) {
      *at += 1;
      return c;
    }
    if ((c & 0xE0) == 0xC0 && *at + 1 < b.size()) {
      uint32_t u = ((c & 0x1F) << 6) | (b[*at + 1] & 0x3F);
      *at += 2;
      return u;
    }
    if (*at + 2 < b.size()) {
      uint32_t u = ((c & 0x0F) << 12) | ((b[*at + 1] & 0x3F) << 6) | (b[*at + 2] & 0x3F);
      *at += 3;
      return u;
    }
    *at = b.size();
    return 0xFFFD;
  };
  while (i < b.size()) {
    size_t next = i;
    uint32_t cp = unit_at(&next);
    uint64_t units = 1;
    if (cp >= 0xD800 && cp <= 0xDBFF && next < b.size()) {
      size_t after = next;
      uint32_t lo = unit_at(&after);
      if (lo >= 0xDC00 && lo <= 0xDFFF) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        next = after;
        units = 2;
      }
    }
    if (!info.truncated && used + Utf8Size(cp) > max_bytes) info.truncated = true;
    if (cp >= 0xD800 && cp <= 0xDFFF) info.unpaired_surrogates = true;
    if (!info.truncated) {
      AppendJsonCodePoint(cp, o);
      used += Utf8Size(cp);
    }
    info.utf16_length += units;
    i = next;
  }
  o->push_back('"');
  return info;
}

// A UTF-8 name (class or field name from the stream; a lone surrogate is in
// its generalized 3-byte form) as a JSON string.
std::string JsonEscape(absl::string_view s) {
  std::string o = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == 0xED && i + 2 < s.size() && (static_cast<unsigned char>(s[i + 1]) & 0xE0) == 0xA0) {
      uint32_t cp = ((c & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
      absl::StrAppendFormat(&o, "\\u%04X", cp);
      i += 2;
    } else if (c == '"' || c == '\\') {
      o.push_back('\\');
      o.push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      absl::StrAppendFormat(&o, "\\u%04x", c);
    } else {
      o.push_back(static_cast<char>(c));
    }
  }
  o.push_back('"');
  return o;
}

// A primitive value as a JSON value: integers as numbers (a `long` beyond
// +-2^53 as a decimal string, since JSON readers hold numbers as doubles),
// booleans, a `char` as a one-character string, floats and doubles as the
// shortest number that reads back to the same bits ("NaN", "Infinity",
// "-Infinity", "NaN(0x<bits>)" as strings).
std::string JsonPrim(char t, const uint8_t* p) {
  switch (t) {
    case 'J': {
      int64_t v = static_cast<int64_t>(serde::DecodeBigEndian64(p));
      constexpr int64_t kExact = int64_t{1} << 53;
      if (v > kExact || v < -kExact) return absl::StrCat("\"", v, "\"");
      return absl::StrCat(v);
    }
    case 'C': {
      std::string o = "\"";
      AppendJsonCodePoint(serde::DecodeBigEndian16(p), &o);
      o.push_back('"');
      return o;
    }
    case 'F': {
      float f = FloatAt(p);
      std::string v = FormatJavaFloat(f);
      return std::isfinite(f) ? v : absl::StrCat("\"", v, "\"");
    }
    case 'D': {
      double d = DoubleAt(p);
      std::string v = FormatJavaDouble(d);
      return std::isfinite(d) ? v : absl::StrCat("\"", v, "\"");
    }
    default:
      return PrimValue(t, p);
  }
}

std::string HexBytes(serde::ByteView b, uint64_t max) {
  std::string s;
  for (size_t i = 0; i < b.size() && i < max; ++i) {
    absl::StrAppendFormat(&s, "%s%02x", i ? " " : "", b[i]);
  }
  if (b.size() > max) absl::StrAppend(&s, " ... (", b.size() - max, " more)");
  return s;
}

class Dumper {
 public:
  // `sink`, if given, receives the text whenever more than 1 MiB is pending
  // (at item boundaries) and at the end; `*out` then holds only the rest.
  Dumper(const Stream& s, const DumpOptions& o, std::string* out, std::ostream* sink)
      : s_(s), o_(o), out_(out), start_(out->size()), sink_(sink) {}

  // True once the text passed `max_output_bytes`; every item stops then.
  bool Exceeded() {
    if (!exceeded_ && written_ + (out_->size() - start_) > o_.max_output_bytes) {
      exceeded_ = true;
    }
    if (!exceeded_ && sink_ != nullptr && out_->size() - start_ > (size_t{1} << 20)) Flush();
    return exceeded_;
  }
  // A class or field name, shortened like string values: names are written
  // per line, so a 64 KiB class name must not be repeated whole.
  std::string N(absl::string_view name) const {
    if (name.size() <= o_.max_string_bytes) return std::string(name);
    return absl::StrCat(name.substr(0, serde::Utf8PrefixLength(name, o_.max_string_bytes)),
                        "...(", name.size(), " bytes)");
  }
  void Flush() {
    if (sink_ == nullptr) return;
    sink_->write(out_->data() + start_, static_cast<std::streamsize>(out_->size() - start_));
    written_ += out_->size() - start_;
    out_->resize(start_);
  }

  void Run() {
    const serde::SourceRange tr = s_.trailing();
    if (o_.json) {
      absl::StrAppend(out_, "{\"magic\":\"0xaced\",\"version\":5,\"contents\":[");
      bool first = true;
      for (ItemId id : s_.top_level()) {
        if (!first) out_->push_back(',');
        first = false;
        Json(id);
      }
      out_->push_back(']');
      if (s_.aborted()) absl::StrAppend(out_, ",\"aborted\":true");
      if (tr.size != 0) {
        absl::StrAppend(out_, ",\"trailing\":{\"offset\":", tr.offset, ",\"size\":", tr.size, "}");
      }
      absl::StrAppend(out_, "}\n");
    } else {
      absl::StrAppend(out_, "00000000  STREAM_MAGIC 0xaced, STREAM_VERSION 5\n");
      for (ItemId id : s_.top_level()) Text(id, 0, "");
      if (tr.size != 0) {
        absl::StrAppendFormat(out_, "%08x  %s\n", tr.offset, TrailingDataMessage(s_));
      }
    }
  }

 private:
  std::string HandleText(const Item& it) const {
    return it.handle < 0 ? "" : absl::StrFormat(" [handle 0x%06x]", kBaseWireHandle + it.handle);
  }
  std::string Str(const Item& it) const {  // text mode
    serde::ByteView body = serde::Slice(s_.input(), it.payload);
    bool cut = body.size() > o_.max_string_bytes;
    std::string t = EscapeJavaString(body.subspan(0, cut ? o_.max_string_bytes : body.size()));
    return absl::StrCat("\"", t, cut ? absl::StrCat("\"... (", it.count, " bytes)") : "\"");
  }
  std::string Summary(ItemId id) const {
    const Item& it = s_.item(id);
    switch (it.kind) {
      case ItemKind::kString: return absl::StrCat("string ", Str(it));
      case ItemKind::kObject: return absl::StrCat("object ", N(s_.desc(it.desc).DisplayName()));
      case ItemKind::kArray: return absl::StrCat("array ", N(s_.desc(it.desc).name), " length=", it.count);
      case ItemKind::kEnum: {
        absl::StatusOr<std::string> n = s_.EnumName(id);
        return absl::StrCat("enum ", N(s_.desc(it.desc).name), ".", n.ok() ? *n : "?");
      }
      case ItemKind::kClass: return absl::StrCat("class ", N(s_.desc(it.desc).DisplayName()));
      case ItemKind::kClassDesc:
      case ItemKind::kProxyClassDesc: return absl::StrCat("classDesc ", N(s_.desc(it.desc).DisplayName()));
      default: return ItemKindName(it.kind);
    }
  }
  void Line(uint64_t off, int depth, absl::string_view label, absl::string_view text) {
    absl::StrAppendFormat(out_, "%08x  ", off);
    out_->append(depth * 2, ' ');
    if (!label.empty()) absl::StrAppend(out_, label, ": ");
    absl::StrAppend(out_, text, "\n");
  }
  std::string PrimArray(const Item& it) const {
    int w = PrimitiveSize(it.element_type);
    serde::ByteView p = serde::Slice(s_.input(), it.payload);
    std::string s = "[";
    for (uint64_t i = 0; i < it.count && i < o_.max_array_elements; ++i) {
      absl::StrAppend(&s, i ? ", " : "", PrimValue(it.element_type, p.data() + i * w));
    }
    if (it.count > o_.max_array_elements) {
      absl::StrAppend(&s, ", ... (", it.count - o_.max_array_elements, " more, ",
                      it.payload.size, " bytes)");
    }
    return s + "]";
  }

  void Text(ItemId id, int d, absl::string_view label) {
    if (Exceeded()) return;
    const Item& it = s_.item(id);
    uint64_t off = it.range.offset;
    absl::Span<const ItemId> kids = s_.children(id);
    switch (it.kind) {
      case ItemKind::kNull: Line(off, d, label, "TC_NULL"); return;
      case ItemKind::kReset: Line(off, d, label, "TC_RESET (handle table cleared)"); return;
      case ItemKind::kReference: {
        const Item& t = s_.item(it.target);
        Line(off, d, label, absl::StrFormat("TC_REFERENCE 0x%06x -> %s @%08x",
                                            kBaseWireHandle + t.handle, Summary(it.target),
                                            t.range.offset));
        return;
      }
      case ItemKind::kString:
        Line(off, d, label, absl::StrCat(TypeCodeName(it.tag), " ", Str(it), HandleText(it)));
        return;
      case ItemKind::kBlockData:
        Line(off, d, label, absl::StrCat(TypeCodeName(it.tag), " len=", it.count, ": ",
                                         HexBytes(serde::Slice(s_.input(), it.payload),
                                                  o_.max_block_bytes)));
        return;
      case ItemKind::kClassDesc:
      case ItemKind::kProxyClassDesc: {
        const ClassDesc& cd = s_.desc(it.desc);
        if (cd.is_proxy) {
          Line(off, d, label, absl::StrCat("TC_PROXYCLASSDESC ", N(cd.DisplayName()), HandleText(it)));
        } else {
          Line(off, d, label, absl::StrFormat("TC_CLASSDESC %s suid=0x%016x flags=0x%02x %s fields=%d%s",
                                              N(cd.name), static_cast<uint64_t>(cd.suid), cd.flags,
                                              Flags(cd.flags), cd.fields.size(), HandleText(it)));
        }
        size_t k = 0;
        for (const FieldDesc& f : cd.fields) {
          if (f.is_primitive()) {
            Line(off, d + 1, "", absl::StrCat("field ", std::string(1, f.type_code), " ", N(f.name)));
          } else {
            Text(kids[k++], d + 2, absl::StrCat("field ", std::string(1, f.type_code), " ", N(f.name), " type"));
          }
        }
        for (size_t i = k; i + 1 < kids.size(); ++i) Text(kids[i], d + 1, "classAnnotation");
        if (!kids.empty()) Text(kids.back(), d + 1, "super");
        return;
      }
      case ItemKind::kObject: {
        Line(off, d, label, absl::StrCat("TC_OBJECT ", N(s_.desc(it.desc).DisplayName()), HandleText(it)));
        Text(kids[0], d + 1, "classDesc");
        for (const ClassData& cd : s_.class_data(id)) {
          const ClassDesc& c = s_.desc(cd.desc);
          Line(cd.prim_values.offset, d + 1, "", absl::StrCat("classdata ", N(c.DisplayName())));
          serde::ByteView prim = serde::Slice(s_.input(), cd.prim_values);
          uint32_t k = 0;
          for (const FieldDesc& f : c.fields) {
            if (f.is_primitive()) {
              if (prim.size() >= f.prim_offset + PrimitiveSize(f.type_code)) {
                Line(cd.prim_values.offset + f.prim_offset, d + 2, "",
                     absl::StrCat(N(f.name), " (", std::string(1, f.type_code), ") = ",
                                  PrimValue(f.type_code, prim.data() + f.prim_offset)));
              }
            } else if (k < cd.num_fields) {
              Text(kids[cd.first_field + k++], d + 2, absl::StrCat(N(f.name), " (", N(f.type_name), ")"));
            }
          }
          for (uint32_t a = 0; a < cd.num_annotation; ++a) {
            Text(kids[cd.first_annotation + a], d + 2, c.is_externalizable() ? "external" : "annotation");
          }
        }
        return;
      }
      case ItemKind::kArray: {
        bool prim = PrimitiveSize(it.element_type) != 0;
        Line(off, d, label, absl::StrCat("TC_ARRAY ", N(s_.desc(it.desc).name), " length=", it.count,
                                         HandleText(it), prim ? absl::StrCat(" ", PrimArray(it)) : ""));
        Text(kids[0], d + 1, "classDesc");
        for (size_t i = 1; i < kids.size(); ++i) Text(kids[i], d + 1, absl::StrCat("[", i - 1, "]"));
        return;
      }
      case ItemKind::kEnum:
        Line(off, d, label, absl::StrCat("TC_ENUM ", Summary(id), HandleText(it)));
        Text(kids[0], d + 1, "classDesc");
        Text(kids[1], d + 1, "name");
        return;
      case ItemKind::kClass:
        Line(off, d, label, absl::StrCat("TC_CLASS", HandleText(it)));
        Text(kids[0], d + 1, "classDesc");
        return;
      case ItemKind::kException:
        Line(off, d, label, "TC_EXCEPTION (handle table cleared before and after; writer aborted)");
        Text(kids[0], d + 1, "throwable");
        return;
    }
  }

  void JsonHead(const Item& it, absl::string_view kind) {
    absl::StrAppend(out_, "{\"offset\":", it.range.offset, ",\"size\":", it.range.size,
                    ",\"kind\":\"", kind, "\"");
    if (it.handle >= 0) absl::StrAppend(out_, ",\"handle\":", kBaseWireHandle + it.handle);
    if (it.aborted) absl::StrAppend(out_, ",\"aborted\":true");
  }
  void JsonList(absl::Span<const ItemId> ids) {
    out_->push_back('[');
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i) out_->push_back(',');
      Json(ids[i]);
    }
    out_->push_back(']');
  }
  void JsonString(serde::ByteView body) {
    JsonStringInfo info = AppendJsonJavaString(body, o_.max_json_string_bytes, out_);
    absl::StrAppend(out_, ",\"utf16_length\":", info.utf16_length);
    if (info.truncated) absl::StrAppend(out_, ",\"truncated\":true");
    if (info.unpaired_surrogates) absl::StrAppend(out_, ",\"unpaired_surrogates\":true");
  }
  void Json(ItemId id) {
    if (Exceeded()) return;
    const Item& it = s_.item(id);
    absl::Span<const ItemId> kids = s_.children(id);
    switch (it.kind) {
      case ItemKind::kNull: JsonHead(it, "null"); break;
      case ItemKind::kReset: JsonHead(it, "reset"); break;
      case ItemKind::kReference: {
        const Item& t = s_.item(it.target);
        JsonHead(it, "reference");
        absl::StrAppend(out_, ",\"target_handle\":", kBaseWireHandle + t.handle,
                        ",\"target_offset\":", t.range.offset,
                        ",\"target\":", JsonEscape(Summary(it.target)));
        break;
      }
      case ItemKind::kString: {
        JsonHead(it, it.tag == kTcString ? "string" : "longstring");
        absl::StrAppend(out_, ",\"length\":", it.count, ",\"value\":");
        JsonString(serde::Slice(s_.input(), it.payload));
        break;
      }
      case ItemKind::kBlockData: {
        JsonHead(it, "blockdata");
        serde::ByteView b = serde::Slice(s_.input(), it.payload);
        absl::StrAppend(out_, ",\"length\":", it.count, ",\"hex\":\"");
        for (size_t i = 0; i < b.size() && i < o_.max_block_bytes; ++i) {
          absl::StrAppendFormat(out_, "%02x", b[i]);
        }
        out_->push_back('"');
        if (b.size() > o_.max_block_bytes) absl::StrAppend(out_, ",\"truncated\":true");
        break;
      }
      case ItemKind::kClassDesc:
      case ItemKind::kProxyClassDesc: {
        const ClassDesc& cd = s_.desc(it.desc);
        JsonHead(it, cd.is_proxy ? "proxyclassdesc" : "classdesc");
        absl::StrAppend(out_, ",\"class\":", JsonEscape(cd.DisplayName()),
                        absl::StrFormat(",\"suid\":\"0x%016x\",\"flags\":%d", static_cast<uint64_t>(cd.suid), cd.flags),
                        ",\"fields\":[");
        for (size_t i = 0; i < cd.fields.size(); ++i) {
          absl::StrAppend(out_, i ? "," : "", "{\"type\":\"", std::string(1, cd.fields[i].type_code),
                          "\",\"name\":", JsonEscape(cd.fields[i].name));
          if (!cd.fields[i].is_primitive()) absl::StrAppend(out_, ",\"class\":", JsonEscape(cd.fields[i].type_name));
          out_->push_back('}');
        }
        absl::StrAppend(out_, "],\"super\":");
        if (kids.empty()) absl::StrAppend(out_, "null"); else Json(kids.back());
        break;
      }
      case ItemKind::kObject: {
        JsonHead(it, "object");
        absl::StrAppend(out_, ",\"class\":", JsonEscape(s_.desc(it.desc).DisplayName()), ",\"classDesc\":");
        Json(kids[0]);
        absl::StrAppend(out_, ",\"classdata\":[");
        bool first = true;
        for (const ClassData& cd : s_.class_data(id)) {
          const ClassDesc& c = s_.desc(cd.desc);
          absl::StrAppend(out_, first ? "" : ",", "{\"class\":", JsonEscape(c.DisplayName()), ",\"fields\":{");
          first = false;
          serde::ByteView prim = serde::Slice(s_.input(), cd.prim_values);
          uint32_t k = 0;
          bool ff = true;
          for (const FieldDesc& f : c.fields) {
            if (f.is_primitive()) {
              if (prim.size() < f.prim_offset + PrimitiveSize(f.type_code)) continue;
              absl::StrAppend(out_, ff ? "" : ",", JsonEscape(f.name), ":",
                              JsonPrim(f.type_code, prim.data() + f.prim_offset));
            } else if (k < cd.num_fields) {
              absl::StrAppend(out_, ff ? "" : ",", JsonEscape(f.name), ":");
              Json(kids[cd.first_field + k++]);
            } else {
              continue;
            }
            ff = false;
          }
          out_->push_back('}');
          if (cd.has_annotation) {
            absl::StrAppend(out_, ",\"annotation\":");
            JsonList(kids.subspan(cd.first_annotation, cd.num_annotation));
          }
          out_->push_back('}');
        }
        out_->push_back(']');
        break;
      }
      case ItemKind::kArray: {
        JsonHead(it, "array");
        absl::StrAppend(out_, ",\"class\":", JsonEscape(s_.desc(it.desc).name), ",\"length\":", it.count,
                        ",\"classDesc\":");
        Json(kids[0]);
        int w = PrimitiveSize(it.element_type);
        if (w != 0) {
          serde::ByteView p = serde::Slice(s_.input(), it.payload);
          absl::StrAppend(out_, ",\"elements\":[");
          for (uint64_t i = 0; i < it.count && i < o_.max_array_elements; ++i) {
            absl::StrAppend(out_, i ? "," : "", JsonPrim(it.element_type, p.data() + i * w));
          }
          out_->push_back(']');
          if (it.count > o_.max_array_elements) absl::StrAppend(out_, ",\"truncated\":true");
        } else {
          absl::StrAppend(out_, ",\"elements\":");
          JsonList(kids.subspan(1));
        }
        break;
      }
      case ItemKind::kEnum: {
        JsonHead(it, "enum");
        absl::StatusOr<std::string> n = s_.EnumName(id);
        absl::StrAppend(out_, ",\"class\":", JsonEscape(s_.desc(it.desc).name),
                        ",\"name\":", JsonEscape(n.ok() ? *n : ""), ",\"classDesc\":");
        Json(kids[0]);
        break;
      }
      case ItemKind::kClass:
        JsonHead(it, "class");
        absl::StrAppend(out_, ",\"class\":", JsonEscape(s_.desc(it.desc).DisplayName()),
                        ",\"classDesc\":");
        Json(kids[0]);
        break;
      case ItemKind::kException:
        JsonHead(it, "exception");
        absl::StrAppend(out_, ",\"throwable\":");
        Json(kids[0]);
        break;
    }
    out_->push_back('}');
  }

  const Stream& s_;
  const DumpOptions& o_;
  std::string* out_;
  const size_t start_;
  std::ostream* sink_;
  uint64_t written_ = 0;  // bytes handed to `sink_`
  bool exceeded_ = false;
};

}  // namespace

namespace {

bool IsDescTag(uint8_t tag) { return tag == kTcClassDesc || tag == kTcProxyClassDesc; }

// The histogram of `SummarizeStream`, fed item by item by `ScanStream`.
class Summarizer : public StreamVisitor {
 public:
  explicit Summarizer(StreamSummary* out) : out_(out) {}

  void BeginItem(uint8_t tag, uint64_t offset) override {
    // A value's depth: the values it is nested in. Descriptors and what is
    // inside them are not values, nor is the class descriptor (reference)
    // of an object, array, enum or class: it is framing.
    bool desc_ref = false;
    if (!open_.empty()) {
      Open& p = open_.back();
      desc_ref = (p.tag == kTcObject || p.tag == kTcArray || p.tag == kTcEnum ||
                  p.tag == kTcClass) &&
                 p.children == 0;
      ++p.children;
    }
    if (!IsDescTag(tag) && in_desc_ == 0 && !desc_ref) {
      out_->max_depth = std::max<uint64_t>(out_->max_depth, open_.size());
      out_->depth_sum += open_.size();
      ++out_->values;
    }
    if (IsDescTag(tag)) ++in_desc_;
    open_.push_back({offset, 0, 0, tag});
  }

  void EndItem(uint64_t end, const ClassDesc* desc) override {
    const Open o = open_.back();
    open_.pop_back();
    const uint64_t size = end - o.offset;
    if (!open_.empty()) open_.back().child_bytes += size;
    if (IsDescTag(o.tag)) --in_desc_;
    const ItemKind kind = ItemKindOfTag(o.tag);
    ++out_->kinds[static_cast<int>(kind)];
    Row* r;
    if (kind == ItemKind::kString && !open_.empty() &&
        (open_.back().tag == kTcClassDesc || open_.back().tag == kTcEnum)) {
      // A field's type name (`className1`) or an enum constant's name: part
      // of a descriptor or an enum, not a String value the reader gets.
      r = open_.back().tag == kTcEnum ? &enum_names_ : &type_strings_;
      ++r->instances;
      r->bytes += size - o.child_bytes;
      return;
    }
    if ((kind == ItemKind::kObject || kind == ItemKind::kArray || kind == ItemKind::kEnum) &&
        desc != nullptr) {
      // Rows per descriptor while scanning (no name lookups per item);
      // descriptors of the same name (re-sent after a reset) merge at the end.
      auto [it, fresh] = desc_rows_.try_emplace(desc->item, 0);
      if (fresh) {
        rows_.push_back({desc->DisplayName(), 0, 0});
        it->second = rows_.size() - 1;
      }
      r = &rows_[it->second];
    } else {
      r = &fixed_[static_cast<int>(kind)];
    }
    ++r->instances;
    r->bytes += size - o.child_bytes;
  }

  // Merges the rows by class name and sorts them like `jmap -histo`.
  void Finish() {
    static constexpr const char* kFixedNames[] = {
        "(nulls)", "(references)", "(class descriptors)", "(class descriptors)",
        "", "java.lang.String", "", "", "java.lang.Class", "(block data)",
        "(resets)", "(exceptions)"};
    std::map<std::string, ClassHistogramRow> merged;
    auto add = [&](const std::string& name, const Row& r) {
      if (r.instances == 0) return;
      ClassHistogramRow& m = merged[name];
      m.class_name = name;
      m.instances += r.instances;
      m.bytes += r.bytes;
    };
    for (const Row& r : rows_) add(r.name, r);
    for (int k = 0; k < kNumKinds; ++k) add(kFixedNames[k], fixed_[k]);
    add("(field type strings)", type_strings_);
    add("(enum constant names)", enum_names_);
    for (auto& [name, row] : merged) out_->classes.push_back(std::move(row));
    std::sort(out_->classes.begin(), out_->classes.end(),
              [](const ClassHistogramRow& a, const ClassHistogramRow& b) {
                if (a.bytes != b.bytes) return a.bytes > b.bytes;
                return a.class_name < b.class_name;
              });
  }

 private:
  static constexpr int kNumKinds = static_cast<int>(ItemKind::kException) + 1;
  struct Open {
    uint64_t offset;
    uint64_t child_bytes;
    uint32_t children;
    uint8_t tag;
  };
  struct Row {
    std::string name;
    uint64_t instances;
    uint64_t bytes;
  };
  StreamSummary* out_;
  std::vector<Open> open_;
  uint64_t in_desc_ = 0;
  std::vector<Row> rows_;
  std::unordered_map<ItemId, size_t> desc_rows_;  // by descriptor item
  Row fixed_[kNumKinds] = {};
  Row type_strings_ = {};
  Row enum_names_ = {};
};

}  // namespace

absl::StatusOr<StreamSummary> SummarizeStream(serde::ByteView input,
                                              const DecodeOptions& options) {
  StreamSummary sum;
  Summarizer summarizer(&sum);
  FLINKSTATE_ASSIGN_OR_RETURN(StreamScan scan, ScanStream(input, summarizer, options));
  summarizer.Finish();
  sum.bytes = input.size();
  sum.items = scan.num_items;
  sum.top_level = scan.num_top_level;
  sum.handles_assigned = scan.handles_assigned;
  sum.epochs = scan.num_epochs;
  sum.max_handles_per_epoch = scan.max_handles_per_epoch;
  sum.references = sum.kinds[static_cast<int>(ItemKind::kReference)];
  sum.aborted = scan.aborted;
  sum.trailing = scan.trailing;
  return sum;
}

namespace {

std::string FormatSummary(const StreamSummary& s, const DumpOptions& o) {
  std::string out;
  const double mean = s.values ? double(s.depth_sum) / s.values : 0.0;
  constexpr int kNumKinds = static_cast<int>(ItemKind::kException) + 1;
  if (o.json) {
    absl::StrAppend(&out, "{\"bytes\":", s.bytes, ",\"items\":", s.items,
                    ",\"top_level\":", s.top_level, ",\"kinds\":{");
    bool first = true;
    for (int k = 0; k < kNumKinds; ++k) {
      if (s.kinds[k] == 0) continue;
      absl::StrAppend(&out, first ? "" : ",", "\"", ItemKindName(static_cast<ItemKind>(k)),
                      "\":", s.kinds[k]);
      first = false;
    }
    absl::StrAppend(&out, "},\"handles\":{\"assigned\":", s.handles_assigned, ",\"epochs\":",
                    s.epochs, ",\"max_per_epoch\":", s.max_handles_per_epoch,
                    ",\"references\":", s.references, "},\"depth\":{\"max\":", s.max_depth,
                    ",\"mean\":", FormatJavaDouble(mean), "},\"classes\":[");
    for (size_t i = 0; i < s.classes.size(); ++i) {
      absl::StrAppend(&out, i ? "," : "", "{\"class\":", JsonEscape(s.classes[i].class_name),
                      ",\"instances\":", s.classes[i].instances,
                      ",\"bytes\":", s.classes[i].bytes, "}");
    }
    out.push_back(']');
    if (s.aborted) absl::StrAppend(&out, ",\"aborted\":true");
    if (s.trailing.size != 0) {
      absl::StrAppend(&out, ",\"trailing\":{\"offset\":", s.trailing.offset,
                      ",\"size\":", s.trailing.size, "}");
    }
    absl::StrAppend(&out, "}\n");
    return out;
  }
  absl::StrAppend(&out, "Java serialization stream: ", s.bytes, " bytes, ", s.top_level,
                  " top-level items, ", s.items, " items\n");
  absl::StrAppend(&out, "items by kind:");
  for (int k = 0; k < kNumKinds; ++k) {
    if (s.kinds[k] != 0) {
      absl::StrAppend(&out, " ", ItemKindName(static_cast<ItemKind>(k)), " ", s.kinds[k]);
    }
  }
  absl::StrAppend(&out, "\nhandles: ", s.handles_assigned, " assigned in ", s.epochs,
                  " epoch(s), at most ", s.max_handles_per_epoch, " live; ", s.references,
                  " back-references\n");
  absl::StrAppendFormat(&out, "depth: max %d, mean %.2f (values nested in values)\n",
                        s.max_depth, mean);
  if (s.aborted) absl::StrAppend(&out, "aborted: a TC_EXCEPTION cut a top-level item short\n");
  if (s.trailing.size != 0) {
    absl::StrAppend(&out, s.trailing.size, " trailing bytes after the last object at byte ",
                    s.trailing.offset, "\n");
  }
  absl::StrAppendFormat(&out, "\n%5s %14s %14s  %s\n", "num", "#instances", "#bytes",
                        "class name");
  uint64_t ti = 0, tb = 0;
  for (size_t i = 0; i < s.classes.size(); ++i) {
    const std::string& name = s.classes[i].class_name;
    const std::string shown =
        name.size() <= o.max_string_bytes
            ? name
            : absl::StrCat(name.substr(0, serde::Utf8PrefixLength(name, o.max_string_bytes)),
                           "...(", name.size(), " bytes)");
    absl::StrAppendFormat(&out, "%4d: %14d %14d  %s\n", i + 1, s.classes[i].instances,
                          s.classes[i].bytes, shown);
    ti += s.classes[i].instances;
    tb += s.classes[i].bytes;
  }
  absl::StrAppendFormat(&out, "Total %14d %14d\n", ti, tb);
  return out;
}

}  // namespace

std::string TrailingDataMessage(const Stream& s) {
  const serde::SourceRange tr = s.trailing();
  return absl::StrCat(tr.size, " trailing bytes after the last object at byte ", tr.offset);
}

namespace {

absl::Status TooLong(const DumpOptions& options, serde::ByteView input) {
  return absl::ResourceExhaustedError(absl::StrCat(
      "javaobj: dump: the text would exceed ", options.max_output_bytes,
      " bytes (max_output_bytes) for a ", input.size(), "-byte stream"));
}

}  // namespace

absl::Status DumpStream(serde::ByteView input, const DumpOptions& options,
                        std::string* out) {
  if (options.summary) {
    FLINKSTATE_ASSIGN_OR_RETURN(StreamSummary sum, SummarizeStream(input, options.decode));
    std::string text = FormatSummary(sum, options);
    if (text.size() > options.max_output_bytes) return TooLong(options, input);
    out->append(text);
    return absl::OkStatus();
  }
  FLINKSTATE_ASSIGN_OR_RETURN(Stream s, DecodeStream(input, options.decode));
  return DumpDecodedStream(s, options, out);
}

absl::Status DumpDecodedStream(const Stream& s, const DumpOptions& options, std::string* out) {
  const serde::ByteView input = s.input();
  if (options.summary) {
    // One scan of the input; the decoded model is not needed for it.
    DumpOptions o = options;
    o.decode = DecodeOptions();
    return DumpStream(input, o, out);
  }
  const size_t start = out->size();
  Dumper d(s, options, out, nullptr);
  d.Run();
  if (d.Exceeded()) {
    out->resize(start);
    return TooLong(options, input);
  }
  return absl::OkStatus();
}

absl::Status DumpStream(serde::ByteView input, const DumpOptions& options,
                        std::ostream& out) {
  if (options.summary) {
    std::string text;
    FLINKSTATE_RETURN_IF_ERROR(DumpStream(input, options, &text));
    out << text;
    if (!out) return absl::DataLossError("javaobj: dump: writing the output failed");
    return absl::OkStatus();
  }
  FLINKSTATE_ASSIGN_OR_RETURN(Stream s, DecodeStream(input, options.decode));
  std::string buffer;
  Dumper d(s, options, &buffer, &out);
  d.Run();
  if (d.Exceeded()) return TooLong(options, input);
  d.Flush();
  if (!out) return absl::DataLossError("javaobj: dump: writing the output failed");
  return absl::OkStatus();
}

}  // namespace flinkstate::javaobj
