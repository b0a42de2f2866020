// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// Every truncation and a deterministic set of bit flips of every golden
// stream must give a Status (never a crash, hang or sanitizer report); a
// decodable mutant must still round-trip through the encoder and describe.

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "flinkstate/javaobj/canonical.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/javaobj/stream_writer.h"
#include "tests/javaobj/test_util.h"

namespace flinkstate::javaobj {
namespace {

using ::flinkstate::javaobj::testing::Bytes;
using ::flinkstate::javaobj::testing::ListFiles;
using ::flinkstate::javaobj::testing::ReadFileOrDie;
using ::flinkstate::javaobj::testing::FlinkSynthFile;
using ::flinkstate::javaobj::testing::FlinkSynthVersions;
using ::flinkstate::javaobj::testing::JdkSampleDir;

std::vector<std::string> Goldens() {
  std::vector<std::string> out;
  for (const std::string& v : FlinkSynthVersions()) {
    for (const char* kind : {"completedCheckpoint", "zk-node"}) {
      out.push_back(FlinkSynthFile(kind, v));
    }
  }
  {
    for (const std::string& f : ListFiles(JdkSampleDir(), ".bin")) {
      if (f == "string_long.bin" || f == "custom_2000.bin") continue;  // large; sampled below
      out.push_back(JdkSampleDir() + "/" + f);
    }
  }
  return out;
}

bool IsTruncationCode(absl::StatusCode c) {
  return c == absl::StatusCode::kOutOfRange;
}

TEST(CorruptionTest, EveryTruncationFailsCleanly) {
  size_t checked = 0;
  for (const std::string& path : Goldens()) {
    std::string b = ReadFileOrDie(path);
    if (path.find("nodefault") != std::string::npos) continue;
    for (size_t n = 0; n < b.size(); ++n) {
      absl::StatusOr<Stream> s = DecodeStream(Bytes(b.substr(0, n)));
      // A prefix that ends exactly between top-level items is a valid stream.
      if (s.ok()) continue;
      ++checked;
      EXPECT_TRUE(IsTruncationCode(s.status().code()) ||
                  s.status().code() == absl::StatusCode::kInvalidArgument)
          << path << " cut at " << n << ": " << s.status();
      EXPECT_THAT(std::string(s.status().message()), ::testing::HasSubstr("javaobj: "));
    }
  }
  EXPECT_GT(checked, 10000u);
}

TEST(CorruptionTest, BitFlipsNeverCrash) {
  size_t failures = 0, successes = 0;
  for (const std::string& path : Goldens()) {
    std::string b = ReadFileOrDie(path);
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (int round = 0; round < 400; ++round) {
      x ^= x << 13; x ^= x >> 7; x ^= x << 17;
      std::string m = b;
      size_t pos = x % m.size();
      m[pos] = static_cast<char>(m[pos] ^ (1u << ((x >> 32) % 8)));
      absl::StatusOr<Stream> s = DecodeStream(Bytes(m));
      if (!s.ok()) {
        ++failures;
        continue;
      }
      ++successes;
      absl::StatusOr<std::string> enc = EncodeStream(*s);
      ASSERT_TRUE(enc.ok()) << enc.status();
      EXPECT_EQ(*enc, m) << path << " flip at " << pos;
      // Describing a decodable mutant must not crash; its text is not checked.
      DescribeStream(*s).status().IgnoreError();
    }
  }
  EXPECT_GT(failures, 1000u);
  EXPECT_GT(successes, 100u);
}

TEST(CorruptionTest, LargeGoldensSampledTruncations) {
  for (const char* name : {"string_long", "custom_2000"}) {
    std::string b = ReadFileOrDie(JdkSampleDir() + "/" + name + ".bin");
    for (size_t n = 0; n < b.size(); n += 97) {
      EXPECT_FALSE(DecodeStream(Bytes(b.substr(0, n))).ok()) << name << " " << n;
    }
  }
}

}  // namespace
}  // namespace flinkstate::javaobj
