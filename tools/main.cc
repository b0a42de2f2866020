// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// `flinkstate`: inspect, verify and repair Apache Flink checkpoint state
// without a JVM. Exit codes: 0 success, 1 bad or unsupported input (or
// findings, or differences for `diff`), 2 usage error.
//
// The command table below is the whole command-line surface: each entry names
// a command, registers exactly the flags it reads, and runs it over the parsed
// `CommandArgs`. Flags are parsed with CLI11 (Debian `libcli11-dev`,
// header-only) rather than Abseil flags: CLI11 gives every command its own
// flag set (an `App` per command, so `inspect --apply` is an unknown flag, not
// a silently ignored global one), refuses a repeated single-valued flag
// (`--state A --state B`, MultiOptionPolicy::Throw) while `--operator` stays
// repeatable, and reports every problem as an exception we turn into a
// message on stderr and exit status 2. Abseil's registry is process-global and
// its parser exits with 1.

#include <limits.h>
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/algorithm/container.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "flinkstate/doctor.h"
#include "flinkstate/objstore/object_store.h"
#include "flinkstate/serde/file_transaction.h"
#include "flinkstate/serde/input_format.h"
#include "flinkstate/version.h"
#include "tools/cli_common.h"
#include "tools/commands.h"

namespace flinkstate::cli {
namespace {

constexpr char kUsage[] = R"(usage: flinkstate <command> [flags] FILE...

Inspect, verify and repair Apache Flink checkpoint state without a JVM.

commands:
  inspect FILE|DIR... [--json] [--top N] what takes the bytes, and warnings
  strip-state --state NAME [--operator ID]... IN OUT
  strip-state --state NAME --in-place FILE
                                         remove a state name from every operator
                                         state handle (e.g. a leftover union state)
  drop-operator --operator ID|UID... IN OUT
                                         remove operators' state for good
  relocate --from PREFIX --to PREFIX IN OUT
  relocate --to-relative --from DIR IN OUT | --to-absolute --to DIR IN OUT
                                         rewrite absolute paths (another bucket)
  convert --to-version N IN OUT          write the metadata in another version
  verify FILE|DIR... [--nocheck-files]   decode, re-encode, check consistency
  diff A B                               what differs between two files' reports
                                         (exit 1 if anything does)
  dump FILE [--json]                     a Java serialization stream as a tree
  state FILE|DIR... [--state-root P=D]   inside the operator-state streams: meta
                                         infos, elements, copies
  dedupe-union --state NAME IN OUT       keep one copy of each union state element
  doctor PATH... [--parallelism N] [--flink-conf FILE] [--plan FILE] [--html OUT]
                                         restore pre-flight: per-task deployment
                                         payload vs the frame size, heap, history,
                                         paths (exit 1 if a restore would fail)
  repair --state NAME [--ha-dir DIR] [--apply] CHECKPOINT_DIR...
                                         strip a state from each chk-<n>/_metadata
                                         and the matching HA completedCheckpoint
                                         files; prints the plan, writes only
                                         with --apply (keeping FILE.bak)

`flinkstate help COMMAND` or `flinkstate COMMAND --help` lists its flags;
`flinkstate --version` prints the version; with --json both print JSON
(report.proto HelpReport, VersionReport).

FILE is a checkpoint/savepoint _metadata (format versions 1-7), an
OperatorSnapshotUtil operator-snapshot file, an HA completedCheckpoint file,
a ZooKeeper/Kubernetes HA pointer (raw or Base64) or a Java serialization
stream; the kind is sniffed. A checkpoint directory stands for its _metadata.
Outputs are written to a temporary file, re-read and verified, then renamed;
--in-place keeps the original as FILE.bak.
Inputs may be s3://bucket/key (also s3a://, s3p://; a prefix stands for its
_metadata): only the ranges read are fetched. --s3-endpoint URL (any command)
or AWS_ENDPOINT_URL names the server; region and credentials as the AWS CLI
reads them (AWS_REGION, AWS_PROFILE, ~/.aws, web identity).
exit codes: 0 ok, 1 bad input, findings or differences, 2 usage error
)";

// --- Flag sets shared by several commands -----------------------------------

void AddJson(CLI::App& app, CommandArgs& a, const char* what) {
  app.add_flag("--json", a.json, what);
}

CLI::Option* AddFiles(CLI::App& app, CommandArgs& a, const char* what) {
  return app.add_option("FILE", a.positional, what)->type_name("");
}

// IN OUT | --in-place FILE, and how the output is written.
// --progress / --noprogress: stderr progress lines for the long phases
// (loading, writing, verifying, repair); by default only on a terminal.
// One flag of two forms, as --fsync/--nofsync: given both, "--progress/
// --noprogress given 2 times" (MakeParser).
void AddProgress(CLI::App& app, CommandArgs& a) {
  app.add_flag("--progress{1},--noprogress{-1}", a.progress,
               "progress lines on stderr also when it is not a terminal; --noprogress: none "
               "(default: only on a terminal, for large files)")
      // An integer flag sums its occurrences (CLI11 gives it TakeAll).
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw);
}

