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

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/operator_state_report.h"
#include "flinkstate/operator_state_stream.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/mapped_file.h"
#include "gmock/gmock.h"
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

TEST(DeepStripTest, CompletedCheckpointIsRefused) {
  StateFile f;
  f.kind = StateFileKind::kCompletedCheckpoint;
  StripOptions o;
  o.state_name = "x";
  EXPECT_THAT(PlanDeepStripState(f, {}, o).status(),
              StatusIs(absl::StatusCode::kUnimplemented, "completedCheckpoint"));
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
  EXPECT_THAT(PlanDeepStripState(in.model, View(in.bytes), o, files).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, "relative"));
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
  EXPECT_THAT(PlanDeepStripState(in.model, View(in.bytes), o, files).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, "same state file"));
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
