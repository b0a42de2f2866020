// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: endian.h
// -----------------------------------------------------------------------------
// Unchecked big-endian encode/decode of fixed-width integers, after RocksDB's
// `util/coding.h`. Callers check bounds once (e.g. `DataInput::Require`) and
// then use these in hot loops.
//
// Thread safety: pure functions; safe from any thread.

#ifndef FLINKSTATE_SERDE_ENDIAN_H_
#define FLINKSTATE_SERDE_ENDIAN_H_

#include <cstdint>
#include <cstring>

namespace flinkstate::serde {

// REQUIRES: `p` points to at least 2 readable bytes.
inline uint16_t DecodeBigEndian16(const uint8_t* p) {
  return static_cast<uint16_t>((uint16_t{p[0]} << 8) | uint16_t{p[1]});
}
// REQUIRES: `p` points to at least 4 readable bytes.
inline uint32_t DecodeBigEndian32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return __builtin_bswap32(v);
}
// REQUIRES: `p` points to at least 8 readable bytes.
inline uint64_t DecodeBigEndian64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}

// REQUIRES: `p` points to at least 2 writable bytes.
inline void EncodeBigEndian16(uint16_t v, uint8_t* p) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
// REQUIRES: `p` points to at least 4 writable bytes.
inline void EncodeBigEndian32(uint32_t v, uint8_t* p) {
  v = __builtin_bswap32(v);
  std::memcpy(p, &v, 4);
}
// REQUIRES: `p` points to at least 8 writable bytes.
inline void EncodeBigEndian64(uint64_t v, uint8_t* p) {
  v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "endian.h assumes a little-endian host");

}  // namespace flinkstate::serde

#endif  // FLINKSTATE_SERDE_ENDIAN_H_
