// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// flinkstate::Open over every kind of real Flink file, and flinkstate::Repair
// on a real incident checkpoint and its HA file (both written by Flink 1.20.5,
// tests/testdata), including a crash at every file-system step.

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "flinkstate/open.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/deep_strip.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/operator_state_report.h"
#include "flinkstate/repair.h"
#include "flinkstate/drop_operator.h"
#include "flinkstate/relocate.h"
#include "flinkstate/serde/file_transaction.h"
#include "flinkstate/strip_state.h"
#include "flinkstate/verify.h"
#include "tests/fixtures/completed_checkpoint_writer.h"
#include "tests/flinkstate/corpus.h"
#include "tests/testing/fault_file_ops.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate {
namespace {

namespace fs = std::filesystem;
using ::flinkstate::testing::CorpusFile;
using ::flinkstate::testing::CorpusFiles;
using ::flinkstate::testing::FaultOps;
using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::StatusIs;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kData = std::string(FLINKSTATE_SOURCE_DIR) + "/tests/testdata/flink-1.20.5";
const std::string kCheckpoint = kData + "/incident-gen3-checkpoint";
const std::string kHaFile =
    kData + "/incident-gen3-completedCheckpoint/completedCheckpoint9bddd89110e7";
constexpr char kState[] = "topic-partition-offset-states";

std::string Read(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(OpenTest, EveryKindWithOneCall) {
  // Checkpoint ID 9: facts.json of both (Flink's own loaders).
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile meta, Open(kCheckpoint));
  EXPECT_EQ(meta.kind, FileKind::kMetadata);
  EXPECT_THAT(meta.path, EndsWith("/_metadata"));
  EXPECT_EQ(meta.model.metadata.checkpoint_id, 9);

  FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile ha, Open(kHaFile));
  EXPECT_EQ(ha.kind, FileKind::kCompletedCheckpoint);
  EXPECT_EQ(ha.model.metadata.checkpoint_id, 9);
  // Read in one pass, without a decoded stream; the edits that need one
  // decode it.
  EXPECT_EQ(ha.stream, nullptr);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(CompletedTree tree, DecodeCompletedTree(ha));
  ASSERT_NE(tree.stream, nullptr);
  EXPECT_EQ(tree.model.metadata.operators.size(), ha.model.metadata.operators.size());

  FLINKSTATE_ASSERT_OK_AND_ASSIGN(
      LoadedFile zk, Open(kData + "/incident-gen3-completedCheckpoint/zk-node.bin"));
  EXPECT_EQ(zk.kind, FileKind::kHaPointer);
  EXPECT_EQ(zk.encoding, Encoding::kRaw);
  ASSERT_TRUE(zk.pointer.has_value());
  EXPECT_THAT(zk.pointer->path, EndsWith("completedCheckpoint9bddd89110e7"));

  const std::string k8s = std::string(FLINKSTATE_SOURCE_DIR) +
                          "/tests/testdata/flink-1.18.1/incident-gen3-k8s/k8s-value.b64";
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile kv, Open(k8s));
  EXPECT_EQ(kv.kind, FileKind::kHaPointer);
  EXPECT_EQ(kv.encoding, Encoding::kBase64);
  ASSERT_TRUE(kv.pointer.has_value());
  EXPECT_THAT(kv.pointer->path, EndsWith("completedCheckpointee0e07b4303b"));

  int snapshots = 0;
  for (const CorpusFile& f : CorpusFiles()) {
    if (!f.is_snapshot) continue;
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile s, Open(f.path));
    EXPECT_EQ(s.kind, FileKind::kOperatorSnapshot) << f.path;
    if (++snapshots == 3) break;
  }
  EXPECT_GT(snapshots, 0);

  // TC_STRING "x": a Java stream that is nothing of Flink's.
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile js,
                                  OpenBytes(std::string("\xAC\xED\x00\x05\x74\x00\x01x", 8)));
  EXPECT_EQ(js.kind, FileKind::kJavaStream);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile mem, OpenBytes(Read(kHaFile), "ha"));
  EXPECT_EQ(mem.kind, FileKind::kCompletedCheckpoint);
}

