// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// PlanConvert / VerifyConverted over every `_metadata` file of the shared
// corpus (written by real Flink 1.2-2.1): every lossless conversion to
// another version must come back to Flink's bytes exactly, and every lossy
// one must be refused unless the loss is allowed.

#include <string>
#include <vector>

#include "flinkstate/convert.h"
#include "flinkstate/format_constants.h"
#include "flinkstate/metadata_writer.h"
#include "flinkstate/open.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/flinkstate/corpus.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate {
namespace {

using ::flinkstate::testing::CorpusFile;
using ::flinkstate::testing::CorpusFiles;
using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::StatusIs;

TEST(PlanConvertTest, EveryCorpusFileToEveryVersion) {
  int lossless = 0;
  int refused_loss = 0;
  for (const CorpusFile& f : CorpusFiles()) {
    if (!f.is_metadata || f.version < 2) continue;  // v1 is written back as v1 only
    SCOPED_TRACE(f.path);
    absl::StatusOr<LoadedFile> in = Open(f.path);
    ASSERT_THAT(in.status(), IsOk());
    for (uint32_t v = kMinWritableMetadataVersion; v <= kMaxMetadataVersion; ++v) {
      SCOPED_TRACE(v);
      ConvertOptions options;
      options.target_version = v;
      const std::vector<std::string> losses = ConversionLosses(in->model, v);
      absl::StatusOr<ConvertResult> r = PlanConvert(*in, options);
      if (!losses.empty() && r.status().code() != absl::StatusCode::kInvalidArgument) {
        // Losses are refused by name (content the version cannot express at
        // all is refused as InvalidArgument first, below).
        EXPECT_THAT(r.status(), StatusIs(absl::StatusCode::kFailedPrecondition, "allow"));
        ++refused_loss;
        options.allow_loss = true;
        r = PlanConvert(*in, options);
        if (r.ok()) {
          EXPECT_EQ(r->lost, losses);
        }
      }
      if (!r.ok()) {
        // What a version cannot express at all (coordinator state in v2,
        // merged channel handles below v6) is refused, never written.
        EXPECT_THAT(r.status(), StatusIs(absl::StatusCode::kInvalidArgument, ""));
        continue;
      }
      EXPECT_EQ(r->from_version, in->model.metadata.version);
      EXPECT_EQ(r->to_version, v);
      absl::StatusOr<std::string> out = r->plan.ApplyToString(in->bytes());
      ASSERT_THAT(out.status(), IsOk());
      EXPECT_THAT(VerifyConverted(*in, serde::AsBytes(*out), *r), IsOk());
      if (r->lost.empty() && v != r->from_version) ++lossless;
    }
  }
  // The corpus has files of v2-v5 that convert up without loss.
  EXPECT_GT(lossless, 10);
  EXPECT_GT(refused_loss, 10);
}

TEST(PlanConvertTest, VerifyCatchesAChangedOperator) {
  const std::string path = FLINKSTATE_SOURCE_DIR
      "/tests/testdata/flink-1.15.2/changelog-checkpoint/_metadata";
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile in, Open(path));
  ConvertOptions options;
  options.target_version = 5;  // v3 -> v5: operators gain (empty) names and uids
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(ConvertResult r, PlanConvert(in, options));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string out, r.plan.ApplyToString(in.bytes()));
  ASSERT_THAT(VerifyConverted(in, serde::AsBytes(out), r), IsOk());
  // The first operator's parallelism: the i32 after its name, uid and id.
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile conv, OpenBytes(out));
  const OperatorState& op = conv.model.metadata.operators.at(0);
  const uint64_t at = op.uid.range.offset + op.uid.range.size + 16;
  std::string bad = out;
  bad[at + 3] = static_cast<char>(bad[at + 3] + 1);
  EXPECT_THAT(VerifyConverted(in, serde::AsBytes(bad), r),
              StatusIs(absl::StatusCode::kDataLoss, "parallelism"));
}

TEST(PlanConvertTest, RefusesKindsWithoutAVersionAndBadTargets) {
  const std::string ha = FLINKSTATE_SOURCE_DIR "/tests/testdata/flink-1.15.2";
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(
      LoadedFile meta, Open(ha + "/changelog-checkpoint/_metadata"));
  ConvertOptions options;
  options.target_version = 1;
  EXPECT_THAT(PlanConvert(meta, options).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "outside"));
  options.target_version = kMaxMetadataVersion + 1;
  EXPECT_THAT(PlanConvert(meta, options).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "outside"));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile cc, Open(ha + "/changelog-completedCheckpoint/completedCheckpointf74ec79cdd06"));
  ASSERT_EQ(cc.kind, FileKind::kCompletedCheckpoint);
  options.target_version = 5;
  EXPECT_THAT(PlanConvert(cc, options).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "only _metadata"));
}

}  // namespace
}  // namespace flinkstate
