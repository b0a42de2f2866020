// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: gen_flags.h
// -----------------------------------------------------------------------------
// The Abseil flags set-up the generators share: `--help` lists the flags
// defined under tools/gen/. Abseil's help matches flags by the name of the
// file that defines them, which is not the program's name here
// (gen_incident.cc for flinkstate-gen-incident): `--help` printed
// "No flags matched".
//
//   ```c++
//   flinkstate::gen::UseGeneratorFlagsHelp();  // first thing in main
//   ```
//
// Not thread-safe: call once, before parsing the command line.

#ifndef FLINKSTATE_TOOLS_GEN_GEN_FLAGS_H_
#define FLINKSTATE_TOOLS_GEN_GEN_FLAGS_H_

#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

namespace flinkstate::gen {

inline void UseGeneratorFlagsHelp() {
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::StrContains(file, "tools/gen/");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(usage);
}

}  // namespace flinkstate::gen

#endif  // FLINKSTATE_TOOLS_GEN_GEN_FLAGS_H_
