// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: gzip.h
// -----------------------------------------------------------------------------
// `in` compressed as one gzip member (RFC 1952) by zlib, the referee for the
// gzip inputs the tests feed to serde::DecodeInputFormat. Test-only; a
// failure of zlib fails the calling test. Thread-safe.

#ifndef FLINKSTATE_TESTS_TESTING_GZIP_H_
#define FLINKSTATE_TESTS_TESTING_GZIP_H_

#include <zlib.h>

#include <string>

#include "gtest/gtest.h"

namespace flinkstate::testing {

inline std::string Gzip(const std::string& in) {
  z_stream z{};
  // 16 + MAX_WBITS: a gzip header and trailer around the deflate stream.
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, in.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(&out[0]);
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

}  // namespace flinkstate::testing

#endif  // FLINKSTATE_TESTS_TESTING_GZIP_H_
