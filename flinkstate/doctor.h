// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: doctor.h
// -----------------------------------------------------------------------------
// A restore pre-flight: what the JobManager will send each task when a job
// restores from a checkpoint, compared with the RPC frame size; the heap the
// JobManager needs; growth over a checkpoint history; paths; duplicated bytes.
//
//   ```c++ (const std::string& dir)
//   flinkstate::DoctorOptions options;
//   options.parallelism = 8;
//   FLINKSTATE_ASSIGN_OR_RETURN(flinkstate::report::DoctorReport r,
//                               flinkstate::Doctor({dir}, options));
//   std::cout << flinkstate::RenderDoctorText(r);
//   ```
//
// Restore forecast (`restore`): per operator and new subtask, the operator
// state is redistributed as Flink's `RoundRobinOperatorStateRepartitioner`
// does (release-1.15.2 .. release-1.20: SPLIT_DISTRIBUTE offsets dealt round
// robin over the new subtasks, UNION entries of every old handle to every new
// subtask, BROADCAST the i-th old handle's entries to subtask i; at an
// unchanged parallelism without union state the handles stay as they are),
// keyed state by the key-group ranges of `KeyGroupRangeAssignment.
// computeKeyGroupRangeForOperatorIndex` (`KeyGroupsStateHandle.getIntersection`
// slices the offsets; incremental and changelog handles go whole to every
// overlapping subtask), channel state stays with the subtask index (at
// another parallelism: old subtask i goes to i mod N, an approximation of the
// rescaling descriptors). The result is sized as Java serialization writes an
// `OperatorSubtaskState` into a fresh stream (grammar of
// javaobj/stream_constants.h: each class descriptor once, back-references for
// repeated strings and shared objects, `HashMap` of
// `OperatorStateHandle$StateMetaInfo` with `long[]` offsets, `ByteStreamStateHandle`
// `byte[]` data, `Path`/`URI` strings), with the 1.15-1.20 class shapes.
// A task of a chain receives the sum of its operators plus the deployment
// descriptor's own bytes (`kDescriptorOverheadBytes`, measured 19-22 KB).
//
// What travels in the RPC depends on the release that restores (read from
// `TaskDeploymentDescriptor`, `TaskDeploymentDescriptorFactory`, `Execution`
// and `BlobWriter` in the flink-runtime jars of 1.15.2, 1.20.5, 2.0.0, 2.1.0,
// 2.2.0 and 2.3.0): the serialized job information and task information are
// `MaybeOffloaded` (to the BLOB server from `blob.offload.minsize` bytes on)
// in every one of them, shuffle descriptors of wide inputs too; the task's
// `JobManagerTaskRestore` is a plain field serialized into the RPC up to 2.1,
// and from 2.2.0 on (FLINK-38114) a `MaybeOffloaded<JobManagerTaskRestore>`
// that `Execution#deploy` offloads when its serialized size is at least
// `blob.offload.minsize` (`BlobWriter.tryOffload`: `length <
// getMinOffloadingSize()` stays inline). An offloaded restore does not meet
// the frame size; its limit is then the BLOB server's storage and the heap
// of the TaskManager that downloads and deserializes it.
//
// JobManager heap (`heap`): the checkpoint's object graph in a 64-bit JVM
// with compressed oops, times the retained checkpoints; plus what a restore
// adds (release-1.15.2 .. 2.3.0): the objects StateAssignmentOperation creates
// for every task, which its Execution holds until the task is deployed
// (`assigned_restore_bytes`; union and broadcast entries share the
// checkpoint's StateMetaInfo, re-split and key-group-sliced offsets are
// copies), and every task's serialized descriptor as if all were in flight at
// once (`in_flight_bytes`, an upper bound of a transient part). The first two
// are judged against a real JobManager holding every task's assigned restore
// before deployment (conformance `harness.sh jmheap`, within 2x).
//
// Thread safety: `Doctor` keeps no state; concurrent calls are safe.

#ifndef FLINKSTATE_FLINKSTATE_DOCTOR_H_
#define FLINKSTATE_FLINKSTATE_DOCTOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/doctor.pb.h"

