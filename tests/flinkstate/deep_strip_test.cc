// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// `strip-state --deep` (deep_strip.h) on every real file of tests/testdata
// with inline operator-state streams, for every state name they hold: the
// plan applies, the output decodes and re-verifies (`VerifyDeepStripped`: no
// trace of the name in handles or stream headers, every other element
// byte-identical), and it is smaller by at least the name's entries. That
// Flink reads the output as we do is the conformance check (harness
// `streams` on a deep-stripped incident checkpoint, see README).

#include "flinkstate/deep_strip.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/open.h"
#include "flinkstate/operator_state_report.h"
#include "flinkstate/operator_state_stream.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/mapped_file.h"
#include "tests/fixtures/completed_checkpoint_writer.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace flinkstate {
namespace {

using ::flinkstate::testing::IsOk;
using ::flinkstate::testing::StatusIs;

std::vector<std::string> MetadataFiles() {
  std::vector<std::string> out;
  const std::string root = FLINKSTATE_SOURCE_DIR "/tests/testdata";
  DIR* d = opendir(root.c_str());
  if (d == nullptr) return out;
  while (dirent* r = readdir(d)) {
    const std::string rel = r->d_name;
    if (rel.rfind("flink-", 0) != 0) continue;
    DIR* c = opendir((root + "/" + rel).c_str());
    if (c == nullptr) continue;
    while (dirent* k = readdir(c)) {
      const std::string p = absl::StrCat(root, "/", rel, "/", k->d_name, "/_metadata");
      if (FILE* f = fopen(p.c_str(), "rb")) {
        fclose(f);
        out.push_back(p);
      }
    }
    closedir(c);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(DeepStripTest, EveryStateOfEveryInlineTestdataFile) {
  size_t stripped = 0;
  for (const std::string& p : MetadataFiles()) {
    if (p.find("file-merging") != std::string::npos) continue;  // segment files absent
    absl::StatusOr<serde::MappedFile> m = serde::MappedFile::Open(p);
    ASSERT_THAT(m.status(), IsOk());
    absl::StatusOr<StateFile> f = ReadStateFile(m->bytes());
    ASSERT_THAT(f.status(), IsOk());
    std::set<std::string> names;
    for (const OperatorState& op : f->metadata.operators) {
      for (const OperatorSubtaskState& s : op.subtasks) {
        for (const OperatorStateHandle& h : s.managed_operator_state) {
          for (const StateNameEntry& e : h.states) names.insert(e.name.value);
        }
      }
    }
    for (const std::string& name : names) {
      SCOPED_TRACE(absl::StrCat(p, " ", name));
      StripOptions o;
      o.state_name = name;
      absl::StatusOr<DeepStripResult> r = PlanDeepStripState(*f, m->bytes(), o);
      ASSERT_THAT(r.status(), IsOk());
      EXPECT_TRUE(r->new_files.empty());  // the testdata's operator state is inline
      ASSERT_THAT(r->plan.Validate(m->bytes().size()), IsOk());
      absl::StatusOr<std::string> out = r->plan.ApplyToString(m->bytes());
      ASSERT_THAT(out.status(), IsOk());
      const serde::ByteView ob(reinterpret_cast<const uint8_t*>(out->data()), out->size());
      absl::StatusOr<StateFile> after = ReadStateFile(ob);
      ASSERT_THAT(after.status(), IsOk());
      EXPECT_THAT(VerifyDeepStripped(*f, m->bytes(), *after, ob, o), IsOk());
      EXPECT_GT(r->bytes_removed, 0u);
      EXPECT_EQ(r->meta_infos_removed, r->removed.size());
      // Every stream still decodes; the name is nowhere.
      report::OperatorStateStreamReport rep = BuildOperatorStateStreamReport(*after, ob, {});
      for (const auto& op : rep.operators()) {
        for (const auto& s : op.subtasks()) {
          EXPECT_TRUE(s.header_stopped().empty()) << s.header_stopped();
          EXPECT_TRUE(s.error().empty()) << s.error();
          for (const auto& mi : s.meta_infos()) EXPECT_NE(mi.name(), name);
          EXPECT_EQ(s.unreferenced_bytes(), 0u);
        }
        for (const auto& t : op.states()) EXPECT_NE(t.name(), name);
      }
      // A second deep strip finds nothing.
      EXPECT_THAT(PlanDeepStripState(*after, ob, o).status(),
                  StatusIs(absl::StatusCode::kNotFound, name));
      ++stripped;
    }
  }
  EXPECT_GT(stripped, 50u);
}

TEST(DeepStripTest, AfterPlainStripTheLeftoverGoesToo) {
  const std::string p = FLINKSTATE_SOURCE_DIR
      "/tests/testdata/flink-1.15.2/incident-gen3-checkpoint/_metadata";
  absl::StatusOr<serde::MappedFile> m = serde::MappedFile::Open(p);
  ASSERT_THAT(m.status(), IsOk());
  absl::StatusOr<StateFile> f = ReadStateFile(m->bytes());
  ASSERT_THAT(f.status(), IsOk());
  StripOptions o;
  o.state_name = "topic-partition-offset-states";
  absl::StatusOr<StripResult> plain = PlanStripState(*f, m->bytes(), o);
  ASSERT_THAT(plain.status(), IsOk());
  absl::StatusOr<std::string> s1 = plain->plan.ApplyToString(m->bytes());
  ASSERT_THAT(s1.status(), IsOk());
  const serde::ByteView b1(reinterpret_cast<const uint8_t*>(s1->data()), s1->size());
  absl::StatusOr<StateFile> f1 = ReadStateFile(b1);
  ASSERT_THAT(f1.status(), IsOk());
  absl::StatusOr<DeepStripResult> deep_after_plain = PlanDeepStripState(*f1, b1, o);
  ASSERT_THAT(deep_after_plain.status(), IsOk());
  absl::StatusOr<std::string> s2 = deep_after_plain->plan.ApplyToString(b1);
  ASSERT_THAT(s2.status(), IsOk());
  absl::StatusOr<DeepStripResult> deep = PlanDeepStripState(*f, m->bytes(), o);
  ASSERT_THAT(deep.status(), IsOk());
  absl::StatusOr<std::string> s3 = deep->plan.ApplyToString(m->bytes());
  ASSERT_THAT(s3.status(), IsOk());
  // Plain then deep = deep: the elements the plain strip left behind are gone.
  EXPECT_EQ(*s2, *s3);
  EXPECT_EQ(deep->removed.size(), 4u);
  for (const StrippedEntry& e : deep->removed) EXPECT_EQ(e.entry_count, 128u);
}

TEST(DeepStripTest, CompletedCheckpointModelAloneIsRefused) {
  // A completedCheckpoint is edited through its decoded Java stream.
  StateFile f;
  f.kind = StateFileKind::kCompletedCheckpoint;
  StripOptions o;
  o.state_name = "x";
  EXPECT_THAT(PlanDeepStripState(f, {}, o).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "decoded Java stream"));
}


// --- File-backed streams ----------------------------------------------------

constexpr char kCorpus[] =
    FLINKSTATE_SHARED_DIR "/corpus/CosmicBeing09__flink/flink-tests/src/test/resources/";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

serde::ByteView View(const std::string& s) {
  return serde::ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// A fresh directory holding copies of `files` of the corpus directory `dir`
// (the corpus is read-only and never written).
std::string CopyToTemp(const std::string& dir, const std::vector<std::string>& files) {
  std::string tmpl = ::testing::TempDir() + "/deepXXXXXX";
  const char* d = mkdtemp(&tmpl[0]);
  EXPECT_NE(d, nullptr);
  for (const std::string& f : files) WriteAll(tmpl + "/" + f, ReadAll(dir + "/" + f));
  return tmpl;
}

std::vector<std::string> FilesOf(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

struct Loaded {
  std::string bytes;
  StateFile model;
};

Loaded Load(const std::string& path) {
  Loaded l;
  l.bytes = ReadAll(path);
  absl::StatusOr<StateFile> f = ReadStateFile(View(l.bytes));
  EXPECT_THAT(f.status(), IsOk());
  if (f.ok()) l.model = std::move(*f);
  return l;
}

// The corpus's Flink 1.17 hashmap checkpoint of the new-stateful-udf
// migration test: two operators, each with one managed handle whose stream
// is a RelativeFileStateHandle holding the one state `source-state` (4
// String elements). Flink wrote both streams with proxy version 5
// (OperatorBackendSerializationProxy.VERSION in 1.17).
const std::string kFlink117 = std::string(kCorpus) +
                              "new-stateful-udf-migration-itcase-flink1.17-hashmap-checkpoint";
const std::vector<std::string> kFlink117Files = {"_metadata",
                                                 "ab0b7f98-28c6-4ddf-b7a8-9f52fd328a3f",
                                                 "f553b465-a96b-4eca-b709-518fbe1e2646"};

TEST(DeepStripFileBackedTest, RelativeStateFilesGetNewFilesAndTheOriginalsStay) {
  const std::string dir = CopyToTemp(kFlink117, kFlink117Files);
  Loaded in = Load(dir + "/_metadata");
  StripOptions o;
  o.state_name = "source-state";
  DeepStripFiles files;
  files.sources.base_dir = dir;
  absl::StatusOr<DeepStripResult> r = PlanDeepStripState(in.model, View(in.bytes), o, files);
  ASSERT_THAT(r.status(), IsOk());
  ASSERT_EQ(r->new_files.size(), 2u);
  EXPECT_EQ(r->removed.size(), 2u);
  EXPECT_EQ(r->meta_infos_removed, 2u);
  // With its one state gone, the stream is what Flink 1.17's
  // OperatorBackendSerializationProxy.write writes for no states: version
  // 5 (i32), 0 operator states (i16), 0 broadcast states (i16).
  const std::string kEmptyV5("\0\0\0\x05\0\0\0\0", 8);
  std::set<std::string> originals;
  for (const NewStateFile& nf : r->new_files) {
    SCOPED_TRACE(nf.where);
    EXPECT_TRUE(nf.relative);
    EXPECT_EQ(nf.bytes, 8u);
    EXPECT_EQ(nf.new_handle_path.find('/'), std::string::npos);  // relative, in the dir
    EXPECT_EQ(nf.new_handle_path.size(), 36u);                   // UUID form, as Flink's
    EXPECT_NE(nf.new_handle_path, nf.handle_path);
    EXPECT_EQ(nf.path, dir + "/" + nf.new_handle_path);
    originals.insert(nf.handle_path);
    absl::StatusOr<std::string> content = nf.plan.ApplyToString(nf.input.bytes());
    ASSERT_THAT(content.status(), IsOk());
    EXPECT_EQ(*content, kEmptyV5);
  }
  EXPECT_EQ(originals, std::set<std::string>(kFlink117Files.begin() + 1, kFlink117Files.end()));
  // 1.17 source-state entries: utf name (2 + 12), mode (1), 4 offsets
  // (4 + 32) each; the new names are as long as the old ones.
  EXPECT_EQ(r->bytes_removed, 2 * 51);
  for (const StrippedEntry& e : r->removed) EXPECT_EQ(e.entry_count, 4u);

  // Written through the transaction; then read back from disk.
  absl::StatusOr<serde::MappedFile> input = serde::MappedFile::Open(dir + "/_metadata");
  ASSERT_THAT(input.status(), IsOk());
  serde::TransactionOptions to;
  to.sync = false;
  const std::string out = dir + "/_metadata.stripped";
  StripOptions verify_o = o;
  std::map<std::string, serde::ByteView> seen;
  ASSERT_THAT(WriteDeepStripped(
                  *r, o.state_name, *input, out, "",
                  [&](const std::map<std::string, serde::ByteView>& streams) {
                    seen = streams;
                    return serde::OutputVerifier([&, streams](serde::ByteView b) {
                      absl::StatusOr<StateFile> after = ReadStateFile(b);
                      if (!after.ok()) return after.status();
                      DeepStripStreams s;
                      s.before = files.sources;
                      s.after = files.sources;
                      s.new_streams = streams;
                      return VerifyDeepStripped(in.model, View(in.bytes), *after, b, verify_o, s);
                    });
                  },
                  to),
              IsOk());
  EXPECT_EQ(seen.size(), 2u);
  std::vector<std::string> want = kFlink117Files;
  want.push_back("_metadata.stripped");
  for (const NewStateFile& nf : r->new_files) want.push_back(nf.new_handle_path);
  std::sort(want.begin(), want.end());
  EXPECT_EQ(FilesOf(dir), want);  // nothing stray: no temporaries, no journal
  for (const std::string& f : kFlink117Files) {
    EXPECT_EQ(ReadAll(dir + "/" + f), ReadAll(kFlink117 + "/" + f)) << f;  // untouched
  }
  for (const NewStateFile& nf : r->new_files) EXPECT_EQ(ReadAll(nf.path), kEmptyV5);
  Loaded after = Load(out);
  EXPECT_THAT(VerifyDeepStripped(in.model, View(in.bytes), after.model, View(after.bytes), o,
                                 {files.sources, files.sources, {}}),
              IsOk());
  // The output's handles: the new relative paths and stateSize 8, no entry.
  size_t handles = 0;
  for (const OperatorState& op : after.model.metadata.operators) {
    for (const OperatorSubtaskState& s : op.subtasks) {
      for (const OperatorStateHandle& h : s.managed_operator_state) {
        ++handles;
        EXPECT_TRUE(h.states.empty());
        ASSERT_NE(h.delegate, nullptr);
        EXPECT_EQ(h.delegate->tag, static_cast<uint8_t>(HandleTag::kRelativeStream));
        EXPECT_EQ(h.delegate->state_size, 8);
        EXPECT_EQ(originals.count(h.delegate->path.value), 0u);
      }
    }
  }
  EXPECT_EQ(handles, 2u);
  // The stripped checkpoint reads as Flink would: both streams decode, empty.
  report::OperatorStateStreamReport rep =
      BuildOperatorStateStreamReport(after.model, View(after.bytes), files.sources);
  EXPECT_FALSE(rep.streams_unreadable());
  // A second deep strip finds nothing.
  EXPECT_THAT(PlanDeepStripState(after.model, View(after.bytes), o, files).status(),
              StatusIs(absl::StatusCode::kNotFound, "source-state"));
}

TEST(DeepStripFileBackedTest, ProxyVersion6StreamKeepsItsCompressionByte) {
  // Flink 1.20's savepoint of the same job: proxy version 6, whose header
  // has the `compression` flag (u1) before the counts.
  const std::string src = std::string(kCorpus) +
                          "new-stateful-udf-migration-itcase-flink1.20-hashmap-savepoint";
  const std::vector<std::string> names = {"_metadata", "619be22a-7051-4703-8bad-2ebeded975e1",
                                          "9e4e6e20-bb60-4c1e-8866-caa97835ef12"};
  const std::string dir = CopyToTemp(src, names);
  Loaded in = Load(dir + "/_metadata");
  StripOptions o;
  o.state_name = "source-state";
  DeepStripFiles files;
  files.sources.base_dir = dir;
  absl::StatusOr<DeepStripResult> r = PlanDeepStripState(in.model, View(in.bytes), o, files);
  ASSERT_THAT(r.status(), IsOk());
  ASSERT_EQ(r->new_files.size(), 2u);
  for (const NewStateFile& nf : r->new_files) {
    absl::StatusOr<std::string> content = nf.plan.ApplyToString(nf.input.bytes());
    ASSERT_THAT(content.status(), IsOk());
    EXPECT_EQ(*content, std::string("\0\0\0\x06\0\0\0\0\0", 9)) << nf.where;
  }
}

TEST(DeepStripFileBackedTest, MissingStateFileFailsNamingHandleAndPath) {
  const std::string dir = CopyToTemp(kFlink117, {"_metadata", kFlink117Files[1]});
  Loaded in = Load(dir + "/_metadata");
  StripOptions o;
  o.state_name = "source-state";
  DeepStripFiles files;
  files.sources.base_dir = dir;
  absl::Status s = PlanDeepStripState(in.model, View(in.bytes), o, files).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kNotFound, kFlink117Files[2]));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kNotFound,
                          "operator 1f2b5df5a66154aca61fcb26193792be subtask 0"));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kNotFound, "nothing was written"));
  EXPECT_EQ(FilesOf(dir).size(), 2u);
}

