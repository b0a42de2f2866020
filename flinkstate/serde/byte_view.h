// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: byte_view.h
// -----------------------------------------------------------------------------
// Byte views and source ranges: the vocabulary every layer uses to describe
// where a decoded item came from, without copying it.
//
//   ```c++ (const serde::MappedFile& file)
//   serde::ByteView all = file.bytes();
//   serde::SourceRange r{16, 4};            // bytes [16, 20) of the input
//   if (r.end() > all.size()) return absl::OutOfRangeError("short file");
//   serde::ByteView four = Slice(all, r);   // a view, no copy
//   ```
//
// Thread safety: views and ranges are plain values; any number of threads may
// read the same bytes through their own views while nobody writes them.

#ifndef FLINKSTATE_SERDE_BYTE_VIEW_H_
#define FLINKSTATE_SERDE_BYTE_VIEW_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/types/span.h"

namespace flinkstate::serde {

// A read-only view of bytes. Never owns.
//
// Lifetime: valid while the buffer it was taken from (usually a `MappedFile`)
// is alive and unmodified.
using ByteView = absl::Span<const uint8_t>;

// A half-open byte range `[offset, offset + size)` of the input, in bytes from
// the first byte of the input (not of any enclosing structure).
struct SourceRange {
  uint64_t offset = 0;
  uint64_t size = 0;

  uint64_t end() const { return offset + size; }
  bool Contains(const SourceRange& other) const {
    return other.offset >= offset && other.end() <= end();
  }
  friend bool operator==(const SourceRange& a, const SourceRange& b) {
    return a.offset == b.offset && a.size == b.size;
  }
  friend bool operator!=(const SourceRange& a, const SourceRange& b) {
    return !(a == b);
  }
};

// Returns the bytes of `range` inside `whole`.
// Precondition: `range.end() <= whole.size()` (checked with an assertion-free
// clamp: an out-of-range request yields an empty view).
inline ByteView Slice(ByteView whole, SourceRange range) {
  if (range.offset > whole.size() || range.size > whole.size() - range.offset) {
    return ByteView();
  }
  return whole.subspan(static_cast<size_t>(range.offset),
                       static_cast<size_t>(range.size));
}

// Views text bytes as a `absl::string_view` (no copy; same lifetime as `bytes`).
inline absl::string_view AsStringView(ByteView bytes) {
  return absl::string_view(reinterpret_cast<const char*>(bytes.data()),
                          bytes.size());
}

// Views a string's bytes as a `ByteView` (no copy; same lifetime as `s`).
inline ByteView AsBytes(absl::string_view s) {
  return ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

}  // namespace flinkstate::serde

#endif  // FLINKSTATE_SERDE_BYTE_VIEW_H_
