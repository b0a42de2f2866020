// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// `flinkstate state`: inside the operator-state streams (operator_state_report.h).

#include <iostream>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "flinkstate/dedupe_union.h"
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

namespace {

// Per operator and state name: (elements, distinct elements) of the report.
std::map<std::pair<std::string, std::string>, std::pair<uint64_t, uint64_t>> Counts(
    const report::OperatorStateStreamReport& r) {
  std::map<std::pair<std::string, std::string>, std::pair<uint64_t, uint64_t>> out;
  for (const auto& op : r.operators()) {
    for (const auto& t : op.states()) {
      out[{op.operator_id(), t.name()}] = {t.elements(), t.distinct_elements()};
    }
  }
  return out;
}

}  // namespace

int RunDedupeUnion(const CommandArgs& a) {
  StripOptions options;
  options.state_name = a.state;
  if (options.state_name.empty()) return Usage("dedupe-union needs --state NAME");
  options.operator_ids = a.operators;
  absl::StatusOr<OutputTarget> target = ResolveOutput(a);
  if (!target.ok()) return Usage(target.status().message());
  absl::StatusOr<Input> in = LoadStateFile(target->input);
  if (!in.ok()) return Fail(in.status());
  StateStreamSources sources;
  sources.base_dir = DirOf(in->path);
  for (const std::string& root : a.state_roots) {
    const size_t eq = root.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == root.size()) {
      return Usage(absl::StrCat("--state-root takes PREFIX=DIR, not \"", root, "\""));
    }
    sources.state_roots.emplace_back(root.substr(0, eq), root.substr(eq + 1));
  }
  absl::StatusOr<DedupeResult> result =
      PlanDedupeUnion(in->model, in->bytes(), options, sources);
  if (!result.ok()) return Fail(result.status());
  std::ostream& out = Text(a);
  out << "'" << Printable(options.state_name) << "': " << result->elements_before
      << " elements, " << result->elements_after << " distinct kept, "
      << (result->elements_before - result->elements_after) << " copies dropped from "
      << result->handles << " handle(s)\n";
  const auto before = Counts(BuildOperatorStateStreamReport(in->model, in->bytes(), sources));
  absl::Status s = WriteVerified(
      *target, *in, result->plan,
      StateFileVerifier([&](const StateFile& after, serde::ByteView after_bytes) {
        // The name keeps exactly its distinct elements; every other state its counts.
        const auto now = Counts(BuildOperatorStateStreamReport(after, after_bytes, sources));
        if (now.size() != before.size()) return absl::InternalError("dedupe-union: verify: states changed");
        for (const auto& [key, counts] : before) {
          auto it = now.find(key);
          if (it == now.end()) return absl::InternalError("dedupe-union: verify: a state vanished");
          const bool mine = key.second == options.state_name;
          const std::pair<uint64_t, uint64_t> want =
              mine ? std::make_pair(counts.second, counts.second) : counts;
          if (it->second != want) {
            return absl::InternalError(absl::StrCat("dedupe-union: verify: ", key.first, " ",
                                                    key.second, " has ", it->second.first,
                                                    " elements, ", it->second.second,
                                                    " distinct"));
          }
        }
        return absl::OkStatus();
      }));
  if (!s.ok()) return Fail(s);
  out << absl::StrFormat("wrote %s: %s -> %s (%s removed), verified\n", target->output,
                         Human(in->bytes().size()), Human(result->plan.output_size()),
                         Human(result->bytes_removed));
  if (!target->backup.empty()) out << "original kept as " << target->backup << "\n";
  if (!a.json) return kExitOk;
  return PrintJson(EditReportOf("dedupe-union", *target, *in, result->plan.output_size()));
}

}  // namespace flinkstate::cli
