// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: deep_strip.h
// -----------------------------------------------------------------------------
// `strip-state --deep`: removes a state name from the operator-state handles
// and from the operator-state streams they point to, so that nothing of it
// remains: its `StateNameEntry` in each handle, its meta info in the stream's
// `OperatorBackendSerializationProxy` header (the count of its list
// decremented) and its element bytes. Every other state's elements are
// copied byte for byte to their new positions and their offsets rewritten.
// Bytes after the header that no remaining element covers (e.g. the elements
// a plain `strip-state` left behind, where the element before them has a
// fixed-length serializer) are dropped as well.
//
//   ```c++ (const flinkstate::LoadedFile& f)
//   flinkstate::StripOptions o;
//   o.state_name = "topic-partition-offset-states";
//   // Relative handles: the input's directory, or a completedCheckpoint's
//   // checkpoint directory; the output goes beside the input.
//   const flinkstate::DeepStripFiles files =
//       flinkstate::DeepStripFilesFor(f, flinkstate::serde::DirName(f.path), {});
//   FLINKSTATE_ASSIGN_OR_RETURN(flinkstate::DeepStripResult r,
//                               flinkstate::PlanDeepStripState(f, o, files));
//   // r.plan: the edit plan for the file (serde/edit_plan.h); r.new_files:
//   // the state files to write beside the originals (WriteDeepStripped);
//   // VerifyDeepStripped(f, output, o, DeepStripStreamsFor(f, files)) checks it.
//   ```
//
// Scope: `_metadata`, operator-snapshot and HA `completedCheckpoint` files
// (one planner and one verify for every kind; the kind decides only how the
// edits are written: `_metadata` bytes by the metadata serializers' layout, a
// completedCheckpoint through the javaobj rewriter, javaobj/rewriter.h). Where
// the affected stream lives decides how it is rewritten (one stream rewrite
// for both):
//   `ByteStreamStateHandle`   inline: rewritten in place in the file (its i32
//                             length and bytes replaced; in a completedCheckpoint
//                             the `data` byte[] edited in place, its unchanged
//                             bytes copy pieces);
//   `RelativeFileStateHandle` a NEW state file is written beside the original
//   `FileStateHandle`         (same directory, or the same object-store prefix
//                             for an input in the store; a fresh UUID-form
//                             name that no file there has), holding the
//                             rewritten stream;
//                             the handle gets the new path (relative stays
//                             relative, an absolute path keeps its scheme and
//                             directory) and the new `stateSize`. The
//                             original state file is never modified. Streams
//                             are found as in operator_state_report.h
//                             (`DeepStripFiles::sources`, `--state-root`).
// Java (Flink 1.13-2.x) in a completedCheckpoint: the name's entry leaves the
// `OperatorStreamStateHandle.stateNameToPartitionOffsets` map (its HashMap
// size, block data and later back-references fixed by the rewriter); every
// other entry's `StateMetaInfo.offsets` long[] gets the moved offsets; a
// `FileStateHandle` gets `stateSize` and its `filePath` (`Path.uri.string`),
// a `RelativeFileStateHandle` also its `relativePath`; and each changed
// subtask's `OperatorSubtaskState.stateSize` (and `checkpointedSize`, 1.14+)
// drops by the bytes its streams lost, the value Flink's constructor would
// compute from the new handles. A relative handle of a completedCheckpoint
// is read in the checkpoint's directory (`DeepStripFilesFor`); Flink opens
// its `filePath`, which names the same directory.
// Every file-backed stream of the selected operators is read (also of
// handles without an entry for the name: their header may still hold its
// meta info). The whole plan fails, nothing half-done, for a stream that
// cannot be read, a file-merging segment (`SegmentFileStateHandle`: its
// physical file is shared), a header naming a serializer this decoder does
// not know, two rewritten handles sharing one state file (or one inline
// stream), or a relative handle of a `_metadata` when the output goes to
// another directory than the input (Flink resolves relative paths against the
// `_metadata`'s directory).
// New state files are named from the original's name, the state name and an
// attempt number, so a dry run names what the write creates. When that name
// is taken by a file that holds exactly the planned stream (the deep strip of
// the other file of the same checkpoint wrote it: `_metadata` and its
// completedCheckpoint point to the same state files), the handle points to it
// and nothing is written for it (`NewStateFile::write` false); a file of a
// plan made in the same transaction is reused the same way
// (`DeepStripFiles::planned`).
//
// Return values: `NotFound` if no handle holds the state name (neither in its
// offsets nor in its stream header); `Unimplemented` for a segment file or
// an unknown serializer; `FailedPrecondition` for a shared state file or
// inline stream, a relative handle with the output elsewhere or without a
// base directory, a remote path no `state_roots` prefix maps, or a
// completedCheckpoint whose map cannot shrink in place or whose path string
// another object shares; `InvalidArgument` for a stream whose header or
// offsets do not decode, a header without a meta info for a name its handle
// has offsets for, or a `StateFile` overload given a completedCheckpoint (it
// needs the decoded Java stream); the errors of opening a state file
// (`NotFound`, ...) with the handle and the path named; the errors of
// `SelectOperators`.
// Thread safety: pure functions, except `WriteDeepStripped`, which writes.

