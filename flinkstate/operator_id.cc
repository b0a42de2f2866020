// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/operator_id.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate {
namespace {

inline uint64_t Rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

inline uint64_t Fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

constexpr uint64_t kC1 = 0x87c37b91114253d5ULL;
constexpr uint64_t kC2 = 0x4cf5ad432745937fULL;

// Guava's Murmur3_128Hasher.mixK1 / mixK2.
inline uint64_t MixK1(uint64_t k1) { return Rotl64(k1 * kC1, 31) * kC2; }
inline uint64_t MixK2(uint64_t k2) { return Rotl64(k2 * kC2, 33) * kC1; }

inline uint64_t LoadLittleEndian64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void StoreLittleEndian64(uint64_t v, uint8_t* p) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

std::array<uint8_t, 16> MurmurHash3X64_128(absl::string_view data, uint32_t seed) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
  const size_t len = data.size();
  const size_t blocks = len / 16;
  uint64_t h1 = seed;
  uint64_t h2 = seed;
  for (size_t i = 0; i < blocks; ++i) {
    h1 ^= MixK1(LoadLittleEndian64(bytes + 16 * i));
    h1 = Rotl64(h1, 27);
    h1 += h2;
    h1 = h1 * 5 + 0x52dce729;
    h2 ^= MixK2(LoadLittleEndian64(bytes + 16 * i + 8));
    h2 = Rotl64(h2, 31);
    h2 += h1;
    h2 = h2 * 5 + 0x38495ab5;
  }

  const uint8_t* tail = bytes + 16 * blocks;
  uint64_t k1 = 0;
  uint64_t k2 = 0;
  const size_t rest = len & 15;
  for (size_t i = rest; i > 8; --i) k2 ^= uint64_t{tail[i - 1]} << (8 * (i - 9));
  if (rest > 8) h2 ^= MixK2(k2);
  for (size_t i = std::min<size_t>(rest, 8); i > 0; --i) {
    k1 ^= uint64_t{tail[i - 1]} << (8 * (i - 1));
  }
  if (rest > 0) h1 ^= MixK1(k1);

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

absl::StatusOr<OperatorSelection> OperatorSelection::Parse(
    const std::vector<std::string>& selectors, absl::string_view what) {
  OperatorSelection sel;
  sel.what_ = std::string(what);
  for (const std::string& raw : selectors) {
    if (raw.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": an empty --operator"));
    }
    Target t;
    const std::string lower = absl::AsciiStrToLower(raw);
    t.is_id = !absl::StartsWith(raw, "uid:") && lower.size() == 32 &&
              lower.find_first_not_of("0123456789abcdef") == std::string::npos;
    if (t.is_id) {
      for (int i = 0; i < 16; ++i) {
        t.id[i] = static_cast<uint8_t>(std::stoi(lower.substr(2 * i, 2), nullptr, 16));
      }
      t.text = lower;
    } else {
      absl::string_view uid = raw;
      if (absl::StartsWith(uid, "uid:")) uid.remove_prefix(4);
      t.id = OperatorIdFromUid(uid);
      t.text = std::string(uid);
    }
    sel.targets_.push_back(std::move(t));
  }
  return sel;
}

bool OperatorSelection::Selects(const std::array<uint8_t, 16>& id) {
  if (targets_.empty()) return true;
  bool selected = false;
  for (Target& t : targets_) {
    if (t.id == id) {
      t.matched = true;
      selected = true;
    }
  }
  return selected;
}

absl::Status OperatorSelection::CheckAllMatched(const std::vector<OperatorState>& ops) const {
  for (const Target& t : targets_) {
    if (t.matched) continue;
    std::string present;
    for (const OperatorState& op : ops) {
      absl::StrAppend(&present, present.empty() ? "" : ", ", op.IdHex());
      if (!op.uid.value.empty()) absl::StrAppend(&present, " (uid ", op.uid.value, ")");
    }
    return absl::NotFoundError(absl::StrCat(
        what_, ": no operator ", t.is_id ? "with ID " : "with uid ", absl::CHexEscape(t.text),
        " in the file; nothing was written (operators: ", present.empty() ? "none" : present,
        ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int>> SelectOperators(const StateFile& file,
                                                 const std::vector<std::string>& selectors,
                                                 absl::string_view what) {
  std::vector<int> out;
  if (selectors.empty()) return out;
  if (file.kind == StateFileKind::kOperatorSnapshot) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": operator-snapshot files carry no operator ID; drop --operator"));
  }
  FLINKSTATE_ASSIGN_OR_RETURN(OperatorSelection sel, OperatorSelection::Parse(selectors, what));
  const std::vector<OperatorState>& ops = file.metadata.operators;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (sel.Selects(ops[i].id)) out.push_back(static_cast<int>(i));
  }
  FLINKSTATE_RETURN_IF_ERROR(sel.CheckAllMatched(ops));
  return out;
}

}  // namespace flinkstate