// --backup-suffix S and --fsync / --nofsync of the commands that replace files.
void AddBackupSuffix(CLI::App& app, CommandArgs& a, const char* what) {
  app.add_option("--backup-suffix", a.backup_suffix, what)->type_name("S")->capture_default_str();
}
void AddFsync(CLI::App& app, CommandArgs& a, const char* what) {
  app.add_flag("--fsync,!--nofsync", a.fsync, what);
}

void AddOutput(CLI::App& app, CommandArgs& a) {
  AddFiles(app, a, "IN OUT, or FILE with --in-place");
  app.add_flag("--in-place", a.in_place,
               "rewrite FILE itself (a symlink: the file it names), keeping the "
               "original as FILE<backup-suffix>");
  AddBackupSuffix(app, a, "suffix of that backup");
  AddFsync(app, a,
           "fsync the output before renaming it into place (default; "
           "--nofsync to skip)");
  AddProgress(app, a);
}

// The flags of every command that writes an edited file: IN OUT or
// --in-place, --json for its EditReport, and --dry-run: the write planned and
// printed, nothing written (cli_common.h FinishDryRun).
void AddEditOutput(CLI::App& app, CommandArgs& a) {
  AddOutput(app, a);
  AddJson(app, a, "the result as JSON (report.proto EditReport)");
  app.add_flag("--dry-run", a.dry_run,
               "show what would be written (objects or files, sizes, bytes to transfer, "
               "server-side copies and uploads) and write nothing; exit 1 when the write "
               "would be refused as things stand");
}

void AddOperators(CLI::App& app, CommandArgs& a, const char* what) {
  app.add_option("--operator", a.operators, what)
      ->type_name("ID")
      ->expected(1)  // one value per --operator: the FILEs after it stay positional
      ->allow_extra_args(false)
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

void AddInputFormat(CLI::App& app, CommandArgs& a) {
  app.add_option("--input-format", a.input_format,
                 "how FILE is encoded: auto, raw, base64, hex or gzip (Java streams)")
      ->type_name("F")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            absl::StatusOr<serde::InputFormat> f = serde::ParseInputFormat(v);
            return f.ok() ? std::string() : std::string(f.status().message());
          },
          "FORMAT"));
}

