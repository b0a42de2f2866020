// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// `flinkstate state`: inside the operator-state streams (operator_state_report.h).

#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "flinkstate/deep_strip.h"
#include "flinkstate/operator_state_report.h"
#include "tools/commands.h"

namespace flinkstate::cli {
namespace {

int StateOne(const CommandArgs& a, const std::string& path,
             const StateStreamSources& base_sources) {
  absl::StatusOr<Input> in = LoadStateFile(path);
  if (!in.ok()) return Fail(in.status());
  StateStreamSources sources = base_sources;
  sources.base_dir = DirOf(in->path);
  StateReportOptions options;
  options.kafka_source_splits = a.kafka_source_splits;
  report::OperatorStateStreamReport rep =
      BuildOperatorStateStreamReport(in->model, in->bytes(), sources, options);
  rep.set_file(ValidUtf8(in->path));
  const int rc = rep.streams_unreadable() ? kExitInput : kExitOk;
  if (a.json) return PrintJson(rep, rc);
  std::cout << RenderOperatorStateStreamText(rep);
  return rc;
}

}  // namespace

int RunState(const CommandArgs& a) {
  if (a.positional.empty()) return Usage("state takes FILE...");
  StateStreamSources sources;
  for (const std::string& root : a.state_roots) {
    const size_t eq = root.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == root.size()) {
      return Usage(absl::StrCat("--state-root takes PREFIX=DIR, not \"", root, "\""));
    }
    sources.state_roots.emplace_back(root.substr(0, eq), root.substr(eq + 1));
  }
  int rc = kExitOk;
  for (size_t i = 0; i < a.positional.size(); ++i) {
    if (i > 0 && !a.json) std::cout << "\n";
    rc = std::max(rc, StateOne(a, a.positional[i], sources));
  }
  return rc;
}

int RunDeepStripState(const CommandArgs& a) {
  StripOptions options;
  options.state_name = a.state;
  if (options.state_name.empty()) return Usage("strip-state --deep needs --state NAME");
  options.operator_ids = a.operators;
  absl::StatusOr<OutputTarget> target = ResolveOutput(a);
  if (!target.ok()) return Usage(target.status().message());
  absl::StatusOr<Input> in = LoadStateFile(target->input);
  if (!in.ok()) return Fail(in.status());
  absl::StatusOr<DeepStripResult> result =
      PlanDeepStripState(in->model, in->bytes(), options);
  if (!result.ok()) return Fail(result.status());
  std::ostream& out = Text(a);
  out << "removing '" << Printable(options.state_name) << "' deeply from "
      << result->removed.size() << " operator state handle(s): " << result->meta_infos_removed
      << " meta info(s), " << Human(result->element_bytes_removed) << " of element bytes\n";
  const StateFile& before = in->model;
  const serde::ByteView before_bytes = in->bytes();
  absl::Status s = WriteVerified(
      *target, *in, result->plan,
      StateFileVerifier([&](const StateFile& after, serde::ByteView after_bytes) {
        return VerifyDeepStripped(before, before_bytes, after, after_bytes, options);
      }));
  if (!s.ok()) return Fail(s);
  out << absl::StrFormat("wrote %s: %s -> %s (%s removed), verified\n", target->output,
                         Human(in->bytes().size()), Human(result->plan.output_size()),
                         Human(result->bytes_removed));
  if (!target->backup.empty()) out << "original kept as " << target->backup << "\n";
  if (!a.json) return kExitOk;
  report::EditReport rep =
      EditReportOf("strip-state --deep", *target, *in, result->plan.output_size());
  AddStripped(result->removed, &rep);
  return PrintJson(rep);
}

}  // namespace flinkstate::cli