namespace flinkstate {

// Flink's default `akka.framesize` / `pekko.framesize`: "10485760b".
inline constexpr uint64_t kDefaultFrameSize = 10485760;
// What a `TaskDeploymentDescriptor` adds to a task's `JobManagerTaskRestore`
// in the RPC message (`RemoteRpcInvocation` of `submitTask`: job and task
// information, result partitions, input gates, the invocation's own
// framing). An estimate from real deployments of the incident job at
// parallelism 4 (harness `deploy`, dedicated RPC services; Flink's "actual
// size of encoded class" minus the task's JobManagerTaskRestore): 19,526 -
// 19,543 bytes with Akka (1.15.2), 23,564 with Pekko (1.20.5), 22,198 (2.3.0).
// It grows with the shuffle descriptors of wide inputs, which the checkpoint
// does not record. Flink 2.x sends less than 1.20 beside the restore
// (21,909 bytes on 2.1.3, 22,198 - 22,279 on 2.3.0; harness `deploy
// --only-frames` at a 40,000-byte frame): 25500 made the minimum frame size
// overshoot 2.1.3's encoded size by 7.1%, beyond the referee's 5% + 1 KiB.
inline constexpr uint64_t kAkkaDescriptorOverheadBytes = 21500;   // Flink <= 1.17
inline constexpr uint64_t kPekkoDescriptorOverheadBytes = 25500;  // Flink 1.18 - 1.20
inline constexpr uint64_t kFlink2DescriptorOverheadBytes = 23000; // Flink >= 2.0

// The smallest frame size Akka and Pekko accept (their remoting refuses a
// `maximum-frame-size` below 32000 bytes): `restore.min_frame_size` is never
// below it.
inline constexpr uint64_t kMinRpcFrameSize = 32000;
// The largest: their transport reads the value as a Java int.
inline constexpr uint64_t kMaxRpcFrameSize = 2147483647;

// Flink's default `blob.offload.minsize` (BlobServerOptions.OFFLOAD_MINSIZE).
inline constexpr uint64_t kDefaultBlobOffloadMinSize = 1048576;
// What an offloaded task restore leaves in the RPC: a
// `TaskDeploymentDescriptor$Offloaded` holding a `PermanentBlobKey` (20-byte
// key, type, 16-byte random part) with its class descriptors; an estimate
// (Pekko refuses frames below 32000 bytes, so it cannot be measured alone).
inline constexpr uint64_t kOffloadedTaskRestoreRpcBytes = 512;

// A Flink release, as `--flink-version` gives it: "X.Y" or "X.Y.Z"
// (patch -1 when not given).
struct FlinkRelease {
  int major = 0;
  int minor = 0;
  int patch = -1;
};

// Parses "X.Y" or "X.Y.Z" (decimal, each part 0..999, major 1 or 2).
// Return values: `InvalidArgument` naming the text otherwise.
[[nodiscard]] absl::StatusOr<FlinkRelease> ParseFlinkRelease(absl::string_view text);

// True for releases whose JobManager offloads a task's JobManagerTaskRestore
// to the BLOB server (2.2.0 and later).
bool OffloadsTaskRestore(const FlinkRelease& release);

// The releases that can have written `file`, lowest and highest (highest
// {99, 0} when open-ended): metadata v0-v1 1.1-1.2, v2 1.3-1.10, v3
// 1.11-1.15, v4 1.16-1.20, v5 2.0,
// v6 and later 2.1+; a completedCheckpoint by its class shapes
// (`CompletedCheckpointInfo::flink_versions`).
std::pair<FlinkRelease, FlinkRelease> WriterReleases(const StateFile& file);

// The overhead for the release that wrote `file`: Akka for metadata v1-v3
// (Flink <= 1.15) and completedCheckpoint shapes of 1.13-1.17, Flink 2's
// when only 2.x can have written it (metadata v5+), Pekko 1.18-1.20's
// otherwise (metadata v4 is written by 1.16-1.20: the larger, Pekko's, is
// taken, so that the minimum frame size stays enough). `Doctor` uses the
// restoring cluster's instead when `flink_conf` has `pekko.` or `akka.` keys
// (`pekko.`: 1.18-1.20's, unless only 2.x can have written the file), or
// `flink_version` names the release (Akka up to 1.17, Pekko 1.18-1.20, 2.x).
uint64_t DescriptorOverheadBytes(const StateFile& file);

struct DoctorOptions {
  // Parallelism after restore; 0 keeps each operator's.
  int parallelism = 0;
  // The frame size; 0 means: `flink_conf` if given, else kDefaultFrameSize.
  uint64_t frame_size = 0;
  // A `flink-conf.yaml` (key: value) or `config.yaml` (nested or flat) file
  // to read `pekko.framesize` / `akka.framesize` from.
  std::string flink_conf;
  // The job's plan JSON (REST `/jobs/<id>/plan` or `flink info`; a top-level
  // "plan" object is unwrapped), for chaining. Each `nodes[]` entry is a job
  // vertex: its `id` is the head operator's id; the plan does not list the
  // other chained operators, so an operator joins the vertex whose
  // `description` names it (" -> " separated, with the operator name the
  // checkpoint records, metadata v5+) at the same parallelism; a node may
  // list them as `"operatorIds": [...]` (`JobVertex.getOperatorIDs()`).
  // Operators matched to no vertex are chains of their own, and say so.
  std::string plan_file;
  // Checkpoints the JobManager keeps (`state.checkpoints.num-retained`).
  int retained = 1;
  // Parallelisms to forecast besides the chosen one (empty: a default set).
  std::vector<int> other_parallelisms;
  // The release that restores ("X.Y[.Z]", `ParseFlinkRelease`); empty: the
  // release that wrote the file, and when that is a range whose releases
  // differ in offloading the task restore, the lowest (the restore travels
  // in the RPC) with a FLINK_VERSION_ASSUMED warning.
  std::string flink_version;
  // `blob.offload.minsize` in bytes; 0: `flink_conf`'s if it sets it, else
  // kDefaultBlobOffloadMinSize.
  uint64_t blob_offload_min_size = 0;
};

// Runs every check over `paths` (checkpoint/savepoint directories, `_metadata`
// files, completedCheckpoint files, a job checkpoint directory holding
// `chk-*`, an HA directory holding `completedCheckpoint*`). Every file goes
// through `Open`. A checkpoint Flink's loader refuses (CHECKPOINT_NOT_LOADABLE)
// is not forecast: `restore.forecast_skipped` and a FORECAST_SKIPPED warning
// say why, and `restore.tasks`, `chains`, `other_parallelisms` stay empty.
//
// Return values: `InvalidArgument` for no paths or a path of no known kind,
// with the path; the errors of `Open` (with the path); `InvalidArgument` for
// a malformed plan or configuration (naming the file), and for a frame size
// outside kMinRpcFrameSize..kMaxRpcFrameSize (Flink would not start).
[[nodiscard]] absl::StatusOr<report::DoctorReport> Doctor(
    const std::vector<std::string>& paths, const DoctorOptions& options);

// Flink's `KeyGroupRangeAssignment.UPPER_BOUND_MAX_PARALLELISM` (1 << 15):
// no operator runs at a higher parallelism.
inline constexpr int kMaxFlinkParallelism = 1 << 15;

// The per-operator forecast of one state file at `parallelism` (0: its own),
// as `Doctor` computes `restore.tasks`: one entry per operator and new
// subtask, in file order. `checkpoint_dir` stands for the directory relative
// paths resolve against (its length is sized). `bytes` are the file's bytes
// the model was read from. Cost: proportional to the handles each new
// subtask receives plus the parallelism (the subtasks that receive union
// entries only are sized once), not to their product.
// Return values: `InvalidArgument` when `parallelism` or an operator's
// parallelism exceeds `kMaxFlinkParallelism` (naming the operator).
[[nodiscard]] absl::StatusOr<std::vector<report::TaskPayload>> ForecastTasks(
    const StateFile& file, serde::ByteView bytes, int parallelism,
    absl::string_view checkpoint_dir);

// How Flink reads a configuration file. `kLegacyFlinkConf`: flink-conf.yaml
// (`GlobalConfiguration.loadYAMLResource`: "key: value" lines split at the
// first ": ", flat keys, the last occurrence wins). `kYaml`: config.yaml
// (Flink 1.19+, standard YAML: keys flat or nested).
enum class FlinkConfFormat { kLegacyFlinkConf, kYaml };
// By file name: "config.yaml" is kYaml, any other name the legacy format.
FlinkConfFormat FlinkConfFormatOf(absl::string_view path);

// A Flink configuration file as Flink's `GlobalConfiguration` loads it: every
// key, nested YAML keys joined with "." (`pekko:` / `  framesize: 64m` is
// "pekko.framesize"), to its value as the `Configuration` holds it.
//
// `kLegacyFlinkConf` (release-1.15.2 .. 1.20 `loadYAMLResource`): each line
// up to its first '#', split at the first ": ", key and value trimmed; lines
// without ": " or with an empty key or value are skipped; the last
// occurrence wins; values are kept as written, quotes included.
// `kYaml` (release-1.19+ `YamlParserUtils.loadYamlFile`, then flattened):
// block mappings nested by indentation (spaces), plain scalars (a comment
// from " #" on dropped), single-quoted ('' for a quote) and double-quoted
// (backslash escapes) scalars on one line, block sequences as their flow
// text ("[a, b]"); a null value ("~", "null", nothing) is no entry.
//
// Return values (kYaml only): `InvalidArgument` naming the line for a
// duplicate key in one mapping (SnakeYAML with duplicate keys refused: Flink
// does not start), a tab in the indentation, an indentation that matches no
// enclosing key, a line that is no `key: value` or sequence item, an
// unterminated quote, an unknown escape, or a block scalar, anchor, alias or
// tag (not read here).
struct FlinkConfiguration {
  std::map<std::string, std::string> values;

