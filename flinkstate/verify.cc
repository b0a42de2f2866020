// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/verify.h"

#include "flinkstate/completed_checkpoint.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "flinkstate/handle_walker.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/metadata_writer.h"
#include "flinkstate/objstore/object_store.h"
#include "flinkstate/serde/status_macros.h"
#include "flinkstate/serde/endian.h"

namespace flinkstate {
namespace {

class Verifier : public HandleVisitor {
 public:
  Verifier(serde::ByteView input, const VerifyOptions& options,
           std::vector<Finding>* findings)
      : input_(input), options_(options), findings_(findings) {}

  void OnOperatorHandle(const HandleContext& c, const OperatorStateHandle& h) override {
    if (h.tag == 0 || !h.delegate) return;
    for (const StateNameEntry& e : h.states) {
      CheckOffsets(c, absl::StrCat(".stateNameToPartitionOffsets[", e.name.value, "]"),
                   e.offsets, *h.delegate, /*strictly_increasing=*/true,
                   /*zero_means_empty=*/false);
      if (e.mode == static_cast<uint8_t>(DistributionMode::kBroadcast) &&
          e.offsets.count != 1) {
        Add(c, "", absl::StrCat("broadcast state '", e.name.value, "' has ",
                                e.offsets.count, " offsets (exactly 1 expected)"),
            e.range.offset);
      }
    }
  }

  void OnKeyedHandle(const HandleContext& c, const KeyedStateHandle& h) override {
    if (h.tag == 0) return;
    const int32_t max_par = c.op != nullptr ? c.op->max_parallelism : 0;
    const int64_t end = int64_t{h.start_key_group} + h.num_key_groups;
    if (h.start_key_group < 0 || h.num_key_groups < 0 ||
        (max_par > 0 && end > max_par)) {
      Add(c, "", absl::StrCat("key-group range [", h.start_key_group, ", ", end,
                              ") outside [0, ", max_par, ")"),
          h.range.offset);
    }
    if (h.delegate) {
      CheckOffsets(c, ".keyGroupRangeOffsets", h.key_group_offsets, *h.delegate,
                   /*strictly_increasing=*/false, /*zero_means_empty=*/true);
    }
  }

  void OnStream(const HandleContext& c, const StreamStateHandle& h) override {
    if (h.tag != static_cast<uint8_t>(HandleTag::kRelativeStream) ||
        options_.base_dir.empty()) {
      return;
    }
    const std::string file = absl::StrCat(options_.base_dir, "/", h.path.value);
    struct stat st;
    if (h.path.value.find("..") != std::string::npos || h.path.value.empty() ||
        h.path.value[0] == '/') {
      Add(c, "", absl::StrCat("relative handle path '", h.path.value,
                              "' leaves the checkpoint directory"),
          h.range.offset);
    } else if (serde::IsUrl(file)) {
      // An object store: the object's size by HEAD.
      absl::StatusOr<uint64_t> size = objstore::ObjectSize(file);
      if (!size.ok()) {
        Add(c, "", absl::StrCat("relative handle '", h.path.value,
                                "' does not resolve: ", size.status().message()),
            h.range.offset);
      } else if (static_cast<int64_t>(*size) != h.state_size) {
        Add(c, "", absl::StrCat("relative handle '", h.path.value, "' declares ",
                                h.state_size, " bytes, the object has ", *size),
            h.range.offset);
      }
    } else if (::stat(file.c_str(), &st) != 0) {
      Add(c, "", absl::StrCat("relative handle '", h.path.value,
                              "' does not resolve: no file ", file),
          h.range.offset);
    } else if (static_cast<int64_t>(st.st_size) != h.state_size) {
      Add(c, "", absl::StrCat("relative handle '", h.path.value, "' declares ",
                              h.state_size, " bytes, the file has ", st.st_size),
          h.range.offset);
    }
  }

 private:
  void CheckOffsets(const HandleContext& c, const std::string& what,
                    const OffsetsArray& offsets, const StreamStateHandle& delegate,
                    bool strictly_increasing, bool zero_means_empty) {
    if (offsets.count == 0) return;
    // Only inline delegates have their bytes here; file sizes come from the
    // handle's declared size.
    int64_t limit = -1;
    if (delegate.tag == static_cast<uint8_t>(HandleTag::kByteStream)) {
      limit = static_cast<int64_t>(delegate.data.size);
    } else if (delegate.tag == static_cast<uint8_t>(HandleTag::kFileStream) ||
               delegate.tag == static_cast<uint8_t>(HandleTag::kRelativeStream) ||
               delegate.tag == static_cast<uint8_t>(HandleTag::kSegmentFile)) {
      limit = delegate.state_size;
    }
    const uint8_t* p = input_.data() + offsets.range.offset;
    int64_t prev = -1;
    for (uint32_t i = 0; i < offsets.count; ++i) {
      const int64_t v = static_cast<int64_t>(serde::DecodeBigEndian64(p + 8 * i));
      // Canonical savepoints (Flink 1.13+) leave the offset of a key group
      // that has no data at 0, so only the non-zero offsets are ordered.
      if (zero_means_empty && v == 0) continue;
      const bool bad_order = strictly_increasing ? v <= prev : v < prev;
      if (v < 0 || (limit >= 0 && v > limit) || bad_order) {
        Add(c, what,
            absl::StrCat("offset ", i, " = ", v,
                         v < 0 ? " is negative"
                         : bad_order ? absl::StrCat(" does not follow ", prev)
                                     : absl::StrCat(" lies beyond the ", limit,
                                                    " bytes of its stream")),
            offsets.range.offset + 8 * uint64_t{i});
        return;  // one finding per array
      }
      prev = v;
    }
  }