TEST(OpenTest, UnwrapsTheFormsPeopleHandOver) {
  // The input-format step belongs to Open, so embedders get it too: hex text
  // of a _metadata file (as `xxd -p` writes it, 60 digits a line) and Base64
  // wrapped at 76 characters (as `base64` writes it) of the HA file.
  const std::string meta = Read(kCheckpoint + "/_metadata");
  std::string hex = absl::BytesToHexString(meta);
  for (size_t i = 60; i < hex.size(); i += 61) hex.insert(i, "\n");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile h, OpenBytes(hex, "hex"));
  EXPECT_EQ(h.kind, FileKind::kMetadata);
  EXPECT_EQ(h.encoding, Encoding::kWrapped);
  EXPECT_THAT(h.layers, ::testing::ElementsAre(serde::InputFormat::kHex));
  EXPECT_EQ(h.model.metadata.checkpoint_id, 9);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(h.bytes().data()), h.bytes().size()),
            meta);

  std::string b64 = absl::Base64Escape(Read(kHaFile));
  for (size_t i = 76; i < b64.size(); i += 77) b64.insert(i, "\n");
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile b, OpenBytes(b64, "b64"));
  EXPECT_EQ(b.kind, FileKind::kCompletedCheckpoint);
  EXPECT_EQ(b.encoding, Encoding::kBase64);
  EXPECT_EQ(b.model.metadata.checkpoint_id, 9);

  // A forced format decodes exactly that layer: raw Base64 text is no file.
  OpenOptions raw;
  raw.input_format = serde::InputFormat::kRaw;
  EXPECT_THAT(OpenBytes(b64, "b64", raw), StatusIs(absl::StatusCode::kInvalidArgument, "text"));
  OpenOptions as_hex;
  as_hex.input_format = serde::InputFormat::kHex;
  EXPECT_THAT(OpenBytes(b64, "b64", as_hex), StatusIs(absl::StatusCode::kInvalidArgument, "hex"));

  // The edits rewrite raw files only, and say so.
  const std::string path = ::testing::TempDir() + "/flinkstate-open-hex";
  std::ofstream(path, std::ios::binary) << hex;
  EXPECT_THAT(OpenStateFile(path), StatusIs(absl::StatusCode::kInvalidArgument, "stored as hex"));
  std::remove(path.c_str());
}

TEST(EditEntryPointTest, OneCallPerEditForEveryKind) {
  // strip-state: the same call, result and verify for _metadata and the HA
  // file of the same checkpoint (512 entries each: tests/testdata/README.md).
  StripOptions strip;
  strip.state_name = kState;
  for (const std::string& path : {kCheckpoint, kHaFile}) {
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile f, Open(path));
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(StripResult r, PlanStripState(f, strip));
    uint64_t entries = 0;
    for (const StrippedEntry& e : r.removed) entries += e.entry_count;
    EXPECT_EQ(entries, 512u) << path;
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string out, r.plan.ApplyToString(f.bytes()));
    EXPECT_THAT(VerifyStripped(f, serde::AsBytes(out), strip), IsOk()) << path;
    // The verify is a real check: the unstripped input fails it.
    EXPECT_THAT(VerifyStripped(f, f.bytes(), strip), StatusIs(absl::StatusCode::kDataLoss, ""))
        << path;
  }
  // drop-operator: the operator that holds the state, in both kinds.
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile meta, Open(kCheckpoint));
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StripResult sr, PlanStripState(meta, strip));
  const std::vector<std::string> ids = {sr.removed[0].operator_id};
  for (const std::string& path : {kCheckpoint, kHaFile}) {
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile f, Open(path));
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(DropResult r, PlanDropOperators(f, ids));
    EXPECT_EQ(r.dropped_ids, ids) << path;
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string out, r.plan.ApplyToString(f.bytes()));
    EXPECT_THAT(VerifyDropped(f, serde::AsBytes(out), r.dropped_ids), IsOk()) << path;
    EXPECT_THAT(VerifyDropped(f, f.bytes(), r.dropped_ids),
                StatusIs(absl::StatusCode::kDataLoss, "")) << path;
  }
  // relocate: the HA file and its ZooKeeper pointer name their files under
  // file:/tmp/fsc2/ (where the harness ran); one call for both.
  RelocateOptions moved{"file:/tmp/fsc2", "s3://bucket/moved"};
  for (const std::string& path :
       {kHaFile, kData + "/incident-gen3-completedCheckpoint/zk-node.bin"}) {
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile f, Open(path));
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(RelocateResult r, PlanRelocate(f, moved));
    EXPECT_FALSE(r.changed.empty()) << path;
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string out, r.plan.ApplyToString(f.bytes()));
    EXPECT_THAT(VerifyRelocated(f, serde::AsBytes(out), moved), IsOk()) << path;
    EXPECT_THAT(VerifyRelocated(f, f.bytes(), moved), StatusIs(absl::StatusCode::kDataLoss, ""))
        << path;
  }
  // Kinds that cannot hold the edit say so.
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(
      LoadedFile zk, Open(kData + "/incident-gen3-completedCheckpoint/zk-node.bin"));
  EXPECT_THAT(PlanStripState(zk, strip),
              StatusIs(absl::StatusCode::kInvalidArgument, "holds no operator state"));
  EXPECT_THAT(PlanDropOperators(zk, ids),
              StatusIs(absl::StatusCode::kInvalidArgument, "holds no operators"));
}

TEST(ProgressSinkTest, StreamingVerifyReportsBytesUpToTheEnd) {
  // The library reports progress through the sink and never prints.
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(serde::MappedFile f,
                                  serde::MappedFile::Open(kCheckpoint + "/_metadata"));
  VerifyOptions o;
  std::vector<uint64_t> done;
  o.progress = [&](absl::string_view phase, uint64_t d, uint64_t total) {
    EXPECT_EQ(phase, "verifying");
    EXPECT_EQ(total, f.size());
    done.push_back(d);
  };
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(StreamVerifyResult r, VerifyMetadataStreaming(f.bytes(), o));
  ASSERT_EQ(done.size(), static_cast<size_t>(r.operators) + 1);  // per operator, then the end
  EXPECT_TRUE(std::is_sorted(done.begin(), done.end()));
  EXPECT_EQ(done.back(), f.size());
}

