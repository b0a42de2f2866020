// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/deep_strip.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "flinkstate/operator_id.h"
#include "flinkstate/operator_state_stream.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate {
namespace {

constexpr char kLayer[] = "strip-state --deep";

std::string BigEndian32(uint32_t v) {
  std::string s(4, '\0');
  serde::EncodeBigEndian32(v, reinterpret_cast<uint8_t*>(&s[0]));
  return s;
}

// A handle's stream, decoded: header and clipped element extents.
struct DecodedStream {
  serde::ByteView bytes;
  OperatorStateStreamHeader header;
  std::vector<StateElements> elements;  // per handle entry, in entry order
};

absl::StatusOr<DecodedStream> DecodeInline(const OperatorStateHandle& h, serde::ByteView input,
                                           absl::string_view where) {
  DecodedStream d;
  const SourceRange& r = h.delegate->data;
  if (r.offset < 4 || r.offset > input.size() || r.size > input.size() - r.offset ||
      serde::DecodeBigEndian32(input.data() + r.offset - 4) != r.size) {
    return absl::InvalidArgumentError(
        absl::StrCat(kLayer, ": ", where, ": inline stream length does not frame its bytes"));
  }
  d.bytes = input.subspan(r.offset, r.size);
  absl::StatusOr<OperatorStateStreamHeader> hdr = ReadOperatorStateStreamHeader(d.bytes);
  if (!hdr.ok()) return serde::Annotate(hdr.status(), absl::StrCat(kLayer, ": ", where));
  d.header = std::move(*hdr);
  const uint64_t header_end = d.header.complete() ? d.header.range.size : 0;
  FLINKSTATE_ASSIGN_OR_RETURN(
      d.elements, ReadElementExtents(h, input, d.bytes.size(), header_end, d.bytes));
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

// Plans one handle. Appends to `reps` and `result`.
absl::Status PlanHandle(const OperatorStateHandle& h, serde::ByteView input,
                        const std::string& name, StrippedEntry entry,
                        std::vector<serde::Replacement>* reps, DeepStripResult* result) {
  const std::string where =
      absl::StrCat("operator ", entry.operator_id.empty() ? "(snapshot)" : entry.operator_id,
                   " subtask ", entry.subtask_index, " ", entry.slot);
  int entry_index = -1;
  for (size_t i = 0; i < h.states.size(); ++i) {
    if (h.states[i].name.value == name) entry_index = static_cast<int>(i);
  }
  const bool inline_stream =
      h.delegate && h.delegate->tag == static_cast<uint8_t>(HandleTag::kByteStream);
  if (!inline_stream) {
    if (entry_index < 0) return absl::OkStatus();  // its header cannot be read here
    return absl::UnimplementedError(absl::StrCat(
        kLayer, ": ", where, ": the stream is not inline (",
        h.delegate ? HandleTagName(h.delegate->tag) : "no delegate",
        "); rewriting state files is not implemented, nothing was written"));
  }
  FLINKSTATE_ASSIGN_OR_RETURN(DecodedStream d, DecodeInline(h, input, where));
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
  // The new header: the name's meta info removed and its list's count
  // decremented.
  const OperatorStateStreamHeader& hd = d.header;
  const uint64_t op_count_at = hd.version >= 6 ? 5 : 4;
  uint64_t bc_count_at = hd.operator_states.empty()
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
  std::string stream;
  stream.append(reinterpret_cast<const char*>(d.bytes.data()), removed_meta.offset);
  stream.append(reinterpret_cast<const char*>(d.bytes.data()) + removed_meta.offset +
                    removed_meta.size,
                hd.range.size - removed_meta.offset - removed_meta.size);
  // count_at precedes the removed meta info, so its position is unchanged.
  stream[count_at] = static_cast<char>((new_count >> 8) & 0xFF);
  stream[count_at + 1] = static_cast<char>(new_count & 0xFF);
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
  std::vector<std::vector<int64_t>> new_offsets(d.elements.size());
  for (size_t i = 0; i < d.elements.size(); ++i) new_offsets[i].resize(d.elements[i].elements.size());
  for (const Piece& p : pieces) {
    new_offsets[p.entry][p.element] = static_cast<int64_t>(stream.size());
    stream.append(reinterpret_cast<const char*>(d.bytes.data()) + p.offset, p.size);
  }
  if (stream.size() > 0x7FFFFFFF) return absl::InternalError("stream grew");
  // The file's replacements.
  const uint64_t handle_bytes_before = input.size();
  uint64_t removed_file_bytes = 0;
  if (entry_index >= 0) {
    const StateNameEntry& e = h.states[entry_index];
    reps->push_back({h.count_range, BigEndian32(static_cast<uint32_t>(h.states.size() - 1))});
    reps->push_back({e.range, ""});
    removed_file_bytes += e.range.size;
    entry.mode = e.mode;
    entry.entry_count = e.offsets.count;
  }
  for (size_t i = 0; i < h.states.size(); ++i) {
    if (static_cast<int>(i) == entry_index) continue;
    std::string offs(8 * new_offsets[i].size(), '\0');
    for (size_t j = 0; j < new_offsets[i].size(); ++j) {
      serde::EncodeBigEndian64(static_cast<uint64_t>(new_offsets[i][j]),
                               reinterpret_cast<uint8_t*>(&offs[8 * j]));
    }
    if (!offs.empty()) reps->push_back({h.states[i].offsets.range, std::move(offs)});
  }
  const SourceRange data = h.delegate->data;
  removed_file_bytes += data.size - stream.size();
  result->element_bytes_removed += data.size - stream.size() - removed_meta.size;
  reps->push_back({{data.offset - 4, data.size + 4},
                   BigEndian32(static_cast<uint32_t>(stream.size())) + stream});
  (void)handle_bytes_before;
  ++result->meta_infos_removed;
  entry.bytes = removed_file_bytes;
  result->removed.push_back(entry);
  return absl::OkStatus();
}

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
        FLINKSTATE_RETURN_IF_ERROR(fn(h, e));
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
  if (file.kind == StateFileKind::kCompletedCheckpoint) {
    return absl::UnimplementedError(absl::StrCat(
        kLayer, ": HA completedCheckpoint files are not handled yet; strip the _metadata "
                "with --deep and the completedCheckpoint without"));
  }
  std::vector<int> ops;
  if (!options.operator_ids.empty()) {
    return SelectOperators(file, options.operator_ids, "strip-state --deep");
  }
  for (size_t i = 0; i < file.metadata.operators.size(); ++i) ops.push_back(static_cast<int>(i));
  return ops;
}

}  // namespace