TEST(DeepStripFileBackedTest, RelativeHandleWithOutputElsewhereIsRefused) {
  const std::string dir = CopyToTemp(kFlink117, kFlink117Files);
  Loaded in = Load(dir + "/_metadata");
  StripOptions o;
  o.state_name = "source-state";
  DeepStripFiles files;
  files.sources.base_dir = dir;
  files.output_dir = ::testing::TempDir();
  const absl::Status s = PlanDeepStripState(in.model, View(in.bytes), o, files).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kFailedPrecondition, "relative"));
  // Located in the handle (attack run 11: the ErrorReport's itemPath was "").
  std::optional<serde::ErrorLocation> where = serde::LocationOf(s);
  ASSERT_TRUE(where.has_value());
  EXPECT_EQ(where->layer, "strip-state --deep");
  EXPECT_THAT(where->item_path, ::testing::MatchesRegex("operator [0-9a-f]{32} subtask 0 "
                                                        "managedOperatorState"));
}

TEST(DeepStripFileBackedTest, TwoHandlesSharingOneStateFileAreRefused) {
  const std::string dir = CopyToTemp(kFlink117, kFlink117Files);
  // Point the second handle at the first one's file (same name length).
  std::string md = ReadAll(dir + "/_metadata");
  const size_t at = md.find(kFlink117Files[1]);
  ASSERT_NE(at, std::string::npos);
  md.replace(at, kFlink117Files[2].size(), kFlink117Files[2]);
  WriteAll(dir + "/_metadata", md);
  Loaded in = Load(dir + "/_metadata");
  StripOptions o;
  o.state_name = "source-state";
  DeepStripFiles files;
  files.sources.base_dir = dir;
  const absl::Status s = PlanDeepStripState(in.model, View(in.bytes), o, files).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kFailedPrecondition, "same state file"));
  std::optional<serde::ErrorLocation> where = serde::LocationOf(s);
  ASSERT_TRUE(where.has_value());
  EXPECT_THAT(where->item_path, ::testing::StartsWith("operator "));
}

