// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: test_util.h
// -----------------------------------------------------------------------------
// Helpers shared by the javaobj tests: locating and reading golden streams.

#ifndef FLINKSTATE_TESTS_JAVAOBJ_TEST_UTIL_H_
#define FLINKSTATE_TESTS_JAVAOBJ_TEST_UTIL_H_

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "flinkstate/serde/byte_view.h"

namespace flinkstate::javaobj::testing {

// Real JDK 17 streams with annotated dumps: ../shared/spec/samples/jdk.
inline std::string JdkSampleDir() {
  return std::string(FLINKSTATE_SHARED_DIR) + "/spec/samples/jdk";
}

// Synthesized Flink HA streams (stand-in classes with Flink's names, SUIDs and
// fields): ../shared/spec/samples/flink-synth/<version>/<kind>.bin, kind
// "completedCheckpoint" or "zk-node".
inline std::string FlinkSynthFile(const std::string& kind, const std::string& version) {
  return std::string(FLINKSTATE_SHARED_DIR) + "/spec/samples/flink-synth/" + version + "/" +
         kind + ".bin";
}

inline std::vector<std::string> FlinkSynthVersions() {
  return {"1.13", "1.15", "1.17", "1.20", "2.0"};
}

inline std::string ReadFileOrDie(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Sorted names of the files in `dir` ending in `suffix`.
inline std::vector<std::string> ListFiles(const std::string& dir,
                                          const std::string& suffix) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > suffix.size() &&
          n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0) {
        out.push_back(n);
      }
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline serde::ByteView Bytes(const std::string& s) { return serde::AsBytes(s); }

}  // namespace flinkstate::javaobj::testing

#endif  // FLINKSTATE_TESTS_JAVAOBJ_TEST_UTIL_H_