absl::StatusOr<DeepStripResult> PlanDeepStripState(const StateFile& file, serde::ByteView input,
                                                    const StripOptions& options) {
  if (options.state_name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(kLayer, ": no state name"));
  }
  FLINKSTATE_ASSIGN_OR_RETURN(std::vector<int> ops, Operators(file, options));
  DeepStripResult result;
  std::vector<serde::Replacement> reps;
  FLINKSTATE_RETURN_IF_ERROR(
      ForEachHandle(file, ops, [&](const OperatorStateHandle& h, const StrippedEntry& e) {
        return PlanHandle(h, input, options.state_name, e, &reps, &result);
      }));
  if (result.removed.empty()) {
    return absl::NotFoundError(absl::StrCat(kLayer, ": no operator state handle or stream holds '",
                                            options.state_name, "'"));
  }
  FLINKSTATE_ASSIGN_OR_RETURN(result.plan,
                              serde::EditPlan::FromReplacements(input.size(), std::move(reps)));
  result.bytes_removed = input.size() - result.plan.output_size();
  return result;
}

absl::Status VerifyDeepStripped(const StateFile& before, serde::ByteView before_bytes,
                                const StateFile& after, serde::ByteView after_bytes,
                                const StripOptions& options) {
  const std::string& name = options.state_name;
  auto fail = [](const std::string& what) {
    return absl::InternalError(absl::StrCat(kLayer, ": verify: ", what));
  };
  // Handles in file order, with their decoded streams.
  struct H {
    const OperatorStateHandle* h;
    std::string where;
  };
  auto collect = [](const StateFile& f) {
    std::vector<H> out;
    std::vector<int> all;
    for (size_t i = 0; i < f.metadata.operators.size(); ++i) all.push_back(static_cast<int>(i));
    ForEachHandle(f, all, [&](const OperatorStateHandle& h, const StrippedEntry& e) {
      out.push_back({&h, absl::StrCat(e.operator_id, "/", e.subtask_index, "/", e.slot)});
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
      if (e.name.value != name) kept.push_back(&e);
    }
    if (a.states.size() != kept.size()) return fail(hb[i].where + ": entries differ");
    for (size_t k = 0; k < kept.size(); ++k) {
      if (a.states[k].name.value != kept[k]->name.value || a.states[k].mode != kept[k]->mode ||
          a.states[k].offsets.count != kept[k]->offsets.count) {
        return fail(hb[i].where + ": entry " + kept[k]->name.value + " changed");
      }
    }
    const bool inline_b = b.delegate && b.delegate->tag == static_cast<uint8_t>(HandleTag::kByteStream);
    if (!inline_b) continue;
    absl::StatusOr<DecodedStream> db = DecodeInline(b, before_bytes, hb[i].where);
    absl::StatusOr<DecodedStream> da = DecodeInline(a, after_bytes, ha[i].where);
    if (!db.ok()) continue;  // unreadable before: the plan left it alone
    if (!da.ok()) return fail(ha[i].where + ": " + std::string(da.status().message()));
    if (!da->header.complete() && db->header.complete()) {
      return fail(ha[i].where + ": header no longer decodes");
    }
    if (HeaderHas(da->header, name)) return fail(ha[i].where + ": meta info still present");
    size_t ka = 0;
    for (const StateElements& se : db->elements) {
      if (se.name == name) continue;
      const StateElements& sa = da->elements[ka++];
      for (size_t j = 0; j < se.elements.size(); ++j) {
        const SourceRange& rb = se.elements[j];
        const SourceRange& ra = sa.elements[j];
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

}  // namespace flinkstate