// --state-root PREFIX=DIR (repeatable; parsed by `ParseStateRoots`).
void AddStateRoots(CLI::App& app, CommandArgs& a, const char* what) {
  app.add_option("--state-root", a.state_roots, what)
      ->type_name("PREFIX=DIR")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

void AddStateName(CLI::App& app, CommandArgs& a) {
  app.add_option("--state", a.state, "the state name (exact)")->type_name("NAME");
}

// --state NAME and --operator of the edits of one state's entries
// (strip-state, dedupe-union).
void AddStateAndOperators(CLI::App& app, CommandArgs& a) {
  AddStateName(app, a);
  AddOperators(app, a, "only in these operators: ID (32 hex digits) or uid (repeatable)");
}

// --- The command table ------------------------------------------------------

struct Command {
  const char* name;
  // What `flinkstate CMD --help` prints above the flags.
  const char* description;
  // Registers the flags and positional arguments the command reads.
  void (*flags)(CLI::App&, CommandArgs&);
  int (*run)(const CommandArgs&);
};

const Command kCommands[] = {
    {"inspect",
     "What takes the bytes of a _metadata, operator-snapshot, completedCheckpoint\n"
     "or HA pointer file, and warnings (e.g. UNION_STATE_MULTIPLIES). For a pointer:\n"
     "where it points and whether that local file is the completedCheckpoint\n"
     "(exit 1 if it is missing or is no completedCheckpoint). Several FILEs are\n"
     "inspected one after the other (with --json: one JSON document each, one after the other).",
     [](CLI::App& app, CommandArgs& a) {
       AddFiles(app, a, "files or checkpoint directories")->required();
       AddJson(app, a, "the report as JSON (report.proto, protobuf JSON mapping)");
       app.add_option("--top", a.top, "the N largest items listed")
           ->type_name("N")
           ->check(CLI::Range(0, 1 << 30))
           ->capture_default_str();
       app.add_flag("--subtasks,!--nosubtasks", a.subtasks,
                    "per-subtask handles in the JSON (default; --nosubtasks to "
                    "leave them out)");
       AddInputFormat(app, a);
     },
     RunInspect},
    {"strip-state",
     "Removes a state name from every operator state handle (_metadata, operator\n"
     "snapshot or completedCheckpoint), e.g. a leftover union state.",
     [](CLI::App& app, CommandArgs& a) {
       AddStateAndOperators(app, a);
       AddEditOutput(app, a);
       app.add_flag("--deep", a.deep,
                    "also remove the state's meta info and element bytes from the "
                    "operator-state streams (_metadata, operator snapshot, completedCheckpoint), "
                    "fixing the other states' offsets: inline streams in place, a state file by "
                    "writing a new one beside it (the original untouched) that the handle then "
                    "points to");
       AddStateRoots(app, a,
                     "with --deep: state files under PREFIX (e.g. s3://bucket/ckpts) are in "
                     "the local directory DIR, and their new files are written there "
                     "(repeatable)");
     },
     RunStripState},
    {"drop-operator",
     "Removes operators and all their state from a _metadata or HA completedCheckpoint\n"
     "file, for good (do both files of a checkpoint). --operator takes an operator ID\n"
     "(32 hex digits) or a uid (or uid:NAME), hashed as Flink derives the ID.",
     [](CLI::App& app, CommandArgs& a) {
       AddOperators(app, a, "operator ID (32 hex digits) or uid (repeatable)");
       AddEditOutput(app, a);
     },
     RunDropOperator},
    {"relocate",
     "Rewrites absolute paths that start with PREFIX (another bucket or cluster):\n"
     "file handles, directories, external pointers; in _metadata, completedCheckpoint\n"
     "files and raw ZooKeeper pointers (not Base64 Kubernetes values). Inline\n"
     "ByteStreamStateHandle names are not paths Flink opens and stay as they are.\n"
     "Both prefixes end on a path boundary (both end in '/' or neither does, and a\n"
     "path matches only where a '/' or its end follows the prefix); every new path\n"
     "must be absolute and normalised (no '.', '..' or empty segments, no control\n"
     "characters) unless --allow-unsafe-paths.",
     [](CLI::App& app, CommandArgs& a) {
       app.add_option("--from", a.from, "the prefix to replace")->type_name("PREFIX");
       app.add_option("--to", a.to, "its replacement")->type_name("PREFIX");
       app.add_flag("--allow-unsafe-paths", a.allow_unsafe_paths,
                    "write new paths that are relative, hold '..' or control "
                    "characters");
       CLI::Option* rel = app.add_flag(
           "--to-relative", a.to_relative,
           "with --from DIR (the checkpoint directory as the handles name it): "
           "file handles inside DIR become relative handles (metadata v3+), "
           "so the directory can be moved as a savepoint can");
       app.add_flag("--to-absolute", a.to_absolute,
                    "with --to DIR: relative handles become absolute file handles "
                    "under DIR (the way back)")
           ->excludes(rel);
       AddEditOutput(app, a);
     },
     RunRelocate},
    {"convert",
     "Writes a _metadata file in another format version (2-7; not to or from 1).\n"
     "A conversion that would drop information (below v5: operator names and uids;\n"
     "below v4: the checkpoint properties) is refused unless --allow-loss, which\n"
     "lists what is lost.",
     [](CLI::App& app, CommandArgs& a) {
       app.add_option("--to-version", a.to_version, "the target version")
           ->type_name("N");
       app.add_flag("--allow-loss", a.allow_loss,
                    "convert although the target version cannot hold everything");
       AddEditOutput(app, a);
     },
     RunConvert},
    {"verify",
     "Decodes, re-encodes byte for byte and checks consistency (key-group offsets,\n"
     "handle sizes); for relative handles, that the state files exist. Several\n"
     "FILEs are verified one after the other; exit 1 if any has findings.",
     [](CLI::App& app, CommandArgs& a) {
       AddFiles(app, a, "files or checkpoint directories")->required();
       app.add_flag("--check-files,!--nocheck-files", a.check_files,
                    "look for the referenced state files (default; "
                    "--nocheck-files to skip)");
       AddJson(app, a, "the findings as JSON (report.proto VerifyReport)");
       AddInputFormat(app, a);
       AddProgress(app, a);
     },
     RunVerify},
    {"state",
     "Inside the operator-state streams the handles point to (inline bytes, relative\n"
     "and absolute state files): each stream's meta infos (state name, mode,\n"
     "serializers) and per state name the elements, their bytes and how many are\n"
     "byte-identical copies. Exit 1 if a stream cannot be read.",
     [](CLI::App& app, CommandArgs& a) {
       AddFiles(app, a, "files or checkpoint directories")->required();
       AddJson(app, a, "the report as JSON (report.proto OperatorStateStreamReport)");
       AddStateRoots(app, a,
                     "read state files under PREFIX (e.g. s3://bucket/ckpts) from the "
                     "local directory DIR (repeatable)");
       app.add_flag("--kafka-source", a.kafka_source_splits,
                    "decode SourceReaderState elements as KafkaSource splits (topic, "
                    "partition, starting/stopping offset); topic-partition-offset-states of "
                    "the legacy FlinkKafkaConsumer is always decoded");
     },
     RunState},
    {"dedupe-union",
     "Keeps one offset per distinct element (by bytes) of a union list state across\n"
     "all subtasks' handles and drops the copies, so a grown union state shrinks back\n"
     "to its distinct entries and stays in place (_metadata, operator snapshot).",
     [](CLI::App& app, CommandArgs& a) {
       AddStateAndOperators(app, a);
       AddEditOutput(app, a);
       AddStateRoots(app, a,
                     "read state files under PREFIX from the local directory DIR (repeatable)");
     },
     RunDedupeUnion},
    {"diff",
     "What differs between the reports of two files (a _metadata and its\n"
     "completedCheckpoint, or a file before and after a change). Exit 0 if\n"
     "nothing differs, 1 if something does.",
     [](CLI::App& app, CommandArgs& a) {
       AddFiles(app, a, "A B: the two files")->required();
       AddJson(app, a, "the differences as JSON (report.proto DiffReport)");
     },
     RunDiff},
    {"dump",
     "Any Java serialization stream (also gzip, hex, Base64, kubectl ConfigMap\n"
     "output and completedCheckpoint files) as an annotated tree; the text is\n"
     "streamed, long names and arrays are shortened.",
     [](CLI::App& app, CommandArgs& a) {
       AddFiles(app, a, "the file")->required();
       AddJson(app, a,
               "a JSON tree instead of text (schema: flinkstate/javaobj/dump.schema.json); "
               "values are exact, strings whole unless --max-string-bytes");
       app.add_flag("--summary", a.summary,
                    "a class histogram (like jmap -histo), handle and depth statistics "
                    "instead of the tree");
       app.add_option("--max-array-elements", a.max_array_elements,
                      "primitive array elements shown")
           ->type_name("N")
           ->check(CLI::Range(0, std::numeric_limits<int>::max()))
           ->capture_default_str();
       app.add_option("--max-string-bytes", a.max_string_bytes,
                      "bytes of each string shown (text default 120, JSON default all; a "
                      "cut JSON value has \"truncated\")")
           ->type_name("N")
           ->check(CLI::Range(int64_t{0}, std::numeric_limits<int64_t>::max()));
       AddInputFormat(app, a);
     },
     RunDump},
    {"repair",
     "Strips a state from each CHECKPOINT_DIR/_metadata and from the HA\n"
     "completedCheckpoint files in DIR that belong to those checkpoints. Prints the\n"
     "plan; writes only with --apply: every output to a temporary file, verified,\n"
     "every original kept as FILE<backup-suffix>, then all renamed.",
     [](CLI::App& app, CommandArgs& a) {
       AddFiles(app, a, "CHECKPOINT_DIR...: checkpoint directories (chk-<n>), or s3:// "
                        "prefixes (then --ha-dir too)");
       AddStateName(app, a);
       AddOperators(app, a, "only in these operators (repeatable)");
       app.add_option("--ha-dir", a.ha_dir,
                      "Flink's HA storage directory "
                      "(high-availability.storageDir/<cluster-id>)")
           ->type_name("DIR");
       app.add_flag("--apply", a.apply, "write (default: a dry run)");
       app.add_flag("--deep", a.deep,
                    "strip-state --deep on every file: also remove the state's meta info and "
                    "element bytes from the operator-state streams; file-backed streams get new "
                    "state files beside the originals, in the same transaction");
       AddStateRoots(app, a,
                     "with --deep: state files under PREFIX are in the local directory DIR "
                     "(repeatable)");
       AddBackupSuffix(app, a, "suffix of the backups");
       AddFsync(app, a, "fsync before renaming (default; --nofsync to skip)");
       AddProgress(app, a);
       AddJson(app, a, "the plan as JSON (repair.proto RepairPlan)");
     },
     RunRepair},
    {"doctor",
     "Restore pre-flight: the bytes the JobManager sends each task on restore (Flink's\n"
     "redistribution, Java-serialized) against the RPC frame size, the JobManager heap,\n"
     "growth over a checkpoint history, paths, duplicated bytes; every finding with\n"
     "the command that fixes it. PATH: a checkpoint/savepoint directory, _metadata,\n"
     "completedCheckpoint, a job directory holding chk-*, or an HA directory; two\n"
     "PATHs also list what changed between them. Exit 1 when a task exceeds the frame\n"
     "size now or at the next restore.",
     [](CLI::App& app, CommandArgs& a) {
       AddFiles(app, a, "PATH...")->required();
       app.add_option("--parallelism", a.parallelism, "parallelism after restore")
           ->type_name("N")
           ->check(CLI::Range(1, kMaxFlinkParallelism));
       // The size as akka.framesize / pekko.framesize take it ("10485760b",
       // "10m", "64 MiB"), so a value copied from flink-conf.yaml works.
       auto* fs = app.add_option("--frame-size", a.frame_size,
                                 "RPC frame size as akka.framesize / pekko.framesize take it: "
                                 "bytes, or with a unit (10m, 64MiB; default 10485760b)")
                      ->type_name("SIZE")
                      ->transform(CLI::Validator(
                          [](std::string& v) -> std::string {
                            absl::StatusOr<uint64_t> n = flinkstate::ParseRpcFrameSize(v);
                            if (!n.ok()) {
                              return std::string(absl::StripPrefix(
                                  n.status().message(), "doctor: configuration: framesize "));
                            }
                            v = absl::StrCat(*n);
                            return std::string();
                          },
                          "SIZE"))
                      ->check(CLI::Range(kMinRpcFrameSize, kMaxRpcFrameSize));
       app.add_option("--flink-conf", a.flink_conf,
                      "flink-conf.yaml / config.yaml to read pekko.framesize or "
                      "akka.framesize from")
           ->type_name("FILE")->excludes(fs);
       app.add_option("--plan", a.plan, "the job's plan JSON (REST /jobs/<id>/plan)")
           ->type_name("FILE");
       app.add_option("--retained", a.retained, "retained checkpoints (heap forecast)")
           ->type_name("K")
           ->check(CLI::Range(1, std::numeric_limits<int>::max()))
           ->capture_default_str();
       app.add_option("--html", a.html, "write a self-contained HTML report")
           ->type_name("OUT");
       app.add_option("--flink-version", a.flink_version,
                      "the release that restores (2.2+ offloads large task restores to the "
                      "BLOB server); default: the release that wrote the file")
           ->type_name("X.Y[.Z]")
           ->check([](const std::string& v) {
             absl::StatusOr<FlinkRelease> r = ParseFlinkRelease(v);
             return r.ok() ? std::string() : std::string(r.status().message());
           });
       app.add_option("--blob-offload-minsize", a.blob_offload_min_size,
                      "blob.offload.minsize in bytes (default: --flink-conf's, else 1048576)")
           ->type_name("BYTES")
           ->check(CLI::Range(uint64_t{1}, uint64_t{2147483647}));
       AddJson(app, a, "the report as JSON (doctor.proto DoctorReport)");
     },
     RunDoctor},
};

const Command* FindCommand(const std::string& name) {
  for (const Command& c : kCommands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

// CLI11's help with a flag's names as they are typed: CLI11 marks the
// negating form of a flag with the value it stores ("--fsync,--nofsync{false}",
// helper attack of 2026-12-03); here "--fsync, --nofsync".
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_name(const CLI::Option* o, bool is_positional) const override {
    if (is_positional) return CLI::Formatter::make_option_name(o, is_positional);
    std::vector<std::string> names;
    for (const std::string& n : o->get_snames()) names.push_back("-" + n);
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
    return absl::StrJoin(names, ", ");
  }
};

// The parser of one command, its flags bound to `args`.
std::unique_ptr<CLI::App> MakeParser(const Command& c, CommandArgs& args) {
  auto app = std::make_unique<CLI::App>(c.description, absl::StrCat("flinkstate ", c.name));
  app->formatter(std::make_shared<HelpFormatter>());
  CLI::Option* help = app->set_help_flag("-h,--help", "this help");
  c.flags(*app, args);
  // Every flag of every command at most once: `--in-place --in-place`,
  // `--json --json` or both forms of one flag (`--fsync --nofsync`) are usage
  // errors, not a silent last-one-wins. CLI11 gives every flag
  // MultiOptionPolicy::TakeLast (whatever option_defaults() says); Throw makes
  // a second occurrence an ArgumentMismatch (see RepeatedFlagProblem).
  // Options with values already throw on a repeat; the repeatable ones
  // (--operator, --state-root) keep TakeAll.
  for (CLI::Option* o : app->get_options()) {
    if (o != help && o->get_expected_max() == 0 &&
        o->get_multi_option_policy() == CLI::MultiOptionPolicy::TakeLast) {
      o->multi_option_policy(CLI::MultiOptionPolicy::Throw);
    }
  }
  return app;
}

// For an ArgumentMismatch from a flag given twice: what the user gave ("--in-place
// given 2 times"), else "".
std::string RepeatedFlagProblem(CLI::App& app) {
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_expected_max() == 1 && o->get_multi_option_policy() !=
                                          CLI::MultiOptionPolicy::TakeAll &&
        o->count() >= 2) {
      // A value option given twice ("--state a --state b"): CLI11 says "At
      // Most 1 required but received 2".
      std::vector<std::string> values;
      for (const std::string& v : o->results()) values.push_back(absl::StrCat("'", v, "'"));
      return absl::StrCat("--", o->get_lnames().empty() ? o->get_name() : o->get_lnames()[0],
                          " given ", o->count(), " times (", absl::StrJoin(values, ", "),
                          "); it takes one value: run the command once per value");
    }
    if (o->get_expected_max() != 0 || o->count() < 2) continue;
    std::vector<std::string> names;
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
    return absl::StrCat(absl::StrJoin(names, "/"), " given ", o->count(), " times; give ",
                        names.size() > 1 ? "this flag once, in one of its forms"
                                         : "each flag at most once");
  }
  return "";
}

