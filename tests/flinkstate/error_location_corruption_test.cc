// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// Every decoder family, fed real inputs cut short and with bytes flipped: an
// error whose message names " at byte N" carries an ErrorLocation whose
// offset is that N (error_location.h), so a report takes the offset from the
// error and never from its text. A site that writes " at byte N" by hand into
// a plain absl error fails here.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/ha_pointer.h"
#include "flinkstate/javaobj/layouts.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/kafka_state.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/operator_state_stream.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/input_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/flinkstate/corpus.h"
#include "tests/testing/gzip.h"

namespace flinkstate {
namespace {

using ::flinkstate::testing::Gzip;
using ::flinkstate::testing::ReadFileOrDie;

const std::string kShared = FLINKSTATE_SHARED_DIR;
const std::string kKafkaResources =
    kShared + "/corpus/apache__flink-connector-kafka/flink-connector-kafka/src/test/resources";
const std::string kKafkaSourceSavepoint =
    kKafkaResources + "/kafka-source-savepoint/enum1-split0/savepoint-3c7c0a-07c49f841952/_metadata";
const std::string kKafkaConsumerSnapshot =
    kKafkaResources + "/kafka-consumer-migration-test-flink1.16-snapshot";
const std::string kSynth = kShared + "/spec/samples/flink-synth";
const std::string kJdk = kShared + "/spec/samples/jdk";

// Every N of " at byte N" in `m`.
std::vector<uint64_t> OffsetsInMessage(absl::string_view m) {
  constexpr absl::string_view kAtByte = " at byte ";
  std::vector<uint64_t> out;
  for (size_t at = m.find(kAtByte); at != absl::string_view::npos;
       at = m.find(kAtByte, at + 1)) {
    const absl::string_view rest = m.substr(at + kAtByte.size());
    size_t n = 0;
    while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9') ++n;
    uint64_t v = 0;
    if (n > 0 && absl::SimpleAtoi(rest.substr(0, n), &v)) out.push_back(v);
  }
  return out;
}

// Counts what one family's decoder returned.
struct Tally {
  int decodes = 0;
  int errors = 0;
  int located = 0;  // errors with " at byte " in the message (all checked)
};

// Checks one result: an error naming a byte offset carries it as its location.
void Check(const absl::Status& s, const std::string& what, Tally* t) {
  ++t->decodes;
  if (s.ok()) return;
  ++t->errors;
  const std::vector<uint64_t> named = OffsetsInMessage(s.message());
  if (named.empty()) return;
  ++t->located;
  const std::optional<serde::ErrorLocation> l = serde::LocationOf(s);
  ASSERT_TRUE(l.has_value()) << what << ": no ErrorLocation on: " << s;
  EXPECT_FALSE(l->layer.empty()) << what << ": " << s;
  EXPECT_TRUE(absl::StrContains(s.message(), l->layer)) << what << ": " << l->layer << " / " << s;
  if (!l->item_path.empty()) {
    EXPECT_TRUE(absl::StrContains(s.message(), l->item_path))
        << what << ": " << l->item_path << " / " << s;
  }
  ASSERT_TRUE(l->offset.has_value()) << what << ": location without offset on: " << s;
  EXPECT_THAT(named, ::testing::Contains(*l->offset)) << what << ": " << s;
}

// Calls `f` with `input` cut at, and with byte `i` replaced (three ways) at,
// positions spread over the input: at most about `kPositions` of each.
void ForEachMutation(const std::string& input,
                     const std::function<void(const std::string&, const std::string&)>& f) {
  constexpr size_t kPositions = 600;
  const size_t step = input.size() / kPositions + 1;
  for (size_t i = 0; i < input.size(); i += step) {
    f(input.substr(0, i), absl::StrCat("cut at ", i));
    for (uint8_t x : {uint8_t{0xFF}, uint8_t{0x01}, uint8_t{0x80}}) {
      std::string b = input;
      b[i] = static_cast<char>(static_cast<uint8_t>(b[i]) ^ x);
      f(b, absl::StrCat("byte ", i, " ^ ", static_cast<int>(x)));
    }
  }
}

void ExpectCoverage(const Tally& t, absl::string_view family) {
  EXPECT_GT(t.located, 0) << family << ": no error named an offset (" << t.decodes
                          << " decodes, " << t.errors << " errors)";
}

TEST(ErrorLocationCorruptionTest, MetadataReader) {
  Tally t;
  for (const std::string& path :
       {kKafkaSourceSavepoint,
        kShared + "/corpus/CosmicBeing09__flink/flink-libraries/flink-state-processing-api/"
                  "src/test/resources/table-state/_metadata"}) {
    const std::string input = ReadFileOrDie(path);
    ASSERT_TRUE(ReadCheckpointMetadata(serde::AsBytes(input)).ok()) << path;
    ForEachMutation(input, [&](const std::string& b, const std::string& what) {
      Check(ReadCheckpointMetadata(serde::AsBytes(b)).status(), what, &t);
      Check(ReadStateFile(serde::AsBytes(b)).status(), what, &t);
    });
  }
  ExpectCoverage(t, "metadata");
}

TEST(ErrorLocationCorruptionTest, JavaObjStreamReader) {
  Tally t, layouts;
  for (const char* name : {"custom_small.bin", "arraylist.bin", "cycle.bin", "derived.bin"}) {
    const std::string input = ReadFileOrDie(kJdk + "/" + name);
    ASSERT_TRUE(javaobj::DecodeStream(serde::AsBytes(input)).ok()) << name;
    ForEachMutation(input, [&](const std::string& b, const std::string& what) {
      const std::string where = absl::StrCat(name, ": ", what);
      absl::StatusOr<javaobj::Stream> s = javaobj::DecodeStream(serde::AsBytes(b));
      Check(s.status(), where, &t);
      if (!s.ok()) return;
      // The container layouts over what still decodes (and over items that
      // are no container).
      for (javaobj::ItemId id = 0; id < s->num_items(); ++id) {
        if (s->kind(id) != javaobj::ItemKind::kObject) continue;
        Check(javaobj::ViewContainer(*s, id).status(), where, &layouts);
      }
    });
  }
  ExpectCoverage(t, "javaobj");
  ExpectCoverage(layouts, "javaobj layouts");
}

TEST(ErrorLocationCorruptionTest, HaPointer) {
  Tally t;
  for (const char* version : {"1.15", "1.20"}) {
    for (const char* kind : {"zk-node.bin", "k8s-value.bin"}) {
      const std::string input = ReadFileOrDie(absl::StrCat(kSynth, "/", version, "/", kind));
      ASSERT_TRUE(DecodeHaPointer(serde::AsBytes(input)).ok()) << version << kind;
      ForEachMutation(input, [&](const std::string& b, const std::string& what) {
        Check(DecodeHaPointer(serde::AsBytes(b)).status(), absl::StrCat(kind, ": ", what), &t);
      });
    }
    // The Base64 form a kubernetes ConfigMap holds.
    const std::string text = ReadFileOrDie(absl::StrCat(kSynth, "/", version, "/k8s-value.b64"));
    ASSERT_TRUE(DecodeBase64JavaStream(serde::AsBytes(text)).ok()) << version;
    ForEachMutation(text, [&](const std::string& b, const std::string& what) {
      absl::StatusOr<std::string> stream = DecodeBase64JavaStream(serde::AsBytes(b));
      Check(stream.status(), absl::StrCat("b64: ", what), &t);
      if (stream.ok()) Check(DecodeHaPointer(serde::AsBytes(*stream)).status(), what, &t);
    });
  }
  ExpectCoverage(t, "ha-pointer");
}

TEST(ErrorLocationCorruptionTest, CompletedCheckpoint) {
  Tally t;
  for (const char* version : {"1.13", "1.20", "2.0"}) {
    const std::string input =
        ReadFileOrDie(absl::StrCat(kSynth, "/", version, "/completedCheckpoint.bin"));
    ASSERT_TRUE(ReadCompletedCheckpointBytes(serde::AsBytes(input)).ok()) << version;
    ForEachMutation(input, [&](const std::string& b, const std::string& what) {
      Check(ReadCompletedCheckpointBytes(serde::AsBytes(b)).status(),
            absl::StrCat(version, ": ", what), &t);
    });
  }
  ExpectCoverage(t, "completedCheckpoint");
}

// The managed operator-state handles of `f` whose delegate is inline bytes.
std::vector<const OperatorStateHandle*> InlineHandles(const StateFile& f) {
  std::vector<const OperatorStateHandle*> out;
  auto add = [&](const OperatorSubtaskState& s) {
    for (const OperatorStateHandle& h : s.managed_operator_state) {
      if (h.delegate && h.delegate->tag == static_cast<uint8_t>(HandleTag::kByteStream)) {
        out.push_back(&h);
      }
    }
  };
  if (f.kind == StateFileKind::kOperatorSnapshot) add(f.snapshot.state);
  for (const OperatorState& op : f.metadata.operators) {
    for (const OperatorSubtaskState& s : op.subtasks) add(s);
  }
  return out;
}

// The stream header, the element extents (offsets read from the damaged
// file) and the Kafka offset elements of the 1.16 consumer snapshot's one
// inline stream, with the file's bytes damaged; the handle is the
// undamaged file's.
TEST(ErrorLocationCorruptionTest, OperatorStateStreamAndKafkaElements) {
  const std::string input = ReadFileOrDie(kKafkaConsumerSnapshot);
  absl::StatusOr<StateFile> f = ReadStateFile(serde::AsBytes(input));
  ASSERT_TRUE(f.ok()) << f.status();
  const std::vector<const OperatorStateHandle*> handles = InlineHandles(*f);
  ASSERT_FALSE(handles.empty());
  const OperatorStateHandle& h = *handles[0];
  const SourceRange data = h.delegate->data;
  Tally stream, kafka;
  ForEachMutation(input, [&](const std::string& b, const std::string& what) {
    if (b.size() < data.end()) return;  // the handle's stream is cut off
    const serde::ByteView file = serde::AsBytes(b);
    const serde::ByteView bytes = file.subspan(data.offset, data.size);
    absl::StatusOr<OperatorStateStreamHeader> header =
        ReadOperatorStateStreamHeader(bytes, data.offset);
    Check(header.status(), what, &stream);
    if (header.ok()) Check(header->stopped, what, &stream);
    const uint64_t header_end = header.ok() ? header->range.end() - data.offset : 0;
    absl::StatusOr<std::vector<StateElements>> extents =
        ReadElementExtents(h, file, bytes.size(), header_end, bytes);
    Check(extents.status(), what, &stream);
    if (!extents.ok()) return;
    for (const StateElements& e : *extents) {
      if (e.name != kKafkaOffsetsStateName) continue;
      for (const SourceRange& r : e.elements) {
        if (r.end() > bytes.size()) continue;
        Check(DecodeLegacyKafkaOffsetElement(bytes.subspan(r.offset, r.size)).status(), what,
              &kafka);
      }
    }
  });
  ExpectCoverage(stream, "operator-state stream");
  ExpectCoverage(kafka, "kafka state (legacy elements)");
}

// The KafkaSource enumerator state of the corpus's real savepoint.
TEST(ErrorLocationCorruptionTest, KafkaEnumeratorState) {
  const std::string input = ReadFileOrDie(kKafkaSourceSavepoint);
  absl::StatusOr<CheckpointMetadata> m = ReadCheckpointMetadata(serde::AsBytes(input));
  ASSERT_TRUE(m.ok()) << m.status();
  std::string state;
  for (const OperatorState& op : m->operators) {
    if (op.coordinator_state.tag == static_cast<uint8_t>(HandleTag::kByteStream)) {
      state = input.substr(op.coordinator_state.data.offset, op.coordinator_state.data.size);
    }
  }
  ASSERT_FALSE(state.empty());
  ASSERT_TRUE(DecodeKafkaSourceEnumState(serde::AsBytes(state)).ok());
  Tally t;
  ForEachMutation(state, [&](const std::string& b, const std::string& what) {
    Check(DecodeKafkaSourceEnumState(serde::AsBytes(b)).status(), what, &t);
  });
  ExpectCoverage(t, "kafka state (enumerator)");
}


// gzip, hex and Base64 forms of a real _metadata, damaged, decoded both as
// the named form and detected.
TEST(ErrorLocationCorruptionTest, InputFormat) {
  const std::string raw = ReadFileOrDie(kKafkaSourceSavepoint);
  struct Form {
    serde::InputFormat format;
    std::string bytes;
  };
  const std::vector<Form> forms = {{serde::InputFormat::kGzip, Gzip(raw)},
                                   {serde::InputFormat::kHex, absl::BytesToHexString(raw)},
                                   {serde::InputFormat::kBase64, absl::Base64Escape(raw)}};
  Tally t;
  for (const Form& form : forms) {
    ASSERT_TRUE(serde::DecodeInputFormat(serde::AsBytes(form.bytes), form.format).ok())
        << serde::InputFormatName(form.format);
    ForEachMutation(form.bytes, [&](const std::string& b, const std::string& what) {
      const std::string where = absl::StrCat(serde::InputFormatName(form.format), ": ", what);
      Check(serde::DecodeInputFormat(serde::AsBytes(b), form.format).status(), where, &t);
      Check(serde::DecodeInputFormat(serde::AsBytes(b)).status(), where, &t);
    });
  }
  ExpectCoverage(t, "input_format");
}

}  // namespace
}  // namespace flinkstate