// A stream with several states, as a state file: Flink 1.20.5's all-kinds
// checkpoint keeps `records-seen` and `union-counts` in one inline stream per
// subtask; the same bytes moved into relative state files must be rewritten
// exactly as the inline stream is, and the other state's elements keep the
// counts Flink's own reader found (state-streams.json: 1 element each).
TEST(DeepStripFileBackedTest, FileStreamIsRewrittenLikeTheSameInlineStream) {
  const std::string src =
      FLINKSTATE_SOURCE_DIR "/tests/testdata/flink-1.20.5/hashmap-checkpoint/_metadata";
  Loaded inl = Load(src);
  std::string tmpl = ::testing::TempDir() + "/deepmXXXXXX";
  ASSERT_NE(mkdtemp(&tmpl[0]), nullptr);
  const std::string dir = tmpl;
  std::vector<serde::Replacement> reps;
  int n = 0;
  for (const OperatorState& op : inl.model.metadata.operators) {
    if (op.IdHex() != "ba8dd8ef2eae404f0d1d8e7ed11057a1") continue;
    for (const OperatorSubtaskState& s : op.subtasks) {
      for (const OperatorStateHandle& h : s.managed_operator_state) {
        ASSERT_EQ(h.delegate->tag, static_cast<uint8_t>(HandleTag::kByteStream));
        const std::string name = absl::StrCat("stream-", n++);
        WriteAll(dir + "/" + name, inl.bytes.substr(h.delegate->data.offset, h.delegate->data.size));
        // RelativeFileStateHandle: tag 6, utf relativePath, i64 stateSize.
        std::string handle(1, '\x06');
        handle += std::string{'\0', static_cast<char>(name.size())} + name;
        std::string size(8, '\0');
        serde::EncodeBigEndian64(h.delegate->data.size, reinterpret_cast<uint8_t*>(&size[0]));
        reps.push_back({h.delegate->range, handle + size});
      }
    }
  }
  ASSERT_EQ(n, 2);
  absl::StatusOr<serde::EditPlan> conv = serde::EditPlan::FromReplacements(inl.bytes.size(), reps);
  ASSERT_THAT(conv.status(), IsOk());
  absl::StatusOr<std::string> md = conv->ApplyToString(View(inl.bytes));
  ASSERT_THAT(md.status(), IsOk());
  WriteAll(dir + "/_metadata", *md);
  Loaded fb = Load(dir + "/_metadata");
  for (const char* state : {"records-seen", "union-counts"}) {
    SCOPED_TRACE(state);
    StripOptions o;
    o.state_name = state;
    o.operator_ids = {"ba8dd8ef2eae404f0d1d8e7ed11057a1"};
    absl::StatusOr<DeepStripResult> ri = PlanDeepStripState(inl.model, View(inl.bytes), o);
    ASSERT_THAT(ri.status(), IsOk());
    absl::StatusOr<std::string> oi = ri->plan.ApplyToString(View(inl.bytes));
    ASSERT_THAT(oi.status(), IsOk());
    Loaded ai;
    ai.bytes = *oi;
    ai.model = *ReadStateFile(View(ai.bytes));
    DeepStripFiles files;
    files.sources.base_dir = dir;
    absl::StatusOr<DeepStripResult> rf = PlanDeepStripState(fb.model, View(fb.bytes), o, files);
    ASSERT_THAT(rf.status(), IsOk());
    ASSERT_EQ(rf->new_files.size(), 2u);
    EXPECT_EQ(rf->element_bytes_removed, ri->element_bytes_removed);
    EXPECT_EQ(rf->meta_infos_removed, 2u);
    // The inline result's streams, in handle order.
    std::vector<std::string> inline_streams;
    for (const OperatorState& op : ai.model.metadata.operators) {
      if (op.IdHex() != "ba8dd8ef2eae404f0d1d8e7ed11057a1") continue;
      for (const OperatorSubtaskState& s : op.subtasks) {
        for (const OperatorStateHandle& h : s.managed_operator_state) {
          inline_streams.push_back(ai.bytes.substr(h.delegate->data.offset, h.delegate->data.size));
        }
      }
    }
    ASSERT_EQ(inline_streams.size(), 2u);
    std::map<std::string, std::string> contents;
    for (size_t i = 0; i < rf->new_files.size(); ++i) {
      const NewStateFile& nf = rf->new_files[i];
      absl::StatusOr<std::string> c = nf.plan.ApplyToString(nf.input.bytes());
      ASSERT_THAT(c.status(), IsOk());
      EXPECT_EQ(*c, inline_streams[i]);
      EXPECT_EQ(nf.bytes, c->size());
      contents[nf.new_handle_path] = *c;
    }
    absl::StatusOr<std::string> of = rf->plan.ApplyToString(View(fb.bytes));
    ASSERT_THAT(of.status(), IsOk());
    Loaded af;
    af.bytes = *of;
    af.model = *ReadStateFile(View(af.bytes));
    DeepStripStreams streams{files.sources, files.sources, {}};
    for (const auto& [p, c] : contents) streams.new_streams[p] = View(c);
    EXPECT_THAT(VerifyDeepStripped(fb.model, View(fb.bytes), af.model, View(af.bytes), o, streams),
                IsOk());
    // A verify that reads the ORIGINAL files as the new ones must fail.
    DeepStripStreams wrong{files.sources, files.sources, {}};
    const std::string orig0 = ReadAll(dir + "/stream-0");
    for (const auto& [p, c] : contents) wrong.new_streams[p] = View(orig0);
    EXPECT_THAT(VerifyDeepStripped(fb.model, View(fb.bytes), af.model, View(af.bytes), o, wrong),
                StatusIs(absl::StatusCode::kInternal, "verify"));
    // The other state: 1 element per subtask, as Flink 1.20.5 read it.
    const std::string other = std::string(state) == "records-seen" ? "union-counts" : "records-seen";
    for (const auto& [p, c] : contents) {
      absl::StatusOr<OperatorStateStreamHeader> h = ReadOperatorStateStreamHeader(View(c));
      ASSERT_THAT(h.status(), IsOk());
      ASSERT_EQ(h->operator_states.size(), 1u);
      EXPECT_EQ(h->operator_states[0].name, other);
    }
  }
}


