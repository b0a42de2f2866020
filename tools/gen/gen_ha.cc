// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// flinkstate-gen-ha: writes the HA `completedCheckpoint` file of a checkpoint
// from its `_metadata` (tests/fixtures/completed_checkpoint_writer.h), e.g. for
// an incident-shaped HA file:
//
//   flinkstate-gen-incident --out /tmp/chk-1742/_metadata --target_size_mib 512
//   flinkstate-gen-ha --metadata /tmp/chk-1742/_metadata
//       --out /tmp/ha/completedCheckpoint0123456789ab   (one command line)
//
// The external pointer defaults to `file:` + the metadata's directory.
// Exit codes: 0 written, 1 input or output problem, 2 bad flags.

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "tools/gen/gen_flags.h"
#include "tests/fixtures/completed_checkpoint_writer.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/serde/mapped_file.h"

ABSL_FLAG(std::string, metadata, "", "The _metadata file (required)");
ABSL_FLAG(std::string, out, "", "Path of the completedCheckpoint file to write (required)");
ABSL_FLAG(std::string, external_pointer, "",
          "CompletedCheckpoint.externalPointer (default: file:<metadata dir>)");
ABSL_FLAG(std::string, job_id, "d4c5f0b7a2e94b1f8c3e6a7b9d0f1e2a", "JobID hex (32 chars)");

int main(int argc, char** argv) {
  flinkstate::gen::UseGeneratorFlagsHelp();  // --help lists our flags
  absl::SetProgramUsageMessage(
      "Writes the HA completedCheckpoint file of a _metadata file.\n"
      "  flinkstate-gen-ha --metadata PATH --out PATH [--external_pointer URI]");
  std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  const std::string meta = absl::GetFlag(FLAGS_metadata);
  const std::string out = absl::GetFlag(FLAGS_out);
  if (rest.size() > 1 || meta.empty() || out.empty()) {
    std::fprintf(stderr, "flinkstate-gen-ha: --metadata and --out are required\n");
    return 2;
  }
  absl::StatusOr<flinkstate::serde::MappedFile> f = flinkstate::serde::MappedFile::Open(meta);
  if (!f.ok()) {
    std::fprintf(stderr, "flinkstate-gen-ha: %s\n", f.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<flinkstate::StateFile> model = flinkstate::ReadStateFile(f->bytes());
  if (!model.ok()) {
    std::fprintf(stderr, "flinkstate-gen-ha: %s: %s\n", meta.c_str(),
                 model.status().ToString().c_str());
    return 1;
  }
  flinkstate::CompletedCheckpointWriteOptions o;
  o.job_id = absl::GetFlag(FLAGS_job_id);
  o.external_pointer = absl::GetFlag(FLAGS_external_pointer);
  if (o.external_pointer.empty()) {
    char buf[PATH_MAX];
    std::string dir = meta.substr(0, meta.rfind('/') == std::string::npos ? 0 : meta.rfind('/'));
    if (dir.empty()) dir = ".";
    o.external_pointer = absl::StrCat("file:", ::realpath(dir.c_str(), buf) ? buf : dir.c_str());
  }
  absl::Status s = flinkstate::WriteCompletedCheckpointFromMetadata(*model, f->bytes(), o, out);
  if (!s.ok()) {
    std::fprintf(stderr, "flinkstate-gen-ha: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
