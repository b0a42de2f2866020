// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/convert.h"

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "flinkstate/format_constants.h"
#include "flinkstate/metadata_writer.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate {
namespace {

// DataLoss unless executing `plan` over `source` yields exactly `expected`.
absl::Status CheckPlanYields(const serde::EditPlan& plan, serde::ByteView source,
                             serde::ByteView expected) {
  if (plan.output_size() != expected.size()) {
    return absl::DataLossError(absl::StrCat(
        "convert: encoding the output back gives ", plan.output_size(),
        " bytes, the input has ", expected.size()));
  }
  uint64_t pos = 0;
  for (const serde::EditPiece& p : plan.pieces()) {
    const uint64_t n = p.output_size();
    const uint8_t* actual;
    if (p.kind == serde::EditPiece::Kind::kInsert) {
      actual = reinterpret_cast<const uint8_t*>(p.bytes.data());
    } else {
      if (p.range.offset > source.size() || n > source.size() - p.range.offset) {
        return absl::DataLossError("convert: a copy piece lies outside the output");
      }
      actual = source.data() + p.range.offset;
    }
    const uint8_t* want = expected.data() + pos;
    if (std::memcmp(actual, want, n) != 0) {
      uint64_t i = 0;
      while (actual[i] == want[i]) ++i;
      return serde::DecodeError(absl::StatusCode::kDataLoss, "convert", "",
                                "encoding the output back differs from the input", pos + i);
    }
    pos += n;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ConvertResult> PlanConvert(const LoadedFile& file,
                                          const ConvertOptions& options) {
  if (file.kind != FileKind::kMetadata) {
    return absl::InvalidArgumentError(absl::StrCat(
        "convert: only _metadata files have a metadata version; ", file.path, " is ",
        FileKindWithArticle(file.kind)));
  }
  if (options.target_version < kMinWritableMetadataVersion ||
      options.target_version > kMaxMetadataVersion) {
    return absl::InvalidArgumentError(absl::StrCat(
        "convert: target version ", options.target_version, " is outside ",
        kMinWritableMetadataVersion, "..", kMaxMetadataVersion));
  }
  ConvertResult result;
  result.from_version = file.model.metadata.version;
  result.to_version = options.target_version;
  MetadataWriteOptions write;
  write.target_version = options.target_version;
  write.allow_loss = options.allow_loss;
  // EncodeStateFile refuses with the list of losses when they are not allowed.
  FLINKSTATE_ASSIGN_OR_RETURN(result.plan,
                              EncodeStateFile(file.model, file.bytes(), write));
  result.lost = ConversionLosses(file.model, options.target_version);
  return result;
}

absl::Status VerifyConverted(const LoadedFile& before, serde::ByteView output,
                             const ConvertResult& result) {
  FLINKSTATE_ASSIGN_OR_RETURN(StateFile after, ReadStateFileRoundTrip(output));
  if (after.kind != StateFileKind::kMetadata ||
      after.metadata.version != result.to_version) {
    return absl::DataLossError(absl::StrCat(
        "convert: the output is not a version ", result.to_version, " _metadata file"));
  }
  const CheckpointMetadata& a = before.model.metadata;
  const CheckpointMetadata& b = after.metadata;
  if (a.checkpoint_id != b.checkpoint_id) {
    return absl::DataLossError(absl::StrCat("convert: checkpoint id ", a.checkpoint_id,
                                            " became ", b.checkpoint_id));
  }
  if (a.operators.size() != b.operators.size()) {
    return absl::DataLossError(absl::StrCat("convert: ", a.operators.size(),
                                            " operators became ", b.operators.size()));
  }
  for (size_t i = 0; i < a.operators.size(); ++i) {
    const OperatorState& x = a.operators[i];
    const OperatorState& y = b.operators[i];
    if (x.id != y.id || x.parallelism != y.parallelism ||
        x.max_parallelism != y.max_parallelism || x.num_subtasks != y.num_subtasks ||
        x.subtasks.size() != y.subtasks.size()) {
      return absl::DataLossError(absl::StrCat(
          "convert: operator ", i, " (", x.IdHex(), ") differs in the output: id ",
          y.IdHex(), ", parallelism ", y.parallelism, "/", y.max_parallelism, ", ",
          y.subtasks.size(), " subtask records (input: ", x.parallelism, "/",
          x.max_parallelism, ", ", x.subtasks.size(), ")"));
    }
  }
  if (!result.lost.empty()) return absl::OkStatus();
  // Lossless: the output holds everything, so writing it back in the input's
  // version must give the input's bytes.
  MetadataWriteOptions back;
  back.target_version = result.from_version;
  FLINKSTATE_ASSIGN_OR_RETURN(serde::EditPlan plan, EncodeStateFile(after, output, back));
  return CheckPlanYields(plan, output, before.bytes());
}

}  // namespace flinkstate
