// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: corpus.h
// -----------------------------------------------------------------------------
// The golden corpus in ../shared/corpus, with the facts its README states for
// every `_metadata` and operator-snapshot file.

#ifndef FLINKSTATE_TESTS_FLINKSTATE_CORPUS_H_
#define FLINKSTATE_TESTS_FLINKSTATE_CORPUS_H_

#include <set>
#include <string>
#include <vector>

namespace flinkstate::testing {

struct CorpusFile {
  std::string path;         // absolute
  std::string description;  // the README's "what it is" column
  bool is_metadata = false;
  bool is_snapshot = false;  // OperatorSnapshotUtil format
  int version = -1;          // metadata version or snapshot header
  std::string props;         // e.g. "SavepointType/CANONICAL", "CheckpointType", "null"
  std::set<std::string> tags;       // README short names, e.g. "RELATIVE"
  std::set<int> op_modes;
  std::set<std::string> flags;      // master-state, coordinator-state, ...
  std::vector<std::string> states;  // snapshots: state names
};

// Root of the shared corpus.
std::string CorpusRoot();

// Every row of the corpus README that is a metadata or snapshot file (not the
// state data files). Fails the calling test if the README cannot be read.
std::vector<CorpusFile> CorpusFiles();

// A gtest parameter name for a corpus file: its path below the corpus root
// with every non-alphanumeric character replaced, shortened to its tail.
std::string CorpusTestName(const CorpusFile& f, size_t index);

// Reads a whole file.
std::string ReadFileOrDie(const std::string& path);

}  // namespace flinkstate::testing

#endif  // FLINKSTATE_TESTS_FLINKSTATE_CORPUS_H_