TEST(OpenTest, ErrorsSayWhatTheBytesAre) {
  EXPECT_THAT(OpenBytes(""), StatusIs(absl::StatusCode::kInvalidArgument, "empty file"));
  EXPECT_THAT(OpenBytes(std::string("\x49\x60\x67", 3)),
              StatusIs(absl::StatusCode::kInvalidArgument, "truncated _metadata"));
  EXPECT_THAT(OpenBytes(std::string("\x1F\x8B\x08\x00rest", 8)),
              StatusIs(absl::StatusCode::kInvalidArgument, "gzip"));
  EXPECT_THAT(OpenBytes("jobmanager.rpc.address: localhost\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, "text"));
  EXPECT_THAT(OpenBytes("{\"data\": {}}"), StatusIs(absl::StatusCode::kInvalidArgument, "JSON"));
  // Text that is also valid Base64 or hex, but decodes to no kind: named as
  // the text it is (attack run 11: "abcdefg" was "5 bytes of unknown binary
  // data"), with what the decoding gave.
  EXPECT_THAT(OpenBytes("abcdefg"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "text, not a binary state file (read as base64: 5 bytes of unknown "
                       "binary data)"));
  EXPECT_THAT(OpenBytes("0001\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "text, not a binary state file (read as hex: 2 bytes of unknown binary "
                       "data)"));
  // Forced, the decoding is what the user asked about.
  OpenOptions forced;
  forced.input_format = serde::InputFormat::kBase64;
  EXPECT_THAT(OpenBytes("abcdefg", "<bytes>", forced),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "header: 5 bytes of unknown binary data; neither"));
  EXPECT_THAT(Open(kData), StatusIs(absl::StatusCode::kInvalidArgument, "without _metadata"));
  // The path every reader and edit resolves a directory argument with.
  EXPECT_THAT(CheckpointFilePath(kData),
              StatusIs(absl::StatusCode::kInvalidArgument, "without _metadata"));
  EXPECT_EQ(CheckpointFilePath(kHaFile).value_or(""), kHaFile);
  EXPECT_EQ(CheckpointFilePath("s3://bucket/chk-1").value_or(""), "s3://bucket/chk-1");
  const std::string dir = ::testing::TempDir() + "/flinkstate-checkpoint-file-path";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/_metadata") << "x";
  EXPECT_EQ(CheckpointFilePath(dir).value_or(""), dir + "/_metadata");
  EXPECT_EQ(CheckpointFilePath(dir + "/").value_or(""), dir + "/_metadata");
  EXPECT_THAT(OpenStateFile(kData + "/incident-gen3-completedCheckpoint/zk-node.bin"),
              StatusIs(absl::StatusCode::kInvalidArgument, "HA pointer"));
  // A truncated HA file: the Java decoder's own error, with the path.
  EXPECT_THAT(OpenBytes(Read(kHaFile).substr(0, 3000), "cut"),
              StatusIs(absl::StatusCode::kOutOfRange, "cut: "));
}

// A job laid out as Flink does: <root>/<jobId>/chk-9/_metadata and
// <root>/ha/<cluster>/completedCheckpoint<hex>.
class RepairJob {
 public:
  RepairJob() {
    std::string tmpl = ::testing::TempDir() + "/flinkstate-repair-XXXXXX";
    root_ = fs::canonical(::mkdtemp(tmpl.data())).string();
    auto ha = Open(kHaFile);
    const std::string pointer = ha.ok() ? ha->model.completed->external_pointer : "";
    // ".../<jobId>/chk-9" of the pointer, recreated here.
    const fs::path p(pointer);
    chk_ = root_ + "/" + p.parent_path().filename().string() + "/" + p.filename().string();
    ha_parent_ = root_ + "/ha";
    ha_dir_ = ha_parent_ + "/cluster-1";
    fs::create_directories(chk_);
    fs::create_directories(ha_dir_);
    Reset();
  }
  ~RepairJob() { fs::remove_all(root_); }
  void Reset() {
    for (const std::string& d : {chk_, ha_dir_}) {
      for (const auto& e : fs::directory_iterator(d)) fs::remove(e.path());
    }
    fs::copy_file(kCheckpoint + "/_metadata", meta());
    fs::copy_file(kHaFile, ha());
    ::chmod(meta().c_str(), 0600);
    ::chmod(ha().c_str(), 0640);
  }
  RepairOptions Options() const {
    RepairOptions o;
    o.strip.state_name = kState;
    o.checkpoint_dirs = {chk_};
    o.ha_dir = ha_dir_;
    return o;
  }
  std::string meta() const { return chk_ + "/_metadata"; }
  std::string ha() const { return ha_dir_ + "/completedCheckpoint9bddd89110e7"; }
  const std::string& ha_parent() const { return ha_parent_; }
  // Both repaired, both originals kept, nothing else in the directories.
  void ExpectRepaired() const {
    for (const std::string& f : {meta(), ha()}) {
      auto in = OpenStateFile(f);
      ASSERT_THAT(in.status(), IsOk());
      StripOptions o;
      o.state_name = kState;
      if (in->kind == FileKind::kMetadata) {
        EXPECT_THAT(PlanStripState(in->model, in->file.bytes(), o).status(),
                    StatusIs(absl::StatusCode::kNotFound, "")) << f;
      }
    }
    EXPECT_EQ(Read(meta() + ".bak"), Read(kCheckpoint + "/_metadata"));
    EXPECT_EQ(Read(ha() + ".bak"), Read(kHaFile));
    EXPECT_LT(fs::file_size(ha()), fs::file_size(kHaFile));
    EXPECT_EQ(std::distance(fs::directory_iterator(chk_), fs::directory_iterator()), 2);
    EXPECT_EQ(std::distance(fs::directory_iterator(ha_dir_), fs::directory_iterator()), 2);
    struct stat st;
    ASSERT_EQ(::stat(ha().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0640u);
  }

 private:
  std::string root_, chk_, ha_parent_, ha_dir_;
};

TEST(RepairTest, PlansAndAppliesBothFilesOfARealIncident) {
  RepairJob job;
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> r, Repair::Plan(job.Options()));
  ASSERT_EQ(r->plan().files_size(), 2);
  EXPECT_EQ(r->plan().files(0).kind(), "metadata");
  EXPECT_EQ(r->plan().files(1).kind(), "completedCheckpoint");
  // 512 entries (8 * 4^3, tests/testdata/README.md) in each file.
  for (const auto& f : r->plan().files()) {
    uint64_t entries = 0;
    for (const auto& op : f.operators()) entries += op.entries();
    EXPECT_EQ(entries, 512u) << f.path();
  }
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::string json, r->PlanJson());
  EXPECT_THAT(json, HasSubstr("\"stateName\": \"topic-partition-offset-states\""));
  EXPECT_THAT(r->PlanText(), HasSubstr("completedCheckpoint9bddd89110e7"));
  // Local files transfer nothing: no object-store transfer is shown (a line
  // of zeros was printed).
  EXPECT_FALSE(r->plan().has_transfer());
  EXPECT_THAT(r->PlanText(), Not(HasSubstr("transfer")));
  ASSERT_THAT(r->Apply(), IsOk());
  EXPECT_THAT(Repair::NextSteps(r->plan()), HasSubstr("restart the JobManager"));
  // The backup it says to move out of the HA directory is the one there.
  EXPECT_THAT(Repair::NextSteps(r->plan()),
              HasSubstr("move the backups in the HA directory (" + job.ha() + ".bak ...)"));
  r.reset();
  job.ExpectRepaired();
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> again, Repair::Plan(job.Options()));
  EXPECT_TRUE(again->empty());
}