// What `COMMAND --help` lists, as a HelpReport command.
void AddHelpOf(const Command& c, CLI::App& app, report::HelpReport* out) {
  report::HelpReport::Command* cmd = out->add_commands();
  cmd->set_name(c.name);
  cmd->set_description(c.description);
  for (const CLI::Option* o : app.get_options()) {
    report::HelpReport::Flag* f = cmd->add_flags();
    if (o->get_positional()) {
      f->add_names(o->get_name());
    } else {
      for (const std::string& n : o->get_snames()) f->add_names("-" + n);
      for (const std::string& n : o->get_lnames()) f->add_names("--" + n);
    }
    f->set_value_name(o->get_expected_max() == 0 ? "" : o->get_type_name());
    f->set_description(o->get_description());
    f->set_positional(o->get_positional());
    f->set_required(o->get_required());
    f->set_repeatable(o->get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll &&
                      (o->get_positional() || o->get_expected_max() != 0));
  }
}

// `flinkstate help [COMMAND]`: the overview, or one command's flags; with
// `json` the same as a HelpReport (report.proto).
int PrintHelp(const std::string& name, bool json) {
  if (json) SetJsonErrors("help", true);
  const Command* c = name.empty() ? nullptr : FindCommand(name);
  if (!name.empty() && c == nullptr) return Usage(absl::StrCat("unknown command '", name, "'"));
  if (!json) {
    CommandArgs unused;
    std::cout << (c == nullptr ? std::string(kUsage) : MakeParser(*c, unused)->help());
    return kExitOk;
  }
  report::HelpReport r;
  if (c == nullptr) r.set_usage(kUsage);
  for (const Command& each : kCommands) {
    if (c != nullptr && c != &each) continue;
    CommandArgs unused;
    std::unique_ptr<CLI::App> app = MakeParser(each, unused);
    AddHelpOf(each, *app, &r);
  }
  return PrintJson(r, kExitOk);
}

