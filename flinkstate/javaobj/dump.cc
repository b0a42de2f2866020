// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/javaobj/dump.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include <algorithm>
#include <utility>
#include <vector>

#include <map>
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

std::string FormatJavaFloat(float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  if (std::isnan(f)) {
    return bits == 0x7FC00000u ? "NaN" : absl::StrFormat("NaN(0x%08x)", bits);
  }
  if (std::isinf(f)) return f > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), f);
  std::string out(buf, r.ptr);
  if (out.find_first_of(".en") == std::string::npos) out += ".0";
  return out;
}

std::string FormatJavaDouble(double d) {
  uint64_t bits;
  memcpy(&bits, &d, 8);
  if (std::isnan(d)) {
    return bits == 0x7FF8000000000000ull
               ? "NaN"
               : absl::StrFormat("NaN(0x%016x)", bits);
  }
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), d);
  std::string out(buf, r.ptr);
  if (out.find_first_of(".en") == std::string::npos) out += ".0";
  return out;
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

// Appends UTF-16 code unit sequence `units` to a JSON string body: pairs as
// the UTF-8 of their code point, an unpaired surrogate as the escape
// `\uDXXX` (documented in docs/formats/java-serialization.md).
void AppendUtf8(uint32_t cp, std::string* o) {
  if (cp < 0x80) {
    o->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    o->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    o->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    o->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    o->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    o->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    o->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    o->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    o->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    o->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// One code point (or unpaired surrogate) into a JSON string body.
void AppendJsonCodePoint(uint32_t cp, std::string* o) {
  if (cp == '"' || cp == '\\') {
    o->push_back('\\');
    o->push_back(static_cast<char>(cp));
  } else if (cp < 0x20) {
    absl::StrAppendFormat(o, "\\u%04x", cp);
  } else if (cp >= 0xD800 && cp <= 0xDFFF) {
    absl::StrAppendFormat(o, "\\u%04X", cp);
  } else {
    AppendUtf8(cp, o);
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
    if (o_.summary) {
      Summarize();
      return;
    }
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

  // Class histogram (like `jmap -histo`), item kinds, handles and depth.
  void Summarize() {
    struct Row {
      uint64_t instances = 0;
      uint64_t bytes = 0;
    };
    std::map<std::string, Row> rows;
    uint64_t kinds[static_cast<int>(ItemKind::kException) + 1] = {};
    uint64_t max_depth = 0, depth_sum = 0, values = 0;
    // Pre-order ids with `subtree_end`: a stack of open subtrees gives depth.
    // Open subtrees; `in_desc` counts the class descriptors among them (items
    // inside a descriptor are not values and have no value depth).
    std::vector<ItemId> open;
    uint64_t in_desc = 0;
    auto is_desc = [&](ItemId i) {
      return s_.item(i).kind == ItemKind::kClassDesc || s_.item(i).kind == ItemKind::kProxyClassDesc;
    };
    for (ItemId id = 0; id < s_.num_items(); ++id) {
      const Item& it = s_.item(id);
      while (!open.empty() && s_.item(open.back()).subtree_end <= id) {
        if (is_desc(open.back())) --in_desc;
        open.pop_back();
      }
      ++kinds[static_cast<int>(it.kind)];
      uint64_t own = it.range.size;
      for (ItemId k : s_.children(id)) own -= s_.item(k).range.size;
      std::string name;
      switch (it.kind) {
        case ItemKind::kObject:
        case ItemKind::kArray:
        case ItemKind::kEnum: name = s_.desc(it.desc).DisplayName(); break;
        case ItemKind::kString: name = "java.lang.String"; break;
        case ItemKind::kClass: name = "java.lang.Class"; break;
        case ItemKind::kClassDesc:
        case ItemKind::kProxyClassDesc: name = "(class descriptors)"; break;
        case ItemKind::kBlockData: name = "(block data)"; break;
        case ItemKind::kReference: name = "(references)"; break;
        case ItemKind::kNull: name = "(nulls)"; break;
        case ItemKind::kReset: name = "(resets)"; break;
        case ItemKind::kException: name = "(exceptions)"; break;
      }
      Row& r = rows[name];
      ++r.instances;
      r.bytes += own;
      // A value's depth: the values it is nested in (the reference from an
      // object to its class descriptor is framing, not a value).
      bool desc_ref = false;
      if (!open.empty()) {
        const ItemKind pk = s_.item(open.back()).kind;
        desc_ref = (pk == ItemKind::kObject || pk == ItemKind::kArray || pk == ItemKind::kEnum ||
                    pk == ItemKind::kClass) &&
                   s_.children(open.back())[0] == id;
      }
      if (!is_desc(id) && in_desc == 0 && !desc_ref) {
        max_depth = std::max<uint64_t>(max_depth, open.size());
        depth_sum += open.size();
        ++values;
      }
      if (it.subtree_end > id + 1) {
        if (is_desc(id)) ++in_desc;
        open.push_back(id);
      }
    }
    std::vector<std::pair<std::string, Row>> sorted(rows.begin(), rows.end());
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      if (a.second.bytes != b.second.bytes) return a.second.bytes > b.second.bytes;
      return a.first < b.first;
    });
    uint64_t handles = 0, max_handles = 0;
    for (uint32_t e = 0; e < s_.num_epochs(); ++e) {
      handles += s_.num_handles(e);
      max_handles = std::max<uint64_t>(max_handles, s_.num_handles(e));
    }
    const uint64_t refs = kinds[static_cast<int>(ItemKind::kReference)];
    const serde::SourceRange tr = s_.trailing();
    if (o_.json) {
      absl::StrAppend(out_, "{\"bytes\":", s_.input().size(), ",\"items\":", s_.num_items(),
                      ",\"top_level\":", s_.top_level().size(), ",\"kinds\":{");
      bool first = true;
      for (int k = 0; k <= static_cast<int>(ItemKind::kException); ++k) {
        if (kinds[k] == 0) continue;
        absl::StrAppend(out_, first ? "" : ",", "\"", ItemKindName(static_cast<ItemKind>(k)),
                        "\":", kinds[k]);
        first = false;
      }
      absl::StrAppend(out_, "},\"handles\":{\"assigned\":", handles, ",\"epochs\":",
                      s_.num_epochs(), ",\"max_per_epoch\":", max_handles,
                      ",\"references\":", refs, "},\"depth\":{\"max\":", max_depth,
                      ",\"mean\":", FormatJavaDouble(values ? double(depth_sum) / values : 0.0),
                      "},\"classes\":[");
      for (size_t i = 0; i < sorted.size(); ++i) {
        absl::StrAppend(out_, i ? "," : "", "{\"class\":", JsonEscape(sorted[i].first),
                        ",\"instances\":", sorted[i].second.instances,
                        ",\"bytes\":", sorted[i].second.bytes, "}");
      }
      out_->push_back(']');
      if (s_.aborted()) absl::StrAppend(out_, ",\"aborted\":true");
      if (tr.size != 0) {
        absl::StrAppend(out_, ",\"trailing\":{\"offset\":", tr.offset, ",\"size\":", tr.size, "}");
      }
      absl::StrAppend(out_, "}\n");
      return;
    }
    absl::StrAppend(out_, "Java serialization stream: ", s_.input().size(), " bytes, ",
                    s_.top_level().size(), " top-level items, ", s_.num_items(), " items\n");
    absl::StrAppend(out_, "items by kind:");
    for (int k = 0; k <= static_cast<int>(ItemKind::kException); ++k) {
      if (kinds[k] != 0) {
        absl::StrAppend(out_, " ", ItemKindName(static_cast<ItemKind>(k)), " ", kinds[k]);
      }
    }
    absl::StrAppend(out_, "\nhandles: ", handles, " assigned in ", s_.num_epochs(),
                    " epoch(s), at most ", max_handles, " live; ", refs, " back-references\n");
    absl::StrAppendFormat(out_, "depth: max %d, mean %.2f (values nested in values)\n", max_depth,
                          values ? double(depth_sum) / values : 0.0);
    if (s_.aborted()) absl::StrAppend(out_, "aborted: a TC_EXCEPTION cut a top-level item short\n");
    if (tr.size != 0) absl::StrAppend(out_, TrailingDataMessage(s_), "\n");
    absl::StrAppendFormat(out_, "\n%5s %14s %14s  %s\n", "num", "#instances", "#bytes",
                          "class name");
    uint64_t ti = 0, tb = 0;
    for (size_t i = 0; i < sorted.size(); ++i) {
      absl::StrAppendFormat(out_, "%4d: %14d %14d  %s\n", i + 1, sorted[i].second.instances,
                            sorted[i].second.bytes, N(sorted[i].first));
      ti += sorted[i].second.instances;
      tb += sorted[i].second.bytes;
    }
    absl::StrAppendFormat(out_, "Total %14d %14d\n", ti, tb);
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
  FLINKSTATE_ASSIGN_OR_RETURN(Stream s, DecodeStream(input, options.decode));
  return DumpDecodedStream(s, options, out);
}

absl::Status DumpDecodedStream(const Stream& s, const DumpOptions& options, std::string* out) {
  const serde::ByteView input = s.input();
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
