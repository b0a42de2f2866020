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
//      the temporary key (multipart when large; then the ranges the edit
//      keeps are server-side part copies of the original where that pays,
//      `PlanComposedUpload`) tagged with `x-amz-meta-flinkstate-txn:
//      <token>`, downloaded again and compared byte for byte and verified;
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
// A failure before 6 deletes what was made, the journal last (kept, for a
// rerun, if a delete fails or the commit record's answer was lost); a
// temporary key that cannot be deleted after 6 keeps the journal too. After a kill, the next write
// beside the target (`RecoverObjectWrite`, the same resolution as
// `RecoverObjectTransactions` below, whichever command runs it) resolves the
// journal by its state, as for local files: `prepare` deletes the temporary
// key and the backup it made (tagged with the token); `commit` completes the
// copy of the verified temporary key over a target that still has the
// planned ETag (a target changed by someone else is left alone and
// reported), then deletes the rest; the backup stays.
//
// Thread safety: the functions may be called from several threads; two
// writes of one target exclude each other by the backup's `If-None-Match`.

#ifndef FLINKSTATE_OBJSTORE_OBJECT_TRANSACTION_H_
#define FLINKSTATE_OBJSTORE_OBJECT_TRANSACTION_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "flinkstate/objstore/multipart_plan.h"
#include "flinkstate/objstore/s3_client.h"
#include "flinkstate/serde/edit_plan.h"
#include "flinkstate/serde/file_transaction.h"
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
  // What the write does (e.g. the command line), kept in its journal and
  // handed back by recovery (serde::RecoveredTransaction::intent).
  std::string intent;
  // The store's requests (not owned; must outlive the call); null: a new
  // S3Client of `CurrentS3Config()`. Tests inject failures through it.
  ObjectClient* client = nullptr;
};

// What a write transferred, for dry runs and reports.
struct ObjectWriteStats {
  uint64_t output_bytes = 0;
  uint64_t bytes_up = 0;
  uint64_t bytes_down = 0;  // the read-back
  uint64_t server_side_copy_bytes = 0;
  // Of `server_side_copy_bytes`: ranges of the original copied into the
  // temporary key instead of uploaded (`PlanComposedUpload`).
  uint64_t part_copy_bytes = 0;
  // What the server was found to honour on a copy (probed by the run).
  bool if_match_honoured = false;
  bool if_none_match_honoured = false;
};

// The refusal of a write whose backup object `backup` exists already (the
// backup of `target` an earlier run kept, or another run's, which the backup
// excludes): `FailedPrecondition` naming both. As `WriteObjectVerified` and
// `CommitObjects` refuse it (they add "(nothing was replaced)").
[[nodiscard]] absl::Status BackupExistsError(const std::string& backup, const std::string& target);

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

// The ETag of the object `file` was opened from ("" for a local file).
std::string OpenedEtag(const serde::MappedFile& file);

// Step 2's upload of the output of `plan` over `input` as a multipart upload
// whose unchanged ranges are server-side copies of `input`'s object
// (UploadPartCopy, `x-amz-copy-source-if-match` its ETag as opened): made
// where `client` offers part copies (`ObjectClient::part_copy`, unless
// FLINKSTATE_S3_PART_COPY=0), the output is above its multipart threshold,
// `input` was opened from an object (not a local file), the plan stores its
// pieces (not streamed), and `PlanMultipartParts` finds copies worth making.
// None otherwise: the output is uploaded in full. No requests. The output is
// still built and verified locally, and read back and compared after.
struct ComposedUpload {
  ObjectUrl source;
  std::string source_etag;
  std::vector<MultipartPart> parts;
};
std::optional<ComposedUpload> PlanComposedUpload(const ObjectClient& client,
                                                 const serde::MappedFile& input,
                                                 const serde::EditPlan& plan);

// What step 2 sends for the output of `plan` over `input` with the current
// configuration (`CurrentS3Config`): bytes uploaded, and bytes copied
// server-side from the original (`PlanComposedUpload`). For dry runs that
// count a transfer without `PlanObjectWrite` (repair). No requests.
struct UploadTransfer {
  uint64_t upload_bytes = 0;
  uint64_t part_copy_bytes = 0;
};
[[nodiscard]] absl::StatusOr<UploadTransfer> PlanUploadTransfer(const serde::MappedFile& input,
                                                                const serde::EditPlan& plan);

