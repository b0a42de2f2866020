// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/deep_strip.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/javaobj/layouts.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/javaobj/stream_writer.h"
#include "flinkstate/metadata_writer.h"
#include "flinkstate/objstore/object_store.h"
#include "flinkstate/objstore/object_transaction.h"
#include "flinkstate/operator_id.h"
#include "flinkstate/operator_state_stream.h"
#include "flinkstate/serde/data_output.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate {
namespace {

constexpr char kLayer[] = "strip-state --deep";

std::string BigEndian32(uint32_t v) {
  std::string s(4, '\0');
  serde::EncodeBigEndian32(v, reinterpret_cast<uint8_t*>(&s[0]));
  return s;
}

bool IsTag(const StreamStateHandle* d, HandleTag t) {
  return d != nullptr && d->tag == static_cast<uint8_t>(t);
}

// A state file this edit rewrites by writing a new one.
bool IsFileBacked(const StreamStateHandle* d) {
  return IsTag(d, HandleTag::kFileStream) || IsTag(d, HandleTag::kRelativeStream);
}

// A handle's stream, decoded: header and clipped element extents.
struct DecodedStream {
  serde::ByteView bytes;
  OperatorStateStreamHeader header;
  std::vector<StateElements> elements;  // per handle entry, in entry order
};

// The inline bytes of `h` within `input`, checked against their i32 length.
absl::StatusOr<serde::ByteView> InlineBytes(const OperatorStateHandle& h, serde::ByteView input,
                                            absl::string_view where) {
  const SourceRange& r = h.delegate->data;
  if (r.offset < 4 || r.offset > input.size() || r.size > input.size() - r.offset ||
      serde::DecodeBigEndian32(input.data() + r.offset - 4) != r.size) {
    return absl::InvalidArgumentError(
        absl::StrCat(kLayer, ": ", where, ": inline stream length does not frame its bytes"));
  }
  return input.subspan(r.offset, r.size);
}

// Decodes `stream`, the bytes of `h`'s stream (inline in `input`, or a state
// file); `input` holds the handle's offsets.
absl::StatusOr<DecodedStream> DecodeStream(const OperatorStateHandle& h, serde::ByteView input,
                                           serde::ByteView stream, absl::string_view where) {
  DecodedStream d;
  d.bytes = stream;
  absl::StatusOr<OperatorStateStreamHeader> hdr = ReadOperatorStateStreamHeader(d.bytes);
  if (!hdr.ok()) return serde::Annotate(hdr.status(), absl::StrCat(kLayer, ": ", where));
  d.header = std::move(*hdr);
  const uint64_t header_end = d.header.complete() ? d.header.range.size : 0;
  absl::StatusOr<std::vector<StateElements>> els =
      ReadElementExtents(h, input, d.bytes.size(), header_end, d.bytes);
  if (!els.ok()) return serde::Annotate(els.status(), absl::StrCat(kLayer, ": ", where));
  d.elements = std::move(*els);
  for (StateElements& se : d.elements) {
    for (const StateMetaInfo& m : d.header.operator_states) {
      if (m.name != se.name) continue;
      const int64_t fixed = FixedElementLength(m);
      if (fixed < 0) continue;
      for (SourceRange& e : se.elements) e.size = std::min<uint64_t>(e.size, fixed);
    }
  }
  return d;
}

bool HeaderHas(const OperatorStateStreamHeader& h, const std::string& name) {
  for (const auto* list : {&h.operator_states, &h.broadcast_states}) {
    for (const StateMetaInfo& m : *list) {
      if (m.name == name) return true;
    }
  }
  return false;
}

// The stream with the name's meta info and elements removed, as edits of the
// stream's own bytes: the count of its list decremented, its meta info cut,
// and every byte after the header that no remaining element covers dropped
// (the remaining elements keep their order, so cutting the gaps moves them).
struct StreamRewrite {
  std::vector<serde::Replacement> edits;  // ranges relative to the stream start
  uint64_t size = 0;                      // of the new stream
  uint64_t meta_bytes = 0;                // of the meta info removed
  // The new offsets, per handle entry (the name's entry left empty).
  std::vector<std::vector<int64_t>> offsets;
};

absl::StatusOr<StreamRewrite> RewriteStream(const DecodedStream& d, int entry_index,
                                            const std::string& name, absl::string_view where) {
  const OperatorStateStreamHeader& hd = d.header;
  // The i16 counts: after `version` (and the `compression` byte from v6).
  const uint64_t op_count_at = hd.version >= 6 ? 5 : 4;
  const uint64_t bc_count_at = hd.operator_states.empty()
                                   ? op_count_at + 2
                                   : hd.operator_states.back().range.offset +
                                         hd.operator_states.back().range.size;
  SourceRange removed_meta;
  uint64_t count_at = 0;
  int32_t new_count = 0;
  for (const StateMetaInfo& m : hd.operator_states) {
    if (m.name == name) {
      removed_meta = m.range;
      count_at = op_count_at;
      new_count = hd.num_operator_states - 1;
    }
  }
  for (const StateMetaInfo& m : hd.broadcast_states) {
    if (m.name == name) {
      removed_meta = m.range;
      count_at = bc_count_at;
      new_count = hd.num_broadcast_states - 1;
    }
  }
  StreamRewrite rw;
  rw.meta_bytes = removed_meta.size;
  // count_at precedes the removed meta info, so the edits stay in order.
  std::string count(2, '\0');
  count[0] = static_cast<char>((new_count >> 8) & 0xFF);
  count[1] = static_cast<char>(new_count & 0xFF);
  rw.edits.push_back({{count_at, 2}, std::move(count)});
  rw.edits.push_back({removed_meta, ""});
  // The remaining elements in stream order.
  struct Piece {
    uint64_t offset, size;
    size_t entry, element;
  };
  std::vector<Piece> pieces;
  for (size_t i = 0; i < d.elements.size(); ++i) {
    if (static_cast<int>(i) == entry_index) continue;
    for (size_t j = 0; j < d.elements[i].elements.size(); ++j) {
      pieces.push_back({d.elements[i].elements[j].offset, d.elements[i].elements[j].size, i, j});
    }
  }
  std::sort(pieces.begin(), pieces.end(),
            [](const Piece& a, const Piece& b) { return a.offset < b.offset; });
  for (size_t k = 1; k < pieces.size(); ++k) {
    if (pieces[k].offset < pieces[k - 1].offset + pieces[k - 1].size) {
      return absl::InvalidArgumentError(absl::StrCat(
          kLayer, ": ", where, ": elements at stream bytes ", pieces[k - 1].offset, " and ",
          pieces[k].offset, " overlap"));
    }
  }
  rw.offsets.resize(d.elements.size());
  for (size_t i = 0; i < d.elements.size(); ++i) {
    rw.offsets[i].resize(static_cast<int>(i) == entry_index ? 0 : d.elements[i].elements.size());
  }
  uint64_t out = hd.range.size - removed_meta.size;  // the new header's size
  uint64_t cursor = hd.range.size;
  for (const Piece& p : pieces) {
    if (p.offset > cursor) rw.edits.push_back({{cursor, p.offset - cursor}, ""});
    rw.offsets[p.entry][p.element] = static_cast<int64_t>(out);
    out += p.size;
    cursor = p.offset + p.size;
  }
  if (cursor < d.bytes.size()) rw.edits.push_back({{cursor, d.bytes.size() - cursor}, ""});
  if (out > 0x7FFFFFFF) return absl::InternalError("strip-state --deep: the stream grew");
  rw.size = out;
  return rw;
}

// A fresh name in the form of Flink's state file names (a UUID, 36
// characters), derived from the original's name, the state name and
// `attempt`, so that a dry run names the file the write creates.
std::string NewStateFileName(absl::string_view original, absl::string_view state,
                             int attempt) {
  auto fnv = [&](uint64_t h) {
    auto mix = [&h](absl::string_view s) {
      for (unsigned char c : s) {
        h ^= c;
        h *= 0x100000001b3ULL;
      }
      h ^= 0xff;
      h *= 0x100000001b3ULL;
    };
    mix(original);
    mix(state);
    mix(absl::StrCat(attempt));
    return h;
  };
  uint64_t a = fnv(0xcbf29ce484222325ULL);
  uint64_t b = fnv(0x84222325cbf29ce4ULL);
  a = (a & ~0xF000ULL) | 0x4000ULL;                      // version nibble 4
  b = (b & ~(0xC0ULL << 56)) | (0x80ULL << 56);          // variant 10
  return absl::StrFormat("%08x-%04x-%04x-%04x-%012x", a >> 32, (a >> 16) & 0xFFFF, a & 0xFFFF,
                         b >> 48, b & 0xFFFFFFFFFFFFULL);
}

// `path` with its last component replaced by `name`.
std::string WithBaseName(const std::string& path, const std::string& name) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? name : path.substr(0, slash + 1) + name;
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The canonical form of an existing path (symlinks resolved), else `path`.
std::string Canonical(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::canonical(path, ec);
  return ec ? path : p.string();
}

// The delegate as `MetadataV2V3SerializerBase.serializeStreamStateHandle`
// writes it: tag 2 (`i64 stateSize`, `utf filePath`) or tag 6 (`utf
// relativePath`, `i64 stateSize`).
absl::StatusOr<std::string> EncodeFileHandle(uint8_t tag, int64_t state_size,
                                             absl::string_view path) {
  std::string bytes;
  serde::DataOutput out(&bytes);
  out.WriteUint8(tag);
  if (tag == static_cast<uint8_t>(HandleTag::kFileStream)) out.WriteInt64(state_size);
  FLINKSTATE_RETURN_IF_ERROR(out.WriteModifiedUtf8(path));
  if (tag == static_cast<uint8_t>(HandleTag::kRelativeStream)) out.WriteInt64(state_size);
  return bytes;
}

// The deep strip of one handle, before it is written in its file's encoding.
struct HandleEdit {
  const OperatorStateHandle* h = nullptr;
  std::string where;
  uint64_t subtask_offset = 0;    // the subtask's range offset (its identity)
  int entry_index = -1;           // the name's entry in `h->states`, or -1
  StreamRewrite rw;               // the stream's edits and the new offsets
  bool inline_stream = false;
  uint64_t old_stream_size = 0;
  int new_file = -1;              // file-backed: index into the result's new_files
  std::string new_name;           // ... and the new file's name
};

// What planning shares across handles.
struct PlanContext {
  serde::ByteView input;
  const std::string& name;
  const DeepStripFiles& files;
  // `_metadata` and operator snapshots: Flink resolves relative handles
  // against the file's own directory, so the output must stay beside them.
  bool relative_follows_output;
  DeepStripResult* result;
  std::vector<HandleEdit>* edits;
  std::map<std::string, std::string> files_rewritten;  // canonical original -> where
  std::set<std::string> names_taken;                    // new local paths
  std::map<uint64_t, std::string> inline_streams;       // data offset -> where
};

std::string Where(const StrippedEntry& e) {
  return absl::StrCat("operator ", e.operator_id.empty() ? "(snapshot)" : e.operator_id,
                      " subtask ", e.subtask_index, " ", e.slot);
}

// True if the two plans (over the same input) produce the same bytes the
// same way.
bool SamePlan(const serde::EditPlan& a, const serde::EditPlan& b) {
  if (a.output_size() != b.output_size() || a.pieces().size() != b.pieces().size()) return false;
  for (size_t i = 0; i < a.pieces().size(); ++i) {
    const serde::EditPiece& x = a.pieces()[i];
    const serde::EditPiece& y = b.pieces()[i];
    if (x.kind != y.kind || x.bytes != y.bytes || x.range.offset != y.range.offset ||
        x.range.size != y.range.size) {
      return false;
    }
  }
  return true;
}

// True if the file at `path` holds exactly what `plan` makes of `input`.
bool FileHolds(const std::string& path, const serde::EditPlan& plan, serde::ByteView input) {
  absl::StatusOr<serde::MappedFile> f = serde::MappedFile::Open(path);
  if (!f.ok() || f->size() != plan.output_size()) return false;
  const serde::ByteView have = f->bytes();
  uint64_t at = 0;
  for (const serde::EditPiece& p : plan.pieces()) {
    serde::ByteView want;
    if (p.kind == serde::EditPiece::Kind::kCopy) {
      want = input.subspan(p.range.offset, p.range.size);
    } else {
      want = serde::AsBytes(p.bytes);
    }
    if (!std::equal(want.begin(), want.end(), have.begin() + at)) return false;
    at += want.size();
  }
  return f->CheckIntact().ok();
}

// Whether a file (or, for an object-store URL, an object) is at `path`.
// Return values: the store's errors other than `NotFound`.
absl::StatusOr<bool> Exists(const std::string& path) {
  if (!objstore::IsObjectUrl(path)) return ::access(path.c_str(), F_OK) == 0;
  absl::StatusOr<uint64_t> size = objstore::ObjectSize(path);
  if (size.ok()) return true;
  if (absl::IsNotFound(size.status())) return false;
  return size.status();
}

// Names the new state file of `nf` (whose `plan` and `original` are set)
// beside the original read from `local` (a path, or an object-store URL): a
// file another plan of the transaction writes with the same bytes, else the
// first free name of the UUID form, or a file that exists with exactly the
// planned bytes.
absl::Status NameNewFile(const std::string& local, const std::string& canonical,
                         PlanContext& ctx, NewStateFile* nf, std::string* new_name) {
  if (ctx.files.planned != nullptr) {
    for (const NewStateFile& o : *ctx.files.planned) {
      if (Canonical(o.original) == canonical && SamePlan(o.plan, nf->plan)) {
        nf->path = o.path;
        nf->write = false;
        nf->planned_elsewhere = true;
        *new_name = BaseName(o.path);
        return absl::OkStatus();
      }
    }
  }
  for (int attempt = 0;; ++attempt) {
    *new_name = NewStateFileName(BaseName(local), ctx.name, attempt);
    const std::string p = WithBaseName(local, *new_name);
    if (ctx.names_taken.count(p) != 0) continue;
    bool taken_elsewhere = false;
    if (ctx.files.planned != nullptr) {
      for (const NewStateFile& o : *ctx.files.planned) taken_elsewhere |= o.path == p;
    }
    if (taken_elsewhere) continue;
    absl::StatusOr<bool> there = Exists(p);
    if (!there.ok()) {
      return serde::WithMessage(there.status(),
                                absl::StrCat(kLayer, ": ", nf->where, ": naming the new state "
                                             "file: ", there.status().message()));
    }
    if (*there) {
      if (!FileHolds(p, nf->plan, nf->input.bytes())) continue;
      nf->write = false;  // an earlier run wrote exactly this stream there
    }
    ctx.names_taken.insert(p);
    nf->path = p;
    return absl::OkStatus();
  }
}

// Plans one handle: appends its `HandleEdit` to `ctx.edits` and its entry
// (and new state file) to `ctx.result`.
absl::Status PlanHandle(const OperatorStateHandle& h, StrippedEntry entry,
                        uint64_t subtask_offset, PlanContext& ctx) {
  const std::string where = Where(entry);
  const std::string& name = ctx.name;
  int entry_index = -1;
  for (size_t i = 0; i < h.states.size(); ++i) {
    if (h.states[i].name.value == name) entry_index = static_cast<int>(i);
  }
  const bool inline_stream = IsTag(h.delegate.get(), HandleTag::kByteStream);
  const bool file_stream = IsFileBacked(h.delegate.get());
  if (!inline_stream && !file_stream) {
    if (entry_index < 0) return absl::OkStatus();  // its header cannot be read here
    const bool segment = IsTag(h.delegate.get(), HandleTag::kSegmentFile);
    return absl::UnimplementedError(absl::StrCat(
        kLayer, ": ", where, ": the stream is ",
        h.delegate ? HandleTagName(h.delegate->tag) : "missing",
        segment ? ", a segment of a physical file other handles share; it cannot be "
                  "rewritten for one handle"
                : ", which this edit does not rewrite",
        "; nothing was written"));
  }
  // The stream's bytes.
  serde::ByteView stream;
  ResolvedStream resolved;
  std::string local;
  if (inline_stream) {
    FLINKSTATE_ASSIGN_OR_RETURN(stream, InlineBytes(h, ctx.input, where));
  } else {
    const bool relative = IsTag(h.delegate.get(), HandleTag::kRelativeStream);
    const std::string& hp = h.delegate->path.value;
    if (relative && ctx.files.sources.base_dir.empty()) {
      return serde::WithLocation(absl::FailedPreconditionError(absl::StrCat(
          kLayer, ": ", where, ": relative state file ", hp,
          " needs the checkpoint directory to be found; nothing was written")),
          kLayer, where, std::nullopt);
    }
    absl::StatusOr<ResolvedStream> rs =
        ResolveStateStream(*h.delegate, ctx.input, ctx.files.sources);
    if (!rs.ok()) {
      return serde::WithLocation(
          serde::WithMessage(rs.status(),
                             absl::StrCat(kLayer, ": ", where, ": state file ", hp, ": ",
                                          rs.status().message(), "; nothing was written")),
          kLayer, where, std::nullopt);
    }
    resolved = std::move(*rs);
    stream = resolved.bytes;
    local = resolved.source;
  }
  FLINKSTATE_ASSIGN_OR_RETURN(DecodedStream d, DecodeStream(h, ctx.input, stream, where));
  const bool in_header = HeaderHas(d.header, name);
  if (entry_index < 0 && !in_header) return absl::OkStatus();
  if (!d.header.complete()) {
    return absl::UnimplementedError(absl::StrCat(kLayer, ": ", where, ": ",
                                                 d.header.stopped.message(),
                                                 "; nothing was written"));
  }
  if (entry_index >= 0 && !in_header) {
    return absl::InvalidArgumentError(absl::StrCat(
        kLayer, ": ", where, ": the handle has offsets for '", name,
        "' but its stream header has no meta info for it"));
  }
  HandleEdit edit;
  edit.h = &h;
  edit.where = where;
  edit.subtask_offset = subtask_offset;
  edit.entry_index = entry_index;
  edit.inline_stream = inline_stream;
  edit.old_stream_size = stream.size();
  FLINKSTATE_ASSIGN_OR_RETURN(edit.rw, RewriteStream(d, entry_index, name, where));
  uint64_t entry_bytes = 0;
  if (entry_index >= 0) {
    const StateNameEntry& e = h.states[entry_index];
    entry_bytes = e.range.size;
    entry.mode = e.mode;
    entry.entry_count = e.offsets.count;
  }
  ctx.result->element_bytes_removed += d.bytes.size() - edit.rw.size - edit.rw.meta_bytes;
  ++ctx.result->meta_infos_removed;
  if (inline_stream) {
    if (auto [it, fresh] = ctx.inline_streams.emplace(h.delegate->data.offset, where); !fresh) {
      return serde::WithLocation(absl::FailedPreconditionError(absl::StrCat(
          kLayer, ": ", where, " and ", it->second,
          " share one inline stream; it cannot be rewritten for each, nothing was written")),
          kLayer, where, std::nullopt);
    }
    entry.bytes = entry_bytes + (stream.size() - edit.rw.size);
    ctx.result->removed.push_back(entry);
    ctx.edits->push_back(std::move(edit));
    return absl::OkStatus();
  }
  // A file-backed stream: a new state file beside the original.
  const std::string canonical = Canonical(local);
  if (auto it = ctx.files_rewritten.find(canonical); it != ctx.files_rewritten.end()) {
    return serde::WithLocation(absl::FailedPreconditionError(absl::StrCat(
        kLayer, ": ", where, " and ", it->second, " point to the same state file ", local,
        "; a stream two handles share cannot be rewritten for each, nothing was written")),
        kLayer, where, std::nullopt);
  }
  ctx.files_rewritten.emplace(canonical, where);
  NewStateFile nf;
  nf.where = where;
  nf.operator_id = entry.operator_id;
  nf.subtask_index = entry.subtask_index;
  nf.slot = entry.slot;
  nf.relative = IsTag(h.delegate.get(), HandleTag::kRelativeStream);
  nf.handle_path = h.delegate->path.value;
  nf.original = local;
  nf.original_bytes = stream.size();
  if (nf.relative && ctx.relative_follows_output) {
    const std::string out_dir =
        ctx.files.output_dir.empty() ? ctx.files.sources.base_dir : ctx.files.output_dir;
    if (Canonical(out_dir) != Canonical(ctx.files.sources.base_dir)) {
      // Located in the handle (attack run 11: the ErrorReport's itemPath was "").
      return serde::WithLocation(absl::FailedPreconditionError(absl::StrCat(
          kLayer, ": ", where, ": relative state file ", nf.handle_path,
          " would get a new file in ", ctx.files.sources.base_dir,
          ", but Flink resolves relative paths against the output's directory ", out_dir,
          "; write the output into the input's directory (or --in-place), nothing was "
          "written")), kLayer, where, std::nullopt);
    }
  }
  nf.bytes = edit.rw.size;
  std::vector<serde::Replacement> file_edits;
  for (const serde::Replacement& r : edit.rw.edits) {
    if (r.range.size == 0 && r.bytes.empty()) continue;
    file_edits.push_back(r);
  }
  FLINKSTATE_ASSIGN_OR_RETURN(
      nf.plan, serde::EditPlan::FromReplacements(stream.size(), std::move(file_edits)));
  if (nf.plan.output_size() != edit.rw.size) {
    return absl::InternalError(absl::StrCat(kLayer, ": ", where, ": planned stream size differs"));
  }
  nf.input = std::move(resolved.file);
  FLINKSTATE_RETURN_IF_ERROR(NameNewFile(local, canonical, ctx, &nf, &edit.new_name));
  nf.new_handle_path = WithBaseName(nf.handle_path, edit.new_name);
  entry.bytes = entry_bytes;
  ctx.result->removed.push_back(entry);
  edit.new_file = static_cast<int>(ctx.result->new_files.size());
  ctx.result->new_files.push_back(std::move(nf));
  ctx.edits->push_back(std::move(edit));
  return absl::OkStatus();
}

// The new offsets of entry `i` of `e`, as packed big-endian i64.
std::string NewOffsets(const HandleEdit& e, size_t i) {
  const std::vector<int64_t>& offs = e.rw.offsets[i];
  std::string bytes(8 * offs.size(), '\0');
  for (size_t j = 0; j < offs.size(); ++j) {
    serde::EncodeBigEndian64(static_cast<uint64_t>(offs[j]),
                             reinterpret_cast<uint8_t*>(&bytes[8 * j]));
  }
  return bytes;
}

// `_metadata` and operator snapshots: the edits as bytes of the metadata
// serializers' layout (`MetadataV2V3SerializerBase`).
absl::Status EncodeMetadataEdit(const HandleEdit& e, const DeepStripResult& result,
                                std::vector<serde::Replacement>* reps) {
  const OperatorStateHandle& h = *e.h;
  if (e.entry_index >= 0) {
    reps->push_back({h.count_range, BigEndian32(static_cast<uint32_t>(h.states.size() - 1))});
    reps->push_back({h.states[e.entry_index].range, ""});
  }
  for (size_t i = 0; i < h.states.size(); ++i) {
    if (static_cast<int>(i) == e.entry_index) continue;
    std::string offs = NewOffsets(e, i);
    if (!offs.empty()) reps->push_back({h.states[i].offsets.range, std::move(offs)});
  }
  if (e.inline_stream) {
    // The stream's edits, moved to its place in the file, and its new length.
    const SourceRange data = h.delegate->data;
    reps->push_back({{data.offset - 4, 4}, BigEndian32(static_cast<uint32_t>(e.rw.size))});
    for (const serde::Replacement& r : e.rw.edits) {
      if (r.range.size == 0 && r.bytes.empty()) continue;
      reps->push_back({{r.range.offset + data.offset, r.range.size}, r.bytes});
    }
    return absl::OkStatus();
  }
  const NewStateFile& nf = result.new_files[e.new_file];
  FLINKSTATE_ASSIGN_OR_RETURN(
      std::string handle,
      EncodeFileHandle(h.delegate->tag, static_cast<int64_t>(nf.bytes), nf.new_handle_path));
  reps->push_back({h.delegate->range, std::move(handle)});
  return absl::OkStatus();
}

// --- completedCheckpoint files: the same edits through the javaobj rewriter ---


// The OperatorSubtaskState object of the map entry (key Integer, value the
// subtask state) that starts at byte `entry_offset`, or kNoItem.
javaobj::ItemId SubtaskObject(const javaobj::Stream& s, uint64_t entry_offset) {
  const javaobj::ItemId key = s.ItemAt(entry_offset);
  if (key == javaobj::kNoItem) return key;
  const javaobj::ItemId value = s.subtree_end(key);
  if (value >= s.num_items()) return javaobj::kNoItem;
  const javaobj::ItemId obj = s.Resolve(value);
  return s.kind(obj) == javaobj::ItemKind::kObject ? obj : javaobj::kNoItem;
}

// Writes handle edits of a completedCheckpoint as rewriter edits. Item ids are
// found from the model's ranges (a handle's range is its object; a state name
// entry's and a subtask's are their map entries), and checked against them.
class CompletedCheckpointEncoder {
 public:
  explicit CompletedCheckpointEncoder(const javaobj::Stream& s) : s_(s), rw_(s) {}