TEST(RepairTest, ACrashAtEveryStepIsFinishedOrUndoneByTheRerun) {
  RepairJob job;
  FaultOps counting(0, FaultOps::kError);
  {
    RepairOptions o = job.Options();
    o.ops = &counting;
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> r, Repair::Plan(o));
    ASSERT_THAT(r->Apply(), IsOk());
  }
  const int steps = counting.calls();
  ASSERT_GE(steps, 25);
  int journals = 0;
  for (int n = 1; n <= steps; ++n) {
    job.Reset();
    FaultOps crash(n, FaultOps::kCrash);
    {
      RepairOptions o = job.Options();
      o.ops = &crash;
      o.intent = "/work repair --state x --apply chk-9";
      FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> r, Repair::Plan(o));
      EXPECT_FALSE(r->Apply().ok()) << "step " << n;
    }  // the locks die with the "process"
    SCOPED_TRACE(crash.failed_step());
    // A journal left behind names the repair to rerun (attack run 8: the
    // warning said "rerun that command" without the command).
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::vector<serde::InterruptedRun> runs,
                                    serde::FindInterruptedRuns(serde::DirName(job.meta())));
    for (const serde::InterruptedRun& run : runs) {
      if (run.journal.empty()) continue;
      EXPECT_EQ(run.intent, "/work repair --state x --apply chk-9");
      ++journals;
    }
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> rerun, Repair::Plan(job.Options()));
    ASSERT_THAT(rerun->Apply(), IsOk());
    rerun.reset();
    job.ExpectRepaired();
  }
  EXPECT_GT(journals, 0);
}

