// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: object_transaction.h
// -----------------------------------------------------------------------------
// Replacing an object-store object safely, without rename: the object-store
// counterpart of serde/file_transaction.h's `WriteFileTransaction`.
//
//   ```c++ (const serde::MappedFile& input, const serde::EditPlan& plan, const serde::OutputVerifier& verify)
//   objstore::ObjectWrite w;
//   w.target = "s3://bucket/job/chk-7/_metadata";
//   w.backup = w.target + ".bak";
//   FLINKSTATE_RETURN_IF_ERROR(objstore::RecoverObjectWrite(w.target).status());
//   FLINKSTATE_RETURN_IF_ERROR(objstore::WriteObjectVerified(w, input, plan, verify));
//   ```
//
// The protocol (keys beside the target; <token> unique per run):
//   1. a journal `<dir>/.flinkstate-txn-<token>.journal` (state `prepare`)
//      naming the target, its temporary key `<target>.flinkstate-tmp-<token>`,
//      the backup and the ETag of the original the edit was planned from,
//      created with `If-None-Match: *`;
//   2. the output written to a local temporary file and verified, uploaded to
//      the temporary key (multipart when large) tagged with
//      `x-amz-meta-flinkstate-txn: <token>`, downloaded again and compared
//      byte for byte and verified;
//   3. the backup: a server-side copy of the original created with
//      `If-None-Match: *` (an existing backup, or a concurrent run, is
//      refused) and `x-amz-copy-source-if-match` the planned ETag;
//   4. a checked HEAD: the target still has the planned ETag, else the
//      whole write is refused (someone else changed it; nothing replaced);
//   5. the journal rewritten to state `commit`;
//   6. the server-side copy of the temporary key over the target, with
//      `If-Match` the planned ETag where the server honours it (probed once
//      per run; else step 4's check is all there is, a window of one
//      request), then a HEAD that the target carries the token;
//   7. the temporary key and the journal deleted.
// A failure before 6 deletes what was made. A rerun after a kill
// (`RecoverObjectWrite`) rolls an interrupted write back: `prepare` deletes
// the temporary key and the backup it made; `commit` copies the backup back
// over a target that carries the token (a target changed by someone else is
// left alone and reported), then deletes the rest, so that the rerun repeats
// the edit on the original, as for local files.
//
// Thread safety: the functions may be called from several threads; two
// writes of one target exclude each other by the backup's `If-None-Match`.

#ifndef FLINKSTATE_OBJSTORE_OBJECT_TRANSACTION_H_
#define FLINKSTATE_OBJSTORE_OBJECT_TRANSACTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "flinkstate/serde/edit_plan.h"
#include "flinkstate/serde/mapped_file.h"
#include "flinkstate/serde/splice_writer.h"

namespace flinkstate::objstore {

struct ObjectWrite {
  std::string target;  // s3:// URL
  std::string backup;  // s3:// URL of the backup, "" for none (a new output)
  // The ETag of the original the plan was made from; "" to take it from
  // `input` when `input` is that object (an in-place edit), or for a target
  // replaced whatever it holds (no backup).
  std::string expected_etag;
};

// What a write transferred, for dry runs and reports.
struct ObjectWriteStats {
  uint64_t output_bytes = 0;
  uint64_t bytes_up = 0;
  uint64_t bytes_down = 0;  // the read-back
  uint64_t server_side_copy_bytes = 0;
  bool if_match_honoured = false;
};

// Runs the protocol above for `plan` over `input`.
// Return values: the S3 errors (naming key, status and code); a verifier's
// error; `FailedPrecondition` if the backup exists, or the target changed
// since it was read ("... changed by someone else ...; nothing was
// replaced"). Errors before the commit end "(nothing was replaced)".
[[nodiscard]] absl::Status WriteObjectVerified(const ObjectWrite& w,
                                               const serde::MappedFile& input,
                                               const serde::EditPlan& plan,
                                               const serde::OutputVerifier& verify,
                                               ObjectWriteStats* stats = nullptr);

// Rolls back every interrupted write of `target` (journals beside it that
// name it). Returns what it did, one line each.
[[nodiscard]] absl::StatusOr<std::vector<std::string>> RecoverObjectWrite(
    const std::string& target);

// The ETag of the object `file` was opened from ("" for a local file).
std::string OpenedEtag(const serde::MappedFile& file);

}  // namespace flinkstate::objstore

#endif  // FLINKSTATE_OBJSTORE_OBJECT_TRANSACTION_H_
