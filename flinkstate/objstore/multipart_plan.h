// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: multipart_plan.h
// -----------------------------------------------------------------------------
// Splitting an edit plan's output into the parts of an S3 multipart upload
// in which the unchanged input ranges are not uploaded again: each part is
// either a server-side copy of one contiguous range of the original object
// (`UploadPartCopy` with `x-amz-copy-source-range`) or output bytes uploaded
// (`UploadPart`). A pure function: no requests, no I/O.
//
//   ```c++ (const serde::EditPlan& plan)
//   std::vector<objstore::MultipartPart> parts =
//       objstore::PlanMultipartParts(plan.pieces(), objstore::MultipartLimits{});
//   if (parts.empty()) { /* copies do not pay: a plain upload */ }
//   ```
//
// S3's limits (`MultipartLimits`): every part but the last at least 5 MiB,
// none above 5 GiB, at most 10,000 parts. An uploaded run shorter than the
// minimum that is followed by a copy borrows the copy's first bytes (they are
// uploaded too); a copy is used only where at least `min_copy` bytes of it
// are left after that.
//
// Thread safety: the functions keep no state; call them from any thread.

#ifndef FLINKSTATE_OBJSTORE_MULTIPART_PLAN_H_
#define FLINKSTATE_OBJSTORE_MULTIPART_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "flinkstate/serde/edit_plan.h"

namespace flinkstate::objstore {

struct MultipartLimits {
  uint64_t min_part = uint64_t{5} << 20;   // every part but the last (S3)
  uint64_t max_part = uint64_t{5} << 30;   // every part (S3)
  uint32_t max_parts = 10000;              // (S3)
  // Uploaded runs are cut into parts of [upload_part_size, 2 x
  // upload_part_size) (one shorter part for a run shorter than that).
  uint64_t upload_part_size = uint64_t{16} << 20;
  // The least of a copy range worth a part of its own (after lending bytes
  // to a short uploaded run before it); shorter ranges are uploaded.
  uint64_t min_copy = uint64_t{5} << 20;
};

// One part, in output order; the parts tile the output exactly.
struct MultipartPart {
  enum class Kind : uint8_t { kUpload, kCopy };
  Kind kind = Kind::kUpload;
  uint64_t output_offset = 0;  // where the part starts in the output
  uint64_t size = 0;
  uint64_t source_offset = 0;  // kCopy: the input range's start

  bool operator==(const MultipartPart& o) const {
    return kind == o.kind && output_offset == o.output_offset && size == o.size &&
           source_offset == o.source_offset;
  }
};

// The parts for the output of `pieces` (an edit plan's stored pieces; copy
// pieces address the original object). Adjacent copies of contiguous input
// ranges make one range. Returns no parts when no copy part results (nothing
// worth copying, or more parts than `max_parts`): then the plain upload is
// the one to make.
// Precondition: `limits.min_part <= limits.min_copy`,
// `2 * limits.upload_part_size <= limits.max_part`,
// `limits.min_part <= limits.upload_part_size`.
std::vector<MultipartPart> PlanMultipartParts(absl::Span<const serde::EditPiece> pieces,
                                              const MultipartLimits& limits);

// Bytes of `parts` copied server-side / uploaded.
uint64_t CopiedBytes(absl::Span<const MultipartPart> parts);
uint64_t UploadedBytes(absl::Span<const MultipartPart> parts);

}  // namespace flinkstate::objstore

#endif  // FLINKSTATE_OBJSTORE_MULTIPART_PLAN_H_