TEST(RepairTest, ASymlinkedMetadataIsRepairedWhereItPointsAndRecoveredFromTheCheckpointDir) {
  RepairJob job;
  // _metadata is a link to a file elsewhere (a mounted volume, say).
  const std::string real_dir = fs::path(job.meta()).parent_path().parent_path().string() + "/vol";
  fs::create_directories(real_dir);
  const std::string real = real_dir + "/_metadata";
  fs::rename(job.meta(), real);
  fs::create_symlink(real, job.meta());
  FaultOps counting(0, FaultOps::kError);
  {
    RepairOptions o = job.Options();
    o.ops = &counting;
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> r, Repair::Plan(o));
    // The printed plan says the link is followed (attack run 10, M8: only the
    // JSON's `target` did), and only for the link.
    EXPECT_THAT(r->PlanText(), HasSubstr("    a symbolic link: the file it names, " + real +
                                         ", is rewritten (backup " + real + ".bak); the link stays\n"));
    EXPECT_THAT(r->PlanText(), Not(HasSubstr("the file it names, " + job.ha())));
    ASSERT_THAT(r->Apply(), IsOk());
  }
  const int steps = counting.calls();
  for (int n : {steps / 2, steps - 2}) {  // before and after the commit point
    fs::remove(real);
    fs::remove(real + ".bak");
    fs::copy_file(kCheckpoint + "/_metadata", real);
    fs::remove(job.ha());
    fs::remove(job.ha() + ".bak");
    fs::copy_file(kHaFile, job.ha());
    FaultOps crash(n, FaultOps::kCrash);
    {
      RepairOptions o = job.Options();
      o.ops = &crash;
      FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> r, Repair::Plan(o));
      EXPECT_FALSE(r->Apply().ok());
    }
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> rerun, Repair::Plan(job.Options()));
    ASSERT_THAT(rerun->Apply(), IsOk()) << "crash at step " << n;
    rerun.reset();
    EXPECT_TRUE(fs::is_symlink(job.meta()));
    EXPECT_EQ(Read(real + ".bak"), Read(kCheckpoint + "/_metadata"));
    EXPECT_LT(fs::file_size(real), fs::file_size(real + ".bak"));
    EXPECT_EQ(std::distance(fs::directory_iterator(real_dir), fs::directory_iterator()), 2);
    EXPECT_EQ(std::distance(fs::directory_iterator(fs::path(job.meta()).parent_path()),
                            fs::directory_iterator()), 1);
  }
}

TEST(RepairTest, AnUnreadableHaFileFailsTheWholeRepairBeforeAnyWrite) {
  RepairJob job;
  const std::string cut = job.ha() + "0";  // completedCheckpoint9bddd89110e70
  const std::string bytes = Read(kHaFile).substr(0, 4000);
  std::ofstream(cut, std::ios::binary) << bytes;
  absl::StatusOr<std::unique_ptr<Repair>> r = Repair::Plan(job.Options());
  EXPECT_THAT(r.status(), StatusIs(absl::StatusCode::kOutOfRange, "nothing was written"));
  EXPECT_FALSE(fs::exists(job.meta() + ".bak"));
  EXPECT_EQ(Read(job.meta()), Read(kCheckpoint + "/_metadata"));
}

TEST(RepairTest, ADryRunListsWhatApplyWouldRefuse) {
  RepairJob job;
  std::ofstream(job.ha() + ".bak") << "an earlier backup";
  RepairOptions o = job.Options();
  o.recover = false;  // a dry run
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> r, Repair::Plan(o));
  ASSERT_EQ(r->plan().apply_refused_size(), 1);
  EXPECT_THAT(r->plan().apply_refused(0),
              AllOf(HasSubstr(job.ha() + ".bak already exists"),
                    Not(HasSubstr("nothing was replaced"))));
  EXPECT_THAT(r->PlanText(), HasSubstr("--apply would be refused: backup " + job.ha()));
  r.reset();          // its lock on the directories
  o.recover = true;  // --apply: refused at its start, nothing written
  EXPECT_THAT(Repair::Plan(o).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, "already exists"));
  EXPECT_FALSE(fs::exists(job.meta() + ".bak"));
  EXPECT_EQ(Read(job.meta()), Read(kCheckpoint + "/_metadata"));
}

// A temporary file of a run whose journal is in none of the repair's
// directories (a killed repair of another checkpoint, or one made by hand):
// --apply's recovery refuses it, and the dry run says so (attack run 11, M3:
// the plan was clean, --apply failed). In either directory; a temporary
// whose journal is in the repair's own checkpoint directory is not refused.
TEST(RepairTest, ADryRunForeseesTheRefusalOfAnOrphanTemporary) {
  RepairJob job;
  for (const std::string& orphan :
       {job.meta() + ".flinkstate-tmp-0123456789ab", job.ha() + ".flinkstate-tmp-0123456789ab"}) {
    std::ofstream(orphan) << "junk";
    RepairOptions o = job.Options();
    o.recover = false;
    {
      FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> r, Repair::Plan(o));
      ASSERT_EQ(r->plan().apply_refused_size(), 1) << orphan;
      EXPECT_THAT(r->plan().apply_refused(0),
                  HasSubstr(orphan + " belongs to an interrupted flinkstate run"));
    }
    o.recover = true;
    EXPECT_THAT(Repair::Plan(o).status(),
                StatusIs(absl::StatusCode::kFailedPrecondition, orphan + " belongs to"));
    EXPECT_EQ(Read(job.meta()), Read(kCheckpoint + "/_metadata"));
    fs::remove(orphan);
  }
}

