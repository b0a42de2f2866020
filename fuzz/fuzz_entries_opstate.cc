// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// Fuzz entries of the operator-state stream (fuzz_entries.h).

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "flinkstate/deep_strip.h"
#include "flinkstate/kafka_state.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/operator_state_stream.h"
#include "flinkstate/serde/byte_view.h"
#include "flinkstate/serde/endian.h"
#include "fuzz/alloc_guard.h"
#include "fuzz/fuzz_common.h"
#include "fuzz/fuzz_entries.h"

namespace flinkstate::fuzz {
namespace {

constexpr char kTarget[] = "operator_state_stream";

bool Inside(const SourceRange& r, uint64_t lo, uint64_t hi) {
  return r.offset >= lo && r.offset <= hi && r.size <= hi - r.offset;
}

void CheckSerializer(const SerializerSnapshotInfo& s, uint64_t lo, uint64_t hi) {
  if (!Inside(s.range, lo, hi)) {
    PropertyFailed(kTarget, absl::StrCat("serializer ", s.snapshot_class,
                                         " range outside its meta info"));
  }
  for (const SerializerSnapshotInfo& c : s.nested) {
    // POJO fields without a snapshot have an empty range.
    if (c.range.size == 0 && c.snapshot_class.empty()) continue;
    CheckSerializer(c, s.range.offset, s.range.offset + s.range.size);
  }
  (void)s.Describe();
}

// Header properties: a decoded header starts at 0 and lies inside the stream;
// every meta info lies inside the header and every serializer inside its meta
// info (nested ones inside their parent); `stopped` is OK or `Unimplemented`
// naming a class; errors are never `Internal` or empty; decoding is
// deterministic. Sets `*header_end` (0 unless decoded to its end); returns
// the decoder's status.
absl::Status CheckHeader(serde::ByteView stream, uint64_t* header_end_out) {
  const uint64_t size = stream.size();

  absl::StatusOr<OperatorStateStreamHeader> h = ReadOperatorStateStreamHeader(stream);
  uint64_t header_end = 0;
  if (h.ok()) {
    if (h->range.offset != 0 || h->range.size > size) {
      PropertyFailed(kTarget, "header range outside the stream");
    }
    if (!h->stopped.ok()) {
      if (h->stopped.code() != absl::StatusCode::kUnimplemented ||
          h->stopped.message().find("class") == absl::string_view::npos) {
        PropertyFailed(kTarget, absl::StrCat("stopped is not an Unimplemented class: ",
                                             h->stopped.ToString()));
      }
      CountOutcome("header: stopped at an unknown serializer");
    } else {
      header_end = h->range.size;
      CountOutcome("header: decoded");
    }
    for (const auto* list : {&h->operator_states, &h->broadcast_states}) {
      for (const StateMetaInfo& m : *list) {
        if (!Inside(m.range, 0, h->range.size)) {
          PropertyFailed(kTarget, "meta info range outside the header");
        }
        for (const SerializerSnapshotInfo& s : m.serializers) {
          CheckSerializer(s, m.range.offset, m.range.offset + m.range.size);
        }
      }
    }
    absl::StatusOr<OperatorStateStreamHeader> again = ReadOperatorStateStreamHeader(stream);
    if (!again.ok() || again->range.size != h->range.size ||
        again->operator_states.size() != h->operator_states.size()) {
      PropertyFailed(kTarget, "decoding is not deterministic");
    }
  } else if (h.status().code() == absl::StatusCode::kInternal ||
             h.status().message().empty()) {
    PropertyFailed(kTarget, absl::StrCat("bad error: ", h.status().ToString()));
  }

  *header_end_out = header_end;
  return h.ok() ? absl::OkStatus() : h.status();
}

// Extents of `handle` (offsets in `file`) in `stream`: accepted exactly when
// every offset lies in [header end, stream end]; then each runs from its
// offset to the next larger offset of the handle or the stream end.
void CheckExtents(const OperatorStateHandle& handle, serde::ByteView file,
                  serde::ByteView stream, uint64_t header_end) {
  const uint64_t size = stream.size();
  std::vector<int64_t> all;
  for (const StateNameEntry& e : handle.states) {
    absl::StatusOr<std::vector<int64_t>> o = ReadOffsets(e.offsets, file);
    if (!o.ok()) PropertyFailed(kTarget, "offsets of a decoded handle unreadable");
    all.insert(all.end(), o->begin(), o->end());
  }
  absl::StatusOr<std::vector<StateElements>> els =
      ReadElementExtents(handle, file, size, header_end, stream);
  const bool all_inside = std::all_of(all.begin(), all.end(), [&](int64_t o) {
    return o >= 0 && static_cast<uint64_t>(o) >= header_end && static_cast<uint64_t>(o) <= size;
  });
  if (els.ok() != all_inside) {
    PropertyFailed(kTarget, "extents accepted or refused against the offsets");
  }
  if (!els.ok()) return;
  std::sort(all.begin(), all.end());
  size_t k = 0;
  for (const StateElements& se : *els) {
    for (const SourceRange& r : se.elements) {
      auto next = std::upper_bound(all.begin(), all.end(), static_cast<int64_t>(r.offset));
      const uint64_t end = next == all.end() ? size : static_cast<uint64_t>(*next);
      if (r.offset + r.size != end || !Inside(r, header_end, size)) {
        PropertyFailed(kTarget, "element extent wrong");
      }
      ++k;
    }
  }
  if (k != all.size()) PropertyFailed(kTarget, "not one extent per offset");
  CountOutcome("extents: computed");
}

}  // namespace

// Two input forms. A state file (`_metadata`, operator snapshot; the real
// files of ../shared/corpus and tests/testdata are the seeds): every inline
// operator-state stream is checked with its handle's offsets. Anything else:
// byte 0 = number of synthetic offsets n (mod 8), then n big-endian u16
// offsets, then a stream. Properties: see `CheckHeader` and `CheckExtents`.
absl::Status FuzzOperatorStateStream(serde::ByteView input) {
  // The input may be a whole state file, decoded like the metadata targets.
  AllocGuard::SetBudget(BudgetFor(input.size(), kMetadataBudgetMultiple));
  absl::StatusOr<StateFile> file = ReadStateFile(input);
  if (file.ok()) {
    CountOutcome("state file: streams checked");
    auto each = [&](const OperatorSubtaskState& s) {
      for (const auto* list : {&s.managed_operator_state, &s.raw_operator_state}) {
        for (const OperatorStateHandle& h : *list) {
          if (!h.delegate || h.delegate->tag != static_cast<uint8_t>(HandleTag::kByteStream)) {
            continue;
          }
          serde::ByteView stream = input.subspan(h.delegate->data.offset, h.delegate->data.size);
          uint64_t header_end = 0;
          CheckHeader(stream, &header_end).IgnoreError();  // a bad stream is a finding, not a failure
          CheckExtents(h, input, stream, header_end);
        }
      }
    };
    if (file->kind == StateFileKind::kOperatorSnapshot) each(file->snapshot.state);
    std::set<std::string> names;
    // Coordinator state read as a KafkaSource enumerator checkpoint: any
    // bytes give a value or a clean error; a value holds no more partitions
    // than the bytes can (6 bytes each at least).
    for (const OperatorState& op : file->metadata.operators) {
      const StreamStateHandle& c = op.coordinator_state;
      if (c.tag != static_cast<uint8_t>(HandleTag::kByteStream)) continue;
      absl::StatusOr<KafkaSourceEnumState> e =
          DecodeKafkaSourceEnumState(input.subspan(c.data.offset, c.data.size));
      if (e.ok()) {
        if (e->partitions.size() * 6 > c.data.size) PropertyFailed(kTarget, "enumerator count");
        CountOutcome("kafka enumerator: decoded");
      } else if (e.status().code() == absl::StatusCode::kInternal) {
        PropertyFailed(kTarget, e.status().ToString());
      }
    }
    for (const OperatorState& op : file->metadata.operators) {
      for (const OperatorSubtaskState& s : op.subtasks) {
        each(s);
        for (const OperatorStateHandle& h : s.managed_operator_state) {
          for (const StateNameEntry& e : h.states) names.insert(e.name.value);
        }
      }
    }
    // Deep strip of the first name (in name order): an accepted plan applies,
    // its output decodes and passes `VerifyDeepStripped` (no trace of the name,
    // other elements byte-identical).
    if (!names.empty()) {
      StripOptions o;
      o.state_name = *names.begin();
      absl::StatusOr<DeepStripResult> r = PlanDeepStripState(*file, input, o);
      if (r.ok()) {
        absl::StatusOr<std::string> out = r->plan.ApplyToString(input);
        if (!out.ok()) PropertyFailed(kTarget, "deep strip plan does not apply");
        const serde::ByteView ob(reinterpret_cast<const uint8_t*>(out->data()), out->size());
        absl::StatusOr<StateFile> after = ReadStateFile(ob);
        if (!after.ok()) {
          PropertyFailed(kTarget, absl::StrCat("deep strip output does not decode: ",
                                               after.status().ToString()));
        }
        // File-backed streams (absolute paths the input names) get new
        // files: verify against their planned bytes, built in memory.
        std::vector<std::string> contents;
        contents.reserve(r->new_files.size());
        DeepStripStreams streams;
        for (const NewStateFile& nf : r->new_files) {
          absl::StatusOr<std::string> c = nf.plan.ApplyToString(nf.input.bytes());
          if (!c.ok()) PropertyFailed(kTarget, "deep strip state file plan does not apply");
          contents.push_back(*std::move(c));
          streams.new_streams[nf.new_handle_path] = serde::ByteView(
              reinterpret_cast<const uint8_t*>(contents.back().data()), contents.back().size());
        }
        absl::Status v = VerifyDeepStripped(*file, input, *after, ob, o, streams);
        if (!v.ok()) PropertyFailed(kTarget, v.ToString());
        CountOutcome("deep strip: stripped and verified");
      } else if (r.status().code() == absl::StatusCode::kInternal) {
        PropertyFailed(kTarget, r.status().ToString());
      }
    }
    return absl::OkStatus();
  }
  if (input.empty()) return absl::InvalidArgumentError("fuzz: empty input");
  const size_t n = input[0] % 8;
  if (input.size() < 1 + 2 * n) return absl::InvalidArgumentError("fuzz: short input");
  std::vector<uint16_t> raw(n);
  for (size_t i = 0; i < n; ++i) raw[i] = serde::DecodeBigEndian16(input.data() + 1 + 2 * i);
  serde::ByteView stream = input.subspan(1 + 2 * n);
  uint64_t header_end = 0;
  const absl::Status st = CheckHeader(stream, &header_end);
  // A handle with one SPLIT_DISTRIBUTE entry holding the offsets; its offsets
  // array lives in `file`.
  std::string offs(8 * n, '\0');
  for (size_t i = 0; i < n; ++i) {
    serde::EncodeBigEndian64(raw[i], reinterpret_cast<uint8_t*>(&offs[8 * i]));
  }
  OperatorStateHandle handle;
  StateNameEntry e;
  e.name.value = "s";
  e.offsets.range = {0, 8 * n};
  e.offsets.count = static_cast<uint32_t>(n);
  handle.states.push_back(e);
  CheckExtents(handle,
               serde::ByteView(reinterpret_cast<const uint8_t*>(offs.data()), offs.size()),
               stream, header_end);
  return st;
}

}  // namespace flinkstate::fuzz
