// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/metadata_generator.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/serde/buffered_fd_writer.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/modified_utf8.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate {
namespace {

// --- MurmurHash3 x64_128 ------------------------------------------------------

inline uint64_t Rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

inline uint64_t Fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

inline uint64_t LoadLittleEndian64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void StoreLittleEndian64(uint64_t v, uint8_t* p) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// --- Deterministic pseudo-randomness ------------------------------------------

// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast and well mixed.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform enough in [lo, hi] for sizes.
  uint32_t Between(uint32_t lo, uint32_t hi) {
    return lo + static_cast<uint32_t>(Next() % (hi - lo + 1));
  }

 private:
  uint64_t state_;
};

// A version-4 UUID string from `rng` ("8-4-4-4-12" lowercase hex).
std::string Uuid(SplitMix64& rng) {
  const uint64_t hi = (rng.Next() & ~0xF000ULL) | 0x4000ULL;
  const uint64_t lo = (rng.Next() & ~(3ULL << 62)) | (2ULL << 62);
  return absl::StrCat(absl::Hex(hi >> 32, absl::kZeroPad8), "-",
                      absl::Hex((hi >> 16) & 0xFFFF, absl::kZeroPad4), "-",
                      absl::Hex(hi & 0xFFFF, absl::kZeroPad4), "-",
                      absl::Hex(lo >> 48, absl::kZeroPad4), "-",
                      absl::Hex(lo & 0xFFFFFFFFFFFFULL, absl::kZeroPad12));
}

// Element sizes of one state in one stream, repeating with period kPeriod so
// that the end of the first n elements has a closed form (the offsets of a
// later state in the same stream start there, and computing it must not cost a
// pass over a billion elements).
class ElementSizes {
 public:
  static constexpr uint32_t kPeriod = 64;

  ElementSizes(SplitMix64& rng, uint32_t lo, uint32_t hi) {
    prefix_[0] = 0;
    for (uint32_t i = 0; i < kPeriod; ++i) {
      size_[i] = rng.Between(lo, hi);
      prefix_[i + 1] = prefix_[i] + size_[i];
    }
  }
  uint32_t size(uint64_t i) const { return size_[i % kPeriod]; }
  // Bytes taken by elements [0, n).
  uint64_t Total(uint64_t n) const {
    return (n / kPeriod) * prefix_[kPeriod] + prefix_[n % kPeriod];
  }

 private:
  uint32_t size_[kPeriod];
  uint64_t prefix_[kPeriod + 1];
};

// --- Output ---------------------------------------------------------------------

// The buffered big-endian writer (counting only with fd < 0) plus the two
// shapes of this format it writes in bulk.
class Output : public serde::BufferedFdWriter {
 public:
  explicit Output(int fd) : serde::BufferedFdWriter(fd, "generator") {}

  // `writeUTF`; `text` was validated by `CheckShape`.
  void Utf(absl::string_view text) {
    absl::StatusOr<std::string> m = serde::Utf8ToModifiedUtf8(text);
    if (!m.ok() || m->size() > serde::kMaxWriteUtfBytes) {
      Fail(absl::InternalError("generator: unencodable string"));
      return;
    }
    U16(static_cast<uint16_t>(m->size()));
    Bytes(m->data(), m->size());
  }

  // i32 count, then `count` i64 offsets: element i starts at
  // `first + sizes.Total(i)`.
  void Offsets(uint64_t count, uint64_t first, const ElementSizes& sizes) {
    I32(static_cast<int32_t>(count));
    uint64_t offset = first;
    for (uint64_t i = 0; i < count; ++i) {
      I64(static_cast<int64_t>(offset));
      offset += sizes.size(i);
    }
  }

  absl::Status Finish() {
    Flush();
    return status();
  }
};

// --- The file ---------------------------------------------------------------------

std::string Hex(const std::array<uint8_t, 16>& id) {
  std::string s;
  for (uint8_t b : id) absl::StrAppend(&s, absl::Hex(b, absl::kZeroPad2));
  return s;
}

absl::Status CheckShape(const IncidentShape& s) {
  if (s.version < 3 || s.version > 5) {
    return absl::InvalidArgumentError(absl::StrCat(
        "generator: metadata version ", s.version, " (3, 4 or 5 supported)"));
  }
  if (s.checkpoint_id < 0) {
    return absl::InvalidArgumentError("generator: negative checkpoint id");
  }
  if (s.parallelism < 1 || s.max_parallelism < s.parallelism ||
      s.max_parallelism > 32768) {
    return absl::InvalidArgumentError(absl::StrCat(
        "generator: parallelism ", s.parallelism, " and max parallelism ",
        s.max_parallelism, " (need 1 <= parallelism <= max parallelism <= 32768)"));
  }
  for (uint64_t n : {s.union_entries_per_subtask, s.split_entries_per_subtask}) {
    if (n > 0x7FFFFFFF) {
      return absl::InvalidArgumentError(absl::StrCat(
          "generator: ", n, " entries do not fit an i32 offsets count"));
    }
  }
  for (const std::string* t :
       {&s.job_id, &s.source_uid, &s.source_name, &s.keyed_uid, &s.keyed_name,
        &s.union_state_name, &s.split_state_name}) {
    absl::StatusOr<std::string> m = serde::Utf8ToModifiedUtf8(*t);
    if (!m.ok() || m->size() > serde::kMaxWriteUtfBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "generator: '", t->substr(0, 40), "' cannot be written with writeUTF"));
    }
  }
  if (s.version == 5 &&
      (s.source_name.empty() || s.source_uid.empty() || s.keyed_name.empty() ||
       s.keyed_uid.empty())) {
    // Flink's v5 writer refuses present-but-empty names (spec §5.6).
    return absl::InvalidArgumentError("generator: v5 names and uids must not be empty");
  }
  return absl::OkStatus();
}