TEST(ForeseeRecoveryRefusalTest, AJournalInAnotherGivenDirectoryIsNotAnOrphan) {
  RepairJob job;
  const std::string dir_a = fs::path(job.meta()).parent_path().string();
  const std::string dir_b = fs::path(job.ha()).parent_path().string();
  std::ofstream(job.ha() + ".flinkstate-tmp-0123456789ab") << "junk";
  EXPECT_THAT(serde::ForeseeRecoveryRefusal({dir_b}),
              StatusIs(absl::StatusCode::kFailedPrecondition, "belongs to"));
  // The journal beside the checkpoint's _metadata, as a repair keeps it.
  std::ofstream(dir_a + "/.flinkstate-txn-0123456789ab.journal") << "not read here";
  EXPECT_THAT(serde::ForeseeRecoveryRefusal({dir_a, dir_b}),
              StatusIs(absl::StatusCode::kDataLoss, "transaction journal"));
  EXPECT_THAT(serde::ForeseeRecoveryRefusal({dir_a, dir_b}),
              Not(StatusIs(absl::StatusCode::kFailedPrecondition, "belongs to")));
}

TEST(RepairTest, AnHaDirectoryOneLevelTooHighNamesTheRightOne) {
  RepairJob job;
  RepairOptions o = job.Options();
  o.ha_dir = job.ha_parent();
  absl::StatusOr<std::unique_ptr<Repair>> r = Repair::Plan(o);
  EXPECT_THAT(r.status(), StatusIs(absl::StatusCode::kInvalidArgument, "/ha/cluster-1"));
  o.ha_dir = "";
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> without, Repair::Plan(o));
  ASSERT_EQ(without->plan().warnings_size(), 1);
  EXPECT_THAT(without->plan().warnings(0), HasSubstr("no --ha-dir"));
}

TEST(RepairTest, AnInputTruncatedUnderTheRepairReplacesNothing) {
  RepairJob job;
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> r, Repair::Plan(job.Options()));
  // Someone (a sync job, a second upload) shortens the HA file after it was
  // read and planned, while it is still mapped.
  ASSERT_EQ(::truncate(job.ha().c_str(), 100), 0);
  absl::Status s = r->Apply();
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("nothing was replaced"));
  r.reset();
  EXPECT_EQ(Read(job.meta()), Read(kCheckpoint + "/_metadata"));
  EXPECT_FALSE(fs::exists(job.meta() + ".bak"));
  EXPECT_FALSE(fs::exists(job.ha() + ".bak"));
  EXPECT_EQ(fs::file_size(job.ha()), 100u);
}

TEST(OpenTest, ALoadedFileTruncatedLaterReportsIt) {
  RepairJob job;
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile f, Open(job.ha()));
  EXPECT_THAT(f.CheckIntact(), IsOk());
  ASSERT_EQ(::truncate(job.ha().c_str(), 10), 0);
  uint64_t sum = 0;
  for (uint8_t b : f.bytes()) sum += b;  // no SIGBUS: lost pages read as zeros
  EXPECT_GT(sum, 0u);
  EXPECT_THAT(f.CheckIntact(), StatusIs(absl::StatusCode::kDataLoss, "truncated while being read"));
}

TEST(RepairTest, ASecondRepairOfTheSameJobIsLockedOut) {
  RepairJob job;
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> first, Repair::Plan(job.Options()));
  EXPECT_THAT(Repair::Plan(job.Options()).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, "holds the lock"));
  ASSERT_THAT(first->Apply(), IsOk());
}

// --- repair --deep --------------------------------------------------------------

// The operator-state names in the stream headers of `f` (every stream read
// beside `dir`).
std::set<std::string> MetaInfoNames(const LoadedFile& f, const std::string& dir) {
  StateStreamSources src;
  src.base_dir = dir;
  report::OperatorStateStreamReport r = BuildOperatorStateStreamReport(f.model, f.bytes(), src);
  std::set<std::string> names;
  for (const auto& op : r.operators()) {
    for (const auto& s : op.subtasks()) {
      EXPECT_TRUE(s.error().empty()) << s.error();
      for (const auto& m : s.meta_infos()) names.insert(m.name());
    }
  }
  return names;
}

// Both files of the incident, deep-repaired: the state is in no handle and no
// stream header, every other element is byte-identical (the deep verify of
// each output against its backup), the originals are the backups.
void ExpectDeepRepaired(const RepairJob& job) {
  StripOptions o;
  o.state_name = kState;
  for (const std::string& f : {job.meta(), job.ha()}) {
    SCOPED_TRACE(f);
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile before, Open(f + ".bak"));
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile after, Open(f));
    EXPECT_THAT(VerifyDeepStripped(before, after.bytes(), o), IsOk());
    EXPECT_EQ(MetaInfoNames(after, "").count(kState), 0u);
    EXPECT_EQ(MetaInfoNames(before, "").count(kState), 1u);
  }
  EXPECT_EQ(Read(job.meta() + ".bak"), Read(kCheckpoint + "/_metadata"));
  EXPECT_EQ(Read(job.ha() + ".bak"), Read(kHaFile));
  EXPECT_EQ(std::distance(fs::directory_iterator(serde::DirName(job.meta())),
                          fs::directory_iterator()),
            2);
  EXPECT_EQ(std::distance(fs::directory_iterator(serde::DirName(job.ha())),
                          fs::directory_iterator()),
            2);
  struct stat st;
  ASSERT_EQ(::stat(job.ha().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

TEST(RepairTest, DeepRepairOfARealIncident) {
  RepairJob job;
  RepairOptions o = job.Options();
  o.deep = true;
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> r, Repair::Plan(o));
  ASSERT_EQ(r->plan().files_size(), 2);
  EXPECT_TRUE(r->plan().deep());
  for (const auto& f : r->plan().files()) {
    uint64_t entries = 0;
    for (const auto& op : f.operators()) entries += op.entries();
    EXPECT_EQ(entries, 512u) << f.path();  // 8 * 4^3
    EXPECT_EQ(f.meta_infos_removed(), 4u) << f.path();  // one stream per subtask, p = 4
    EXPECT_GT(f.element_bytes_removed(), 0u);
    EXPECT_EQ(f.new_state_files_size(), 0);  // inline streams
  }
  // The two files of one checkpoint lose the same stream bytes.
  EXPECT_EQ(r->plan().files(0).element_bytes_removed(), r->plan().files(1).element_bytes_removed());
  EXPECT_THAT(r->PlanText(), HasSubstr("deeply"));
  ASSERT_THAT(r->Apply(), IsOk());
  r.reset();
  ExpectDeepRepaired(job);
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> again, Repair::Plan(o));
  EXPECT_TRUE(again->empty());
}

