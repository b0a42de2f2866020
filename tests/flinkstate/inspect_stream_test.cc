// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// The streaming JSON report (`StreamMetadataReportJson`) against the report
// built from a whole model (`RenderReportJson(BuildReport(...))`): the same
// bytes on every metadata file of tests/testdata and of the shared corpus, on
// generated incident and wide-job files, for several option sets; and nothing
// written for a malformed file. The referee for the JSON itself is protobuf:
// the streamed text parsed back with `JsonStringToMessage` is the whole-model
// report message, and protobuf's own printer prints that message to the same
// bytes.

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "flinkstate/inspect.h"
#include "tests/fixtures/metadata_generator.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/serde/byte_view.h"
#include "flinkstate/verify.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/flinkstate/corpus.h"

namespace flinkstate {
namespace {

using ::flinkstate::testing::ReadFileOrDie;

serde::ByteView Bytes(const std::string& s) {
  return serde::ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

std::vector<InspectOptions> OptionSets() {
  std::vector<InspectOptions> sets(4);
  sets[0].file_name = "x/_metadata";
  sets[1].subtasks = false;
  sets[1].top = 1;
  sets[1].print_on_second_thread = false;
  sets[2].print_on_second_thread = false;
  sets[2].top = 0;
  sets[3].top = 1000;
  sets[3].frame_size = 64;  // every file is "over the frame size"
  return sets;
}

void ExpectSameFindings(const StateFile& file, const std::string& bytes,
                        const VerifyOptions& options, const std::string& what) {
  std::vector<Finding> whole = VerifyStateFile(file, Bytes(bytes), options);
  absl::StatusOr<StreamVerifyResult> streamed = VerifyMetadataStreaming(Bytes(bytes), options);
  ASSERT_TRUE(streamed.ok()) << what << ": " << streamed.status();
  EXPECT_EQ(streamed->operators, static_cast<int>(file.metadata.operators.size())) << what;
  EXPECT_EQ(streamed->version, file.metadata.version) << what;
  ASSERT_EQ(streamed->findings.size(), whole.size()) << what;
  for (size_t i = 0; i < whole.size(); ++i) {
    EXPECT_EQ(streamed->findings[i].path, whole[i].path) << what;
    EXPECT_EQ(streamed->findings[i].problem, whole[i].problem) << what;
    EXPECT_EQ(streamed->findings[i].offset, whole[i].offset) << what;
  }
}

// Compares both reports (and both verifications) of `bytes`; returns false if
// it is not a metadata file.
bool ExpectSameJson(const std::string& bytes, const std::string& what,
                    const VerifyOptions& verify = {}) {
  absl::StatusOr<StateFile> file = ReadStateFile(Bytes(bytes));
  if (!file.ok() || file->kind != StateFileKind::kMetadata) return false;
  ExpectSameFindings(*file, bytes, verify, what);
  for (const InspectOptions& options : OptionSets()) {
    absl::StatusOr<std::string> whole = RenderReportJson(BuildReport(*file, Bytes(bytes), options));
    EXPECT_TRUE(whole.ok()) << what;
    std::string streamed;
    int pieces = 0;
    absl::Status s = StreamMetadataReportJson(Bytes(bytes), options,
                                              [&](absl::string_view p) {
                                                streamed.append(p.data(), p.size());
                                                ++pieces;
                                              });
    EXPECT_TRUE(s.ok()) << what << ": " << s;
    EXPECT_EQ(streamed, *whole) << what << " (top " << options.top << ", subtasks "
                                << options.subtasks << ")";
    EXPECT_GE(pieces, 3) << what;
  }
  return true;
}

TEST(InspectStreamTest, SameJsonOnEveryTestdataAndCorpusMetadataFile) {
  int compared = 0;
  for (const std::string& root : {std::string(FLINKSTATE_SOURCE_DIR "/tests/testdata"),
                                 std::string(FLINKSTATE_SHARED_DIR "/corpus")}) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
      if (!e.is_regular_file()) continue;
      const std::string bytes = ReadFileOrDie(e.path().string());
      if (ExpectSameJson(bytes, e.path().string())) ++compared;
    }
  }
  // The testdata and corpus hold well over a hundred metadata files.
  EXPECT_GT(compared, 100);
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "-" + std::to_string(::getpid())))
      .string();
}