// `flinkstate --version`, as text or (with --json) a VersionReport.
int PrintVersion(bool json) {
  if (!json) {
    std::cout << "flinkstate " << FLINKSTATE_VERSION << "\n";
    return kExitOk;
  }
  SetJsonErrors("version", true);
  report::VersionReport r;
  r.set_name("flinkstate");
  r.set_version(FLINKSTATE_VERSION);
  return PrintJson(r, kExitOk);
}

// `--s3-endpoint URL` (or `=URL`) anywhere after the command applies to
// every s3:// path of every command: taken out before the command's own
// flags are parsed. FLINKSTATE_S3_STATS=1 prints what S3 transferred.
int TakeObjectStoreFlags(int argc, char** argv) {
  int out = 0;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--s3-endpoint" && i + 1 < argc) {
      objstore::SetS3Endpoint(argv[++i]);
    } else if (a.rfind("--s3-endpoint=", 0) == 0) {
      objstore::SetS3Endpoint(a.substr(14));
    } else {
      argv[out++] = argv[i];
    }
  }
  return out;
}

void PrintTransferStats() {
  const char* on = std::getenv("FLINKSTATE_S3_STATS");
  if (on == nullptr || std::string(on) != "1") return;
  const objstore::TransferStats t = objstore::ProcessTransferStats();
  std::cout.flush();  // after the report, not inside its last line on a terminal
  std::cerr << "s3: " << t.requests << " requests, " << t.bytes_down << " bytes down, "
            << t.bytes_up << " bytes up, " << t.retries << " retries";
  // Only when there were any (UploadPartCopy of an edit's unchanged ranges).
  if (t.bytes_part_copied > 0) std::cerr << ", " << t.bytes_part_copied << " bytes part-copied";
  std::cerr << "\n";
}

