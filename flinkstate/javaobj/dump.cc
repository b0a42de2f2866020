// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/javaobj/dump.h"

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

std::string PrimValue(char t, const uint8_t* p) {
  switch (t) {
    case 'B': return absl::StrCat(static_cast<int8_t>(p[0]));
    case 'Z': return p[0] ? "true" : "false";
    case 'C': return absl::StrFormat("'\\u%04X'", serde::DecodeBigEndian16(p));
    case 'S': return absl::StrCat(static_cast<int16_t>(serde::DecodeBigEndian16(p)));
    case 'I': return absl::StrCat(static_cast<int32_t>(serde::DecodeBigEndian32(p)));
    case 'J': return absl::StrCat(static_cast<int64_t>(serde::DecodeBigEndian64(p)));
    case 'F': {
      uint32_t b = serde::DecodeBigEndian32(p);
      float f;
      memcpy(&f, &b, 4);
      return absl::StrCat(f);
    }
    case 'D': {
      uint64_t b = serde::DecodeBigEndian64(p);
      double d;
      memcpy(&d, &b, 8);
      return absl::StrCat(d);
    }
  }
  return "?";
}

std::string JsonEscape(absl::string_view s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
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
    if (o_.json) {
      absl::StrAppend(out_, "{\"magic\":\"0xaced\",\"version\":5,\"contents\":[");
      bool first = true;
      for (ItemId id : s_.top_level()) {
        if (!first) out_->push_back(',');
        first = false;
        Json(id);
      }
      absl::StrAppend(out_, "]}\n");
    } else {
      absl::StrAppend(out_, "00000000  STREAM_MAGIC 0xaced, STREAM_VERSION 5\n");
      for (ItemId id : s_.top_level()) Text(id, 0, "");
    }
  }

 private:
  std::string HandleText(const Item& it) const {
    return it.handle < 0 ? "" : absl::StrFormat(" [handle 0x%06x]", kBaseWireHandle + it.handle);
  }
  std::string Str(const Item& it) const {
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
  }
  void JsonList(absl::Span<const ItemId> ids) {
    out_->push_back('[');
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i) out_->push_back(',');
      Json(ids[i]);
    }
    out_->push_back(']');
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
        std::string v = Str(it);
        absl::StrAppend(out_, ",\"length\":", it.count, ",\"value\":", JsonEscape(v));
        break;
      }
      case ItemKind::kBlockData:
        JsonHead(it, "blockdata");
        absl::StrAppend(out_, ",\"length\":", it.count, ",\"hex\":",
                        JsonEscape(HexBytes(serde::Slice(s_.input(), it.payload), o_.max_block_bytes)));
        break;
      case ItemKind::kClassDesc:
      case ItemKind::kProxyClassDesc: {
        const ClassDesc& cd = s_.desc(it.desc);
        JsonHead(it, cd.is_proxy ? "proxyclassdesc" : "classdesc");
        absl::StrAppend(out_, ",\"class\":", JsonEscape(N(cd.DisplayName())),
                        absl::StrFormat(",\"suid\":\"0x%016x\",\"flags\":%d", static_cast<uint64_t>(cd.suid), cd.flags),
                        ",\"fields\":[");
        for (size_t i = 0; i < cd.fields.size(); ++i) {
          absl::StrAppend(out_, i ? "," : "", "{\"type\":\"", std::string(1, cd.fields[i].type_code),
                          "\",\"name\":", JsonEscape(N(cd.fields[i].name)));
          if (!cd.fields[i].is_primitive()) absl::StrAppend(out_, ",\"class\":", JsonEscape(cd.fields[i].type_name));
          out_->push_back('}');
        }
        absl::StrAppend(out_, "],\"super\":");
        if (kids.empty()) absl::StrAppend(out_, "null"); else Json(kids.back());
        break;
      }
      case ItemKind::kObject: {
        JsonHead(it, "object");
        absl::StrAppend(out_, ",\"class\":", JsonEscape(N(s_.desc(it.desc).DisplayName())), ",\"classDesc\":");
        Json(kids[0]);
        absl::StrAppend(out_, ",\"classdata\":[");
        bool first = true;
        for (const ClassData& cd : s_.class_data(id)) {
          const ClassDesc& c = s_.desc(cd.desc);
          absl::StrAppend(out_, first ? "" : ",", "{\"class\":", JsonEscape(N(c.DisplayName())), ",\"fields\":{");
          first = false;
          serde::ByteView prim = serde::Slice(s_.input(), cd.prim_values);
          uint32_t k = 0;
          bool ff = true;
          for (const FieldDesc& f : c.fields) {
            if (f.is_primitive()) {
              if (prim.size() < f.prim_offset + PrimitiveSize(f.type_code)) continue;
              absl::StrAppend(out_, ff ? "" : ",", JsonEscape(N(f.name)), ":",
                              JsonEscape(PrimValue(f.type_code, prim.data() + f.prim_offset)));
            } else if (k < cd.num_fields) {
              absl::StrAppend(out_, ff ? "" : ",", JsonEscape(N(f.name)), ":");
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
        absl::StrAppend(out_, ",\"class\":", JsonEscape(N(s_.desc(it.desc).name)), ",\"length\":", it.count);
        if (PrimitiveSize(it.element_type) != 0) {
          absl::StrAppend(out_, ",\"elements\":", JsonEscape(PrimArray(it)));
        } else {
          absl::StrAppend(out_, ",\"elements\":");
          JsonList(kids.subspan(1));
        }
        break;
      }
      case ItemKind::kEnum:
        JsonHead(it, "enum");
        absl::StrAppend(out_, ",\"value\":", JsonEscape(Summary(id)));
        break;
      case ItemKind::kClass:
        JsonHead(it, "class");
        absl::StrAppend(out_, ",\"class\":", JsonEscape(N(s_.desc(it.desc).DisplayName())));
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

absl::Status TooLong(const DumpOptions& options, serde::ByteView input) {
  return absl::ResourceExhaustedError(absl::StrCat(
      "javaobj: dump: the text would exceed ", options.max_output_bytes,
      " bytes (max_output_bytes) for a ", input.size(), "-byte stream"));
}

}  // namespace

absl::Status DumpStream(serde::ByteView input, const DumpOptions& options,
                        std::string* out) {
  FLINKSTATE_ASSIGN_OR_RETURN(Stream s, DecodeStream(input, options.decode));
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