TEST(InspectStreamTest, SameJsonOnGeneratedIncidentAndWideJobs) {
  const std::string path = TempPath("inspect_stream_test");
  for (uint32_t version : {3u, 4u, 5u}) {
    IncidentShape incident;
    incident.version = version;
    incident.parallelism = 4;
    incident.union_entries_per_subtask = 100;
    ASSERT_TRUE(WriteIncidentMetadata(incident, path).ok());
    // Relative keyed handles that resolve to nothing: one finding each.
    VerifyOptions verify;
    verify.base_dir = std::filesystem::temp_directory_path().string() + "/no-such-dir";
    EXPECT_TRUE(ExpectSameJson(ReadFileOrDie(path), "incident", verify));
    absl::StatusOr<StreamVerifyResult> v =
        VerifyMetadataStreaming(Bytes(ReadFileOrDie(path)), verify);
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v->findings.size(), 4u);

    WideJobShape wide;
    wide.version = version;
    wide.operators = 3;
    wide.parallelism = 5;
    wide.max_parallelism = 128;
    wide.shared_files = 20;  // past the linear-scan limit of the path index
    ASSERT_TRUE(WriteWideJobMetadata(wide, path).ok());
    const std::string bytes = ReadFileOrDie(path);
    absl::StatusOr<uint64_t> size = WideJobMetadataSize(wide);
    ASSERT_TRUE(size.ok());
    EXPECT_EQ(bytes.size(), *size);
    EXPECT_TRUE(ExpectSameJson(bytes, "wide"));
  }
  std::filesystem::remove(path);
}

// The report pass takes string text from the input rather than from decoded
// values: non-ASCII paths (2- and 3-byte forms and a surrogate pair in the
// file) must come out as the whole-model report decodes them.
TEST(InspectStreamTest, SameJsonForNonAsciiPaths) {
  WideJobShape wide;
  wide.operators = 2;
  wide.parallelism = 3;
  wide.shared_files = 3;
  wide.private_files = 2;
  wide.path_prefix = "s3://b\xC3\xBC" "cket/j\xE2\x82\xAC" "b-\xF0\x9D\x84\x9E";  // ü, €, U+1D11E
  const std::string path = TempPath("inspect_stream_utf");
  ASSERT_TRUE(WriteWideJobMetadata(wide, path).ok());
  const std::string bytes = ReadFileOrDie(path);
  std::filesystem::remove(path);
  // Java's writeUTF form of U+1D11E: the surrogate pair D834 DD1E, 3 bytes each.
  EXPECT_NE(bytes.find("\xED\xA0\xB4\xED\xB4\x9E"), std::string::npos);
  EXPECT_TRUE(ExpectSameJson(bytes, "non-ASCII wide"));
  std::string streamed;
  ASSERT_TRUE(StreamMetadataReportJson(Bytes(bytes), {}, [&](absl::string_view p) {
                streamed.append(p.data(), p.size());
              }).ok());
  EXPECT_NE(streamed.find(wide.path_prefix + "/shared/"), std::string::npos);
}

// `bytes`' streamed JSON, parsed back by protobuf, against the report built
// from the whole model, and printed again by protobuf's `MessageToJsonString`
// (the options report.proto states) against the streamed bytes.
void ExpectJsonRoundTrip(const std::string& bytes, const std::string& what) {
  absl::StatusOr<StateFile> file = ReadStateFile(Bytes(bytes));
  ASSERT_TRUE(file.ok()) << what << ": " << file.status();
  InspectOptions options;
  options.file_name = what;
  std::string streamed;
  ASSERT_TRUE(StreamMetadataReportJson(Bytes(bytes), options, [&](absl::string_view p) {
                streamed.append(p.data(), p.size());
              }).ok())
      << what;
  report::Report parsed;
  google::protobuf::util::JsonParseOptions parse;
  parse.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(streamed, &parsed, parse);
  ASSERT_TRUE(status.ok()) << what << ": " << status.ToString();
  const report::Report whole = BuildReport(*file, Bytes(bytes), options);
  std::string difference;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&difference);
  EXPECT_TRUE(differencer.Compare(whole, parsed)) << what << ": " << difference;
  google::protobuf::util::JsonPrintOptions print;
  print.add_whitespace = true;
  print.always_print_primitive_fields = true;
  std::string printed;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(parsed, &printed, print).ok());
  EXPECT_EQ(printed, streamed) << what;
}

TEST(InspectStreamTest, JsonParsesBackToTheReportAndPrintsTheSame) {
  int compared = 0;
  for (const testing::CorpusFile& f : testing::CorpusFiles()) {
    if (!f.is_metadata) continue;
    ExpectJsonRoundTrip(ReadFileOrDie(f.path), f.path);
    ++compared;
  }
  EXPECT_GT(compared, 50);
  // Handles past the path index's scan limit, and non-ASCII paths.
  WideJobShape wide;
  wide.operators = 3;
  wide.parallelism = 4;
  wide.shared_files = 40;
  wide.private_files = 5;
  wide.path_prefix = "s3://b\xC3\xBC" "cket/\"q\"\\x";  // u-umlaut, quotes, a backslash
  const std::string path = TempPath("inspect_stream_roundtrip");
  ASSERT_TRUE(WriteWideJobMetadata(wide, path).ok());
  const std::string bytes = ReadFileOrDie(path);
  std::filesystem::remove(path);
  ExpectJsonRoundTrip(bytes, "wide");
}

