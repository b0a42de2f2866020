// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/objstore/multipart_plan.h"

#include <algorithm>

namespace flinkstate::objstore {
namespace {

// An output run: uploaded bytes, or a copy of one contiguous input range.
struct Run {
  bool copy = false;
  uint64_t output_offset = 0;
  uint64_t size = 0;
  uint64_t source_offset = 0;
};

std::vector<Run> RunsOf(absl::Span<const serde::EditPiece> pieces) {
  std::vector<Run> runs;
  uint64_t out = 0;
  for (const serde::EditPiece& p : pieces) {
    const uint64_t n = p.output_size();
    if (n == 0) continue;
    const bool copy = p.kind == serde::EditPiece::Kind::kCopy;
    if (!runs.empty() && runs.back().copy == copy &&
        (!copy || runs.back().source_offset + runs.back().size == p.range.offset)) {
      runs.back().size += n;
    } else {
      runs.push_back(Run{copy, out, n, copy ? p.range.offset : 0});
    }
    out += n;
  }
  return runs;
}

}  // namespace

std::vector<MultipartPart> PlanMultipartParts(absl::Span<const serde::EditPiece> pieces,
                                              const MultipartLimits& limits) {
  std::vector<MultipartPart> parts;
  bool any_copy = false;
  // Output bytes [pending_at, pending_at + pending) wait to be uploaded.
  uint64_t pending_at = 0, pending = 0;
  // The pending bytes as upload parts of [upload_part_size, 2 x
  // upload_part_size), or one part if fewer.
  const auto flush = [&] {
    const uint64_t n = std::max<uint64_t>(1, pending / limits.upload_part_size);
    uint64_t at = pending_at;
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t size = pending / n + (i < pending % n ? 1 : 0);
      parts.push_back(MultipartPart{MultipartPart::Kind::kUpload, at, size, 0});
      at += size;
    }
    pending_at = at;
    pending = 0;
  };
  for (const Run& r : RunsOf(pieces)) {
    if (!r.copy) {
      if (pending == 0) pending_at = r.output_offset;
      pending += r.size;
      continue;
    }
    // A short uploaded run before the copy borrows the copy's first bytes.
    const uint64_t lend =
        pending > 0 && pending < limits.min_part ? limits.min_part - pending : 0;
    if (r.size < lend || r.size - lend < limits.min_copy) {
      // Not worth a part: uploaded with the bytes around it.
      if (pending == 0) pending_at = r.output_offset;
      pending += r.size;
      continue;
    }
    pending += lend;
    if (pending > 0) flush();
    // The rest as copies of at most max_part each, of near-equal sizes.
    const uint64_t rest = r.size - lend;
    const uint64_t n = (rest + limits.max_part - 1) / limits.max_part;
    uint64_t done = 0;
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t size = rest / n + (i < rest % n ? 1 : 0);
      parts.push_back(MultipartPart{MultipartPart::Kind::kCopy, r.output_offset + lend + done,
                                    size, r.source_offset + lend + done});
      done += size;
    }
    pending_at = r.output_offset + r.size;
    any_copy = true;
  }
  if (pending > 0) flush();  // the last part may be short
  if (!any_copy || parts.size() > limits.max_parts) return {};
  return parts;
}

uint64_t CopiedBytes(absl::Span<const MultipartPart> parts) {
  uint64_t n = 0;
  for (const MultipartPart& p : parts) n += p.kind == MultipartPart::Kind::kCopy ? p.size : 0;
  return n;
}

uint64_t UploadedBytes(absl::Span<const MultipartPart> parts) {
  uint64_t n = 0;
  for (const MultipartPart& p : parts) n += p.kind == MultipartPart::Kind::kUpload ? p.size : 0;
  return n;
}

}  // namespace flinkstate::objstore
