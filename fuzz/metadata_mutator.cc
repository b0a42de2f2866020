// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// A structure-aware libFuzzer mutator for `_metadata` and operator-snapshot
// files. It reads the input with `ReadStateFile`, collects the field
// boundaries the model records (`SourceRange`s of counts, handle tags, mode
// bytes, `writeUTF` strings, offset arrays, state entries, handles and
// operators) and mutates at those boundaries, mostly keeping the file
// well-formed so that the fuzzer gets past the first length check:
//   * a count or i32 field set to an interesting value;
//   * a handle tag or distribution mode byte replaced;
//   * a string body replaced with a different one, its u2 length fixed up
//     (or, sometimes, only the length changed);
//   * an offsets array grown or shrunk with its count fixed up;
//   * a state entry or operator duplicated or removed with its count fixed up;
//   * a handle or entry duplicated or removed without fixing anything.
// Inputs the reader rejects, and one mutation in four, fall back to
// `LLVMFuzzerMutate`. Linked only into libFuzzer builds of the metadata
// targets. Set FLINKSTATE_FUZZ_NO_CUSTOM_MUTATOR=1 to measure without it.

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/handle_walker.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/serde/byte_view.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace flinkstate::fuzz {
namespace {

using serde::ByteView;

enum class FieldKind : uint8_t {
  kInt32,     // a count or other i32
  kTag,       // a handle tag byte
  kMode,      // a distribution mode byte
  kUtf,       // u2 length + body
  kOffsets,   // i32 count + count x i64 (range: the count)
  kCounted,   // a repeated item whose i32 count is at `count_at`
  kBlob,      // a structural range (handle, subtask)
};

struct Field {
  FieldKind kind;
  SourceRange range;
  uint64_t count_at = UINT64_MAX;  // kCounted
};

class Collector : public HandleVisitor {
 public:
  explicit Collector(std::vector<Field>* out) : out_(out) {}
  void Add(FieldKind k, SourceRange r, uint64_t count_at = UINT64_MAX) {
    if (r.size > 0 || k == FieldKind::kOffsets) out_->push_back({k, r, count_at});
  }
  void Utf8(const Utf& u) { Add(FieldKind::kUtf, u.range); }
  void Offsets(const OffsetsArray& a) {
    if (a.range.offset >= 4) Add(FieldKind::kOffsets, {a.range.offset - 4, 4});
  }
  void Stream(const StreamStateHandle& h) {
    Add(FieldKind::kTag, {h.range.offset, 1});
    Add(FieldKind::kBlob, h.range);
    Utf8(h.name);
    Utf8(h.path);
    Utf8(h.logical_file_id);
    Offsets(h.key_group_offsets);
  }
  void OnOperatorHandle(const HandleContext&, const OperatorStateHandle& h) override {
    Add(FieldKind::kTag, {h.range.offset, 1});
    Add(FieldKind::kBlob, h.range);
    Add(FieldKind::kInt32, h.count_range);
    for (const StateNameEntry& e : h.states) {
      Add(FieldKind::kCounted, e.range, h.count_range.offset);
      Utf8(e.name);
      Add(FieldKind::kMode, {e.name.range.end(), 1});
      Offsets(e.offsets);
    }
    Utf8(h.task_owned_directory);
    Utf8(h.shared_directory);
  }
  void OnKeyedHandle(const HandleContext&, const KeyedStateHandle& h) override {
    Add(FieldKind::kTag, {h.range.offset, 1});
    Add(FieldKind::kBlob, h.range);
    Offsets(h.key_group_offsets);
    Utf8(h.state_handle_id);
    Utf8(h.backend_identifier);
    Utf8(h.storage_identifier);
    for (const NamedStreamHandle& n : h.shared_state) Utf8(n.local_path);
    for (const NamedStreamHandle& n : h.private_state) Utf8(n.local_path);
  }
  void OnChannelHandle(const HandleContext&, const ChannelStateHandle& h) override {
    Add(FieldKind::kBlob, h.range);
    Offsets(h.offsets);
  }
  void OnStream(const HandleContext&, const StreamStateHandle& h) override { Stream(h); }

 private:
  std::vector<Field>* out_;
};

std::vector<Field> CollectFields(const StateFile& f) {
  std::vector<Field> fields;
  Collector c(&fields);
  if (f.kind == StateFileKind::kMetadata) {
    const CheckpointMetadata& m = f.metadata;
    c.Add(FieldKind::kInt32, m.operator_count_range);
    for (const OperatorState& op : m.operators) {
      c.Add(FieldKind::kCounted, op.range, m.operator_count_range.offset);
      c.Utf8(op.name);
      c.Utf8(op.uid);
      for (const OperatorSubtaskState& st : op.subtasks) c.Add(FieldKind::kBlob, st.range);
    }
    for (const MasterState& ms : m.master_states) {
      c.Add(FieldKind::kBlob, ms.range);
      c.Utf8(ms.name);
    }
  }
  WalkStateFile(f, &c);
  return fields;
}

uint32_t Get32(const std::string& s, uint64_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(s[at + i]);
  return v;
}
void Put32(std::string* s, uint64_t at, uint32_t v) {
  for (int i = 3; i >= 0; --i, v >>= 8) (*s)[at + i] = static_cast<char>(v & 0xFF);
}

const char* const kStrings[] = {
    "", "a", "file:/tmp/chk-1/a", "s3://bucket/flink/chk-42/", "topic-partition-offset-states",
    "source-state", "\xC0\x80", "\xED\xA0\x80", "\xED\xA0\xBD\xED\xB2\xA9", "\xFF", "\xE2\x82",
    "hdfs://nn:8020/flink/checkpoints/d4c5f0b7a2e94b1f8c3e6a7b9d0f1e2a/shared/x",
    "ROCKSDB", "HEAP", "_metadata"};
const uint32_t kInts[] = {0, 1, 2, 0x7F, 0x80, 0xFF, 0xFFFF, 0x10000, 0x7FFFFFFF,
                          0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 16, 128, 32768};

// Applies one structural mutation to `s`; false if none applied.
bool MutateOnce(std::string* s, const std::vector<Field>& fields, std::mt19937* rng) {
  if (fields.empty()) return false;
  const Field& f = fields[(*rng)() % fields.size()];
  if (f.range.end() > s->size()) return false;
  switch (f.kind) {
    case FieldKind::kInt32: {
      if (f.range.size != 4) return false;
      uint32_t v = Get32(*s, f.range.offset);
      switch ((*rng)() % 3) {
        case 0: v = kInts[(*rng)() % (sizeof(kInts) / sizeof(kInts[0]))]; break;
        case 1: v += ((*rng)() % 2) ? 1 : -1; break;
        default: v = (*rng)(); break;
      }
      Put32(s, f.range.offset, v);
      return true;
    }
    case FieldKind::kTag:
      (*s)[f.range.offset] = static_cast<char>((*rng)() % 4 == 0 ? (*rng)() : (*rng)() % 19);
      return true;
    case FieldKind::kMode:
      (*s)[f.range.offset] = static_cast<char>((*rng)() % 4 == 0 ? (*rng)() : (*rng)() % 4);
      return true;
    case FieldKind::kUtf: {
      if (f.range.size < 2) return false;
      const uint64_t old_body = f.range.size - 2;
      if ((*rng)() % 5 == 0) {  // only the length changes
        const uint16_t len = static_cast<uint16_t>((*rng)() % 3 == 0 ? (*rng)() : old_body + (*rng)() % 5 - 2);
        (*s)[f.range.offset] = static_cast<char>(len >> 8);
        (*s)[f.range.offset + 1] = static_cast<char>(len & 0xFF);
        return true;
      }
      std::string body = kStrings[(*rng)() % (sizeof(kStrings) / sizeof(kStrings[0]))];
      if ((*rng)() % 3 == 0) {  // keep the old text, append to it
        body = s->substr(f.range.offset + 2, old_body) + body;
      }
      if (body.size() > 0xFFFF) return false;
      std::string framed;
      framed += static_cast<char>(body.size() >> 8);
      framed += static_cast<char>(body.size() & 0xFF);
      framed += body;
      s->replace(f.range.offset, f.range.size, framed);
      return true;
    }
    case FieldKind::kOffsets: {
      const uint32_t n = Get32(*s, f.range.offset);
      const uint64_t elems = f.range.end();
      if (elems + uint64_t{n} * 8 > s->size()) return false;
      if ((*rng)() % 2 == 0 && n > 0) {  // shrink
        const uint32_t k = 1 + (*rng)() % n;
        s->erase(elems + uint64_t{n - k} * 8, uint64_t{k} * 8);
        Put32(s, f.range.offset, n - k);
      } else {  // grow by repeating the last element (or zeros)
        const uint32_t k = 1 + (*rng)() % 4;
        std::string add;
        for (uint32_t i = 0; i < k; ++i) {
          add += n > 0 ? s->substr(elems + uint64_t{n - 1} * 8, 8) : std::string(8, '\0');
        }
        s->insert(elems + uint64_t{n} * 8, add);
        Put32(s, f.range.offset, n + k);
      }
      return true;
    }
    case FieldKind::kCounted: {
      if (f.count_at + 4 > s->size() || f.count_at >= f.range.offset) return false;
      const uint32_t n = Get32(*s, f.count_at);
      if ((*rng)() % 2 == 0) {
        s->insert(f.range.end(), s->substr(f.range.offset, f.range.size));
        Put32(s, f.count_at, n + 1);
      } else {
        s->erase(f.range.offset, f.range.size);
        Put32(s, f.count_at, n - 1);
      }
      return true;
    }
    case FieldKind::kBlob: {
      if ((*rng)() % 2 == 0) {
        s->insert(f.range.end(), s->substr(f.range.offset, f.range.size));
      } else {
        s->erase(f.range.offset, f.range.size);
      }
      return true;
    }
  }
  return false;
}

bool Disabled() {
  static const bool off = [] {
    const char* e = std::getenv("FLINKSTATE_FUZZ_NO_CUSTOM_MUTATOR");
    return e != nullptr && e[0] != '\0' && e[0] != '0';
  }();
  return off;
}

}  // namespace
}  // namespace flinkstate::fuzz

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  using namespace flinkstate::fuzz;  // NOLINT: .cc-local entry point
  std::mt19937 rng(seed);
  if (Disabled() || rng() % 4 == 0) return LLVMFuzzerMutate(data, size, max_size);
  absl::StatusOr<flinkstate::StateFile> f =
      flinkstate::ReadStateFile(flinkstate::serde::ByteView(data, size));
  if (!f.ok()) return LLVMFuzzerMutate(data, size, max_size);
  const std::vector<Field> fields = CollectFields(*f);
  std::string s(reinterpret_cast<const char*>(data), size);
  bool changed = false;
  const int rounds = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < rounds; ++i) {
    // Field ranges refer to the unmutated input: stop once the size changed.
    if (s.size() != size) break;
    changed |= MutateOnce(&s, fields, &rng);
  }
  if (!changed || s.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, s.data(), s.size());
  return s.size();
}