#ifndef FLINKSTATE_FLINKSTATE_DEEP_STRIP_H_
#define FLINKSTATE_FLINKSTATE_DEEP_STRIP_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/javaobj/object_model.h"
#include "flinkstate/javaobj/rewriter.h"
#include "flinkstate/open.h"
#include "flinkstate/operator_state_report.h"
#include "flinkstate/serde/file_transaction.h"
#include "flinkstate/serde/mapped_file.h"
#include "flinkstate/serde/byte_view.h"
#include "flinkstate/serde/edit_plan.h"
#include "flinkstate/strip_state.h"

namespace flinkstate {

struct NewStateFile;

// Where the streams of file-backed handles are read and the output goes.
struct DeepStripFiles {
  // operator_state_report.h: `base_dir` is the directory of the input
  // (relative handles), `state_roots` maps remote prefixes to local copies.
  StateStreamSources sources;
  // The directory the edited file is written to ("" = `sources.base_dir`).
  // A relative handle of a `_metadata` is rewritten only when it is the
  // input's directory.
  std::string output_dir;
  // New state files another plan of the same transaction writes (e.g. the
  // `_metadata`'s, when `repair --deep` plans its completedCheckpoint): a
  // stream whose original is one of theirs and whose rewrite is the same
  // points to that file (`NewStateFile::write` false) instead of a second
  // copy. Lifetime: read during planning only.
  const std::vector<NewStateFile>* planned = nullptr;
};

// The `DeepStripFiles` for an edit of `file` written into `output_dir`:
// relative handles resolve in the input's directory (`_metadata`, operator
// snapshot) or, for a completedCheckpoint, in its checkpoint directory (its
// `exclusiveCheckpointDir` as a local path: a `file:` URI, or mapped by
// `state_roots`; "" if neither applies, and then a relative handle with the
// name is refused). `checkpoint_dir`, if not "", is that directory instead
// (`repair` knows it: the directory given for the checkpoint).
DeepStripFiles DeepStripFilesFor(const LoadedFile& file, const std::string& output_dir,
                                 std::vector<std::pair<std::string, std::string>> state_roots,
                                 const std::string& checkpoint_dir = "");

// A state file a deep strip writes: the stream of one file-backed handle with
// the name removed.
struct NewStateFile {
  std::string where;           // "operator <id> subtask <n> <slot>"
  std::string operator_id;     // "" for operator-snapshot files
  int subtask_index = -1;
  std::string slot;            // managedOperatorState / rawOperatorState
  std::string handle_path;     // the handle's path before (as written in it)
  std::string new_handle_path; // ... and after: same directory, new name
  std::string original;        // the file (or object URL) read, never modified
  std::string path;            // the file (or object URL) to write: did not exist
  bool relative = false;       // a `RelativeFileStateHandle`
  uint64_t original_bytes = 0;
  uint64_t bytes = 0;          // of the new file (= its handle's stateSize)
  serde::MappedFile input;     // `original`, mapped
  serde::EditPlan plan;        // the new file: `plan` over `input`
  // False when this plan does not write the file: it is there already with
  // exactly these bytes, or another plan of the transaction writes it
  // (`DeepStripFiles::planned`; then `planned_elsewhere`).
  bool write = true;
  bool planned_elsewhere = false;
};

struct DeepStripResult {
  serde::EditPlan plan;
  // One entry per handle changed (entry_count: offsets of the name removed;
  // bytes: for an inline stream the handle's bytes removed from the file,
  // stream included; for a file-backed one the entry's bytes in the file).
  std::vector<StrippedEntry> removed;
  uint64_t meta_infos_removed = 0;     // headers that lost the name's meta info
  uint64_t element_bytes_removed = 0;  // stream bytes of the name's elements and leftovers
  // input size - output size (negative if new paths are longer than the
  // old ones by more than the entries removed).
  int64_t bytes_removed = 0;
  // File-backed streams, in file order: each gets a new state file.
  std::vector<NewStateFile> new_files;
  // completedCheckpoint files: what the javaobj rewriter did (else zeros).
  javaobj::RewriteStats stats;
};

// Any kind `Open` returns that holds operator state, stored raw: dispatches
// on `file.kind` (a completedCheckpoint's stream is `file.stream`, decoded
// here if the file was opened without it).
// Return values: as above; `InvalidArgument` for another kind or a wrapped
// (e.g. Base64) file.
[[nodiscard]] absl::StatusOr<DeepStripResult> PlanDeepStripState(
    const LoadedFile& file, const StripOptions& options, const DeepStripFiles& files = {});

// `_metadata` and operator-snapshot files (the model and its bytes).
[[nodiscard]] absl::StatusOr<DeepStripResult> PlanDeepStripState(
    const StateFile& file, serde::ByteView input, const StripOptions& options,
    const DeepStripFiles& files = {});

// completedCheckpoint files: `file` is `ReadCompletedCheckpoint(stream)`.
[[nodiscard]] absl::StatusOr<DeepStripResult> PlanDeepStripCompletedCheckpoint(
    const javaobj::Stream& stream, const StateFile& file, const StripOptions& options,
    const DeepStripFiles& files = {});

// The streams `VerifyDeepStripped` reads for file-backed handles.
struct DeepStripStreams {
  StateStreamSources before;  // where the input's handles resolve
  StateStreamSources after;   // where the output's handles resolve
  // New state files by the path the output's handle writes (e.g. their bytes
  // in memory, or their temporary files during the write); others are read
  // through `after`.
  std::map<std::string, serde::ByteView> new_streams;
};

// The streams the verify of a plan made with `files` reads: the input's
// handles resolve through `files.sources`, and so do the output's, except
// that a `_metadata`'s (or operator snapshot's) relative handles resolve in
// the output's directory (`files.output_dir`), as Flink resolves them.
DeepStripStreams DeepStripStreamsFor(const LoadedFile& file, const DeepStripFiles& files);

// Checks an output of `PlanDeepStripState` against its input: no handle of
// the selected operators and no stream header of theirs (inline or in a state
// file) holds the name; every other handle entry keeps its name, mode and
// element count, and each of its elements is byte-identical to the input's
// (in order); every stream header decodes; a rewritten file-backed handle's
// `stateSize` is its new stream's size. Handles of operators not selected are
// only checked to keep their entries.
// For completedCheckpoint models, `before_bytes`/`after_bytes` are the Java
// streams (inline streams are `byte[]` payloads in them).
// Return values: `Internal` naming the first difference.
[[nodiscard]] absl::Status VerifyDeepStripped(const StateFile& before,
                                              serde::ByteView before_bytes,
                                              const StateFile& after,
                                              serde::ByteView after_bytes,
                                              const StripOptions& options,
                                              const DeepStripStreams& streams = {});

// The verify of an output of any kind: decodes `output` as `before`'s kind
// and checks that encoding it again reproduces it byte for byte (a
// completedCheckpoint: `javaobj::VerifyRoundTrip`, then
// `ReadCompletedCheckpoint`), then `VerifyDeepStripped` of the two models; for
// a completedCheckpoint also that every OperatorSubtaskState's `stateSize`
// (and `checkpointedSize`) is the input's less what its operator-state
// streams lost.
// Return values: the decoders' errors; `DataLoss` from a round trip;
// `Internal` naming the first difference.
[[nodiscard]] absl::Status VerifyDeepStripped(const LoadedFile& before, serde::ByteView output,
                                              const StripOptions& options,
                                              const DeepStripStreams& streams = {});

// Writes a deep strip as one crash-safe transaction (serde::CommitFiles, see
// file_transaction.h): every `result.new_files` it writes (`write`: new
// targets, no backup, each verified by `NewStateFileVerifier`), then `plan` over
// `input` to `output` (the original kept as `backup` unless ""), verified by
// `make_verify(new_streams)`, where `new_streams` maps each new handle path
// to the bytes of its written (temporary) file, so that the check reads the
// streams the output will point to. Locks every directory written; the
// journal goes in `output`'s directory unless `options.journal_dir` is set.
// New files not written here (`write` false) are read from disk by the
// verify, through the `after` sources `make_verify` is built with.
// An `output` in an object store (with the new state files beside the
// originals there, as `DeepStripFilesFor` plans them for an input in the
// store) is written by objstore::CommitObjects instead: the new state files
// as new objects (uploaded, read back, verified, put in place first under
// keys that must not exist), the output replacing its object with `backup`;
// the journal goes in `output`'s "directory" and records `options.intent`.
// Return values: `FailedPrecondition` if a new state file's name was taken
// since the plan; `InvalidArgument` if the new state files and `output` are
// not all local or all in the store; those of `CommitFiles` or
// `CommitObjects` (nothing replaced before the commit point).
[[nodiscard]] absl::Status WriteDeepStripped(
    const DeepStripResult& result, const std::string& state_name,
    const serde::MappedFile& input, const std::string& output, const std::string& backup,
    const std::function<serde::OutputVerifier(const std::map<std::string, serde::ByteView>&)>&
        make_verify,
    serde::TransactionOptions options);

// The check of a new state file as written: its header decodes, holds no
// meta info of `state_name`, and its size is the planned `nf.bytes`.
// Lifetime: keeps references to `state_name` and `nf`.
serde::OutputVerifier NewStateFileVerifier(const std::string& state_name,
                                           const NewStateFile& nf);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_DEEP_STRIP_H_