// The 1.17 checkpoint in `dir` with its relative handles turned into
// FileStateHandles (tag 2: i64 stateSize, utf filePath) naming `prefix` +
// name, as Flink writes them for state files outside the checkpoint directory.
Loaded WithAbsoluteHandles(const std::string& dir, const std::string& prefix) {
  Loaded rel = Load(dir + "/_metadata");
  std::vector<serde::Replacement> reps;
  for (const OperatorState& op : rel.model.metadata.operators) {
    for (const OperatorSubtaskState& s : op.subtasks) {
      for (const OperatorStateHandle& h : s.managed_operator_state) {
        const std::string uri = prefix + h.delegate->path.value;
        std::string handle(9, '\0');
        handle[0] = '\x02';
        serde::EncodeBigEndian64(h.delegate->state_size, reinterpret_cast<uint8_t*>(&handle[1]));
        handle += std::string{static_cast<char>(uri.size() >> 8), static_cast<char>(uri.size())};
        handle += uri;
        reps.push_back({h.delegate->range, handle});
      }
    }
  }
  Loaded in;
  absl::StatusOr<serde::EditPlan> conv = serde::EditPlan::FromReplacements(rel.bytes.size(), reps);
  EXPECT_THAT(conv.status(), IsOk());
  if (!conv.ok()) return in;
  absl::StatusOr<std::string> md = conv->ApplyToString(View(rel.bytes));
  EXPECT_THAT(md.status(), IsOk());
  if (!md.ok()) return in;
  in.bytes = *md;
  absl::StatusOr<StateFile> f = ReadStateFile(View(in.bytes));
  EXPECT_THAT(f.status(), IsOk());
  if (f.ok()) in.model = std::move(*f);
  return in;
}

TEST(DeepStripFileBackedTest, RemoteHandleIsReadAndWrittenThroughTheStateRoot) {
  const std::string dir = CopyToTemp(kFlink117, kFlink117Files);
  Loaded in = WithAbsoluteHandles(dir, "s3://bucket/job/chk-3/");
  StripOptions o;
  o.state_name = "source-state";
  DeepStripFiles files;
  // Without a mapping the remote files cannot be read: refused.
  EXPECT_THAT(PlanDeepStripState(in.model, View(in.bytes), o, files).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, "--state-root"));
  files.sources.state_roots.emplace_back("s3://bucket/job/chk-3", dir);
  absl::StatusOr<DeepStripResult> r = PlanDeepStripState(in.model, View(in.bytes), o, files);
  ASSERT_THAT(r.status(), IsOk());
  ASSERT_EQ(r->new_files.size(), 2u);
  for (const NewStateFile& nf : r->new_files) {
    EXPECT_EQ(nf.new_handle_path.rfind("s3://bucket/job/chk-3/", 0), 0u) << nf.new_handle_path;
    EXPECT_EQ(nf.path, dir + "/" + nf.new_handle_path.substr(22));
  }
}

TEST(DeepStripFileBackedTest, NewLocalFilesAndAnObjectStoreOutputAreNotOneTransaction) {
  // The state files mapped to a local copy (--state-root): their new files
  // are local. An output in an object store would need a transaction across
  // both: refused before anything is written (no request made either).
  const std::string dir = CopyToTemp(kFlink117, kFlink117Files);
  Loaded in = WithAbsoluteHandles(dir, "s3://bucket/job/chk-3/");
  WriteAll(dir + "/absolute", in.bytes);
  absl::StatusOr<serde::MappedFile> input = serde::MappedFile::Open(dir + "/absolute");
  ASSERT_THAT(input.status(), IsOk());
  StripOptions o;
  o.state_name = "source-state";
  DeepStripFiles files;
  files.sources.state_roots.emplace_back("s3://bucket/job/chk-3", dir);
  absl::StatusOr<DeepStripResult> r = PlanDeepStripState(in.model, View(in.bytes), o, files);
  ASSERT_THAT(r.status(), IsOk());
  auto verify = [](const std::map<std::string, serde::ByteView>&) {
    return serde::OutputVerifier([](serde::ByteView) { return absl::OkStatus(); });
  };
  EXPECT_THAT(WriteDeepStripped(*r, o.state_name, *input, "s3://bucket/job/chk-3/_metadata",
                                "s3://bucket/job/chk-3/_metadata.bak", verify, {}),
              StatusIs(absl::StatusCode::kInvalidArgument, "one transaction cannot span both"));
  std::vector<std::string> want = kFlink117Files;
  want.push_back("absolute");
  std::sort(want.begin(), want.end());
  EXPECT_EQ(FilesOf(dir), want);
}

TEST(DeepStripFileBackedTest, AbsoluteFileHandleKeepsItsSchemeAndDirectory) {
  const std::string dir = CopyToTemp(kFlink117, kFlink117Files);
  Loaded in = WithAbsoluteHandles(dir, "file:" + dir + "/");
  StripOptions o;
  o.state_name = "source-state";
  DeepStripFiles files;
  files.sources.base_dir = ::testing::TempDir();  // not where the files are
  absl::StatusOr<DeepStripResult> r = PlanDeepStripState(in.model, View(in.bytes), o, files);
  ASSERT_THAT(r.status(), IsOk());
  ASSERT_EQ(r->new_files.size(), 2u);
  for (const NewStateFile& nf : r->new_files) {
    EXPECT_FALSE(nf.relative);
    EXPECT_EQ(nf.new_handle_path.rfind("file:" + dir + "/", 0), 0u) << nf.new_handle_path;
    EXPECT_EQ(nf.path, nf.new_handle_path.substr(5));
    EXPECT_EQ(nf.bytes, 8u);
  }
  absl::StatusOr<std::string> out = r->plan.ApplyToString(View(in.bytes));
  ASSERT_THAT(out.status(), IsOk());
  absl::StatusOr<StateFile> after = ReadStateFile(View(*out));
  ASSERT_THAT(after.status(), IsOk());
  for (const OperatorState& op : after->metadata.operators) {
    for (const OperatorSubtaskState& s : op.subtasks) {
      for (const OperatorStateHandle& h : s.managed_operator_state) {
        EXPECT_EQ(h.delegate->tag, static_cast<uint8_t>(HandleTag::kFileStream));
        EXPECT_EQ(h.delegate->state_size, 8);
      }
    }
  }
}


TEST(DeepStripFileBackedTest, FileMergingSegmentIsRefused) {
  // Flink 1.20.5 with file merging: operator state lives in segments of
  // physical files shared by several handles (SegmentFileStateHandle).
  Loaded in = Load(FLINKSTATE_SOURCE_DIR
                   "/tests/testdata/flink-1.20.5/file-merging-checkpoint/_metadata");
  StripOptions o;
  o.state_name = "records-seen";
  EXPECT_THAT(PlanDeepStripState(in.model, View(in.bytes), o).status(),
              StatusIs(absl::StatusCode::kUnimplemented, "segment"));
}


TEST(DeepStripTest, VerifyLeavesOperatorsNotSelectedAlone) {
  // records-seen is in two operators of Flink 1.20.5's all-kinds checkpoint
  // (state-streams.json: 615b72df... and ba8dd8ef...); stripping it from one
  // leaves the other's entries, which the verify must accept.
  Loaded in = Load(FLINKSTATE_SOURCE_DIR "/tests/testdata/flink-1.20.5/hashmap-checkpoint/_metadata");
  StripOptions o;
  o.state_name = "records-seen";
  o.operator_ids = {"ba8dd8ef2eae404f0d1d8e7ed11057a1"};
  absl::StatusOr<DeepStripResult> r = PlanDeepStripState(in.model, View(in.bytes), o);
  ASSERT_THAT(r.status(), IsOk());
  for (const StrippedEntry& e : r->removed) EXPECT_EQ(e.operator_id, o.operator_ids[0]);
  absl::StatusOr<std::string> out = r->plan.ApplyToString(View(in.bytes));
  ASSERT_THAT(out.status(), IsOk());
  absl::StatusOr<StateFile> after = ReadStateFile(View(*out));
  ASSERT_THAT(after.status(), IsOk());
  EXPECT_THAT(VerifyDeepStripped(in.model, View(in.bytes), *after, View(*out), o), IsOk());
  // Checked as if every operator had been selected, the other one still holds it.
  StripOptions all = o;
  all.operator_ids.clear();
  EXPECT_THAT(VerifyDeepStripped(in.model, View(in.bytes), *after, View(*out), all),
              StatusIs(absl::StatusCode::kInternal, "entries differ"));
}

}  // namespace
}  // namespace flinkstate

