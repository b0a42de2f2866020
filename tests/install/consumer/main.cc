// What a tool author writes against the installed flinkstate package (only
// its installed headers and libraries):
//   app FILE                      the format version of a _metadata/snapshot
//   app open FILE_OR_DIR...       one line per file: its kind, by one call
//   app repair STATE CHK_DIR HA_DIR
//                                 removes STATE from the checkpoint and its HA
//                                 files as one crash-safe transaction
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "flinkstate/metadata_reader.h"
#include "flinkstate/open.h"
#include "flinkstate/repair.h"
#include "flinkstate/serde/mapped_file.h"

namespace {

int Version(const char* path) {
  auto file = flinkstate::serde::MappedFile::Open(path);
  if (!file.ok()) return std::puts(file.status().ToString().c_str()), 1;
  auto state = flinkstate::ReadStateFile(file->bytes());
  if (!state.ok()) return std::puts(state.status().ToString().c_str()), 1;
  if (state->kind == flinkstate::StateFileKind::kMetadata) {
    std::printf("metadata version %u\n", state->metadata.version);
  } else {
    std::printf("operator snapshot header %d\n", state->snapshot.header);
  }
  return 0;
}

int OpenAll(int n, char** paths) {
  for (int i = 0; i < n; ++i) {
    auto f = flinkstate::Open(paths[i]);
    if (!f.ok()) return std::puts(f.status().ToString().c_str()), 1;
    std::printf("%s%s\n", flinkstate::FileKindName(f->kind),
                f->encoding == flinkstate::Encoding::kBase64    ? " (Base64)"
                : f->encoding == flinkstate::Encoding::kWrapped ? " (unwrapped)"
                                                                : "");
  }
  return 0;
}

int RepairJob(const char* state, const char* chk, const char* ha) {
  flinkstate::RepairOptions o;
  o.strip.state_name = state;
  o.checkpoint_dirs = {chk};
  o.ha_dir = ha;
  auto r = flinkstate::Repair::Plan(o);
  if (!r.ok()) return std::puts(r.status().ToString().c_str()), 1;
  absl::Status s = (*r)->Apply();
  if (!s.ok()) return std::puts(s.ToString().c_str()), 1;
  std::printf("repaired %d file(s)\n", (*r)->plan().files_size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2) return Version(argv[1]);
  if (argc >= 3 && std::strcmp(argv[1], "open") == 0) return OpenAll(argc - 2, argv + 2);
  if (argc == 5 && std::strcmp(argv[1], "repair") == 0) return RepairJob(argv[2], argv[3], argv[4]);
  return 2;
}