  void Add(const HandleContext& c, absl::string_view suffix, std::string problem,
           uint64_t offset) {
    findings_->push_back({absl::StrCat(HandleItemPath(c), suffix), std::move(problem), offset});
  }

  serde::ByteView input_;
  const VerifyOptions& options_;
  std::vector<Finding>* findings_;
};

// Compares the output of `plan` (the header of a file re-encoded without
// operators: everything up to the operator count, a zero count, then what
// follows the operators) with the input around its operators: `[0,
// count_at)`, the four count bytes (not compared: the count was read), and
// `[ops_end, size)`. Returns the problem, empty if none.
std::string CompareHeader(const serde::EditPlan& plan, serde::ByteView input,
                          uint64_t count_at, uint64_t ops_end) {
  uint64_t out = 0;  // position in the plan's output
  for (const serde::EditPiece& p : plan.pieces()) {
    const uint64_t n = p.output_size();
    const uint8_t* actual = p.kind == serde::EditPiece::Kind::kInsert
                                ? reinterpret_cast<const uint8_t*>(p.bytes.data())
                                : input.data() + p.range.offset;
    if (p.kind == serde::EditPiece::Kind::kCopy &&
        (p.range.offset > input.size() || n > input.size() - p.range.offset)) {
      return "round trip: a copy piece lies outside the input";
    }
    for (uint64_t i = 0; i < n; ++i, ++out) {
      if (out >= count_at && out < count_at + 4) continue;
      const uint64_t at = out < count_at ? out : out - count_at - 4 + ops_end;
      if (at >= input.size()) {
        return absl::StrCat("round trip: the encoding is longer than the ",
                            input.size(), "-byte input");
      }
      if (actual[i] != input[at]) {
        return absl::StrCat("round trip: re-encoding differs from the input at byte ", at,
                            " (input 0x", absl::Hex(input[at], absl::kZeroPad2),
                            ", encoded 0x", absl::Hex(actual[i], absl::kZeroPad2), ")");
      }
    }
  }
  const uint64_t expected = count_at + 4 + (input.size() - ops_end);
  if (out != expected) {
    return absl::StrCat("round trip: the encoding has ", out - expected + input.size(),
                        " bytes, the input ", input.size());
  }
  return "";
}

}  // namespace

absl::StatusOr<StreamVerifyResult> VerifyMetadataStreaming(serde::ByteView input,
                                                           const VerifyOptions& options) {
  StreamVerifyResult result;
  std::vector<Finding> walk;
  std::string encode_problem;
  uint64_t ops_end = 0;
  uint32_t version = input.size() >= 8 ? serde::DecodeBigEndian32(input.data() + 4) : 0;
  Verifier v(input, options, &walk);
  MetadataReadOptions read;
  read.release_consumed_input = options.release_consumed_input;
  absl::StatusOr<CheckpointMetadata> header = ReadCheckpointMetadataStreaming(
      input, [&](int index, OperatorState&& op) -> absl::Status {
        ++result.operators;
        ops_end = op.range.offset + op.range.size;
        if (encode_problem.empty()) {
          absl::StatusOr<serde::EditPlan> plan = EncodeOperatorState(op, version);
          if (!plan.ok()) {
            encode_problem = absl::StrCat("cannot re-encode: ", plan.status().message());
          } else if (absl::Status s = CheckReproducesRange(*plan, input, op.range); !s.ok()) {
            encode_problem = std::string(s.message());
          }
        }
        CheckOperatorLoadable(op, index, version, &walk);
        WalkOperator(op, index, &v);
        if (options.progress) options.progress("verifying", ops_end, input.size());
        return absl::OkStatus();
      },
      read);
  FLINKSTATE_RETURN_IF_ERROR(header.status());
  if (options.progress) options.progress("verifying", input.size(), input.size());
  result.version = header->version;
  const uint64_t count_at = header->operator_count_range.offset;
  if (result.operators == 0) ops_end = count_at + 4;
  // Re-encode the header and the properties (or trailing bytes) around the
  // operators; a problem in an operator comes first in the file unless the
  // header differs before the first operator.
  StateFile shell;
  shell.kind = StateFileKind::kMetadata;
  shell.size = input.size();
  shell.metadata = *std::move(header);
  absl::StatusOr<serde::EditPlan> plan = EncodeStateFile(shell, input);
  std::string header_problem =
      !plan.ok() ? absl::StrCat("cannot re-encode: ", plan.status().message())
                 : CompareHeader(*plan, input, count_at, ops_end);
  if (encode_problem.empty()) encode_problem = header_problem;
  if (!encode_problem.empty()) result.findings.push_back({"file", encode_problem, 0});
  if (shell.metadata.trailing.size > 0) {
    result.findings.push_back({"file",
                               absl::StrCat(shell.metadata.trailing.size,
                                            " bytes follow the last operator"),
                               shell.metadata.trailing.offset});
  }
  for (Finding& f : walk) result.findings.push_back(std::move(f));
  return result;
}

void CheckOperatorLoadable(const OperatorState& op, int index, uint32_t version,
                           std::vector<Finding>* findings) {
  const std::string at = absl::StrCat("operators[", index, "]");
  if (op.parallelism > op.max_parallelism) {
    findings->push_back(
        {at,
         absl::StrCat("parallelism ", op.parallelism, " exceeds the max parallelism ",
                      op.max_parallelism, ": Flink refuses to load the checkpoint"),
         op.range.offset});
  }
  if (version < 2) return;
  for (size_t i = 0; i < op.subtasks.size(); ++i) {
    const OperatorSubtaskState& st = op.subtasks[i];
    if (st.subtask_index < 0 || st.subtask_index >= op.parallelism) {
      findings->push_back(
          {absl::StrCat(at, ".subtasks[", i, "]"),
           absl::StrCat("subtask index ", st.subtask_index, " is not below the parallelism ",
                        op.parallelism, ": Flink refuses to load the checkpoint"),
           st.range.offset});
    }
  }
}

std::vector<Finding> VerifyStateFile(const StateFile& file, serde::ByteView input,
                                     const VerifyOptions& options) {
  std::vector<Finding> findings;
  absl::StatusOr<serde::EditPlan> plan = EncodeStateFile(file, input);
  if (!plan.ok()) {
    findings.push_back({"file", absl::StrCat("cannot re-encode: ", plan.status().message()), 0});
  } else if (absl::Status s = CheckReproducesInput(*plan, input); !s.ok()) {
    findings.push_back({"file", std::string(s.message()), 0});
  }
  if (file.kind == StateFileKind::kMetadata && file.metadata.trailing.size > 0) {
    findings.push_back({"file",
                        absl::StrCat(file.metadata.trailing.size,
                                     " bytes follow the last operator"),
                        file.metadata.trailing.offset});
  }
  if (file.kind == StateFileKind::kMetadata) {
    for (size_t i = 0; i < file.metadata.operators.size(); ++i) {
      CheckOperatorLoadable(file.metadata.operators[i], static_cast<int>(i),
                            file.metadata.version, &findings);
    }
  }
  Verifier v(input, options, &findings);
  WalkStateFile(file, &v);
  return findings;
}

absl::StatusOr<CompletedVerifyResult> VerifyCompletedCheckpointStreaming(
    serde::ByteView input, const VerifyOptions& options) {
  CompletedVerifyResult r;
  ScanCompletedCheckpointOptions scan;
  scan.decode_strings = false;
  scan.release_consumed_input = options.release_consumed_input;
  FLINKSTATE_ASSIGN_OR_RETURN(
      StateFile head,
      ScanCompletedCheckpoint(
          input,
          [&](int, OperatorState&& op) -> absl::Status {
            ++r.operators;
            for (const OperatorSubtaskState& st : op.subtasks) {
              for (const KeyedStateHandle& k : st.managed_keyed_state) {
                if (k.key_group_offsets.count != 0 &&
                    k.key_group_offsets.count != static_cast<uint32_t>(k.num_key_groups)) {
                  r.findings.push_back(
                      {absl::StrCat("operators[", op.IdHex(), "].subtasks[", st.subtask_index,
                                    "]"),
                       absl::StrCat(k.key_group_offsets.count, " key-group offsets for ",
                                    k.num_key_groups, " key groups"),
                       k.range.offset});
                }
              }
            }
            if (options.progress) options.progress("verifying", op.range.end(), input.size());
            return absl::OkStatus();
          },
          scan));
  r.checkpoint_id = head.metadata.checkpoint_id;
  r.flink_versions = head.completed->flink_versions;
  r.unknown_classes = head.completed->unknown_classes;
  return r;
}

}  // namespace flinkstate
