// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// Writes the committed, synthesized fuzz seeds (fuzz/corpus/<target>_fuzzer/).
// Real files are not copied: the replay tests read them from ../shared at
// test time. What is written here is what ../shared does not have:
//
//   metadata_reader, metadata_strip_relocate, operator_snapshot_reader:
//     incident-shaped `_metadata` files (tests/fixtures/metadata_generator.h) for
//     versions 3, 4, 5 with absolute (tag 2) and relative (tag 6) handles,
//     tiny (parallelism 2, a few entries), and the v5 one converted by
//     `EncodeStateFile` to versions 6 and 7 (no v1, v6 with channel state
//     or v7 file exists in ../shared/corpus);
//   metadata_reader only: "framed" seeds, `version - 1` followed by the file
//     minus its 8-byte header, which the target reads behind a valid header
//     (fuzz_entries.h), one per version 1-7 (v1 with an empty body);
//   javaobj_rewriter: every JDK sample and Flink-synth stream under 8 KiB
//     from ../shared/spec/samples, behind the target's 3 selector bytes,
//     once per edit kind;
//   serde_modified_utf8: the modified UTF-8 corner cases.
//
//   flinkstate_fuzz_gen_corpus <fuzz/corpus dir> <../shared dir>
//
// The output is a pure function of the inputs; fuzz/gen_corpus.sh runs it.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tests/fixtures/metadata_generator.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/metadata_writer.h"
#include "flinkstate/serde/byte_view.h"

namespace fs = std::filesystem;

namespace {

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteFile(const fs::path& dir, const std::string& name, const std::string& bytes) {
  fs::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "gen_corpus: cannot write %s\n", (dir / name).c_str());
    std::exit(1);
  }
}

void Die(const absl::Status& s) {
  std::fprintf(stderr, "gen_corpus: %s\n", s.ToString().c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <fuzz/corpus dir> <../shared dir>\n", argv[0]);
    return 2;
  }
  const fs::path out = argv[1];
  const fs::path shared = argv[2];
  const fs::path tmp = fs::temp_directory_path() / "flinkstate_gen_corpus.tmp";

  // Metadata files.
  std::vector<std::pair<std::string, std::string>> metadata;  // name, bytes
  for (uint32_t v : {3u, 4u, 5u}) {
    for (bool relative : {false, true}) {
      flinkstate::IncidentShape shape;
      shape.version = v;
      shape.parallelism = 2;
      shape.max_parallelism = 4;
      shape.union_entries_per_subtask = 3;
      shape.split_entries_per_subtask = 1;
      shape.coordinator_state_bytes = 8;
      shape.operator_state_relative = relative;
      shape.keyed_state_relative = !relative;
      shape.seed = v;
      if (absl::Status s = flinkstate::WriteIncidentMetadata(shape, tmp.string()); !s.ok()) Die(s);
      metadata.push_back({absl::StrCat("incident_v", v, relative ? "_relative" : "_absolute"),
                          ReadAll(tmp)});
    }
  }
  fs::remove(tmp);
  {
    const std::string v5 = metadata.back().second;
    const flinkstate::serde::ByteView in = flinkstate::serde::AsBytes(v5);
    absl::StatusOr<flinkstate::StateFile> f = flinkstate::ReadStateFile(in);
    if (!f.ok()) Die(f.status());
    for (uint32_t target : {6u, 7u}) {
      flinkstate::MetadataWriteOptions o;
      o.target_version = target;
      absl::StatusOr<flinkstate::serde::EditPlan> plan = flinkstate::EncodeStateFile(*f, in, o);
      if (!plan.ok()) Die(plan.status());
      absl::StatusOr<std::string> bytes = plan->ApplyToString(in);
      if (!bytes.ok()) Die(bytes.status());
      metadata.push_back({absl::StrCat("incident_v5_as_v", target), *bytes});
    }
  }
  for (const char* t : {"metadata_reader", "metadata_strip_relocate", "operator_snapshot_reader"}) {
    for (const auto& [name, bytes] : metadata) {
      WriteFile(out / absl::StrCat(t, "_fuzzer"), name, bytes);
    }
  }
  // Framed seeds: version selector byte + body after the header.
  const fs::path framed_dir = out / "metadata_reader_fuzzer";
  WriteFile(framed_dir, "framed_v1_empty", std::string(1, '\0'));
  for (const auto& [name, bytes] : metadata) {
    if (bytes.size() < 8) continue;
    const uint32_t version = static_cast<uint8_t>(bytes[7]);
    WriteFile(framed_dir, absl::StrCat("framed_", name),
              std::string(1, static_cast<char>(version - 1)) + bytes.substr(8));
  }

  // Rewriter seeds: selector bytes + stream.
  std::vector<fs::path> streams;
  for (const fs::path& dir : {shared / "spec/samples/jdk", shared / "spec/samples/flink-synth"}) {
    if (!fs::exists(dir)) {
      std::fprintf(stderr, "gen_corpus: %s is missing\n", dir.c_str());
      return 1;
    }
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (e.is_regular_file() && e.path().extension() == ".bin" && e.file_size() <= 8192) {
        streams.push_back(e.path());
      }
    }
  }
  std::sort(streams.begin(), streams.end());
  for (const fs::path& p : streams) {
    const std::string bytes = ReadAll(p);
    if (bytes.size() < 4 || bytes.compare(0, 2, "\xAC\xED") != 0) continue;
    std::string name = fs::relative(p, shared / "spec/samples").string();
    for (char& c : name) {
      if (c == '/') c = '_';
    }
    for (int kind = 0; kind < 3; ++kind) {
      std::string sel = {static_cast<char>(kind), 0, static_cast<char>(kind * 5)};
      WriteFile(out / "javaobj_rewriter_fuzzer", absl::StrCat("edit", kind, "_", name),
                sel + bytes);
    }
  }

  // Modified UTF-8 corner cases.
  const std::vector<std::pair<std::string, std::string>> mutf8 = {
      {"ascii", "topic-partition-offset-states"},
      {"nul", std::string("a\xC0\x80" "b")},
      {"raw_nul", std::string("a\0b", 3)},
      {"two_three_byte", "caf\xC3\xA9 \xE2\x82\xAC"},
      {"surrogate_pair", "\xED\xA0\xBD\xED\xB2\xA9"},
      {"lone_surrogate", "x\xED\xA0\x80y"},
      {"utf8_4byte", "\xF0\x9F\x92\xA9"},
      {"overlong", "\xC1\xBF\xE0\x80\x80"},
      {"truncated", "\xE2\x82"},
  };
  for (const auto& [name, bytes] : mutf8) {
    WriteFile(out / "serde_modified_utf8_fuzzer", name, bytes);
  }
  std::printf("gen_corpus: wrote %zu metadata seeds, %zu rewriter streams\n",
              metadata.size(), streams.size());
  return 0;
}