// What `WriteObjectVerified(w, input, plan, ...)` would do, found with
// read-only requests (HEAD and LIST; nothing is written): a dry run's plan.
// The run's token is not known yet and is shown as "<token>".
struct PlannedObjectStep {
  // "create journal", "upload", "read back", "server-side copy", "check",
  // "probe If-Match", "rewrite journal", "delete"
  std::string action;
  std::string object;  // s3:// URL written, read, checked or deleted
  std::string source;  // server-side copies: the object copied from
  uint64_t bytes = 0;  // bytes moved (copies: the object's size, or the range's)
  // A part copy into the temporary key (`PlanComposedUpload`): the range of
  // `source` copied, as in x-amz-copy-source-range ("bytes=0-5242879").
  std::string source_range;
};
struct ObjectWritePlan {
  std::vector<PlannedObjectStep> steps;  // in protocol order (1.-7. above)
  uint64_t output_bytes = 0;
  // As ObjectWriteStats and repair.proto's Transfer: the output uploaded to
  // the temporary key, read back, and the server-side copies (backup,
  // temporary key over the target); the journals' few hundred bytes are in
  // `steps` only.
  uint64_t upload_bytes = 0;
  uint64_t read_back_bytes = 0;
  uint64_t server_side_copy_bytes = 0;
  // Of `server_side_copy_bytes`: the part copies of step 2.
  uint64_t part_copy_bytes = 0;
  // The input bytes the plan copies into the output: at most this much of a
  // remote input is downloaded to write it.
  uint64_t input_bytes_kept = 0;
  // Why the write would be refused as things stand (the backup exists, the
  // target is missing), one sentence each; empty if nothing is in the way.
  std::vector<std::string> problems;
  // Journals of interrupted writes of `w.target` (URLs): a real run rolls
  // them back first (`RecoverObjectWrite`).
  std::vector<std::string> interrupted;
};
// Return values: `InvalidArgument` for a malformed URL; S3 errors other
// than a missing target or backup (those are `problems`).
[[nodiscard]] absl::StatusOr<ObjectWritePlan> PlanObjectWrite(const ObjectWrite& w,
                                                              const serde::MappedFile& input,
                                                              const serde::EditPlan& plan);


// ---------------------------------------------------------------------------
// Several objects replaced or created as one transaction: `repair` over s3://
// and `strip-state --deep` with new state files (the object-store counterpart
// of serde::CommitFiles). The protocol:
//   1. one journal `<journal_dir>/.flinkstate-txn-<token>.journal` (magic
//      "flinkstate object transaction 1", state `prepare`) naming every
//      target, its temporary key `<target>.flinkstate-tmp-<token>`, its
//      backup and the ETag the edit was planned from, or `create yes` for a
//      new object, created with `If-None-Match: *`;
//   2. every output written locally, verified, uploaded to its temporary key
//      (tagged `x-amz-meta-flinkstate-txn: <token>`), read back, compared and
//      verified: all of them before any backup;
//   3. every backup a server-side copy of the original with `If-None-Match:
//      *` and `x-amz-copy-source-if-match` the planned ETag, tagged with the
//      token (so that a rollback deletes only backups this run made);
//   4. a checked HEAD of every target: a replaced one still has the planned
//      ETag, a new one does not exist; else refused (nothing replaced);
//   5. the journal rewritten to state `commit`: the transaction is decided;
//   6. every temporary key copied to its target, the new objects first: a
//      new one with `If-None-Match: *` where the server honours it on a copy
//      (probed once per run; else a HEAD just before the copy, a window of
//      one request), a replaced one with `If-Match` the planned ETag where
//      the server honours that (probed likewise); each then checked to carry
//      the token. A new object that someone else created meanwhile stops the
//      run before any original is replaced: the new objects this run made are
//      deleted again and the whole transaction rolled back (refused);
//   7. the temporary keys and the journal deleted (the journal last, and
//      kept if a temporary key could not be deleted); backups kept.
// A failure before 5 deletes what the run made (backups only if they carry
// its token), the journal last: if any of that fails, or the answer to the
// commit record's PUT is lost (it may or may not be written), the journal
// stays and the error says to rerun, whose recovery resolves it.
// `RecoverObjectTransactions` resolves an interrupted run as the local
// repair does: `prepare` rolled back (temporary keys and its own backups
// deleted), `commit` completed (the remaining copies made: new objects only
// where no object is, replaced ones over targets that still hold the planned
// ETag). A target changed by someone else stops the recovery with the
// journal left in place and named; a new object's key taken by someone else
// before any original was replaced rolls the transaction back instead (its
// own new objects, temporary keys and backups deleted).
//
// No locks: two runs on one job exclude each other by the backups'
// `If-None-Match` (the second finds a backup and is refused) and the ETag
// checks; the window left is one request (step 4 to 6) on servers that
// ignore `If-Match` / `If-None-Match` on a copy.

