// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "tools/cli_args.h"

#include <algorithm>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace flinkstate::cli {

absl::Status ParseArgs(int argc, char** argv,
                       const std::vector<std::string>& repeatable,
                       ParsedArgs* out) {
  bool flags_done = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (flags_done || arg.size() < 2 || arg[0] != '-') {
      if (out->command.empty()) {
        out->command = arg;
      } else {
        out->positional.push_back(arg);
      }
      continue;
    }
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
    std::string name = body, value;
    bool has_value = false;
    if (size_t eq = body.find('='); eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    name = absl::StrReplaceAll(name, {{"-", "_"}});
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    bool negated = false;
    if (flag == nullptr && absl::StartsWith(name, "no")) {
      flag = absl::FindCommandLineFlag(name.substr(2));
      negated = flag != nullptr && flag->IsOfType<bool>();
      if (!negated) flag = nullptr;
    }
    if (flag == nullptr || flag->Filename().find("/tools/") == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag ", arg));
    }
    if (flag->IsOfType<bool>()) {
      if (!has_value) value = negated ? "false" : "true";
    } else if (!has_value) {
      if (i + 1 >= argc) {
        return absl::InvalidArgumentError(absl::StrCat("flag ", arg, " needs a value"));
      }
      value = argv[++i];
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad value '", value, "' for --", name, ": ", error));
    }
    if (std::find(repeatable.begin(), repeatable.end(), name) != repeatable.end()) {
      out->repeated[name].push_back(value);
    }
  }
  if (out->command.empty()) return absl::InvalidArgumentError("no command given");
  return absl::OkStatus();
}

}  // namespace flinkstate::cli
