// Prints the format version of a `_metadata` (or operator-snapshot) file,
// using only the installed flinkstate headers and libraries.
#include <cstdio>

#include "flinkstate/metadata_reader.h"
#include "flinkstate/serde/mapped_file.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  auto file = flinkstate::serde::MappedFile::Open(argv[1]);
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
