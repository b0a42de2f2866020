// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// The one-pass completedCheckpoint reader (`ScanCompletedCheckpoint`)
// against the model reader (`ReadCompletedCheckpointBytes`, over a decoded
// `javaobj::Stream`): on every completedCheckpoint Flink wrote for the test
// data (eleven releases), the synthesized samples, files written from corpus
// `_metadata` with the JobManager's sharing, and on truncated and flipped
// copies of them, both accept the same files and give the same model, field
// by field (`DumpModel`); where both refuse, the error is the same.

#include <filesystem>
#include <set>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/open.h"
#include "flinkstate/relocate.h"
#include "flinkstate/strip_state.h"
#include "gtest/gtest.h"
#include "tests/fixtures/completed_checkpoint_writer.h"
#include "tests/testing/model_dump.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate {
namespace {

using ::flinkstate::testing::DumpModel;

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Every completedCheckpoint under the test data, the corpus and the samples.
bool WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

std::vector<std::filesystem::path> HaFiles() {
  std::vector<std::filesystem::path> out;
  for (const std::string& root : {std::string(FLINKSTATE_SOURCE_DIR) + "/tests/testdata",
                                  std::string(FLINKSTATE_SHARED_DIR) + "/corpus",
                                  std::string(FLINKSTATE_SHARED_DIR) + "/spec/samples"}) {
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
         it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (ec || !it->is_regular_file() || it->file_size() > (64u << 20)) continue;
      const std::string bytes = Slurp(it->path());
      if (LooksLikeCompletedCheckpoint(serde::AsBytes(bytes))) out.push_back(it->path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The first lines where two dumps differ (whole dumps are too long to read).
void ExpectSameDump(const std::string& a, const std::string& b, const std::string& what) {
  if (a == b) return;
  std::vector<std::string> la = absl::StrSplit(a, '\n'), lb = absl::StrSplit(b, '\n');
  std::string diff;
  int shown = 0;
  for (size_t i = 0; i < std::max(la.size(), lb.size()) && shown < 6; ++i) {
    const std::string x = i < la.size() ? la[i] : "<none>";
    const std::string y = i < lb.size() ? lb[i] : "<none>";
    if (x == y) continue;
    absl::StrAppend(&diff, "line ", i, "\n  model: ", x, "\n  scan:  ", y, "\n");
    ++shown;
  }
  ADD_FAILURE() << what << ": models differ\n" << diff;
}

// The two readers agree on `bytes`.
void ExpectSameRead(absl::string_view bytes, const std::string& what) {
  const serde::ByteView in = serde::AsBytes(bytes);
  absl::StatusOr<StateFile> model = ReadCompletedCheckpointBytes(in);
  absl::StatusOr<StateFile> scan = ScanCompletedCheckpoint(in);
  ASSERT_EQ(model.ok(), scan.ok()) << what << ": model " << model.status() << ", scan "
                                   << scan.status();
  if (!model.ok()) {
    EXPECT_EQ(model.status(), scan.status()) << what;
    return;
  }
  ExpectSameDump(DumpModel(*model), DumpModel(*scan), what);
}

TEST(CompletedCheckpointScanTest, ReadsEveryRealFileAsTheModelReaderDoes) {
  const std::vector<std::filesystem::path> files = HaFiles();
  ASSERT_GE(files.size(), 40u) << "test data missing";
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    ExpectSameRead(Slurp(f), f.string());
  }
}

TEST(CompletedCheckpointScanTest, TheSinkSeesTheOperatorsInOrder) {
  for (const auto& f : HaFiles()) {
    const std::string bytes = Slurp(f);
    absl::StatusOr<StateFile> model = ReadCompletedCheckpointBytes(serde::AsBytes(bytes));
    if (!model.ok()) continue;
    StateFile seen;
    seen.kind = StateFileKind::kCompletedCheckpoint;
    int expected_index = 0;
    absl::StatusOr<StateFile> head = ScanCompletedCheckpoint(
        serde::AsBytes(bytes), [&](int index, OperatorState&& op) {
          EXPECT_EQ(index, expected_index++);
          seen.metadata.operators.push_back(std::move(op));
          return absl::OkStatus();
        });
    ASSERT_TRUE(head.ok()) << f << ": " << head.status();
    EXPECT_TRUE(head->metadata.operators.empty());
    seen.size = head->size;
    seen.metadata.checkpoint_id = head->metadata.checkpoint_id;
    seen.completed = head->completed;
    ExpectSameDump(DumpModel(*model), DumpModel(seen), f.string());
  }
}

TEST(CompletedCheckpointScanTest, HeadFirstGivesTheHeadBeforeTheOperators) {
  int files = 0;
  for (const auto& f : HaFiles()) {
    const std::string bytes = Slurp(f);
    absl::StatusOr<StateFile> model = ReadCompletedCheckpointBytes(serde::AsBytes(bytes));
    if (!model.ok() || model->metadata.operators.empty()) continue;
    ++files;
    bool head_seen = false;
    ScanCompletedCheckpointOptions options;
    options.head_first = true;
    options.head_sink = [&](const StateFile& head) {
      EXPECT_FALSE(head_seen);
      head_seen = true;
      EXPECT_EQ(head.metadata.checkpoint_id, model->metadata.checkpoint_id);
      const CompletedCheckpointInfo& a = *head.completed;
      const CompletedCheckpointInfo& b = *model->completed;
      // The graph's own fields, those after operatorStates included.
      EXPECT_EQ(a.properties.kind, b.properties.kind);
      EXPECT_EQ(a.properties.type_name, b.properties.type_name);
      EXPECT_EQ(a.properties.sharing_files_strategy, b.properties.sharing_files_strategy);
      EXPECT_EQ(a.storage_location_class, b.storage_location_class);
      EXPECT_EQ(a.exclusive_checkpoint_dir, b.exclusive_checkpoint_dir);
      EXPECT_EQ(a.job_id, b.job_id);
      EXPECT_EQ(a.metadata_path, b.metadata_path);
      return absl::OkStatus();
    };
    std::vector<OperatorState> ops;
    absl::StatusOr<StateFile> scan =
        ScanCompletedCheckpoint(serde::AsBytes(bytes),
                                [&](int, OperatorState&& op) {
                                  EXPECT_TRUE(head_seen) << "an operator before the head";
                                  ops.push_back(std::move(op));
                                  return absl::OkStatus();
                                },
                                options);
    ASSERT_TRUE(scan.ok()) << f << ": " << scan.status();
    StateFile whole = *std::move(scan);
    whole.metadata.operators = std::move(ops);
    ExpectSameDump(DumpModel(*model), DumpModel(whole), f.string());
  }
  EXPECT_GE(files, 20);
}

// Files with the JobManager's sharing (references to shared objects, which
// the one-pass reader reads again at their definitions), written from real
// `_metadata` files of the corpus.
TEST(CompletedCheckpointScanTest, ReadsSharedObjectsThroughTheirReferences) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "scan-shared";
  std::filesystem::create_directories(dir);
  int written = 0;
  std::error_code ec;
  const std::string corpus = std::string(FLINKSTATE_SHARED_DIR) + "/corpus";
  for (auto it = std::filesystem::recursive_directory_iterator(corpus, ec);
       it != std::filesystem::recursive_directory_iterator() && written < 40; it.increment(ec)) {
    if (ec || !it->is_regular_file() || it->path().filename() != "_metadata" ||
        it->file_size() > (8u << 20)) {
      continue;
    }
    const std::string meta = Slurp(it->path());
    absl::StatusOr<StateFile> m = ReadStateFile(serde::AsBytes(meta));
    if (!m.ok()) continue;
    const std::filesystem::path out = dir / absl::StrCat("cc-", written);
    if (!WriteCompletedCheckpointFromMetadata(*m, serde::AsBytes(meta), {}, out.string())
             .ok()) {
      continue;
    }
    ++written;
    SCOPED_TRACE(it->path().string());
    ExpectSameRead(Slurp(out), it->path().string());
  }
  EXPECT_GE(written, 5);
}

TEST(CompletedCheckpointScanTest, AcceptsAndRefusesDamagedFilesAsTheModelReaderDoes) {
  uint64_t cases = 0;
  for (const auto& f : HaFiles()) {
    const std::string bytes = Slurp(f);
    if (bytes.size() > (256u << 10)) continue;
    const size_t n = bytes.size();
    const size_t step = std::max<size_t>(1, n / 40);
    for (size_t at = 0; at < n; at += step) {
      ExpectSameRead(absl::string_view(bytes).substr(0, at),
                     absl::StrCat(f.string(), " cut at ", at));
      std::string flipped = bytes;
      flipped[at] = static_cast<char>(flipped[at] ^ (at % 5 == 0 ? 0x01 : 0x20));
      ExpectSameRead(flipped, absl::StrCat(f.string(), " flip at ", at));
      cases += 2;
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  EXPECT_GE(cases, 2000u);
}

}  // namespace
}  // namespace flinkstate

namespace flinkstate {
namespace {

// The state names of a completedCheckpoint's operator handles.
std::set<std::string> StateNames(const StateFile& f) {
  std::set<std::string> names;
  for (const OperatorState& op : f.metadata.operators) {
    for (const OperatorSubtaskState& st : op.subtasks) {
      for (const auto* slot : {&st.managed_operator_state, &st.raw_operator_state}) {
        for (const OperatorStateHandle& h : *slot) {
          for (const StateNameEntry& e : h.states) names.insert(e.name.value);
        }
      }
    }
  }
  return names;
}

std::string Describe(const std::vector<StrippedEntry>& removed) {
  std::string out;
  for (const StrippedEntry& e : removed) {
    absl::StrAppend(&out, e.operator_index, "/", e.operator_id, "/", e.subtask_index, "/",
                    e.slot, "/", e.mode, "/", e.entry_count, "/", e.bytes, "\n");
  }
  return out;
}

// Strips `state` from the file at `path` with the decoded stream's rewriter
// and in one pass, and expects the same output bytes, the same list of
// removed entries and statistics, and the one-pass verify to accept it.
void ExpectSameStrip(const std::string& path, const StripOptions& options) {
  SCOPED_TRACE(absl::StrCat(path, " --state ", options.state_name));
  absl::StatusOr<LoadedFile> whole = Open(path);
  ASSERT_TRUE(whole.ok()) << whole.status();
  OpenOptions defer;
  defer.defer_metadata_model = true;
  absl::StatusOr<LoadedFile> deferred = Open(path, defer);
  ASSERT_TRUE(deferred.ok()) << deferred.status();
  ASSERT_TRUE(deferred->completed_deferred);
  absl::StatusOr<StripResult> tree = PlanStripState(*whole, options);
  absl::StatusOr<StripResult> stream = PlanStripState(*deferred, options);
  ASSERT_EQ(tree.ok(), stream.ok()) << tree.status() << " / " << stream.status();
  if (!tree.ok()) {
    EXPECT_EQ(tree.status(), stream.status());
    return;
  }
  absl::StatusOr<std::string> a = tree->plan.ApplyToString(whole->bytes());
  absl::StatusOr<std::string> b = stream->plan.ApplyToString(deferred->bytes());
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << " / " << b.status();
  if (*a != *b) {
    size_t at = 0;
    while (at < a->size() && at < b->size() && (*a)[at] == (*b)[at]) ++at;
    if (const char* dir = std::getenv("FLINKSTATE_TEST_DUMP_DIR")) {
      std::ofstream(std::string(dir) + "/rewriter.bin", std::ios::binary) << *a;
      std::ofstream(std::string(dir) + "/onepass.bin", std::ios::binary) << *b;
    }
    ADD_FAILURE() << "outputs differ (" << a->size() << " vs " << b->size()
                  << " bytes) from byte " << at << ": rewriter "
                  << absl::CHexEscape(a->substr(at, 48)) << "\n one pass "
                  << absl::CHexEscape(b->substr(at, 48));
  }
  EXPECT_EQ(Describe(tree->removed), Describe(stream->removed));
  EXPECT_EQ(tree->bytes_removed, stream->bytes_removed);
  EXPECT_EQ(tree->stats.renumbered_references, stream->stats.renumbered_references);
  EXPECT_EQ(tree->stats.rematerialized, stream->stats.rematerialized);
  EXPECT_EQ(tree->stats.removed_items, stream->stats.removed_items);
  const serde::ByteView out = serde::AsBytes(*b);
  EXPECT_TRUE(VerifyStripped(*deferred, out, options, &*stream).ok());
  EXPECT_TRUE(VerifyStripped(*deferred, out, options).ok());
  EXPECT_TRUE(VerifyStripped(*whole, out, options).ok());
  // The verify notices an output that does not hold what was planned: the
  // input itself (nothing stripped).
  EXPECT_FALSE(VerifyStripped(*deferred, deferred->bytes(), options, &*stream).ok());
}

TEST(CompletedCheckpointStreamedStripTest, StripsEveryStateAsTheRewriterDoes) {
  int cases = 0;
  for (const auto& f : HaFiles()) {
    absl::StatusOr<LoadedFile> whole = Open(f.string());
    if (!whole.ok() || whole->kind != FileKind::kCompletedCheckpoint) continue;
    for (const std::string& name : StateNames(whole->model)) {
      StripOptions options;
      options.state_name = name;
      ExpectSameStrip(f.string(), options);
      ++cases;
      if (!whole->model.metadata.operators.empty()) {
        options.operator_ids = {whole->model.metadata.operators.back().IdHex()};
        ExpectSameStrip(f.string(), options);
      }
    }
    StripOptions absent;
    absent.state_name = "no-such-state";
    ExpectSameStrip(f.string(), absent);
    absent.operator_ids = {"0123456789abcdef0123456789abcdef"};
    ExpectSameStrip(f.string(), absent);
  }
  EXPECT_GE(cases, 40);
}

}  // namespace
}  // namespace flinkstate

namespace flinkstate {
namespace {

std::string Changes(const RelocateResult& r) {
  std::vector<std::string> lines;
  EXPECT_TRUE(r.ForEachChanged([&](const RelocatedString& c) {
                 lines.push_back(absl::StrCat(c.offset, " ", c.what, " ", c.before, " -> ",
                                              c.after));
                 return true;
               }).ok());
  std::sort(lines.begin(), lines.end());
  return absl::StrJoin(lines, "\n");
}

// Relocates `from` -> `to` in the file at `path` with the decoded stream's
// rewriter and in one pass: the same output bytes, the same changes, and
// the one-pass verify accepts it and refuses the unrelocated input.
void ExpectSameRelocation(const std::string& path, const RelocateOptions& options,
                          bool one_pass = true) {
  SCOPED_TRACE(absl::StrCat(path, " ", options.from_prefix, " -> ", options.to_prefix));
  absl::StatusOr<LoadedFile> whole = Open(path);
  ASSERT_TRUE(whole.ok()) << whole.status();
  OpenOptions defer;
  defer.defer_metadata_model = true;
  absl::StatusOr<LoadedFile> deferred = Open(path, defer);
  ASSERT_TRUE(deferred.ok()) << deferred.status();
  absl::StatusOr<RelocateResult> tree = PlanRelocate(*whole, options);
  absl::StatusOr<RelocateResult> stream = PlanRelocate(*deferred, options);
  ASSERT_EQ(tree.ok(), stream.ok()) << tree.status() << " / " << stream.status();
  if (!tree.ok()) {
    EXPECT_EQ(tree.status().code(), stream.status().code());
    EXPECT_EQ(tree.status().message(), stream.status().message());
    return;
  }
  if (one_pass) {
    EXPECT_NE(stream->streamed, nullptr) << "planned by the decoded stream's rewriter";
  } else {
    EXPECT_EQ(stream->streamed, nullptr) << "planned in one pass";
  }
  absl::StatusOr<std::string> a = tree->plan.ApplyToString(whole->bytes());
  absl::StatusOr<std::string> b = stream->plan.ApplyToString(deferred->bytes());
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << " / " << b.status();
  EXPECT_TRUE(*a == *b) << "outputs differ (" << a->size() << " vs " << b->size() << " bytes)";
  EXPECT_EQ(tree->changed_count(), stream->changed_count());
  EXPECT_EQ(Changes(*tree), Changes(*stream));
  EXPECT_TRUE(VerifyRelocated(*deferred, serde::AsBytes(*b), options, &*stream).ok());
  EXPECT_TRUE(VerifyRelocated(*deferred, serde::AsBytes(*b), options).ok());
  EXPECT_FALSE(VerifyRelocated(*deferred, deferred->bytes(), options, &*stream).ok());
}

// Java's readUTF also reads a character in a longer form than writeUTF
// writes ('/' as C0 AF): a path spelled so starts with the prefix in its
// text but not in its bytes. The one-pass planner leaves such a file to the
// decoded stream's rewriter, which relocates that path too.
TEST(CompletedCheckpointStreamedRelocateTest, PathInALongerFormIsRelocatedAsText) {
  int cases = 0;
  for (const auto& f : HaFiles()) {
    absl::StatusOr<LoadedFile> whole = Open(f.string());
    if (!whole.ok() || whole->kind != FileKind::kCompletedCheckpoint) continue;
    const std::string pointer = whole->model.completed->external_pointer;
    if (!absl::StartsWith(pointer, "file:/") || pointer.size() > 0xFFF0) continue;
    std::string bytes(serde::AsStringView(whole->bytes()));
    // The first TC_STRING of the pointer's text: tag, u2 length, body.
    std::string tagged = "\x74";
    tagged += static_cast<char>(pointer.size() >> 8);
    tagged += static_cast<char>(pointer.size() & 0xFF);
    tagged += pointer;
    const size_t at = bytes.find(tagged);
    if (at == std::string::npos) continue;
    const size_t slash = at + 3 + 5;  // the '/' after "file:"
    ASSERT_EQ(bytes[slash], '/');
    bytes.replace(slash, 1, "\xC0\xAF");
    bytes[at + 1] = static_cast<char>((pointer.size() + 1) >> 8);
    bytes[at + 2] = static_cast<char>((pointer.size() + 1) & 0xFF);
    const std::string path = ::testing::TempDir() + "/longer-form-" + f.filename().string();
    ASSERT_TRUE(WriteFile(path, bytes));
    absl::StatusOr<LoadedFile> respelled = Open(path);
    ASSERT_TRUE(respelled.ok()) << respelled.status();
    RelocateOptions o;
    o.from_prefix = pointer;
    o.to_prefix = "s3://other-bucket/moved";
    ExpectSameRelocation(path, o, /*one_pass=*/false);
    absl::StatusOr<RelocateResult> r = PlanRelocate(*respelled, o);
    ASSERT_TRUE(r.ok()) << r.status();
    bool respelled_changed = false;
    for (const auto& c : r->changed) respelled_changed |= c.offset == at;
    EXPECT_TRUE(respelled_changed) << "the string at byte " << at << " was not relocated";
    ++cases;
  }
  EXPECT_GE(cases, 10);
}

TEST(CompletedCheckpointStreamedRelocateTest, RelocatesAsTheRewriterDoes) {
  int cases = 0;
  for (const auto& f : HaFiles()) {
    absl::StatusOr<LoadedFile> whole = Open(f.string());
    if (!whole.ok() || whole->kind != FileKind::kCompletedCheckpoint) continue;
    const std::string pointer = whole->model.completed->external_pointer;
    if (pointer.empty()) continue;
    // The pointer's first two directories (`file:/tmp`, `file:/tmp/x`) and
    // the whole checkpoint directory, each moved elsewhere.
    std::vector<std::string> prefixes;
    for (size_t at = pointer.find('/'); at != std::string::npos && prefixes.size() < 2;
         at = pointer.find('/', at + 1)) {
      if (at > 0 && pointer[at - 1] != ':' && pointer[at - 1] != '/') {
        prefixes.push_back(pointer.substr(0, at));
      }
    }
    prefixes.push_back(pointer);
    for (const std::string& from : prefixes) {
      RelocateOptions o;
      o.from_prefix = from;
      o.to_prefix = "s3://other-bucket/moved";
      ExpectSameRelocation(f.string(), o);
      o.to_prefix = from + "-longer-by-some-bytes";
      ExpectSameRelocation(f.string(), o);
      ++cases;
    }
    RelocateOptions none;
    none.from_prefix = "s3://no-such-bucket";
    none.to_prefix = "s3://other";
    ExpectSameRelocation(f.string(), none);
    RelocateOptions unsafe;
    unsafe.from_prefix = prefixes.front();
    unsafe.to_prefix = "s3://other/../up";
    ExpectSameRelocation(f.string(), unsafe);
  }
  EXPECT_GE(cases, 60);
}

}  // namespace
}  // namespace flinkstate
