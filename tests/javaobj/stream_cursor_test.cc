// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// The cursor against the referee it must agree with, `DecodeStream`: on every
// real Java stream the project has (JDK samples, Flink-written HA files and
// pointers of eleven releases, the corpus) and on truncated and bit-flipped
// copies of them, the cursor's plain walk accepts exactly what the decoder
// accepts, reads the same number of items, top-level items and handles, and
// `CanonicalError` is the decoder's error.

#include "flinkstate/javaobj/stream_cursor.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "flinkstate/javaobj/object_model.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/serde/byte_view.h"

namespace flinkstate::javaobj {
namespace {

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Every file under the test data, the corpus and the spec samples that starts
// with the stream magic (at most 4 MiB, to keep the mutation loop short).
std::vector<std::filesystem::path> JavaStreams() {
  std::vector<std::filesystem::path> out;
  for (const std::string& root :
       {std::string(FLINKSTATE_SOURCE_DIR) + "/tests/testdata",
        std::string(FLINKSTATE_SHARED_DIR) + "/corpus",
        std::string(FLINKSTATE_SHARED_DIR) + "/spec/samples"}) {
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
         it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (ec || !it->is_regular_file() || it->file_size() > (4u << 20)) continue;
      std::ifstream f(it->path(), std::ios::binary);
      unsigned char m[2] = {0, 0};
      f.read(reinterpret_cast<char*>(m), 2);
      if (m[0] == 0xAC && m[1] == 0xED) out.push_back(it->path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Walk {
  absl::Status status;
  uint64_t items = 0;
  uint64_t top_level = 0;
  bool aborted = false;
  serde::SourceRange trailing;
  uint64_t descs = 0;
};

// The cursor's plain walk: every top-level item read and finished.
Walk CursorWalk(serde::ByteView in) {
  StreamCursor c(in);
  Walk w;
  if (c.ReadHeader()) {
    while (!c.AtStreamEnd() && c.ok()) {
      CursorValue v;
      if (!c.ReadContent(&v) || !c.FinishValue(&v)) break;
    }
  }
  w.status = c.status();
  w.items = c.num_items();
  w.top_level = c.num_top_level();
  w.aborted = c.aborted();
  w.trailing = c.trailing();
  w.descs = c.num_descs();
  return w;
}

void ExpectAgrees(serde::ByteView in, const std::string& what) {
  absl::StatusOr<Stream> s = DecodeStream(in);
  const Walk w = CursorWalk(in);
  ASSERT_EQ(s.ok(), w.status.ok()) << what << ": decoder " << s.status() << ", cursor "
                                   << w.status;
  if (!s.ok()) {
    StreamCursor c(in);
    EXPECT_EQ(c.CanonicalError(), s.status()) << what;
    return;
  }
  EXPECT_EQ(w.items, s->num_items()) << what;
  EXPECT_EQ(w.top_level, s->top_level().size()) << what;
  EXPECT_EQ(w.aborted, s->aborted()) << what;
  EXPECT_EQ(w.trailing, s->trailing()) << what;
  EXPECT_EQ(w.descs, s->num_descs()) << what;
}

TEST(StreamCursorTest, ReadsEveryRealStreamAsTheDecoderDoes) {
  const std::vector<std::filesystem::path> files = JavaStreams();
  ASSERT_GE(files.size(), 50u) << "test data missing";
  for (const auto& f : files) {
    const std::string bytes = Slurp(f);
    ExpectAgrees(serde::AsBytes(bytes), f.string());
  }
}

TEST(StreamCursorTest, AcceptsAndRefusesTruncationsAndFlipsAsTheDecoderDoes) {
  const std::vector<std::filesystem::path> files = JavaStreams();
  uint64_t cases = 0;
  for (const auto& f : files) {
    const std::string bytes = Slurp(f);
    if (bytes.size() > (256u << 10)) continue;
    const size_t n = bytes.size();
    // ~60 positions per file: truncate there, and flip one byte there.
    const size_t step = std::max<size_t>(1, n / 60);
    for (size_t at = 0; at < n; at += step) {
      ExpectAgrees(serde::AsBytes(absl::string_view(bytes).substr(0, at)),
                   absl::StrCat(f.string(), " cut at ", at));
      std::string flipped = bytes;
      flipped[at] = static_cast<char>(flipped[at] ^ (at % 7 == 0 ? 0x01 : 0x40));
      ExpectAgrees(serde::AsBytes(flipped), absl::StrCat(f.string(), " flip at ", at));
      cases += 2;
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  EXPECT_GE(cases, 1000u);
}

// A referenced object read again: the replay sees the fields of the
// definition and assigns no new handles.
TEST(StreamCursorTest, AtDefinitionReadsAReferencedObjectAgain) {
  const std::vector<std::filesystem::path> files = JavaStreams();
  uint64_t replays = 0;
  for (const auto& f : files) {
    const std::string bytes = Slurp(f);
    if (!DecodeStream(serde::AsBytes(bytes)).ok()) continue;  // refused alike above
    StreamCursor c(serde::AsBytes(bytes));
    ASSERT_TRUE(c.ReadHeader()) << f;
    std::vector<CursorValue> defs;  // objects defined so far (first 64)
    // Walk the stream; at every reference to an object, re-read it and
    // compare with the definition's first reading.
    struct Walker {
      StreamCursor& c;
      std::vector<CursorValue>& defs;
      uint64_t& replays;
      bool Value() {
        CursorValue v;
        if (!c.ReadValue(&v)) return false;
        return Body(&v);
      }
      bool Body(CursorValue* v) {
        if (v->reference && v->tag == kTcObject) {
          const uint64_t before = c.num_handles();
          uint64_t end = 0;
          if (!c.DefinitionEnd(*v, &end)) return false;
          EXPECT_EQ(before, c.num_handles());
          for (const CursorValue& d : defs) {
            if (d.def == v->def) {
              EXPECT_EQ(end, d.end);
              EXPECT_EQ(d.desc, v->desc);
              ++replays;
            }
          }
          return true;
        }
        if (v->end != 0) return true;
        if (v->tag == kTcObject) {
          struct Vis {
            Walker& w;
            void Class(DescId, uint64_t) {}
            bool Field(DescId, uint32_t) { return w.Value(); }
            bool Annotation(DescId) { return w.c.SkipAnnotation(); }
          } vis{*this};
          if (!c.ReadObjectData(v, vis)) return false;
          if (defs.size() < 4096) defs.push_back(*v);
          return true;
        }
        return c.ReadElements(v, [this](uint64_t) { return Value(); });
      }
    } walker{c, defs, replays};
    while (!c.AtStreamEnd() && c.ok()) {
      CursorValue v;
      if (!c.ReadContent(&v)) break;
      if (v.tag == kTcBlockData || v.tag == kTcBlockDataLong || v.tag == kTcReset) continue;
      if (!walker.Body(&v)) break;
    }
    EXPECT_TRUE(c.ok()) << f << ": " << c.status();
  }
  EXPECT_GT(replays, 0u) << "no stream refers back to an object";
}

}  // namespace
}  // namespace flinkstate::javaobj
