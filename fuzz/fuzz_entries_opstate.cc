// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// Fuzz entries of the operator-state stream (fuzz_entries.h).

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "flinkstate/operator_state_stream.h"
#include "flinkstate/serde/byte_view.h"
#include "flinkstate/serde/endian.h"
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

}  // namespace

// Input: byte 0 = number of synthetic element offsets n (mod 8), then n
// big-endian u16 offsets, then the stream. Properties: a decoded header starts
// at 0 and lies inside the stream; every meta info lies inside the header and
// every serializer inside its meta info (nested inside their parent);
// `stopped` is OK or `Unimplemented` naming a class; decoding is
// deterministic. For the synthetic handle: extents are accepted exactly when
// every offset lies in [header end, stream end], and then each extent starts
// at its offset, ends at the next larger offset or the stream end, and lies
// inside the stream.
absl::Status FuzzOperatorStateStream(serde::ByteView input) {
  if (input.empty()) return absl::InvalidArgumentError("fuzz: empty input");
  const size_t n = input[0] % 8;
  if (input.size() < 1 + 2 * n) return absl::InvalidArgumentError("fuzz: short input");
  std::vector<uint16_t> raw(n);
  for (size_t i = 0; i < n; ++i) raw[i] = serde::DecodeBigEndian16(input.data() + 1 + 2 * i);
  serde::ByteView stream = input.subspan(1 + 2 * n);
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

  // A handle with one SPLIT_DISTRIBUTE entry holding the offsets; its offsets
  // array lives in `file`.
  std::string file(8 * n, '\0');
  for (size_t i = 0; i < n; ++i) serde::EncodeBigEndian64(raw[i], reinterpret_cast<uint8_t*>(&file[8 * i]));
  OperatorStateHandle handle;
  StateNameEntry e;
  e.name.value = "s";
  e.offsets.range = {0, 8 * n};
  e.offsets.count = static_cast<uint32_t>(n);
  handle.states.push_back(e);
  serde::ByteView file_bytes(reinterpret_cast<const uint8_t*>(file.data()), file.size());
  absl::StatusOr<std::vector<StateElements>> els =
      ReadElementExtents(handle, file_bytes, size, header_end, stream);
  const bool all_inside = std::all_of(raw.begin(), raw.end(), [&](uint16_t o) {
    return o >= header_end && o <= size;
  });
  if (els.ok() != all_inside) {
    PropertyFailed(kTarget, "extents accepted or refused against the offsets");
  }
  if (els.ok()) {
    std::vector<uint64_t> sorted(raw.begin(), raw.end());
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < n; ++i) {
      const SourceRange& r = (*els)[0].elements[i];
      auto next = std::upper_bound(sorted.begin(), sorted.end(), raw[i]);
      const uint64_t end = next == sorted.end() ? size : *next;
      if (r.offset != raw[i] || r.offset + r.size != end || !Inside(r, header_end, size)) {
        PropertyFailed(kTarget, "element extent wrong");
      }
    }
    CountOutcome("extents: computed");
  }
  return h.ok() ? absl::OkStatus() : h.status();
}

}  // namespace flinkstate::fuzz
