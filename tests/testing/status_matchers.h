// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: status_matchers.h
// -----------------------------------------------------------------------------
// gMock matchers for absl::Status / absl::StatusOr (Debian's Abseil has none).
//
//   EXPECT_THAT(in.ReadInt32(&v), IsOk());
//   EXPECT_THAT(Decode(bytes), StatusIs(absl::StatusCode::kOutOfRange, "ends"));

#ifndef FLINKSTATE_TESTS_TESTING_STATUS_MATCHERS_H_
#define FLINKSTATE_TESTS_TESTING_STATUS_MATCHERS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate::testing {

inline const absl::Status& GetStatus(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& s) {
  return s.status();
}

MATCHER(IsOk, "is OK") {
  const absl::Status& s = GetStatus(arg);
  if (!s.ok()) *result_listener << "status is " << s.ToString();
  return s.ok();
}

MATCHER_P2(StatusIs, code, substr,
           "has code " + absl::StatusCodeToString(code) +
               " and a message containing \"" + std::string(substr) + "\"") {
  const absl::Status& s = GetStatus(arg);
  *result_listener << "status is " << s.ToString();
  return s.code() == code &&
         std::string(s.message()).find(substr) != std::string::npos;
}

}  // namespace flinkstate::testing

// Asserts that the StatusOr expression (which may contain commas) is OK and
// moves its value into `lhs`.
#define FLINKSTATE_ASSERT_OK_AND_ASSIGN(lhs, ...)                  \
  auto FLINKSTATE_STATUS_CONCAT_(_aoa_, __LINE__) = (__VA_ARGS__); \
  ASSERT_TRUE(FLINKSTATE_STATUS_CONCAT_(_aoa_, __LINE__).ok()) \
      << FLINKSTATE_STATUS_CONCAT_(_aoa_, __LINE__).status();  \
  lhs = std::move(FLINKSTATE_STATUS_CONCAT_(_aoa_, __LINE__)).value()

#endif  // FLINKSTATE_TESTS_TESTING_STATUS_MATCHERS_H_