class IncidentWriter {
 public:
  IncidentWriter(const IncidentShape& shape, Output* out)
      : s_(shape), out_(*out), rng_(shape.seed) {}

  void Write() {
    out_.I32(static_cast<int32_t>(kMetadataMagic));
    out_.I32(static_cast<int32_t>(s_.version));
    out_.I64(s_.checkpoint_id);
    out_.I32(0);  // master states
    out_.I32(2);  // operators
    SourceOperator();
    KeyedOperator();
    if (s_.version >= 4) {
      static constexpr uint8_t kJavaNull[] = {0xAC, 0xED, 0x00, 0x05, 0x70};
      out_.Bytes(kJavaNull, sizeof kJavaNull);
    }
  }

 private:
  void OperatorHeader(const std::string& name, const std::string& uid,
                      const std::array<uint8_t, 16>& id) {
    if (s_.version >= 5) {
      out_.Utf(name);
      out_.Utf(uid);
    }
    out_.Bytes(id.data(), id.size());
    out_.I32(s_.parallelism);
    out_.I32(s_.max_parallelism);
  }

  // A tag-2 or tag-6 handle for a new state file of `size` bytes.
  void StateFile(bool relative, uint64_t size) {
    const std::string uuid = Uuid(rng_);
    if (relative) {
      out_.U8(static_cast<uint8_t>(HandleTag::kRelativeStream));
      out_.Utf(uuid);
      out_.I64(static_cast<int64_t>(size));
    } else {
      out_.U8(static_cast<uint8_t>(HandleTag::kFileStream));
      out_.I64(static_cast<int64_t>(size));
      out_.Utf(absl::StrCat("file:/checkpoints/", s_.job_id, "/chk-",
                            s_.checkpoint_id, "/", uuid));
    }
  }

  void NoChannelState() {
    out_.I32(0);  // input channels
    out_.I32(0);  // result subpartitions
  }

  void SourceOperator() {
    const std::array<uint8_t, 16> id = OperatorIdFromUid(s_.source_uid);
    OperatorHeader(s_.source_name, s_.source_uid, id);
    // Coordinator (split enumerator) state, inline, named by the operator id.
    out_.U8(static_cast<uint8_t>(HandleTag::kByteStream));
    out_.Utf(Hex(id));
    out_.I32(static_cast<int32_t>(s_.coordinator_state_bytes));
    for (uint32_t i = 0; i < s_.coordinator_state_bytes; ++i) {
      out_.U8(static_cast<uint8_t>(rng_.Next()));
    }
    out_.I32(s_.parallelism);
    for (int32_t subtask = 0; subtask < s_.parallelism; ++subtask) {
      out_.I32(subtask);
      out_.I32(1);  // managed operator state present
      out_.U8(static_cast<uint8_t>(HandleTag::kPartitionableOperator));
      out_.I32(2);
      // Stream: proxy header, the union elements, then the split elements.
      const uint64_t header = rng_.Between(1300, 1500);
      const ElementSizes union_sizes(rng_, 19, 27);
      const ElementSizes split_sizes(rng_, 40, 56);
      const uint64_t union_end =
          header + union_sizes.Total(s_.union_entries_per_subtask);
      const uint64_t split_end =
          union_end + split_sizes.Total(s_.split_entries_per_subtask);
      out_.Utf(s_.union_state_name);
      out_.U8(static_cast<uint8_t>(DistributionMode::kUnion));
      out_.Offsets(s_.union_entries_per_subtask, header, union_sizes);
      out_.Utf(s_.split_state_name);
      out_.U8(static_cast<uint8_t>(DistributionMode::kSplitDistribute));
      out_.Offsets(s_.split_entries_per_subtask, union_end, split_sizes);
      StateFile(s_.operator_state_relative, split_end);
      out_.I32(0);  // no raw operator state
      out_.U8(0);   // no managed keyed state
      out_.U8(0);   // no raw keyed state
      NoChannelState();
    }
  }