  // The value of `key`, or null when the file does not set it. Lifetime:
  // valid while this object is alive and unmodified.
  const std::string* Find(absl::string_view key) const;
  // True when some key starts with `prefix` (e.g. "pekko.").
  bool HasKeyUnder(absl::string_view prefix) const;
};
[[nodiscard]] absl::StatusOr<FlinkConfiguration> ParseFlinkConfiguration(
    absl::string_view text, FlinkConfFormat format);

// The RPC system of the restoring release: Akka up to Flink 1.17, Pekko from
// 1.18 on (`RpcOptions.FRAMESIZE` = "pekko.framesize", deprecated key
// "akka.framesize").
enum class RpcSystem { kAkka, kPekko };

// A frame size as Akka/Pekko read it (HOCON `Config.getBytes`): "10485760b",
// "64m", "20 MiB", "20MB" (= 20,000,000). Return values: `InvalidArgument`
// for no number, a unit HOCON does not know ("mb", "kb": case matters), a
// fraction, zero (Flink refuses it) or a value beyond 64 bits.
[[nodiscard]] absl::StatusOr<uint64_t> ParseRpcFrameSize(absl::string_view value);

// The frame size a configuration sets for `rpc`, in bytes: the value of
// `pekko.framesize` (Pekko only), else `akka.framesize`, read as the RPC
// system's HOCON configuration reads it (Flink writes
// `maximum-frame-size = <value>`: a double-quoted HOCON string stands for its
// contents). Return values: `NotFound` when no key that `rpc` reads is
// present; `ParseRpcFrameSize`'s errors.
[[nodiscard]] absl::StatusOr<uint64_t> ReadFrameSize(const FlinkConfiguration& conf,
                                                     RpcSystem rpc = RpcSystem::kPekko);
// The same over a configuration text (`ParseFlinkConfiguration`'s errors too).
[[nodiscard]] absl::StatusOr<uint64_t> ReadFrameSize(
    absl::string_view conf_text, RpcSystem rpc = RpcSystem::kPekko,
    FlinkConfFormat format = FlinkConfFormat::kYaml);

// `blob.offload.minsize` (an int number of bytes, flat or nested under
// `blob:`). Return values: `NotFound` when the key is absent,
// `InvalidArgument` for a value that is no int.
[[nodiscard]] absl::StatusOr<uint64_t> ReadBlobOffloadMinSize(const FlinkConfiguration& conf);
// The same over a configuration text (`ParseFlinkConfiguration`'s errors too).
[[nodiscard]] absl::StatusOr<uint64_t> ReadBlobOffloadMinSize(
    absl::string_view conf_text, FlinkConfFormat format = FlinkConfFormat::kYaml);

// 0 for exit "nothing would fail", 1 when a task exceeds the frame size now
// or at the next restore, the parallelism is above an operator's max
// parallelism, or Flink's loader refuses the checkpoint although it decodes
// (`CHECKPOINT_NOT_LOADABLE`, verify.h's `CheckOperatorLoadable`).
int DoctorExitCode(const report::DoctorReport& report);

// Text for a terminal: every number, then the warnings with their commands.
std::string RenderDoctorText(const report::DoctorReport& report);

// One self-contained HTML page (inline SVG and script, no network): treemap
// of bytes by operator -> state -> subtask, per-task payload against the
// frame size, growth over the history.
std::string RenderDoctorHtml(const report::DoctorReport& report);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_DOCTOR_H_