  absl::Status Add(const HandleEdit& e, const DeepStripResult& result) {
    const OperatorStateHandle& h = *e.h;
    const javaobj::ItemId handle = s_.ItemAt(h.range.offset);
    if (handle == javaobj::kNoItem || s_.range(handle).size != h.range.size) {
      return Mismatch(e, "the handle object", h.range.offset);
    }
    // A handle object two subtasks share is one object: edited once.
    if (!handles_.insert(handle).second) return absl::OkStatus();
    // stateNameToPartitionOffsets: the name's entry out, the others' offsets moved.
    const javaobj::ItemId map =
        javaobj::UnwrapCollection(s_, s_.FieldValue(handle, "stateNameToPartitionOffsets"));
    absl::StatusOr<javaobj::ContainerView> view = javaobj::ViewContainer(s_, map);
    if (!view.ok() || view->entries.size() != h.states.size()) {
      return Mismatch(e, "stateNameToPartitionOffsets", h.range.offset);
    }
    for (size_t i = 0; i < h.states.size(); ++i) {
      if (!s_.StringEquals(view->entries[i].key, h.states[i].name.value)) {
        return Mismatch(e, "a state name", view->entries[i].range.offset);
      }
    }
    if (e.entry_index >= 0) {
      if (!view->resizable) {
        return serde::DecodeError(
            absl::StatusCode::kFailedPrecondition, kLayer, e.where,
            absl::StrCat("the state map is a ", view->class_name, " that cannot shrink in place"),
            s_.range(map).offset);
      }
      FLINKSTATE_RETURN_IF_ERROR(rw_.RemoveEntry(*view, static_cast<size_t>(e.entry_index)));
    }
    for (size_t i = 0; i < h.states.size(); ++i) {
      if (static_cast<int>(i) == e.entry_index) continue;
      const javaobj::ItemId meta = s_.Resolve(view->entries[i].value);
      const javaobj::ItemId offs = s_.Resolve(s_.FieldValue(meta, "offsets"));
      if (offs == javaobj::kNoItem || s_.kind(offs) != javaobj::ItemKind::kArray ||
          s_.item(offs).payload.offset != h.states[i].offsets.range.offset) {
        return Mismatch(e, "StateMetaInfo.offsets", s_.range(meta).offset);
      }
      std::string bytes = NewOffsets(e, i);
      const serde::ByteView now = serde::Slice(s_.input(), h.states[i].offsets.range);
      if (serde::AsBytes(bytes) == now) continue;
      FLINKSTATE_RETURN_IF_ERROR(rw_.EditArrayElements(offs, {{{0, now.size()}, std::move(bytes)}}));
    }
    // The stream.
    const javaobj::ItemId delegate = s_.Resolve(s_.FieldValue(handle, "delegateStateHandle"));
    if (delegate == javaobj::kNoItem || s_.range(delegate).offset != h.delegate->range.offset) {
      return Mismatch(e, "delegateStateHandle", h.range.offset);
    }
    if (e.inline_stream) {
      const javaobj::ItemId data = s_.Resolve(s_.FieldValue(delegate, "data"));
      if (data == javaobj::kNoItem || s_.kind(data) != javaobj::ItemKind::kArray ||
          s_.item(data).payload.offset != h.delegate->data.offset) {
        return Mismatch(e, "ByteStreamStateHandle.data", s_.range(delegate).offset);
      }
      std::vector<serde::Replacement> edits;
      for (const serde::Replacement& r : e.rw.edits) {
        if (r.range.size != 0 || !r.bytes.empty()) edits.push_back(r);
      }
      return rw_.EditArrayElements(data, std::move(edits));
    }
    const NewStateFile& nf = result.new_files[e.new_file];
    FLINKSTATE_RETURN_IF_ERROR(
        rw_.SetPrimitiveField(delegate, "stateSize", static_cast<int64_t>(nf.bytes)));
    // Flink opens `filePath`; a relative handle also keeps its `relativePath`.
    const javaobj::ItemId uri = s_.FieldValue(s_.FieldValue(delegate, "filePath"), "uri");
    const javaobj::ItemId uri_string = s_.FieldValue(uri, "string");
    absl::StatusOr<std::string> old_uri = s_.StringValue(uri_string);
    if (uri_string == javaobj::kNoItem || !old_uri.ok()) {
      return Mismatch(e, "FileStateHandle.filePath", s_.range(delegate).offset);
    }
    FLINKSTATE_RETURN_IF_ERROR(ReplaceString(uri_string, WithBaseName(*old_uri, e.new_name)));
    if (nf.relative) {
      FLINKSTATE_RETURN_IF_ERROR(
          ReplaceString(s_.FieldValue(delegate, "relativePath"), nf.new_handle_path));
    }
    return absl::OkStatus();
  }