int Run(int argc, char** argv);

// The working directory and every argument, C-escaped: the intent a write
// records in its journal, by which a rerun of the same command recognises
// the interrupted run it completed.
std::string CommandLine(int argc, char** argv) {
  char cwd[PATH_MAX];
  std::string out = ::getcwd(cwd, sizeof(cwd)) != nullptr ? cwd : "?";
  for (int i = 1; i < argc; ++i) absl::StrAppend(&out, " ", absl::CEscape(argv[i]));
  return out;
}

// Read-only commands look at files another flinkstate run may be writing or
// may have left half-written: each local directory they read (a file's, a
// checkpoint directory, --ha-dir) holding the journal or temporaries of an
// interrupted transaction gets one warning on stderr, with what resolves it
// (attack run 6, item 3). Nothing is changed: reading resolves nothing.
void WarnAboutInterruptedRuns(CommandArgs& a) {
  std::vector<std::string> dirs;
  auto add = [&](const std::string& p) {
    if (p.empty() || absl::StrContains(p, "://")) return;
    struct stat st;
    if (::stat(p.c_str(), &st) != 0) return;
    const std::string d = serde::AbsolutePath(S_ISDIR(st.st_mode) ? p + "/." : p);
    if (d.empty()) return;
    const std::string dir = serde::DirName(d);
    if (absl::c_find(dirs, dir) == dirs.end()) dirs.push_back(dir);
  };
  for (const std::string& p : a.positional) add(p);
  add(a.ha_dir);
  const auto warn = [&a](const std::string& dir, const std::string& message) {
    std::cerr << "flinkstate: warning: " << message << "\n";
    report::Warning& w = a.interrupted_runs.emplace_back();
    w.set_code("INTERRUPTED_RUN");
    w.set_message(ValidUtf8(message));
    w.set_path(ValidUtf8(dir));
  };
  for (const std::string& dir : dirs) {
    absl::StatusOr<std::vector<serde::InterruptedRun>> runs = serde::FindInterruptedRuns(dir);
    if (!runs.ok()) {
      warn(dir, std::string(runs.status().message()));
      continue;
    }
    for (const serde::InterruptedRun& r : *runs) {
      if (r.state == "unstarted") {
        warn(dir, absl::StrCat(Printable(absl::StrJoin(r.temporaries, ", ")),
                               " is the unfinished journal of a flinkstate write interrupted "
                               "before it changed anything; any flinkstate write in ",
                               Printable(dir), " removes it"));
        continue;
      }
      if (r.journal.empty()) {
        // Only a repair spans directories; its journal stays in its first
        // checkpoint directory, which is not known from here.
        warn(dir,
             absl::StrCat(
                 Printable(absl::StrJoin(r.temporaries, ", ")),
                 r.temporaries.size() == 1 ? " belongs" : " belong",
                 " to an interrupted flinkstate run whose journal (", Printable(r.journal_name),
                 ") is in another directory: a repair keeps it in its first checkpoint "
                 "directory, and inspect, verify or doctor of that checkpoint names the "
                 "command. Rerun that `flinkstate repair`, or any flinkstate write in that "
                 "directory, to finish or undo it"));
        continue;
      }
      std::string m = absl::StrCat(Printable(dir),
                                   " holds the journal of an interrupted flinkstate write (",
                                   Printable(r.journal.substr(r.journal.rfind('/') + 1)));
      // The intent is "CWD ARG..." (CommandLine, arguments C-escaped); shown
      // escaped whatever a journal holds (a planted one could carry
      // terminal escapes).
      if (const size_t sp = r.intent.find(' '); sp != std::string::npos) {
        absl::StrAppend(&m, ", run in ", Printable(r.intent.substr(0, sp)),
                        " as: flinkstate ", Printable(r.intent.substr(sp + 1)));
      }
      absl::StrAppend(&m, ")");
      const auto list = [](const std::vector<std::string>& paths) {
        return absl::StrCat(Printable(absl::StrJoin(paths, ", ")),
                            paths.size() == 1 ? " still holds" : " still hold");
      };
      if (r.state == "commit" && !r.changed.empty()) {
        absl::StrAppend(&m, ": it had committed, but ", Printable(absl::StrJoin(r.changed, ", ")),
                        " changed since (no longer the original kept as backup); a rerun "
                        "refuses to replace it, and says how to keep it or finish the write");
      } else if (r.state == "commit" && r.unreplaced.empty()) {
        absl::StrAppend(&m, ": it had committed and replaced ",
                        Printable(absl::StrJoin(r.targets, ", ")),
                        "; only its clean-up is left");
        if (!r.replaced_then_changed.empty()) {
          // Restored from the backup since, or written over (attack run
          // 11, M1: this said the file was the run's output).
          absl::StrAppend(&m, ", but ", Printable(absl::StrJoin(r.replaced_then_changed, ", ")),
                          r.replaced_then_changed.size() == 1 ? " is" : " are",
                          " no longer that run's output (changed since; restored?)");
        }
        absl::StrAppend(&m, ". Rerun that command, or any flinkstate write in ", Printable(dir),
                        ", to finish it");
      } else if (r.state == "commit") {
        absl::StrAppend(&m, ": it had committed, and ", list(r.unreplaced),
                        " the original; what this shows of it is from before the write. Rerun "
                        "that command, or any flinkstate write in ",
                        Printable(dir), ", to finish it");
      } else if (r.state == "prepare") {
        absl::StrAppend(&m, ": it had not committed, so ", list(r.targets),
                        " the original; rerun that command to do it, or any flinkstate write in ",
                        Printable(dir), " to remove its temporary files");
      } else {
        absl::StrAppend(&m, ": not read (", Printable(r.problem), ")");
      }
      warn(dir, m);
    }
  }
}