  void KeyedOperator() {
    OperatorHeader(s_.keyed_name, s_.keyed_uid, OperatorIdFromUid(s_.keyed_uid));
    out_.U8(0);  // no coordinator
    out_.I32(s_.parallelism);
    const int64_t p = s_.parallelism;
    const int64_t maxp = s_.max_parallelism;
    for (int32_t subtask = 0; subtask < s_.parallelism; ++subtask) {
      out_.I32(subtask);
      out_.I32(0);  // no managed operator state
      out_.I32(0);  // no raw operator state
      // KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex.
      const int64_t start = (subtask * maxp + p - 1) / p;
      const int64_t end = ((subtask + 1) * maxp - 1) / p;
      const uint64_t groups = static_cast<uint64_t>(end - start + 1);
      out_.U8(static_cast<uint8_t>(HandleTag::kKeyGroupsV2));
      out_.I32(static_cast<int32_t>(start));
      const uint64_t header = rng_.Between(500, 700);
      const ElementSizes group_sizes(rng_, 256, 4096);
      out_.Offsets(groups, header, group_sizes);
      StateFile(s_.keyed_state_relative, header + group_sizes.Total(groups));
      out_.Utf(Uuid(rng_));  // state handle id
      out_.U8(0);            // no raw keyed state
      NoChannelState();
    }
  }

  const IncidentShape& s_;
  Output& out_;
  SplitMix64 rng_;
};

}  // namespace

std::array<uint8_t, 16> MurmurHash3X64_128(absl::string_view data, uint32_t seed) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
  const size_t len = data.size();
  const size_t blocks = len / 16;
  uint64_t h1 = seed;
  uint64_t h2 = seed;
  constexpr uint64_t c1 = 0x87c37b91114253d5ULL;
  constexpr uint64_t c2 = 0x4cf5ad432745937fULL;

  for (size_t i = 0; i < blocks; ++i) {
    uint64_t k1 = LoadLittleEndian64(bytes + 16 * i);
    uint64_t k2 = LoadLittleEndian64(bytes + 16 * i + 8);
    k1 *= c1;
    k1 = Rotl64(k1, 31);
    k1 *= c2;
    h1 ^= k1;
    h1 = Rotl64(h1, 27);
    h1 += h2;
    h1 = h1 * 5 + 0x52dce729;
    k2 *= c2;
    k2 = Rotl64(k2, 33);
    k2 *= c1;
    h2 ^= k2;
    h2 = Rotl64(h2, 31);
    h2 += h1;
    h2 = h2 * 5 + 0x38495ab5;
  }

  const uint8_t* tail = bytes + 16 * blocks;
  uint64_t k1 = 0;
  uint64_t k2 = 0;
  const size_t rest = len & 15;
  for (size_t i = rest; i > 8; --i) k2 ^= uint64_t{tail[i - 1]} << (8 * (i - 9));
  if (rest > 8) {
    k2 *= c2;
    k2 = Rotl64(k2, 33);
    k2 *= c1;
    h2 ^= k2;
  }
  for (size_t i = std::min<size_t>(rest, 8); i > 0; --i) {
    k1 ^= uint64_t{tail[i - 1]} << (8 * (i - 1));
  }
  if (rest > 0) {
    k1 *= c1;
    k1 = Rotl64(k1, 31);
    k1 *= c2;
    h1 ^= k1;
  }

  h1 ^= len;
  h2 ^= len;
  h1 += h2;
  h2 += h1;
  h1 = Fmix64(h1);
  h2 = Fmix64(h2);
  h1 += h2;
  h2 += h1;

  std::array<uint8_t, 16> out;
  StoreLittleEndian64(h1, out.data());
  StoreLittleEndian64(h2, out.data() + 8);
  return out;
}

std::array<uint8_t, 16> OperatorIdFromUid(absl::string_view uid) {
  return MurmurHash3X64_128(uid, 0);
}

absl::StatusOr<uint64_t> IncidentMetadataSize(const IncidentShape& shape) {
  FLINKSTATE_RETURN_IF_ERROR(CheckShape(shape));
  Output counter(-1);
  IncidentWriter(shape, &counter).Write();
  FLINKSTATE_RETURN_IF_ERROR(counter.Finish());
  return counter.size();
}

absl::Status WriteIncidentMetadata(const IncidentShape& shape,
                                   const std::string& path) {
  FLINKSTATE_RETURN_IF_ERROR(CheckShape(shape));
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int err = errno;
    return absl::Status(absl::ErrnoToStatusCode(err),
                        absl::StrCat("generator: cannot create ", path, ": ",
                                     std::strerror(err)));
  }
  Output out(fd);
  IncidentWriter(shape, &out).Write();
  absl::Status status = out.Finish();
  if (::close(fd) != 0 && status.ok()) {
    const int err = errno;
    status = absl::Status(absl::ErrnoToStatusCode(err),
                          absl::StrCat("generator: cannot close ", path, ": ",
                                       std::strerror(err)));
  }
  if (!status.ok()) {
    ::unlink(path.c_str());
    return absl::Status(status.code(),
                        absl::StrCat(status.message(), " (writing ", path, ")"));
  }
  return absl::OkStatus();
}

}  // namespace flinkstate
