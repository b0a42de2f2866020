// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// `AppendSubtaskJson` against its referee, protobuf's own JSON printer with
// the options of `RenderReportJson`: the same bytes for every field shape
// (negative and 64-bit extremes, empty and many handles and paths), and, for
// every single byte in a path, either the same bytes or a refusal that
// leaves the output alone. The paths Flink writes (URIs, file names) take
// the direct path.

#include "flinkstate/report_json.h"

#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace flinkstate {
namespace {

// What protobuf prints for `s`, in the layout AppendSubtaskJson promises.
std::string ProtobufJson(const report::Subtask& s, const std::string& indent) {
  google::protobuf::util::JsonPrintOptions print;
  print.add_whitespace = true;
  print.always_print_primitive_fields = true;
  std::string json;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(s, &json, print).ok());
  while (!json.empty() && json.back() == '\n') json.pop_back();
  return absl::StrReplaceAll(json, {{"\n", "\n" + indent}});
}

report::Subtask WithPath(const std::string& path) {
  report::Subtask s;
  s.set_index(3);
  report::Handle* h = s.add_handles();
  h->set_slot("managedKeyedState");
  h->set_kind("IncrementalRemoteKeyedStateHandle");
  h->set_tag(11);
  h->add_paths(path);
  return s;
}

TEST(ReportJsonTest, SameBytesAsProtobufForEveryFieldShape) {
  report::Subtask empty;
  report::Subtask full;
  full.set_index(std::numeric_limits<int32_t>::min());
  full.set_finished(true);
  full.set_bytes(std::numeric_limits<uint64_t>::max());
  for (int i = 0; i < 3; ++i) {
    report::Handle* h = full.add_handles();
    h->set_slot(i == 0 ? "" : "rawOperatorState");
    h->set_kind("OperatorStreamStateHandle");
    h->set_tag(i == 2 ? std::numeric_limits<uint32_t>::max() : 4);
    for (int k = 0; k < i * 2; ++k) h->add_paths(absl::StrCat("s3://bucket/job/chk-7/", k));
    h->set_bytes(i);
    h->set_state_size(i == 1 ? std::numeric_limits<int64_t>::min() : -1);
    h->set_inline_bytes(uint64_t{1} << 63);
  }
  report::Subtask no_handles;
  no_handles.set_index(511);
  no_handles.set_bytes(12);
  for (const report::Subtask* s : {&empty, &full, &no_handles}) {
    for (const std::string indent : {"", "    "}) {
      std::string out = "prefix";
      ASSERT_TRUE(AppendSubtaskJson(*s, indent, &out));
      EXPECT_EQ(out, "prefix" + ProtobufJson(*s, indent));
    }
  }
}

TEST(ReportJsonTest, EveryByteInAPathIsProtobufsOrLeftToIt) {
  int direct = 0;
  for (int c = 0; c < 256; ++c) {
    const report::Subtask s = WithPath(absl::StrCat("file:/a", std::string(1, char(c)), "b"));
    std::string out = "x";
    if (AppendSubtaskJson(s, "  ", &out)) {
      ++direct;
      EXPECT_EQ(out, "x" + ProtobufJson(s, "  ")) << "byte " << c;
    } else {
      EXPECT_EQ(out, "x") << "byte " << c;
    }
  }
  // Printable ASCII but the seven left to protobuf.
  EXPECT_EQ(direct, 0x7F - 0x20 - 7);
  // Multi-byte UTF-8 (é, U+2028) is left to protobuf too.
  for (const char* p : {"s3://b/\xc3\xa9", "s3://b/\xe2\x80\xa8"}) {
    std::string out;
    EXPECT_FALSE(AppendSubtaskJson(WithPath(p), "", &out));
    EXPECT_TRUE(out.empty());
  }
}

TEST(ReportJsonTest, FlinkPathsTakeTheDirectPath) {
  for (const char* p :
       {"s3://bucket/job/shared/3f2a1c9e-0d4b-4e7a-9b1f-2c8d5e6f7a90",
        "file:/tmp/flink/checkpoints/56bb51ded0406e8830bdb796d03a5132/chk-9/a1b2c3",
        "hdfs://namenode:8020/flink/ckpt/_entropy_/chk-1/x",
        "gs://b/a+b_c~d%20e(1)[2]{3},;!@#$*?|^`"}) {
    std::string out;
    ASSERT_TRUE(AppendSubtaskJson(WithPath(p), "", &out)) << p;
    EXPECT_EQ(out, ProtobufJson(WithPath(p), "")) << p;
  }
}

}  // namespace
}  // namespace flinkstate