int Main(int argc, char** argv) {
  objstore::InstallObjectStore();
  argc = TakeObjectStoreFlags(argc, argv);
  const int rc = Run(argc, argv);
  PrintTransferStats();
  return rc;
}

int Run(int argc, char** argv) {
  const std::string first = argc > 1 ? argv[1] : "";
  if (first.empty()) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  // help and --version answer in JSON too when --json is among the words,
  // on either side (attack run 11: `flinkstate --json help` and
  // `--json --version` printed text or a usage error).
  std::vector<std::string> words;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else {
      words.emplace_back(argv[i]);
    }
  }
  const std::string head = words.empty() ? "" : words[0];
  if (head == "help" || head == "--help" || head == "-h") {
    if (json) SetJsonErrors("help", true);
    if (head != "help" && words.size() > 1) {
      return Usage(absl::StrCat(head, " takes no arguments (got '", words[1], "')"));
    }
    if (words.size() > 2) {
      return Usage(absl::StrCat("help takes one COMMAND (got '", words[1], "' and '", words[2],
                                "')"));
    }
    return PrintHelp(words.size() == 2 ? words[1] : "", json);
  }
  if (head == "--version") {
    if (json) SetJsonErrors("version", true);
    if (words.size() > 1) {
      return Usage(absl::StrCat("--version takes no arguments (got '", words[1], "')"));
    }
    return PrintVersion(json);
  }
  if (first == "--json" && argc > 2 && argv[2][0] != '-') {
    // `flinkstate --json inspect F` as `flinkstate inspect --json F`: the
    // flag before the command, as git and kubectl take global flags.
    std::rotate(argv + 1, argv + 2, argv + 3);
    return Run(argc, argv);
  }
  const Command* c = FindCommand(first);
  if (c == nullptr) {
    // Under --json the error is a JSON document too (attack run 9).
    if (std::any_of(argv + 1, argv + argc,
                    [](const char* w) { return std::strcmp(w, "--json") == 0; })) {
      SetJsonErrors("", true);
    }
    return Usage(absl::StrCat("unknown command '", first, "'"));
  }
  CommandArgs args;
  std::unique_ptr<CLI::App> app = MakeParser(*c, args);
  // A usage error found while parsing is reported as JSON too when --json
  // was asked for (the flag is not parsed yet: looked for among the words).
  if (app->get_option_no_throw("--json") != nullptr &&
      std::any_of(argv + 2, argv + argc, [](const char* w) { return std::strcmp(w, "--json") == 0; })) {
    SetJsonErrors(c->name, true);
  }
  try {
    // argv[1] is the command: CLI11 reads the rest.
    app->parse(argc - 1, argv + 1);
  } catch (const CLI::CallForHelp&) {
    // `COMMAND --help --json`: the HelpReport of that command.
    return PrintHelp(c->name, std::any_of(argv + 2, argv + argc, [](const char* w) {
                       return std::strcmp(w, "--json") == 0;
                     }));
  } catch (const CLI::ArgumentMismatch& e) {
    const std::string repeated = RepeatedFlagProblem(*app);
    return Usage(absl::StrCat(c->name, ": ", repeated.empty() ? e.what() : repeated));
  } catch (const CLI::ParseError& e) {
    return Usage(absl::StrCat(c->name, ": ", e.what()));
  }
  SetInputFormat(args.input_format);
  args.command = c->name;
  args.command_line = CommandLine(argc, argv);
  SetJsonErrors(c->name, args.json);
  const std::string& cmd = args.command;
  if (cmd == "inspect" || cmd == "verify" || cmd == "state" || cmd == "diff" || cmd == "dump" ||
      cmd == "doctor" || (cmd == "repair" && !args.apply)) {
    WarnAboutInterruptedRuns(args);
  }
  return c->run(args);
}

}  // namespace
}  // namespace flinkstate::cli

int main(int argc, char** argv) {
  // Streaming passes decode one operator (tens of MiB of small records) at a
  // time and free it: keep freed memory in the heap for the next one instead
  // of returning it to the kernel and faulting it in again (measured: a
  // quarter of relocate's time on the 100-operator wide job went to that).
  ::mallopt(M_MMAP_THRESHOLD, 64 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 256 << 20);
  flinkstate::cli::InstallOutputEscaping(argc, argv);
  const int rc = flinkstate::cli::Main(argc, argv);
  if (const int e = flinkstate::cli::FinishStdout(); e != 0) {
    std::cerr << "flinkstate: standard output: " << std::strerror(e)
              << "; what was printed is incomplete\n";
    std::cerr.flush();
    return rc != 0 ? rc : 1;
  }
  std::cerr.flush();
  return rc;
}