TEST(InspectStreamTest, WritesNothingForAMalformedFile) {
  WideJobShape wide;
  wide.operators = 2;
  wide.parallelism = 3;
  const std::string path = TempPath("inspect_stream_bad");
  ASSERT_TRUE(WriteWideJobMetadata(wide, path).ok());
  std::string bytes = ReadFileOrDie(path);
  std::filesystem::remove(path);
  bytes.resize(bytes.size() - 40);  // ends inside the last operator
  std::string streamed;
  absl::Status s = StreamMetadataReportJson(
      Bytes(bytes), {}, [&](absl::string_view p) { streamed.append(p.data(), p.size()); });
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange) << s;
  EXPECT_EQ(s.message(), ReadStateFile(Bytes(bytes)).status().message());
  EXPECT_TRUE(streamed.empty());
  EXPECT_EQ(VerifyMetadataStreaming(Bytes(bytes), {}).status(),
            ReadStateFile(Bytes(bytes)).status());
}

TEST(InspectStreamTest, VerifyReportsTrailingBytes) {
  IncidentShape incident;
  incident.version = 3;
  incident.parallelism = 2;
  incident.union_entries_per_subtask = 3;
  const std::string path = TempPath("inspect_stream_trailing");
  ASSERT_TRUE(WriteIncidentMetadata(incident, path).ok());
  std::string bytes = ReadFileOrDie(path);
  std::filesystem::remove(path);
  bytes += "xyz";  // v3: bytes after the body are kept as trailing bytes
  absl::StatusOr<StateFile> file = ReadStateFile(Bytes(bytes));
  ASSERT_TRUE(file.ok()) << file.status();
  ExpectSameFindings(*file, bytes, {}, "trailing");
  absl::StatusOr<StreamVerifyResult> v = VerifyMetadataStreaming(Bytes(bytes), {});
  ASSERT_TRUE(v.ok());
  ASSERT_EQ(v->findings.size(), 1u);
  EXPECT_EQ(v->findings[0].problem, "3 bytes follow the last operator");
}

TEST(InspectStreamTest, StreamingReadHandsOverEveryOperatorInOrder) {
  WideJobShape wide;
  wide.operators = 4;
  wide.parallelism = 2;
  const std::string path = TempPath("inspect_stream_ops");
  ASSERT_TRUE(WriteWideJobMetadata(wide, path).ok());
  const std::string bytes = ReadFileOrDie(path);
  std::filesystem::remove(path);
  absl::StatusOr<CheckpointMetadata> whole = ReadCheckpointMetadata(Bytes(bytes));
  ASSERT_TRUE(whole.ok()) << whole.status();
  std::vector<int> seen;
  absl::StatusOr<CheckpointMetadata> streamed = ReadCheckpointMetadataStreaming(
      Bytes(bytes), [&](int index, OperatorState&& op) {
        seen.push_back(index);
        EXPECT_EQ(op.range.offset, whole->operators[index].range.offset);
        EXPECT_EQ(op.subtasks.size(), 2u);
        return absl::OkStatus();
      });
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_TRUE(streamed->operators.empty());
  EXPECT_EQ(streamed->properties.offset, whole->properties.offset);
  // A callback's error stops the read and is returned as is.
  absl::StatusOr<CheckpointMetadata> stopped = ReadCheckpointMetadataStreaming(
      Bytes(bytes), [](int index, OperatorState&&) {
        return index == 1 ? absl::CancelledError("stop") : absl::OkStatus();
      });
  EXPECT_EQ(stopped.status(), absl::CancelledError("stop"));
}

TEST(InspectStreamTest, DecodeStringsOffKeepsRangesNotText) {
  WideJobShape wide;
  wide.operators = 1;
  wide.parallelism = 2;
  const std::string path = TempPath("inspect_stream_nostrings");
  ASSERT_TRUE(WriteWideJobMetadata(wide, path).ok());
  const std::string bytes = ReadFileOrDie(path);
  std::filesystem::remove(path);
  MetadataReadOptions no_text;
  no_text.decode_strings = false;
  absl::StatusOr<CheckpointMetadata> full = ReadCheckpointMetadata(Bytes(bytes));
  absl::StatusOr<CheckpointMetadata> bare = ReadCheckpointMetadata(Bytes(bytes), no_text);
  ASSERT_TRUE(full.ok() && bare.ok());
  const Utf& a = full->operators[0].subtasks[1].managed_keyed_state[0].shared_state[3].handle.path;
  const Utf& b = bare->operators[0].subtasks[1].managed_keyed_state[0].shared_state[3].handle.path;
  EXPECT_EQ(a.value.rfind("s3://bucket/job/shared/", 0), 0u) << a.value;
  EXPECT_TRUE(b.value.empty());
  EXPECT_EQ(a.range.offset, b.range.offset);
  EXPECT_EQ(a.range.size, b.range.size);
}

}  // namespace
}  // namespace flinkstate
