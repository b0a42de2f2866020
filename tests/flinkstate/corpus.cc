// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "tests/flinkstate/corpus.h"

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"

namespace flinkstate::testing {

std::string CorpusRoot() { return FLINKSTATE_SHARED_DIR "/corpus"; }

std::string ReadFileOrDie(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << "cannot read " << path;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string CorpusTestName(const CorpusFile& f, size_t index) {
  std::string n = f.path.substr(CorpusRoot().size() + 1);
  for (char& c : n) {
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  // Names must be unique; the tail of a long path plus the index is.
  return n.size() > 80 ? n.substr(n.size() - 80) + "_" + std::to_string(index) : n;
}

std::vector<CorpusFile> CorpusFiles() {
  std::vector<CorpusFile> files;
  std::istringstream readme(ReadFileOrDie(CorpusRoot() + "/README.md"));
  std::string line;
  while (std::getline(readme, line)) {
    if (!absl::StartsWith(line, "| `")) continue;
    std::vector<std::string> cols = absl::StrSplit(line, '|');
    if (cols.size() < 7) continue;
    std::string rel(absl::StripAsciiWhitespace(cols[1]));
    rel = std::string(absl::StripSuffix(absl::StripPrefix(rel, "`"), "`"));
    std::string what(absl::StripAsciiWhitespace(cols[5]));
    what = what.substr(0, what.find(" (read at commit"));
    CorpusFile f;
    f.path = CorpusRoot() + "/" + rel;
    f.description = what;
    if (absl::StartsWith(what, "metadata v")) {
      f.is_metadata = true;
      f.version = what[10] - '0';
    } else if (absl::StartsWith(what, "OperatorSnapshotUtil file, header int=")) {
      f.is_snapshot = true;
      f.version = what[38] - '0';
    } else {
      continue;
    }
    for (absl::string_view part : absl::StrSplit(what, absl::ByAnyChar(";,"))) {
      part = absl::StripAsciiWhitespace(part);
      if (absl::ConsumePrefix(&part, "props=")) {
        f.props = std::string(part.substr(0, part.find(' ')));
      } else if (absl::ConsumePrefix(&part, "tags=")) {
        f.tags.insert(std::string(part));
      } else if (absl::ConsumePrefix(&part, "op-modes=")) {
        for (absl::string_view m : absl::StrSplit(part, '/')) {
          int v;
          if (absl::SimpleAtoi(m, &v)) f.op_modes.insert(v);
        }
      } else if (absl::ConsumePrefix(&part, "states=")) {
        f.states.emplace_back(part);
      } else if (part == "master-state" || part == "coordinator-state" ||
                 part == "fully-finished-op" || part == "channel-state") {
        f.flags.insert(std::string(part));
      } else if (!f.tags.empty() && f.op_modes.empty() && f.flags.empty() &&
                 part.find(' ') == absl::string_view::npos &&
                 part.find('=') == absl::string_view::npos &&
                 absl::AsciiStrToUpper(part) == part) {
        f.tags.insert(std::string(part));  // continuation of tags=a,b,c
      } else if (!f.states.empty() && part.find(' ') == absl::string_view::npos &&
                 part.find('=') == absl::string_view::npos) {
        f.states.emplace_back(part);  // continuation of states=a,b
      }
    }
    files.push_back(std::move(f));
  }
  EXPECT_GT(files.size(), 100u) << "corpus README not parsed";
  return files;
}

}  // namespace flinkstate::testing