// --- HA completedCheckpoint files -----------------------------------------------

namespace flinkstate {
namespace {

// Every completedCheckpoint file real Flink releases wrote into tests/testdata.
std::vector<std::string> CompletedCheckpointFiles() {
  std::vector<std::string> out;
  const std::string root = FLINKSTATE_SOURCE_DIR "/tests/testdata";
  for (const std::string& rel : FilesOf(root)) {
    if (rel.rfind("flink-", 0) != 0) continue;
    for (const std::string& c : FilesOf(root + "/" + rel)) {
      for (const std::string& f : FilesOf(root + "/" + rel + "/" + c)) {
        if (f.rfind("completedCheckpoint", 0) == 0) out.push_back(root + "/" + rel + "/" + c + "/" + f);
      }
    }
  }
  return out;
}

std::string DirOf(const std::string& p) { return p.substr(0, p.rfind('/')); }

// What the release's own classes read from one file's operator-state streams
// (state-streams.json, `harness.sh streams`: OperatorBackendSerializationProxy
// and each state's restored serializer at every offset), reduced to what a
// deep strip must keep: per (operator, subtask, slot) the proxy version, the
// meta infos in order (name, mode, serializer classes) and per state name the
// element count; per operator and state name the elements and distinct values.
struct FlinkStreams {
  struct Stream {
    int proxy_version = 0;
    std::vector<std::string> meta_infos;
    std::map<std::string, int64_t> elements;
  };
  std::map<std::tuple<std::string, int, std::string>, Stream> streams;
  std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> totals;
};

std::string MetaKey(const std::string& name, const std::string& mode,
                    const std::map<std::string, std::string>& serializers) {
  std::string k = name + " " + mode;
  for (const auto& [key, cls] : serializers) absl::StrAppend(&k, " ", key, "=", cls);
  return k;
}

int64_t Num(const google::protobuf::Value& v) {
  return v.has_string_value() ? std::stoll(v.string_value())
                              : static_cast<int64_t>(v.number_value());
}

const google::protobuf::Value* Field(const google::protobuf::Struct& s, const std::string& k) {
  auto it = s.fields().find(k);
  return it == s.fields().end() ? nullptr : &it->second;
}

// Flink's reading (state-streams.json) without `strip`.
FlinkStreams FromFlink(const std::string& json_path, const std::string& strip) {
  FlinkStreams out;
  google::protobuf::Struct doc;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(ReadAll(json_path), &doc).ok())
      << json_path;
  for (const google::protobuf::Value& op : Field(doc, "operators")->list_value().values()) {
    const auto& o = op.struct_value();
    const std::string id = Field(o, "operatorId")->string_value();
    for (const google::protobuf::Value& sv : Field(o, "subtasks")->list_value().values()) {
      const auto& s = sv.struct_value();
      FlinkStreams::Stream& st = out.streams[{id, static_cast<int>(Num(*Field(s, "index"))),
                                              Field(s, "slot")->string_value()}];
      st.proxy_version = static_cast<int>(Num(*Field(s, "proxyVersion")));
      for (const google::protobuf::Value& mv : Field(s, "metaInfos")->list_value().values()) {
        const auto& m = mv.struct_value();
        if (Field(m, "name")->string_value() == strip) continue;
        std::map<std::string, std::string> ser;
        for (const auto& [k, v] : Field(m, "serializers")->struct_value().fields()) {
          ser[k] = v.string_value();
        }
        st.meta_infos.push_back(MetaKey(Field(m, "name")->string_value(),
                                        Field(m, "distributionMode")->string_value(), ser));
      }
      for (const google::protobuf::Value& xv : Field(s, "states")->list_value().values()) {
        const auto& x = xv.struct_value();
        if (Field(x, "name")->string_value() == strip) continue;
        st.elements[Field(x, "name")->string_value()] = Num(*Field(x, "elements"));
      }
    }
    for (const google::protobuf::Value& tv : Field(o, "states")->list_value().values()) {
      const auto& t = tv.struct_value();
      if (Field(t, "name")->string_value() == strip) continue;
      const google::protobuf::Value* d = Field(t, "distinct");
      out.totals[{id, Field(t, "name")->string_value()}] = {Num(*Field(t, "elements")),
                                                            d ? Num(*d) : -1};
    }
  }
  return out;
}

// flinkstate's reading of `file`, in the same form.
FlinkStreams FromUs(const LoadedFile& file) {
  FlinkStreams out;
  report::OperatorStateStreamReport r =
      BuildOperatorStateStreamReport(file.model, file.bytes(), {});
  for (const auto& op : r.operators()) {
    bool any = false;
    for (const auto& s : op.subtasks()) {
      any = true;
      FlinkStreams::Stream& st = out.streams[{op.operator_id(), s.subtask_index(), s.slot()}];
      st.proxy_version = static_cast<int>(s.proxy_version());
      for (const auto& m : s.meta_infos()) {
        std::map<std::string, std::string> ser;
        for (const auto& x : m.serializers()) ser[x.key()] = x.snapshot_class();
        st.meta_infos.push_back(MetaKey(m.name(), m.distribution_mode(), ser));
      }
      for (const auto& x : s.states()) st.elements[x.name()] = static_cast<int64_t>(x.elements());
    }
    if (!any) continue;
    for (const auto& t : op.states()) {
      out.totals[{op.operator_id(), t.name()}] = {static_cast<int64_t>(t.elements()),
                                                  static_cast<int64_t>(t.distinct_elements())};
    }
  }
  return out;
}

void ExpectSameReading(const FlinkStreams& flink, const FlinkStreams& us) {
  EXPECT_EQ(flink.streams.size(), us.streams.size());
  for (const auto& [key, want] : flink.streams) {
    SCOPED_TRACE(absl::StrCat(std::get<0>(key), " subtask ", std::get<1>(key), " ",
                              std::get<2>(key)));
    auto it = us.streams.find(key);
    ASSERT_NE(it, us.streams.end());
    EXPECT_EQ(it->second.proxy_version, want.proxy_version);
    EXPECT_EQ(it->second.meta_infos, want.meta_infos);
    EXPECT_EQ(it->second.elements, want.elements);
  }
  for (const auto& [key, want] : flink.totals) {
    SCOPED_TRACE(key.first + " " + key.second);
    auto it = us.totals.find(key);
    ASSERT_NE(it, us.totals.end());
    EXPECT_EQ(it->second.first, want.first);
    if (want.second >= 0) {
      EXPECT_EQ(it->second.second, want.second);
    }
  }
}

std::set<std::string> OperatorStateNames(const StateFile& f) {
  std::set<std::string> names;
  for (const OperatorState& op : f.metadata.operators) {
    for (const OperatorSubtaskState& s : op.subtasks) {
      for (const auto* list : {&s.managed_operator_state, &s.raw_operator_state}) {
        for (const OperatorStateHandle& h : *list) {
          for (const StateNameEntry& e : h.states) names.insert(e.name.value);
        }
      }
    }
  }
  return names;
}

// Every completedCheckpoint real Flink (1.13.6 ... 2.3.0) wrote into the test
// data, every operator state name in it: the deep strip plans, its output
// decodes and passes the verify (round trip, no trace of the name, every
// other element byte-identical, subtask sizes), and where the release's own
// reading of the input is committed (state-streams.json) the output reads as
// that reading less the stripped state.
TEST(DeepStripCompletedCheckpointTest, EveryStateOfEveryTestdataFile) {
  size_t stripped = 0, refereed = 0, files = 0;
  for (const std::string& p : CompletedCheckpointFiles()) {
    if (p.find("file-merging") != std::string::npos) continue;  // segment files, refused below
    ++files;
    absl::StatusOr<LoadedFile> in = Open(p);
    ASSERT_THAT(in.status(), IsOk()) << p;
    ASSERT_EQ(in->kind, FileKind::kCompletedCheckpoint);
    const std::string flink_json = DirOf(p) + "/state-streams.json";
    const bool have_referee = ::access(flink_json.c_str(), F_OK) == 0;
    for (const std::string& name : OperatorStateNames(in->model)) {
      SCOPED_TRACE(absl::StrCat(p, " ", name));
      StripOptions o;
      o.state_name = name;
      absl::StatusOr<DeepStripResult> r = PlanDeepStripState(*in, o);
      ASSERT_THAT(r.status(), IsOk());
      EXPECT_TRUE(r->new_files.empty());  // the testdata's operator state is inline
      EXPECT_EQ(r->meta_infos_removed, r->removed.size());
      EXPECT_GT(r->bytes_removed, 0);
      EXPECT_EQ(r->stats.removed_items, r->removed.size());
      ASSERT_THAT(r->plan.Validate(in->bytes().size()), IsOk());
      absl::StatusOr<std::string> out = r->plan.ApplyToString(in->bytes());
      ASSERT_THAT(out.status(), IsOk());
      EXPECT_THAT(VerifyDeepStripped(*in, View(*out), o), IsOk());
      absl::StatusOr<LoadedFile> after = OpenBytes(*out, "out");
      ASSERT_THAT(after.status(), IsOk());
      EXPECT_EQ(after->kind, FileKind::kCompletedCheckpoint);
      EXPECT_EQ(OperatorStateNames(after->model).count(name), 0u);
      report::OperatorStateStreamReport rep =
          BuildOperatorStateStreamReport(after->model, after->bytes(), {});
      EXPECT_EQ(rep.streams_unreadable(), 0u);
      for (const auto& op : rep.operators()) {
        for (const auto& s : op.subtasks()) {
          EXPECT_TRUE(s.header_stopped().empty()) << s.header_stopped();
          for (const auto& mi : s.meta_infos()) EXPECT_NE(mi.name(), name);
          EXPECT_EQ(s.unreferenced_bytes(), 0u);
        }
      }
      if (have_referee) {
        ExpectSameReading(FromFlink(flink_json, name), FromUs(*after));
        ++refereed;
      }
      // A second deep strip finds nothing.
      EXPECT_THAT(PlanDeepStripState(*after, o).status(),
                  StatusIs(absl::StatusCode::kNotFound, name));
      ++stripped;
    }
  }
  EXPECT_GE(files, 30u);
  EXPECT_GT(stripped, 80u);
  EXPECT_GT(refereed, 20u);
}

// A subtask class of a drifted name (the model matches it by its fields and
// warns) is the subtask the deep strip lowers the sizes of: the plan is made,
// applies and verifies, rather than failing as an internal error (the
// ha_files fuzzer's find in CI).
TEST(DeepStripCompletedCheckpointTest, SubtaskClassOfDriftedNameIsStillTheSubtask) {
  const std::string kName = "org.apache.flink.runtime.checkpoint.OperatorSubtaskState";
  size_t planned = 0;
  for (const std::string& p : CompletedCheckpointFiles()) {
    if (p.find("file-merging") != std::string::npos) continue;
    absl::StatusOr<LoadedFile> orig = Open(p);
    ASSERT_THAT(orig.status(), IsOk()) << p;
    const std::set<std::string> names = OperatorStateNames(orig->model);
    if (names.empty()) continue;
    std::string bytes(serde::AsStringView(orig->bytes()));
    const size_t at = bytes.find(kName);
    ASSERT_NE(at, std::string::npos) << p;
    bytes[at + kName.size() - 1] = 'X';  // same length: the stream stays well formed
    absl::StatusOr<LoadedFile> in = OpenBytes(bytes, "drifted");
    ASSERT_THAT(in.status(), IsOk()) << p;
    StripOptions o;
    o.state_name = *names.begin();
    SCOPED_TRACE(absl::StrCat(p, " ", o.state_name));
    absl::StatusOr<DeepStripResult> r = PlanDeepStripState(*in, o);
    ASSERT_THAT(r.status(), IsOk());
    absl::StatusOr<std::string> out = r->plan.ApplyToString(in->bytes());
    ASSERT_THAT(out.status(), IsOk());
    EXPECT_NE(out->find(kName.substr(0, kName.size() - 1) + "X"), std::string::npos);
    EXPECT_THAT(VerifyDeepStripped(*in, View(*out), o), IsOk());
    ++planned;
  }
  EXPECT_GT(planned, 10u);
}

// The referee's reading of the unchanged inputs agrees with ours (so the
// comparison above can fail for the right reason).
TEST(DeepStripCompletedCheckpointTest, FlinkReadingOfTheInputsAgrees) {
  size_t n = 0;
  for (const std::string& p : CompletedCheckpointFiles()) {
    const std::string flink_json = DirOf(p) + "/state-streams.json";
    if (::access(flink_json.c_str(), F_OK) != 0 || p.find("file-merging") != std::string::npos) {
      continue;
    }
    SCOPED_TRACE(p);
    absl::StatusOr<LoadedFile> in = Open(p);
    ASSERT_THAT(in.status(), IsOk());
    ExpectSameReading(FromFlink(flink_json, ""), FromUs(*in));
    ++n;
  }
  EXPECT_GE(n, 9u);
}

// The incident's checkpoint 9 as `_metadata` and as the HA file of the same
// run: the deep strip writes byte-identical operator-state streams into both
// (one stream rewrite for both kinds), and the union state's 512 offsets
// leave both (the harness's count 8 * 4^3).
TEST(DeepStripCompletedCheckpointTest, StreamsEqualThoseOfTheMetadataOfTheSameCheckpoint) {
  size_t releases = 0;
  for (const std::string& p : CompletedCheckpointFiles()) {
    if (p.find("/incident-gen3-completedCheckpoint/") == std::string::npos) continue;
    const std::string meta = DirOf(DirOf(p)) + "/incident-gen3-checkpoint/_metadata";
    if (::access(meta.c_str(), F_OK) != 0) continue;
    SCOPED_TRACE(p);
    absl::StatusOr<LoadedFile> ha = Open(p);
    absl::StatusOr<LoadedFile> md = Open(meta);
    ASSERT_THAT(ha.status(), IsOk());
    ASSERT_THAT(md.status(), IsOk());
    ASSERT_EQ(ha->model.metadata.checkpoint_id, md->model.metadata.checkpoint_id);
    for (const char* state : {"topic-partition-offset-states", "records-seen"}) {
      SCOPED_TRACE(state);
      StripOptions o;
      o.state_name = state;
      absl::StatusOr<DeepStripResult> rh = PlanDeepStripState(*ha, o);
      absl::StatusOr<DeepStripResult> rm = PlanDeepStripState(*md, o);
      ASSERT_THAT(rh.status(), IsOk());
      ASSERT_THAT(rm.status(), IsOk());
      EXPECT_EQ(rh->element_bytes_removed, rm->element_bytes_removed);
      uint64_t entries = 0;
      for (const StrippedEntry& e : rh->removed) entries += e.entry_count;
      if (std::string(state) == "topic-partition-offset-states") {
        EXPECT_EQ(entries, 512u);
      }
      absl::StatusOr<std::string> oh = rh->plan.ApplyToString(ha->bytes());
      absl::StatusOr<std::string> om = rm->plan.ApplyToString(md->bytes());
      ASSERT_THAT(oh.status(), IsOk());
      ASSERT_THAT(om.status(), IsOk());
      absl::StatusOr<LoadedFile> ah = OpenBytes(*oh, "ha");
      absl::StatusOr<LoadedFile> am = OpenBytes(*om, "md");
      ASSERT_THAT(ah.status(), IsOk());
      ASSERT_THAT(am.status(), IsOk());
      auto streams = [](const LoadedFile& f) {
        std::map<std::pair<std::string, int>, std::string> out;
        for (const OperatorState& op : f.model.metadata.operators) {
          for (const OperatorSubtaskState& s : op.subtasks) {
            for (const OperatorStateHandle& h : s.managed_operator_state) {
              if (h.delegate == nullptr || h.delegate->tag != static_cast<uint8_t>(HandleTag::kByteStream)) continue;
              out[{op.IdHex(), s.subtask_index}] =
                  std::string(serde::AsStringView(serde::Slice(f.bytes(), h.delegate->data)));
            }
          }
        }
        return out;
      };
      const auto sh = streams(*ah);
      EXPECT_FALSE(sh.empty());
      EXPECT_EQ(sh, streams(*am));
    }
    ++releases;
  }
  EXPECT_GE(releases, 8u);
}

// The planner finds the stream's items from the model's ranges, so it plans
// the same edits from the one-pass model (ScanCompletedCheckpoint, no item
// tree) as from the model read over the decoded stream.
TEST(DeepStripCompletedCheckpointTest, TheOnePassModelGivesTheSamePlan) {
  size_t compared = 0;
  for (const std::string& p : CompletedCheckpointFiles()) {
    if (p.find("file-merging") != std::string::npos) continue;
    SCOPED_TRACE(p);
    absl::StatusOr<LoadedFile> in = Open(p);
    ASSERT_THAT(in.status(), IsOk());
    absl::StatusOr<StateFile> scanned = ScanCompletedCheckpoint(in->bytes());
    ASSERT_THAT(scanned.status(), IsOk());
    absl::StatusOr<javaobj::Stream> stream = javaobj::DecodeStream(in->bytes());
    ASSERT_THAT(stream.status(), IsOk());
    for (const std::string& name : OperatorStateNames(in->model)) {
      StripOptions o;
      o.state_name = name;
      absl::StatusOr<DeepStripResult> a = PlanDeepStripState(*in, o);
      absl::StatusOr<DeepStripResult> b = PlanDeepStripCompletedCheckpoint(*stream, *scanned, o);
      ASSERT_THAT(a.status(), IsOk()) << name;
      ASSERT_THAT(b.status(), IsOk()) << name;
      EXPECT_EQ(*a->plan.ApplyToString(in->bytes()), *b->plan.ApplyToString(in->bytes())) << name;
      ++compared;
    }
  }
  EXPECT_GT(compared, 80u);
}

TEST(DeepStripCompletedCheckpointTest, OnlySelectedOperatorsAndTheirSubtaskSizes) {
  // records-seen is in two operators of Flink 1.20.5's all-kinds HA file
  // (state-streams.json: 615b72df... and ba8dd8ef...).
  const std::string p = FLINKSTATE_SOURCE_DIR
      "/tests/testdata/flink-1.20.5/hashmap-completedCheckpoint/completedCheckpointdcd8eb989daf";
  absl::StatusOr<LoadedFile> in = Open(p);
  ASSERT_THAT(in.status(), IsOk());
  StripOptions o;
  o.state_name = "records-seen";
  o.operator_ids = {"ba8dd8ef2eae404f0d1d8e7ed11057a1"};
  absl::StatusOr<DeepStripResult> r = PlanDeepStripState(*in, o);
  ASSERT_THAT(r.status(), IsOk());
  ASSERT_FALSE(r->removed.empty());
  for (const StrippedEntry& e : r->removed) EXPECT_EQ(e.operator_id, o.operator_ids[0]);
  absl::StatusOr<std::string> out = r->plan.ApplyToString(in->bytes());
  ASSERT_THAT(out.status(), IsOk());
  EXPECT_THAT(VerifyDeepStripped(*in, View(*out), o), IsOk());
  StripOptions all = o;
  all.operator_ids.clear();
  EXPECT_THAT(VerifyDeepStripped(*in, View(*out), all),
              StatusIs(absl::StatusCode::kInternal, "entries differ"));
  // The plan changed each stripped subtask's stateSize (and, 1.14+,
  // checkpointedSize) by the bytes its stream lost. An output whose first
  // changed stateSize is put back to the input's value fails the verify.
  absl::StatusOr<javaobj::Stream> sb = javaobj::DecodeStream(in->bytes());
  absl::StatusOr<javaobj::Stream> sa = javaobj::DecodeStream(View(*out));
  ASSERT_THAT(sb.status(), IsOk());
  ASSERT_THAT(sa.status(), IsOk());
  auto subtasks = [](const javaobj::Stream& s) {
    std::vector<javaobj::ItemId> ids;
    for (javaobj::ItemId i = 0; i < s.num_items(); ++i) {
      if (s.IsInstanceOf(i, "org.apache.flink.runtime.checkpoint.OperatorSubtaskState")) {
        ids.push_back(i);
      }
    }
    return ids;
  };
  const std::vector<javaobj::ItemId> xb = subtasks(*sb), xa = subtasks(*sa);
  ASSERT_EQ(xb.size(), xa.size());
  size_t changed = 0;
  std::string stale = *out;
  for (size_t i = 0; i < xb.size(); ++i) {
    const int64_t b = *sb->PrimFieldInt(xb[i], "stateSize");
    const int64_t a = *sa->PrimFieldInt(xa[i], "stateSize");
    if (a == b) continue;
    EXPECT_LT(a, b);
    EXPECT_EQ(*sa->PrimFieldInt(xa[i], "checkpointedSize"),
              *sb->PrimFieldInt(xb[i], "checkpointedSize") - (b - a));
    if (changed++ == 0) {
      const serde::SourceRange at = sa->PrimFieldRange(xa[i], "stateSize");
      stale.replace(at.offset, 8, std::string(serde::AsStringView(sb->PrimFieldBytes(xb[i], "stateSize"))));
    }
  }
  EXPECT_EQ(changed, r->removed.size());
  EXPECT_THAT(VerifyDeepStripped(*in, View(stale), o),
              StatusIs(absl::StatusCode::kInternal, "OperatorSubtaskState.stateSize"));
}

// The 1.17 checkpoint `md` written as a completedCheckpoint at `path` by the
// fixture writer; its keyed state (changelog handles, which the fixture does
// not write) is left out: the test is about operator state.
absl::Status WriteHaOf117(Loaded& md, const std::string& external_pointer,
                          const std::string& path) {
  for (OperatorState& op : md.model.metadata.operators) {
    for (OperatorSubtaskState& s : op.subtasks) {
      for (auto* list : {&s.managed_keyed_state, &s.raw_keyed_state}) {
        for (KeyedStateHandle& k : *list) k.tag = 0;
      }
    }
  }
  CompletedCheckpointWriteOptions wo;
  wo.external_pointer = external_pointer;
  return WriteCompletedCheckpointFromMetadata(md.model, View(md.bytes), wo, path);
}

// An HA file whose operator state lives in relative state files: the corpus's
// Flink 1.17 checkpoint (two RelativeFileStateHandles, `source-state` only)
// written as a completedCheckpoint by the test fixture (Flink 1.19-1.20
// shapes; its `filePath` is the checkpoint directory + the relative path, as
// Flink's FsCheckpointStreamFactory makes it). The new streams are what Flink
// 1.17's OperatorBackendSerializationProxy.write writes for no states; the
// handle gets the new relativePath, filePath and stateSize.
TEST(DeepStripCompletedCheckpointTest, RelativeStateFilesGetNewFilesBesideThem) {
  const std::string dir = CopyToTemp(kFlink117, kFlink117Files);
  Loaded md = Load(dir + "/_metadata");
  ASSERT_EQ(mkdir((dir + "/ha").c_str(), 0755), 0);
  const std::string ha_path = dir + "/ha/completedCheckpoint0123456789ab";
  ASSERT_THAT(WriteHaOf117(md, "file:" + dir, ha_path), IsOk());
  md = Load(dir + "/_metadata");
  absl::StatusOr<LoadedFile> ha = Open(ha_path);
  ASSERT_THAT(ha.status(), IsOk());
  const DeepStripFiles files = DeepStripFilesFor(*ha, dir + "/ha", {});
  EXPECT_EQ(files.sources.base_dir, dir);  // the checkpoint directory, not the HA one
  // The `state` report reads the HA file's relative handles there too.
  StateStreamSources src;
  src.base_dir = RelativeHandleDir(ha->model, ha->path, src);
  EXPECT_EQ(src.base_dir, dir);
  EXPECT_EQ(BuildOperatorStateStreamReport(ha->model, ha->bytes(), src).streams_unreadable(), 0u);
  StripOptions o;
  o.state_name = "source-state";
  absl::StatusOr<DeepStripResult> r = PlanDeepStripState(*ha, o, files);
  ASSERT_THAT(r.status(), IsOk());
  ASSERT_EQ(r->new_files.size(), 2u);
  const std::string kEmptyV5("\0\0\0\x05\0\0\0\0", 8);
  DeepStripStreams streams = DeepStripStreamsFor(*ha, files);
  std::vector<std::string> contents;
  contents.reserve(2);
  for (const NewStateFile& nf : r->new_files) {
    EXPECT_TRUE(nf.write);
    EXPECT_TRUE(nf.relative);
    EXPECT_EQ(nf.path, dir + "/" + nf.new_handle_path);
    absl::StatusOr<std::string> c = nf.plan.ApplyToString(nf.input.bytes());
    ASSERT_THAT(c.status(), IsOk());
    EXPECT_EQ(*c, kEmptyV5);
    contents.push_back(*c);
    streams.new_streams[nf.new_handle_path] = View(contents.back());
  }
  absl::StatusOr<std::string> out = r->plan.ApplyToString(ha->bytes());
  ASSERT_THAT(out.status(), IsOk());
  EXPECT_THAT(VerifyDeepStripped(*ha, View(*out), o, streams), IsOk());
  // Without the new streams the verify reads the original files: it fails.
  EXPECT_THAT(VerifyDeepStripped(*ha, View(*out), o, DeepStripStreamsFor(*ha, files)),
              StatusIs(absl::StatusCode::kInternal, "verify"));
  absl::StatusOr<LoadedFile> after = OpenBytes(*out, "after");
  ASSERT_THAT(after.status(), IsOk());
  std::set<std::string> new_names;
  for (const NewStateFile& nf : r->new_files) new_names.insert(nf.new_handle_path);
  for (const OperatorState& op : after->model.metadata.operators) {
    for (const OperatorSubtaskState& s : op.subtasks) {
      for (const OperatorStateHandle& h : s.managed_operator_state) {
        EXPECT_TRUE(h.states.empty());
        EXPECT_EQ(h.delegate->tag, static_cast<uint8_t>(HandleTag::kRelativeStream));
        EXPECT_EQ(h.delegate->state_size, 8);
        EXPECT_EQ(new_names.count(h.delegate->path.value), 1u) << h.delegate->path.value;
      }
    }
  }
  // Flink opens `filePath`: it names the new file in the checkpoint directory.
  std::set<std::string> uris;
  FLINKSTATE_ASSERT_OK_AND_ASSIGN(CompletedTree tree, DecodeCompletedTree(*after));
  const javaobj::Stream& decoded = *tree.stream;
  for (javaobj::ItemId i = 0; i < decoded.num_items(); ++i) {
    if (!decoded.IsInstanceOf(i, "org.apache.flink.runtime.state.filesystem."
                                 "RelativeFileStateHandle")) {
      continue;
    }
    const javaobj::ItemId uri =
        decoded.FieldValue(decoded.FieldValue(decoded.FieldValue(i, "filePath"), "uri"), "string");
    uris.insert(*decoded.StringValue(uri));
  }
  std::set<std::string> want;
  for (const std::string& n : new_names) want.insert("file:" + dir + "/" + n);
  EXPECT_EQ(uris, want);

  // The _metadata of the same checkpoint names the same new files: planned in
  // one transaction (repair), the HA plan points to the _metadata's files...
  DeepStripFiles mdf;
  mdf.sources.base_dir = dir;
  absl::StatusOr<DeepStripResult> rm = PlanDeepStripState(md.model, View(md.bytes), o, mdf);
  ASSERT_THAT(rm.status(), IsOk());
  DeepStripFiles shared = files;
  shared.planned = &rm->new_files;
  absl::StatusOr<DeepStripResult> rs = PlanDeepStripState(*ha, o, shared);
  ASSERT_THAT(rs.status(), IsOk());
  ASSERT_EQ(rs->new_files.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_FALSE(rs->new_files[i].write);
    EXPECT_TRUE(rs->new_files[i].planned_elsewhere);
    EXPECT_EQ(rs->new_files[i].path, rm->new_files[i].path);
    EXPECT_EQ(rs->new_files[i].new_handle_path, rm->new_files[i].new_handle_path);
  }
  // ... and once the _metadata's deep strip has written them, a later deep
  // strip of the HA file finds them with the planned bytes and reuses them.
  absl::StatusOr<serde::MappedFile> input = serde::MappedFile::Open(dir + "/_metadata");
  ASSERT_THAT(input.status(), IsOk());
  serde::TransactionOptions to;
  to.sync = false;
  ASSERT_THAT(WriteDeepStripped(
                  *rm, o.state_name, *input, dir + "/_metadata.deep", "",
                  [&](const std::map<std::string, serde::ByteView>& ns) {
                    return serde::OutputVerifier([&, ns](serde::ByteView b) {
                      absl::StatusOr<StateFile> a = ReadStateFile(b);
                      if (!a.ok()) return a.status();
                      return VerifyDeepStripped(md.model, View(md.bytes), *a, b, o,
                                                {mdf.sources, mdf.sources, ns});
                    });
                  },
                  to),
              IsOk());
  absl::StatusOr<DeepStripResult> later = PlanDeepStripState(*ha, o, files);
  ASSERT_THAT(later.status(), IsOk());
  ASSERT_EQ(later->new_files.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_FALSE(later->new_files[i].write);
    EXPECT_FALSE(later->new_files[i].planned_elsewhere);
    EXPECT_EQ(later->new_files[i].path, rm->new_files[i].path);
  }
  absl::StatusOr<std::string> out2 = later->plan.ApplyToString(ha->bytes());
  ASSERT_THAT(out2.status(), IsOk());
  EXPECT_EQ(*out2, *out);  // the same HA output as before
  // The verify reads the existing new files from disk.
  EXPECT_THAT(VerifyDeepStripped(*ha, View(*out2), o, DeepStripStreamsFor(*ha, files)), IsOk());
  // A file with the name but other bytes is not reused: the next name is taken.
  WriteAll(later->new_files[0].path, "not the stream");
  absl::StatusOr<DeepStripResult> other = PlanDeepStripState(*ha, o, files);
  ASSERT_THAT(other.status(), IsOk());
  EXPECT_TRUE(other->new_files[0].write);
  EXPECT_NE(other->new_files[0].path, later->new_files[0].path);
  EXPECT_FALSE(other->new_files[1].write);
}

TEST(DeepStripCompletedCheckpointTest, RelativeHandleWithoutCheckpointDirectoryIsRefused) {
  const std::string dir = CopyToTemp(kFlink117, kFlink117Files);
  Loaded md = Load(dir + "/_metadata");
  const std::string ha_path = dir + "/completedCheckpoint0123456789ab";
  // Not local, and no --state-root.
  ASSERT_THAT(WriteHaOf117(md, "s3://bucket/job/chk-3", ha_path), IsOk());
  absl::StatusOr<LoadedFile> ha = Open(ha_path);
  ASSERT_THAT(ha.status(), IsOk());
  StripOptions o;
  o.state_name = "source-state";
  const DeepStripFiles files = DeepStripFilesFor(*ha, dir, {});
  EXPECT_EQ(files.sources.base_dir, "");
  EXPECT_THAT(PlanDeepStripState(*ha, o, files).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, "checkpoint directory"));
  // Mapped by a state root, it is found.
  const DeepStripFiles mapped =
      DeepStripFilesFor(*ha, dir, {{"s3://bucket/job/chk-3", dir}});
  EXPECT_EQ(mapped.sources.base_dir, dir);
  EXPECT_THAT(PlanDeepStripState(*ha, o, mapped).status(), IsOk());
}

TEST(DeepStripCompletedCheckpointTest, FileMergingSegmentIsRefused) {
  const std::string p = FLINKSTATE_SOURCE_DIR
      "/tests/testdata/flink-2.3.0/file-merging-completedCheckpoint/completedCheckpointbb1c0365749d";
  absl::StatusOr<LoadedFile> in = Open(p);
  ASSERT_THAT(in.status(), IsOk());
  StripOptions o;
  o.state_name = "records-seen";
  EXPECT_THAT(PlanDeepStripState(*in, o).status(),
              StatusIs(absl::StatusCode::kUnimplemented, "segment"));
}

}  // namespace
}  // namespace flinkstate
