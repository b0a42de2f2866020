// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/streamed_edit.h"

#include <algorithm>
#include <cstring>

#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"
#include "flinkstate/serde/modified_utf8.h"

namespace flinkstate {
namespace {

constexpr size_t kDigestBlock = size_t{64} << 10;

}  // namespace

void EditDigest::Append(const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const size_t take = std::min(n, kDigestBlock - block_.size());
    block_.append(p, take);
    p += take;
    n -= take;
    if (block_.size() == kDigestBlock) Fold();
  }
}

void EditDigest::Fold() {
  // Two 64-bit lanes, each the hash of the block and its lane so far.
  uint64_t lane[2];
  std::memcpy(lane, state_.data(), sizeof(lane));
  const absl::string_view block(block_);
  lane[0] = absl::HashOf(block, lane[0]);
  lane[1] = absl::HashOf(lane[1], uint8_t{1}, block);
  std::memcpy(state_.data(), lane, sizeof(lane));
  block_.clear();
}

void EditDigest::AddU64(uint64_t v) {
  uint8_t b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
  Append(b, 8);
}

void EditDigest::AddBytes(serde::ByteView b) {
  AddU64(b.size());
  Append(b.data(), b.size());
}

std::array<uint8_t, 16> EditDigest::Finish() {
  Fold();
  return state_;
}

OperatorState OperatorShell(const OperatorState& op) {
  OperatorState s;
  s.range = op.range;
  s.name = op.name;
  s.uid = op.uid;
  s.id = op.id;
  s.parallelism = op.parallelism;
  s.max_parallelism = op.max_parallelism;
  s.chain_length = op.chain_length;
  s.coordinator_state.tag = op.coordinator_state.tag;
  s.coordinator_state.range = op.coordinator_state.range;
  s.num_subtasks = op.num_subtasks;
  return s;
}

absl::Status DecodeMasterStateNames(serde::ByteView input, CheckpointMetadata* m) {
  for (MasterState& ms : m->master_states) {
    if (!ms.name.value.empty() || ms.name.range.size <= 2) continue;
    absl::StatusOr<std::string> name = serde::ModifiedUtf8ToUtf8(UtfBody(input, ms.name));
    if (!name.ok()) return name.status();
    ms.name.value = *std::move(name);
  }
  return absl::OkStatus();
}

serde::ByteView UtfBody(serde::ByteView input, const Utf& u) {
  return serde::Slice(input, SourceRange{u.range.offset + 2, u.range.size - 2});
}

std::string TextOf(serde::ByteView input, const Utf& u) {
  if (!u.value.empty() || u.range.size < 2) return u.value;
  const serde::ByteView b = UtfBody(input, u);
  if (serde::IsPlainAscii(b)) return std::string(serde::AsStringView(b));
  absl::StatusOr<std::string> t = serde::ModifiedUtf8ToUtf8(b);
  return t.ok() ? *std::move(t) : std::string();
}

}  // namespace flinkstate