  // Each changed subtask's `stateSize` (and `checkpointedSize`) less `lost`
  // (keyed by the subtask's map entry offset).
  absl::Status SetSubtaskSizes(const std::map<uint64_t, int64_t>& lost) {
    for (const auto& [entry_offset, bytes] : lost) {
      if (bytes == 0) continue;
      // The object the model read as the subtask: an OperatorSubtaskState,
      // or a class of a drifted name the model matched by its fields (it
      // warns of the drift), so no class name is checked here.
      const javaobj::ItemId st = SubtaskObject(s_, entry_offset);
      if (st == javaobj::kNoItem) {
        return serde::DecodeError(absl::StatusCode::kInternal, kLayer, "",
                                  "no OperatorSubtaskState where the model has a subtask",
                                  entry_offset);
      }
      if (!subtasks_.insert(st).second) continue;
      for (const char* field : {"stateSize", "checkpointedSize"}) {
        absl::StatusOr<int64_t> v = s_.PrimFieldInt(st, field);
        if (!v.ok() && field[0] == 's') {
          return serde::DecodeError(
              absl::StatusCode::kFailedPrecondition, kLayer, "",
              absl::StrCat("the subtask object (", s_.ClassNameOf(st),
                           ") has no long stateSize to lower by the ", bytes,
                           " stream bytes removed; nothing was written"),
              s_.range(st).offset);
        }
        if (!v.ok()) continue;  // checkpointedSize: Flink 1.14+
        if (*v < bytes) {
          return serde::DecodeError(
              absl::StatusCode::kFailedPrecondition, kLayer, "",
              absl::StrCat("OperatorSubtaskState.", field, " ", *v, " is less than the ", bytes,
                           " stream bytes removed; the file does not add up, nothing was written"),
              s_.range(st).offset);
        }
        FLINKSTATE_RETURN_IF_ERROR(rw_.SetPrimitiveField(st, field, *v - bytes));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<serde::EditPlan> Build(javaobj::RewriteStats* stats) {
    // A replaced path string that another object also refers to would change
    // there too: refuse rather than edit something else.
    if (!replaced_.empty()) {
      for (javaobj::ItemId i = 0; i < s_.num_items(); ++i) {
        if (s_.kind(i) != javaobj::ItemKind::kReference) continue;
        const javaobj::ItemId t = s_.Resolve(i);
        if (replaced_.count(t) == 0) continue;
        return serde::DecodeError(
            absl::StatusCode::kFailedPrecondition, kLayer, "",
            absl::StrCat("the path string at byte ", s_.range(t).offset,
                         " is shared with another object (a back-reference at byte ",
                         s_.range(i).offset, "); it cannot change for one handle, nothing was "
                         "written"),
            s_.range(i).offset);
      }
    }
    FLINKSTATE_ASSIGN_OR_RETURN(serde::EditPlan plan, rw_.BuildPlan());
    *stats = rw_.stats();
    return plan;
  }

 private:
  absl::Status Mismatch(const HandleEdit& e, absl::string_view what, uint64_t at) {
    return serde::DecodeError(absl::StatusCode::kInternal, kLayer, e.where,
                              absl::StrCat(what, " is not where the model says"), at);
  }

  absl::Status ReplaceString(javaobj::ItemId site, const std::string& value) {
    if (site == javaobj::kNoItem || s_.kind(s_.Resolve(site)) != javaobj::ItemKind::kString) {
      return absl::InternalError(absl::StrCat(kLayer, ": a path is not a string"));
    }
    if (s_.kind(site) != javaobj::ItemKind::kReference) replaced_.insert(site);
    return rw_.ReplaceValue(site, javaobj::NewValue::String(value));
  }

  const javaobj::Stream& s_;
  javaobj::StreamRewriter rw_;
  std::set<javaobj::ItemId> handles_;
  std::set<javaobj::ItemId> subtasks_;
  std::set<javaobj::ItemId> replaced_;  // defining strings replaced
};

template <typename Fn>
absl::Status ForEachHandle(const StateFile& file, const std::vector<int>& ops, Fn&& fn) {
  auto subtask = [&](int op_index, const std::string& id, const OperatorSubtaskState& s) {
    for (const auto& [slot, list] :
         {std::pair<const char*, const std::vector<OperatorStateHandle>*>{
              "managedOperatorState", &s.managed_operator_state},
          {"rawOperatorState", &s.raw_operator_state}}) {
      for (const OperatorStateHandle& h : *list) {
        if (h.tag == 0) continue;
        StrippedEntry e;
        e.operator_index = op_index;
        e.operator_id = id;
        e.subtask_index = s.subtask_index;
        e.slot = slot;
        FLINKSTATE_RETURN_IF_ERROR(fn(h, e, s.range.offset));
      }
    }
    return absl::OkStatus();
  };
  if (file.kind == StateFileKind::kOperatorSnapshot) {
    return subtask(-1, "", file.snapshot.state);
  }
  for (int i : ops) {
    const OperatorState& op = file.metadata.operators[i];
    for (const OperatorSubtaskState& s : op.subtasks) {
      FLINKSTATE_RETURN_IF_ERROR(subtask(i, op.IdHex(), s));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int>> Operators(const StateFile& file, const StripOptions& options) {
  std::vector<int> ops;
  if (!options.operator_ids.empty()) {
    return SelectOperators(file, options.operator_ids, "strip-state --deep");
  }
  for (size_t i = 0; i < file.metadata.operators.size(); ++i) ops.push_back(static_cast<int>(i));
  return ops;
}

// Plans every handle of the selected operators (the part all kinds share).
absl::Status PlanHandles(const StateFile& file, serde::ByteView input, const StripOptions& options,
                         const DeepStripFiles& files, DeepStripResult* result,
                         std::vector<HandleEdit>* edits) {
  if (options.state_name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(kLayer, ": no state name"));
  }
  FLINKSTATE_ASSIGN_OR_RETURN(std::vector<int> ops, Operators(file, options));
  PlanContext ctx{input,  options.state_name, files, file.kind != StateFileKind::kCompletedCheckpoint,
                  result, edits,              {},    {},
                  {}};
  FLINKSTATE_RETURN_IF_ERROR(ForEachHandle(
      file, ops, [&](const OperatorStateHandle& h, const StrippedEntry& e, uint64_t subtask) {
        return PlanHandle(h, e, subtask, ctx);
      }));
  if (result->removed.empty()) {
    // Neither a handle nor a stream header holds it: the names that are held.
    const absl::Status none = StateNotFound(file, options);
    absl::string_view why = none.message();
    if (!absl::IsNotFound(none) || !absl::ConsumePrefix(&why, "strip-state: ")) return none;
    return absl::NotFoundError(absl::StrCat(kLayer, ": ", why));
  }
  return absl::OkStatus();
}

// A handle's stream for the verify: inline bytes, a new stream handed in, or
// its state file. `held` keeps a mapped file alive.
absl::StatusOr<serde::ByteView> VerifyStreamBytes(
    const OperatorStateHandle& h, serde::ByteView file, const StateStreamSources& sources,
    const std::map<std::string, serde::ByteView>* new_streams, absl::string_view where,
    ResolvedStream* held) {
  if (IsTag(h.delegate.get(), HandleTag::kByteStream)) return InlineBytes(h, file, where);
  if (new_streams != nullptr) {
    auto it = new_streams->find(h.delegate->path.value);
    if (it != new_streams->end()) return it->second;
  }
  FLINKSTATE_ASSIGN_OR_RETURN(*held, ResolveStateStream(*h.delegate, file, sources));
  return held->bytes;
}

// The bytes a handle's stream occupies by its own account (inline bytes or
// the file handle's stateSize; 0 for others), as Flink's getStateSize counts.
int64_t StreamStateSize(const OperatorStateHandle& h) {
  if (IsTag(h.delegate.get(), HandleTag::kByteStream)) {
    return static_cast<int64_t>(h.delegate->data.size);
  }
  if (IsFileBacked(h.delegate.get())) return h.delegate->state_size;
  return 0;
}

// completedCheckpoint: every OperatorSubtaskState's stateSize (and
// checkpointedSize) in `after` is `before`'s less what its operator-state
// streams lost.
absl::Status VerifySubtaskSizes(const StateFile& before, const javaobj::Stream& sb,
                                const StateFile& after, const javaobj::Stream& sa) {
  auto fail = [](const std::string& what) {
    return absl::InternalError(absl::StrCat(kLayer, ": verify: ", what));
  };
  if (before.metadata.operators.size() != after.metadata.operators.size()) {
    return fail("the operators changed");
  }
  for (size_t i = 0; i < before.metadata.operators.size(); ++i) {
    const OperatorState& ob = before.metadata.operators[i];
    const OperatorState& oa = after.metadata.operators[i];
    if (ob.subtasks.size() != oa.subtasks.size()) return fail("the subtasks changed");
    for (size_t k = 0; k < ob.subtasks.size(); ++k) {
      int64_t lost = 0;
      using Slot = std::vector<OperatorStateHandle> OperatorSubtaskState::*;
      for (Slot slot : {&OperatorSubtaskState::managed_operator_state,
                        &OperatorSubtaskState::raw_operator_state}) {
        const std::vector<OperatorStateHandle>& hb = ob.subtasks[k].*slot;
        const std::vector<OperatorStateHandle>& ha = oa.subtasks[k].*slot;
        if (hb.size() != ha.size()) return fail("the operator state handles changed");
        for (size_t j = 0; j < hb.size(); ++j) lost += StreamStateSize(hb[j]) - StreamStateSize(ha[j]);
      }
      const javaobj::ItemId xb = SubtaskObject(sb, ob.subtasks[k].range.offset);
      const javaobj::ItemId xa = SubtaskObject(sa, oa.subtasks[k].range.offset);
      if (xb == javaobj::kNoItem || xa == javaobj::kNoItem) return fail("a subtask object is missing");
      for (const char* field : {"stateSize", "checkpointedSize"}) {
        absl::StatusOr<int64_t> vb = sb.PrimFieldInt(xb, field);
        absl::StatusOr<int64_t> va = sa.PrimFieldInt(xa, field);
        if (vb.ok() != va.ok()) return fail(absl::StrCat("OperatorSubtaskState.", field, " changed shape"));
        if (vb.ok() && *va != *vb - lost) {
          return fail(absl::StrCat("operator ", oa.IdHex(), " subtask ", oa.subtasks[k].subtask_index,
                                   ": OperatorSubtaskState.", field, " ", *va, ", expected ", *vb,
                                   " - ", lost));
        }
      }
    }
  }
  return absl::OkStatus();
}

// The decoded Java stream of a completedCheckpoint `LoadedFile` (`held` owns
// it when the file was opened without one).
absl::StatusOr<const javaobj::Stream*> StreamOf(const LoadedFile& file, javaobj::Stream* held) {
  if (file.stream != nullptr) return file.stream.get();
  FLINKSTATE_ASSIGN_OR_RETURN(*held, javaobj::DecodeStream(file.bytes()));
  return held;
}

}  // namespace

DeepStripFiles DeepStripFilesFor(const LoadedFile& file, const std::string& output_dir,
                                 std::vector<std::pair<std::string, std::string>> state_roots,
                                 const std::string& checkpoint_dir) {
  DeepStripFiles files;
  files.sources.state_roots = std::move(state_roots);
  // An input in an object store: its state files are read there (and the
  // new ones written there, beside them).
  files.sources.read_object_store = objstore::IsObjectUrl(file.path);
  files.output_dir = output_dir;
  files.sources.base_dir = !checkpoint_dir.empty()
                               ? checkpoint_dir
                               : RelativeHandleDir(file.model, file.path, files.sources);
  return files;
}

DeepStripStreams DeepStripStreamsFor(const LoadedFile& file, const DeepStripFiles& files) {
  DeepStripStreams streams;
  streams.before = files.sources;
  streams.after = files.sources;
  if (file.kind != FileKind::kCompletedCheckpoint && !files.output_dir.empty()) {
    streams.after.base_dir = files.output_dir;
  }
  return streams;
}

absl::StatusOr<DeepStripResult> PlanDeepStripState(const StateFile& file, serde::ByteView input,
                                                    const StripOptions& options,
                                                    const DeepStripFiles& files) {
  if (file.kind == StateFileKind::kCompletedCheckpoint) {
    return absl::InvalidArgumentError(absl::StrCat(
        kLayer, ": a completedCheckpoint is edited through its decoded Java stream "
                "(PlanDeepStripCompletedCheckpoint, or the LoadedFile overload)"));
  }
  DeepStripResult result;
  std::vector<HandleEdit> edits;
  FLINKSTATE_RETURN_IF_ERROR(PlanHandles(file, input, options, files, &result, &edits));
  std::vector<serde::Replacement> reps;
  for (const HandleEdit& e : edits) FLINKSTATE_RETURN_IF_ERROR(EncodeMetadataEdit(e, result, &reps));
  FLINKSTATE_ASSIGN_OR_RETURN(result.plan,
                              serde::EditPlan::FromReplacements(input.size(), std::move(reps)));
  result.bytes_removed =
      static_cast<int64_t>(input.size()) - static_cast<int64_t>(result.plan.output_size());
  return result;
}

absl::StatusOr<DeepStripResult> PlanDeepStripCompletedCheckpoint(const javaobj::Stream& stream,
                                                                 const StateFile& file,
                                                                 const StripOptions& options,
                                                                 const DeepStripFiles& files) {
  if (file.kind != StateFileKind::kCompletedCheckpoint) {
    return absl::InvalidArgumentError(
        absl::StrCat(kLayer, ": not a completedCheckpoint model"));
  }
  DeepStripResult result;
  std::vector<HandleEdit> edits;
  FLINKSTATE_RETURN_IF_ERROR(PlanHandles(file, stream.input(), options, files, &result, &edits));
  CompletedCheckpointEncoder enc(stream);
  std::map<uint64_t, int64_t> lost;  // per subtask (its map entry's offset)
  for (const HandleEdit& e : edits) {
    FLINKSTATE_RETURN_IF_ERROR(enc.Add(e, result));
    lost[e.subtask_offset] += static_cast<int64_t>(e.old_stream_size) -
                              static_cast<int64_t>(e.rw.size);
  }
  FLINKSTATE_RETURN_IF_ERROR(enc.SetSubtaskSizes(lost));
  FLINKSTATE_ASSIGN_OR_RETURN(result.plan, enc.Build(&result.stats));
  result.bytes_removed = static_cast<int64_t>(stream.input().size()) -
                         static_cast<int64_t>(result.plan.output_size());
  return result;
}

absl::StatusOr<DeepStripResult> PlanDeepStripState(const LoadedFile& file,
                                                    const StripOptions& options,
                                                    const DeepStripFiles& files) {
  if (!file.is_state_file() || file.encoding != Encoding::kRaw || file.metadata_deferred) {
    return absl::InvalidArgumentError(absl::StrCat(
        file.path, ": ", kLayer, ": ", FileKindWithArticle(file.kind),
        file.encoding != Encoding::kRaw ? " stored wrapped (decode it first)" : "",
        file.metadata_deferred ? " opened without its model" : "",
        " cannot be deep-stripped; give a _metadata, operator-snapshot or completedCheckpoint "
        "file"));
  }
  if (file.kind != FileKind::kCompletedCheckpoint) {
    return PlanDeepStripState(file.model, file.bytes(), options, files);
  }
  if (file.completed_deferred) {  // opened for a streaming edit: no model yet
    FLINKSTATE_ASSIGN_OR_RETURN(CompletedTree tree, DecodeCompletedTree(file));
    return PlanDeepStripCompletedCheckpoint(*tree.stream, tree.model, options, files);
  }
  javaobj::Stream held;
  FLINKSTATE_ASSIGN_OR_RETURN(const javaobj::Stream* stream, StreamOf(file, &held));
  return PlanDeepStripCompletedCheckpoint(*stream, file.model, options, files);
}

absl::Status VerifyDeepStripped(const StateFile& before, serde::ByteView before_bytes,
                                const StateFile& after, serde::ByteView after_bytes,
                                const StripOptions& options, const DeepStripStreams& streams) {
  const std::string& name = options.state_name;
  auto fail = [](const std::string& what) {
    return absl::InternalError(absl::StrCat(kLayer, ": verify: ", what));
  };
  if (before.kind != after.kind) return fail("the file kind changed");
  std::set<std::string> selected;
  if (!options.operator_ids.empty() && before.kind != StateFileKind::kOperatorSnapshot) {
    absl::StatusOr<std::vector<int>> ops = Operators(before, options);
    if (!ops.ok()) return fail(std::string(ops.status().message()));
    for (int i : *ops) selected.insert(before.metadata.operators[i].IdHex());
  }
  // Handles in file order.
  struct H {
    const OperatorStateHandle* h;
    std::string where;
    bool selected;
  };
  auto collect = [&selected](const StateFile& f) {
    std::vector<H> out;
    std::vector<int> all;
    for (size_t i = 0; i < f.metadata.operators.size(); ++i) all.push_back(static_cast<int>(i));
    ForEachHandle(f, all, [&](const OperatorStateHandle& h, const StrippedEntry& e, uint64_t) {
      out.push_back({&h, Where(e), selected.empty() || selected.count(e.operator_id) != 0});
      return absl::OkStatus();
    }).IgnoreError();  // the callback never fails
    return out;
  };
  std::vector<H> hb = collect(before), ha = collect(after);
  if (hb.size() != ha.size()) return fail("the number of operator state handles changed");
  for (size_t i = 0; i < hb.size(); ++i) {
    const OperatorStateHandle& b = *hb[i].h;
    const OperatorStateHandle& a = *ha[i].h;
    std::vector<const StateNameEntry*> kept;
    for (const StateNameEntry& e : b.states) {
      if (e.name.value != name || !hb[i].selected) kept.push_back(&e);
    }
    if (a.states.size() != kept.size()) return fail(hb[i].where + ": entries differ");
    for (size_t k = 0; k < kept.size(); ++k) {
      if (a.states[k].name.value != kept[k]->name.value || a.states[k].mode != kept[k]->mode ||
          a.states[k].offsets.count != kept[k]->offsets.count) {
        return fail(hb[i].where + ": entry " + kept[k]->name.value + " changed");
      }
    }
    if (!hb[i].selected) continue;
    const bool inline_b = IsTag(b.delegate.get(), HandleTag::kByteStream);
    if (!inline_b && !IsFileBacked(b.delegate.get())) continue;  // not read by the plan
    if (!a.delegate || a.delegate->tag != b.delegate->tag) {
      return fail(ha[i].where + ": the stream handle changed its kind");
    }
    ResolvedStream held_b, held_a;
    absl::StatusOr<serde::ByteView> sb =
        VerifyStreamBytes(b, before_bytes, streams.before, nullptr, hb[i].where, &held_b);
    const bool moved = !inline_b && a.delegate->path.value != b.delegate->path.value;
    if (!sb.ok()) {
      // Unreadable before: the plan left it alone (it refuses a handle with
      // the name whose stream it cannot read).
      if (moved) return fail(hb[i].where + ": " + std::string(sb.status().message()));
      continue;
    }
    absl::StatusOr<serde::ByteView> sa =
        VerifyStreamBytes(a, after_bytes, streams.after, &streams.new_streams, ha[i].where,
                          &held_a);
    if (!sa.ok()) return fail(ha[i].where + ": " + std::string(sa.status().message()));
    if (moved && a.delegate->state_size != static_cast<int64_t>(sa->size())) {
      return fail(absl::StrCat(ha[i].where, ": stateSize ", a.delegate->state_size,
                               " but the new state file ", a.delegate->path.value, " holds ",
                               sa->size(), " bytes"));
    }
    absl::StatusOr<DecodedStream> db = DecodeStream(b, before_bytes, *sb, hb[i].where);
    if (!db.ok()) continue;  // undecodable before: the plan left it alone
    absl::StatusOr<DecodedStream> da = DecodeStream(a, after_bytes, *sa, ha[i].where);
    if (!da.ok()) return fail(ha[i].where + ": " + std::string(da.status().message()));
    if (!da->header.complete() && db->header.complete()) {
      return fail(ha[i].where + ": header no longer decodes");
    }
    if (HeaderHas(da->header, name)) return fail(ha[i].where + ": meta info still present");
    size_t ka = 0;
    for (const StateElements& se : db->elements) {
      if (se.name == name) continue;
      const StateElements& sa_el = da->elements[ka++];
      if (sa_el.elements.size() != se.elements.size()) {
        return fail(absl::StrCat(ha[i].where, ": elements of ", se.name, " differ"));
      }
      for (size_t j = 0; j < se.elements.size(); ++j) {
        const SourceRange& rb = se.elements[j];
        const SourceRange& ra = sa_el.elements[j];
        if (rb.size != ra.size ||
            !std::equal(db->bytes.begin() + rb.offset, db->bytes.begin() + rb.offset + rb.size,
                        da->bytes.begin() + ra.offset)) {
          return fail(absl::StrCat(ha[i].where, ": element ", j, " of ", se.name, " changed"));
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status VerifyDeepStripped(const LoadedFile& before, serde::ByteView output,
                                const StripOptions& options, const DeepStripStreams& streams) {
  if (before.kind != FileKind::kCompletedCheckpoint) {
    FLINKSTATE_ASSIGN_OR_RETURN(StateFile after, ReadStateFileRoundTrip(output));
    return VerifyDeepStripped(before.model, before.bytes(), after, output, options, streams);
  }
  javaobj::Stream held;
  FLINKSTATE_ASSIGN_OR_RETURN(const javaobj::Stream* sb, StreamOf(before, &held));
  StateFile before_model;
  if (before.completed_deferred) {
    FLINKSTATE_ASSIGN_OR_RETURN(before_model, ReadCompletedCheckpoint(*sb));
  }
  const StateFile& bm = before.completed_deferred ? before_model : before.model;
  // Decoded once for the round trip, the model and the sizes.
  FLINKSTATE_ASSIGN_OR_RETURN(javaobj::Stream sa, javaobj::DecodeStream(output));
  FLINKSTATE_RETURN_IF_ERROR(javaobj::VerifyRoundTrip(sa));
  FLINKSTATE_ASSIGN_OR_RETURN(StateFile after, ReadCompletedCheckpoint(sa));
  FLINKSTATE_RETURN_IF_ERROR(
      VerifyDeepStripped(bm, before.bytes(), after, output, options, streams));
  return VerifySubtaskSizes(bm, *sb, after, sa);
}

serde::OutputVerifier NewStateFileVerifier(const std::string& state_name,
                                           const NewStateFile& nf) {
  return [&state_name, &nf](serde::ByteView out) -> absl::Status {
    absl::StatusOr<OperatorStateStreamHeader> h = ReadOperatorStateStreamHeader(out);
    if (!h.ok()) return serde::Annotate(h.status(), absl::StrCat(kLayer, ": verify: ", nf.path));
    if (!h->complete() || HeaderHas(*h, state_name) || out.size() != nf.bytes) {
      return absl::InternalError(absl::StrCat(kLayer, ": verify: ", nf.path,
                                              ": the new stream is not the planned one"));
    }
    return absl::OkStatus();
  };
}

namespace {

// `WriteDeepStripped` into an object store: one objstore::CommitObjects
// transaction, the new state files as new objects (put in place first), the
// edited object's verify reading them as uploaded.
absl::Status WriteDeepStrippedObjects(
    const DeepStripResult& result, const std::string& state_name,
    const serde::MappedFile& input, const std::string& output, const std::string& backup,
    const std::function<serde::OutputVerifier(const std::map<std::string, serde::ByteView>&)>&
        make_verify,
    const serde::TransactionOptions& options) {
  std::vector<objstore::ObjectChange> changes;
  std::vector<const NewStateFile*> written;
  for (const NewStateFile& nf : result.new_files) {
    if (!nf.write) continue;
    objstore::ObjectChange c;
    c.target = nf.path;
    c.create = true;
    c.input = &nf.input;
    c.plan = &nf.plan;
    c.verify = NewStateFileVerifier(state_name, nf);
    changes.push_back(std::move(c));
    written.push_back(&nf);
  }
  objstore::ObjectChange m;
  m.target = output;
  m.backup = backup;
  m.input = &input;
  m.plan = &result.plan;
  std::vector<objstore::ObjectChange>* all = &changes;
  m.verify = [all, &written, &make_verify](serde::ByteView out) -> absl::Status {
    std::map<std::string, serde::ByteView> new_streams;
    for (size_t i = 0; i < written.size(); ++i) {
      new_streams[written[i]->new_handle_path] = (*all)[i].written;
    }
    return make_verify(new_streams)(out);
  };
  changes.push_back(std::move(m));
  objstore::ObjectTransactionOptions to;
  to.journal_dir = options.journal_dir.empty() ? serde::DirName(output) : options.journal_dir;
  to.progress = options.progress;
  to.intent = options.intent;
  return serde::LocatedIn(objstore::CommitObjects(changes, to), kLayer, output);
}

}  // namespace

absl::Status WriteDeepStripped(
    const DeepStripResult& result, const std::string& state_name,
    const serde::MappedFile& input, const std::string& output, const std::string& backup,
    const std::function<serde::OutputVerifier(const std::map<std::string, serde::ByteView>&)>&
        make_verify,
    serde::TransactionOptions options) {
  for (const NewStateFile& nf : result.new_files) {
    if (nf.write && objstore::IsObjectUrl(nf.path) != objstore::IsObjectUrl(output)) {
      return absl::InvalidArgumentError(absl::StrCat(
          kLayer, ": ", nf.where, ": the new state file ", nf.path, " is ",
          objstore::IsObjectUrl(nf.path) ? "an object" : "a local file", " but ", output, " is ",
          objstore::IsObjectUrl(output) ? "an object" : "a local file",
          ": one transaction cannot span both (nothing was written)"));
    }
  }
  if (objstore::IsObjectUrl(output)) {
    return WriteDeepStrippedObjects(result, state_name, input, output, backup, make_verify,
                                    options);
  }
  std::vector<serde::FileChange> changes;
  std::vector<const NewStateFile*> written;
  serde::DirectoryLocks locks;
  for (const NewStateFile& nf : result.new_files) {
    if (!nf.write) continue;
    serde::FileChange c;
    c.target = serde::AbsolutePath(nf.path);
    if (c.target.empty()) {
      return absl::NotFoundError(absl::StrCat(kLayer, ": the directory of ", nf.path,
                                              " does not exist (nothing was written)"));
    }
    FLINKSTATE_RETURN_IF_ERROR(locks.Add(serde::DirName(c.target)));
    // Locked now: a name taken since the plan stays taken.
    if (::access(c.target.c_str(), F_OK) == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          kLayer, ": ", nf.where, ": the new state file ", c.target,
          " exists already (created since the plan); run again (nothing was written)"));
    }
    c.input = &nf.input;
    c.plan = &nf.plan;
    c.verify = NewStateFileVerifier(state_name, nf);
    changes.push_back(std::move(c));
    written.push_back(&nf);
  }
  serde::FileChange m;
  m.target = serde::AbsolutePath(output);
  if (m.target.empty()) {
    return absl::NotFoundError(
        absl::StrCat(kLayer, ": the directory of ", output, " does not exist (nothing was written)"));
  }
  FLINKSTATE_RETURN_IF_ERROR(locks.Add(serde::DirName(m.target)));
  if (!backup.empty()) {
    m.backup = serde::AbsolutePath(backup);
    if (m.backup.empty()) {
      return absl::NotFoundError(absl::StrCat(kLayer, ": the directory of the backup ", backup,
                                              " does not exist (nothing was replaced)"));
    }
    FLINKSTATE_RETURN_IF_ERROR(locks.Add(serde::DirName(m.backup)));
  }
  m.input = &input;
  m.plan = &result.plan;
  changes.push_back(std::move(m));
  // The edited file is verified last, against the new state files as
  // written: by then `CommitFiles` has named their temporary files and
  // written them.
  std::vector<serde::FileChange>* all = &changes;
  changes.back().verify = [all, &written, &make_verify](serde::ByteView out) -> absl::Status {
    std::vector<serde::MappedFile> mapped;
    mapped.reserve(written.size());
    std::map<std::string, serde::ByteView> new_streams;
    for (size_t i = 0; i < written.size(); ++i) {
      FLINKSTATE_ASSIGN_OR_RETURN(serde::MappedFile f, serde::MappedFile::Open((*all)[i].temp));
      mapped.push_back(std::move(f));
      new_streams[written[i]->new_handle_path] = mapped.back().bytes();
    }
    return make_verify(new_streams)(out);
  };
  if (options.journal_dir.empty()) options.journal_dir = serde::DirName(changes.back().target);
  return serde::LocatedIn(serde::CommitFiles(changes, options), kLayer, output);
}

}  // namespace flinkstate