struct ObjectChange {
  std::string target;         // s3:// URL
  std::string backup;         // s3:// URL; "" for none
  std::string expected_etag;  // "" : taken from `input` (opened from `target`)
  // A new object: `target` must not exist, before the commit and when the
  // copy puts it in place (`backup` must be ""). New objects are put in place
  // before any object is replaced, whatever their order here.
  bool create = false;
  const serde::MappedFile* input = nullptr;
  const serde::EditPlan* plan = nullptr;
  serde::OutputVerifier verify;
  // Filled by `CommitObjects`, as serde::FileChange::temp: the temporary
  // key's URL; and, once this output is verified and read back equal, its
  // bytes (so that a later change's `verify` can read an earlier output, as
  // uploaded: new state files for the `_metadata` that names them).
  // Lifetime: `written` is valid until `CommitObjects` returns.
  std::string temp;
  serde::ByteView written;
};

struct ObjectTransactionOptions {
  // The s3:// "directory" (prefix, with or without '/') of the journal; a
  // rerun's `RecoverObjectTransactions` must be given it.
  std::string journal_dir;
  // (phase, done, total): "uploading"/"verifying" (bytes), "committing"
  // (objects).
  std::function<void(absl::string_view phase, uint64_t done, uint64_t total)> progress;
  // The store's requests (not owned; must outlive the call); null: a new
  // S3Client of `CurrentS3Config()`. Tests inject failures through it.
  ObjectClient* client = nullptr;
  // What the transaction does (e.g. the command line), kept in its journal
  // and handed back by recovery (serde::RecoveredTransaction::intent).
  std::string intent;
};

// Runs the protocol above. Outputs are uploaded and verified in the order of
// `changes` (a `verify` may read the `written` bytes of the changes before
// it). Return values: as `WriteObjectVerified`; `FailedPrecondition` when a
// new object's key exists (or is taken during the run: then the new objects
// made are deleted again); errors before the commit point (or rolled back
// after it) end "(nothing was replaced)", later ones say to rerun (which
// completes the transaction).
[[nodiscard]] absl::Status CommitObjects(std::vector<ObjectChange>& changes,
                                         const ObjectTransactionOptions& options,
                                         ObjectWriteStats* stats = nullptr);

struct ObjectRecoveryReport {
  int rolled_back = 0;
  int completed = 0;
  std::vector<std::string> actions;  // one line each
  std::vector<serde::RecoveredTransaction> transactions;
};

// Resolves every journal in the s3:// directories `dirs`, of multi-object
// transactions and of single-object writes (`WriteObjectVerified`) alike, by
// its state (see above). Return values: `FailedPrecondition` when a target
// changed since the interrupted run read it (journal kept); `DataLoss` for a
// journal that cannot be parsed or a committed output that is gone; S3 errors.
// `client` as in `ObjectTransactionOptions`.
[[nodiscard]] absl::StatusOr<ObjectRecoveryReport> RecoverObjectTransactions(
    const std::vector<std::string>& dirs, ObjectClient* client = nullptr);

// Before a write of `target`: `RecoverObjectTransactions` on its directory.
// `client` as in `ObjectTransactionOptions`.
[[nodiscard]] absl::StatusOr<ObjectRecoveryReport> RecoverObjectWrite(
    const std::string& target, ObjectClient* client = nullptr);

// The journals of interrupted runs (either kind) in the s3:// directories
// `dirs`, as URLs (for a dry run's warning).
[[nodiscard]] absl::StatusOr<std::vector<std::string>> ListObjectJournals(
    const std::vector<std::string>& dirs, ObjectClient* client = nullptr);

}  // namespace flinkstate::objstore

#endif  // FLINKSTATE_OBJSTORE_OBJECT_TRANSACTION_H_