TEST(RepairTest, ADeepRepairCrashedAtEveryStepIsFinishedOrUndoneByTheRerun) {
  RepairJob job;
  FaultOps counting(0, FaultOps::kError);
  {
    RepairOptions o = job.Options();
    o.deep = true;
    o.ops = &counting;
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> r, Repair::Plan(o));
    ASSERT_THAT(r->Apply(), IsOk());
  }
  const int steps = counting.calls();
  ASSERT_GE(steps, 25);
  for (int n = 1; n <= steps; ++n) {
    job.Reset();
    FaultOps crash(n, FaultOps::kCrash);
    {
      RepairOptions o = job.Options();
      o.deep = true;
      o.ops = &crash;
      FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> r, Repair::Plan(o));
      EXPECT_FALSE(r->Apply().ok()) << "step " << n;
    }
    SCOPED_TRACE(crash.failed_step());
    RepairOptions o = job.Options();
    o.deep = true;
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> rerun, Repair::Plan(o));
    ASSERT_THAT(rerun->Apply(), IsOk());
    rerun.reset();
    ExpectDeepRepaired(job);
  }
}

// A checkpoint whose operator state lives in relative state files (the
// corpus's Flink 1.17 checkpoint: two RelativeFileStateHandles holding
// `source-state`) and its HA file (written by the test fixture from the
// `_metadata`, `filePath` = checkpoint directory + relative path, as Flink
// makes it), laid out as <root>/<jobId>/chk-3 and <root>/ha/cluster-1.
class FileBackedRepairJob {
 public:
  static constexpr char kState[] = "source-state";
  FileBackedRepairJob() {
    std::string tmpl = ::testing::TempDir() + "/flinkstate-deeprepair-XXXXXX";
    root_ = fs::canonical(::mkdtemp(tmpl.data())).string();
    chk_ = root_ + "/0123456789abcdef0123456789abcdef/chk-3";
    ha_dir_ = root_ + "/ha/cluster-1";
    fs::create_directories(chk_);
    fs::create_directories(ha_dir_);
    Reset();
  }
  ~FileBackedRepairJob() { fs::remove_all(root_); }
  void Reset() {
    for (const std::string& d : {chk_, ha_dir_}) {
      for (const auto& e : fs::directory_iterator(d)) fs::remove(e.path());
    }
    for (const std::string& f : kFiles) fs::copy_file(kSource + "/" + f, chk_ + "/" + f);
    if (ha_bytes_.empty()) {
      absl::StatusOr<serde::MappedFile> m = serde::MappedFile::Open(meta());
      ASSERT_TRUE(m.ok());
      absl::StatusOr<StateFile> model = ReadStateFile(m->bytes());
      ASSERT_TRUE(model.ok());
      // The fixture writes no changelog keyed handles; this is about operator state.
      for (OperatorState& op : model->metadata.operators) {
        for (OperatorSubtaskState& s : op.subtasks) {
          for (KeyedStateHandle& k : s.managed_keyed_state) k.tag = 0;
          for (KeyedStateHandle& k : s.raw_keyed_state) k.tag = 0;
        }
      }
      CompletedCheckpointWriteOptions wo;
      wo.external_pointer = "file:" + chk_;
      ASSERT_TRUE(WriteCompletedCheckpointFromMetadata(*model, m->bytes(), wo, ha()).ok());
      ha_bytes_ = Read(ha());
    } else {
      std::ofstream(ha(), std::ios::binary) << ha_bytes_;
    }
  }
  RepairOptions Options() const {
    RepairOptions o;
    o.strip.state_name = kState;
    o.checkpoint_dirs = {chk_};
    o.ha_dir = ha_dir_;
    o.deep = true;
    return o;
  }
  std::string meta() const { return chk_ + "/_metadata"; }
  std::string ha() const { return ha_dir_ + "/completedCheckpoint00000000beef"; }
  const std::string& chk() const { return chk_; }

