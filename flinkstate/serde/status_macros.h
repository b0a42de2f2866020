// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: status_macros.h
// -----------------------------------------------------------------------------
// Early-return macros for `absl::Status` / `absl::StatusOr<T>`, with the same
// semantics as upstream Abseil's `ABSL_RETURN_IF_ERROR` / `ABSL_ASSIGN_OR_RETURN`
// and Arrow's `ARROW_RETURN_NOT_OK` / `ARROW_ASSIGN_OR_RAISE` (Debian's Abseil
// 20220623 has neither), so that a later switch is a rename.
//
//   ```c++ (serde::DataInput& in, const std::string& path)
//   int32_t n;
//   FLINKSTATE_RETURN_IF_ERROR(in.ReadInt32(&n));
//   FLINKSTATE_ASSIGN_OR_RETURN(MappedFile f, MappedFile::Open(path));
//   ```
//
// Traps: `FLINKSTATE_ASSIGN_OR_RETURN` expands to several statements, so it
// cannot be the body of an unbraced `if`; `lhs` may declare a variable, which
// then lives in the enclosing scope.
//
// Thread safety: macros only; they add no state.

#ifndef FLINKSTATE_SERDE_STATUS_MACROS_H_
#define FLINKSTATE_SERDE_STATUS_MACROS_H_

#include "absl/strings/string_view.h"
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

#define FLINKSTATE_RETURN_IF_ERROR(...)                   \
  do {                                                    \
    ::absl::Status flinkstate_status_ = (__VA_ARGS__);    \
    if (ABSL_PREDICT_FALSE(!flinkstate_status_.ok())) {   \
      return flinkstate_status_;                          \
    }                                                     \
  } while (false)

#define FLINKSTATE_STATUS_CONCAT_INNER_(a, b) a##b
#define FLINKSTATE_STATUS_CONCAT_(a, b) FLINKSTATE_STATUS_CONCAT_INNER_(a, b)

#define FLINKSTATE_ASSIGN_OR_RETURN(lhs, ...)                    \
  FLINKSTATE_ASSIGN_OR_RETURN_IMPL_(                             \
      FLINKSTATE_STATUS_CONCAT_(flinkstate_statusor_, __LINE__), lhs, \
      (__VA_ARGS__))

#define FLINKSTATE_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                      \
  if (ABSL_PREDICT_FALSE(!statusor.ok())) {                     \
    return std::move(statusor).status();                        \
  }                                                             \
  lhs = std::move(statusor).value()

namespace flinkstate::serde {

// Returns `status` with `prefix` and ": " put in front of its message, keeping
// its code. OK stays OK. Used to add the item path while an error travels up
// ("metadata: operators[2].subtasks[0]: " + "unexpected end of input ...").
inline absl::Status Annotate(const absl::Status& status,
                             absl::string_view prefix) {
  if (status.ok()) return status;
  // Payloads (an ErrorLocation, error_location.h) travel with the error.
  absl::Status out(status.code(), absl::StrCat(prefix, ": ", status.message()));
  status.ForEachPayload([&out](absl::string_view url, const absl::Cord& payload) {
    out.SetPayload(url, payload);
  });
  return out;
}

}  // namespace flinkstate::serde

#endif  // FLINKSTATE_SERDE_STATUS_MACROS_H_
