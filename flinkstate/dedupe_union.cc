// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/dedupe_union.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "flinkstate/operator_id.h"
#include "flinkstate/operator_state_stream.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate {
namespace {

constexpr char kLayer[] = "dedupe-union";

// `operator_path`: the item path of the operator ("operators[2]"; "" for an
// operator snapshot, whose one subtask state is the file), in front of the
// handles' item paths in refusals (attack run 11: they had none).
absl::Status PlanOperator(const std::vector<const OperatorSubtaskState*>& subtasks,
                          const std::string& operator_path, serde::ByteView input,
                          const std::string& name, const StateStreamSources& sources,
                          std::vector<serde::Replacement>* reps, DedupeResult* result) {
  absl::flat_hash_set<std::string> seen;
  for (size_t k = 0; k < subtasks.size(); ++k) {
    const OperatorSubtaskState* s = subtasks[k];
    for (const auto* list : {&s->managed_operator_state, &s->raw_operator_state}) {
      for (size_t hi = 0; hi < list->size(); ++hi) {
        const OperatorStateHandle& h = (*list)[hi];
        int idx = -1;
        for (size_t i = 0; i < h.states.size(); ++i) {
          if (h.states[i].name.value == name) idx = static_cast<int>(i);
        }
        if (idx < 0) continue;
        const StateNameEntry& e = h.states[idx];
        const std::string item = absl::StrCat(
            operator_path, operator_path.empty() ? "" : ".", "subtasks[", k, "].",
            list == &s->managed_operator_state ? "managedOperatorState" : "rawOperatorState", "[",
            hi, "]");
        const std::string where = absl::StrCat(kLayer, ": ", item);
        const auto refuse = [&](absl::Status st) {
          return serde::WithLocation(st, kLayer, item, std::nullopt);
        };
        if (e.mode != static_cast<uint8_t>(DistributionMode::kUnion)) {
          return refuse(absl::FailedPreconditionError(absl::StrCat(
              where, ": '", name, "' is ", DistributionModeName(e.mode),
              ", not UNION: its elements belong to one subtask each; nothing was written")));
        }
        if (!h.delegate) {
          return refuse(absl::InvalidArgumentError(where + ": handle without a stream"));
        }
        FLINKSTATE_ASSIGN_OR_RETURN(ResolvedStream rs,
                                    ResolveStateStream(*h.delegate, input, sources));
        uint64_t header_end = 0;
        absl::StatusOr<OperatorStateStreamHeader> hdr = ReadOperatorStateStreamHeader(rs.bytes);
        // Without the header the elements' serializers are unknown: equal
        // bytes between offsets need not be equal elements (a fixed-length
        // serializer leaves other bytes after each element), so refuse as
        // strip-state --deep does rather than guess.
        if (!hdr.ok()) {
          return refuse(serde::WithMessage(hdr.status(),
                                           absl::StrCat(where, ": ", hdr.status().message(),
                                                        "; nothing was written")));
        }
        int64_t fixed = -1;
        if (hdr.ok() && hdr->complete()) {
          header_end = hdr->range.size;
          for (const StateMetaInfo& m : hdr->operator_states) {
            if (m.name == name) fixed = FixedElementLength(m);
          }
        }
        FLINKSTATE_ASSIGN_OR_RETURN(std::vector<StateElements> els,
                                    ReadElementExtents(h, input, rs.bytes.size(), header_end,
                                                       rs.bytes));
        FLINKSTATE_ASSIGN_OR_RETURN(std::vector<int64_t> offs, ReadOffsets(e.offsets, input));
        std::vector<int64_t> kept;
        for (size_t j = 0; j < els[idx].elements.size(); ++j) {
          SourceRange r = els[idx].elements[j];
          if (fixed >= 0) r.size = std::min<uint64_t>(r.size, static_cast<uint64_t>(fixed));
          std::string bytes(reinterpret_cast<const char*>(rs.bytes.data() + r.offset), r.size);
          if (seen.insert(std::move(bytes)).second) kept.push_back(offs[j]);
        }
        result->elements_before += offs.size();
        result->elements_after += kept.size();
        if (kept.size() == offs.size()) continue;
        std::string arr(4 + 8 * kept.size(), '\0');
        serde::EncodeBigEndian32(static_cast<uint32_t>(kept.size()),
                                 reinterpret_cast<uint8_t*>(&arr[0]));
        for (size_t j = 0; j < kept.size(); ++j) {
          serde::EncodeBigEndian64(static_cast<uint64_t>(kept[j]),
                                   reinterpret_cast<uint8_t*>(&arr[4 + 8 * j]));
        }
        // The i32 count sits right before the offsets.
        reps->push_back({{e.offsets.range.offset - 4, e.offsets.range.size + 4}, std::move(arr)});
        ++result->handles;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<DedupeResult> PlanDedupeUnion(const StateFile& file, serde::ByteView input,
                                             const StripOptions& options,
                                             const StateStreamSources& sources) {
  if (file.kind == StateFileKind::kCompletedCheckpoint) {
    return absl::UnimplementedError(
        absl::StrCat(kLayer, ": HA completedCheckpoint files are not handled yet"));
  }
  if (options.state_name.empty()) return absl::InvalidArgumentError(absl::StrCat(kLayer, ": no state name"));
  DedupeResult result;
  std::vector<serde::Replacement> reps;
  if (file.kind == StateFileKind::kOperatorSnapshot) {
    FLINKSTATE_RETURN_IF_ERROR(PlanOperator({&file.snapshot.state}, "", input,
                                            options.state_name, sources, &reps, &result));
  } else {
    std::vector<int> ops;
    if (!options.operator_ids.empty()) {
      FLINKSTATE_ASSIGN_OR_RETURN(ops, SelectOperators(file, options.operator_ids, kLayer));
    } else {
      for (size_t i = 0; i < file.metadata.operators.size(); ++i) ops.push_back(static_cast<int>(i));
    }
    for (int i : ops) {
      std::vector<const OperatorSubtaskState*> subs;
      for (const OperatorSubtaskState& s : file.metadata.operators[i].subtasks) subs.push_back(&s);
      FLINKSTATE_RETURN_IF_ERROR(PlanOperator(subs, absl::StrCat("operators[", i, "]"), input,
                                              options.state_name, sources, &reps, &result));
    }
  }
  if (result.elements_before == 0) {
    return absl::NotFoundError(
        absl::StrCat(kLayer, ": no operator state handle holds elements of '", options.state_name, "'"));
  }
  FLINKSTATE_ASSIGN_OR_RETURN(result.plan,
                              serde::EditPlan::FromReplacements(input.size(), std::move(reps)));
  result.bytes_removed = input.size() - result.plan.output_size();
  return result;
}

}  // namespace flinkstate