  // Both files repaired; each file-backed stream has ONE new state file
  // (Flink 1.17's empty proxy: version 5, no states), which both files name;
  // the originals are untouched; nothing else in the directories.
  void ExpectRepaired() const {
    const std::string kEmptyV5("\0\0\0\x05\0\0\0\0", 8);
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(chk_)) names.insert(e.path().filename().string());
    std::set<std::string> want(kFiles.begin(), kFiles.end());
    want.insert("_metadata.bak");
    std::set<std::string> fresh;
    for (const std::string& n : names) {
      if (want.count(n) == 0) fresh.insert(n);
    }
    ASSERT_EQ(fresh.size(), 2u) << ::testing::PrintToString(names);
    for (const std::string& n : fresh) EXPECT_EQ(Read(chk_ + "/" + n), kEmptyV5) << n;
    for (const std::string& f : kFiles) {
      if (f != "_metadata") {
        EXPECT_EQ(Read(chk_ + "/" + f), Read(kSource + "/" + f)) << f;
      }
    }
    EXPECT_EQ(Read(meta() + ".bak"), Read(kSource + "/_metadata"));
    EXPECT_EQ(Read(ha() + ".bak"), ha_bytes_);
    EXPECT_EQ(std::distance(fs::directory_iterator(ha_dir_), fs::directory_iterator()), 2);
    StripOptions o;
    o.state_name = kState;
    for (const std::string& f : {meta(), ha()}) {
      SCOPED_TRACE(f);
      FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile before, Open(f + ".bak"));
      FLINKSTATE_ASSERT_OK_AND_ASSIGN(LoadedFile after, Open(f));
      const DeepStripFiles files = DeepStripFilesFor(after, serde::DirName(f), {}, chk_);
      EXPECT_THAT(VerifyDeepStripped(before, after.bytes(), o, DeepStripStreamsFor(after, files)),
                  IsOk());
      std::set<std::string> paths;
      for (const OperatorState& op : after.model.metadata.operators) {
        for (const OperatorSubtaskState& s : op.subtasks) {
          for (const OperatorStateHandle& h : s.managed_operator_state) {
            paths.insert(h.delegate->path.value);
          }
        }
      }
      EXPECT_EQ(paths, fresh);
    }
  }

 private:
  const std::string kSource = std::string(FLINKSTATE_SHARED_DIR) +
                              "/corpus/CosmicBeing09__flink/flink-tests/src/test/resources/"
                              "new-stateful-udf-migration-itcase-flink1.17-hashmap-checkpoint";
  const std::vector<std::string> kFiles = {"_metadata", "ab0b7f98-28c6-4ddf-b7a8-9f52fd328a3f",
                                           "f553b465-a96b-4eca-b709-518fbe1e2646"};
  std::string root_, chk_, ha_dir_, ha_bytes_;
};

TEST(RepairTest, DeepRepairWritesOneNewStateFilePerStreamForBothFiles) {
  FileBackedRepairJob job;
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> r, Repair::Plan(job.Options()));
  ASSERT_EQ(r->plan().files_size(), 2);
  const auto& md = r->plan().files(0);
  const auto& ha = r->plan().files(1);
  ASSERT_EQ(md.new_state_files_size(), 2);
  ASSERT_EQ(ha.new_state_files_size(), 2);
  for (int i = 0; i < 2; ++i) {
    EXPECT_FALSE(md.new_state_files(i).exists());
    EXPECT_TRUE(ha.new_state_files(i).written_for_metadata());
    EXPECT_EQ(ha.new_state_files(i).path(), md.new_state_files(i).path());
    EXPECT_EQ(md.new_state_files(i).bytes(), 8u);
  }
  EXPECT_THAT(r->PlanText(), HasSubstr("the _metadata's new"));
  ASSERT_THAT(r->Apply(), IsOk());
  r.reset();
  job.ExpectRepaired();
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> again, Repair::Plan(job.Options()));
  EXPECT_TRUE(again->empty());
}

TEST(RepairTest, ADeepRepairWithNewStateFilesCrashedAtEveryStepIsFinishedOrUndone) {
  FileBackedRepairJob job;
  FaultOps counting(0, FaultOps::kError);
  {
    RepairOptions o = job.Options();
    o.ops = &counting;
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> r, Repair::Plan(o));
    ASSERT_THAT(r->Apply(), IsOk());
  }
  const int steps = counting.calls();
  ASSERT_GE(steps, 35);  // two new files more than the inline repair
  for (int n = 1; n <= steps; ++n) {
    job.Reset();
    FaultOps crash(n, FaultOps::kCrash);
    {
      RepairOptions o = job.Options();
      o.ops = &crash;
      FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> r, Repair::Plan(o));
      EXPECT_FALSE(r->Apply().ok()) << "step " << n;
    }
    SCOPED_TRACE(crash.failed_step());
    FLINKSTATE_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Repair> rerun, Repair::Plan(job.Options()));
    ASSERT_THAT(rerun->Apply(), IsOk());
    rerun.reset();
    job.ExpectRepaired();
  }
}


}  // namespace
}  // namespace flinkstate
