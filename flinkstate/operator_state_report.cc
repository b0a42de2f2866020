// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/operator_state_report.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include "absl/strings/string_view.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/kafka_state.h"
#include "flinkstate/objstore/s3_client.h"
#include "flinkstate/operator_state_stream.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate {
namespace {

bool HasRemoteScheme(absl::string_view p) {
  const size_t colon = p.find("://");
  if (colon == absl::string_view::npos) return false;
  return p.substr(0, colon) != "file";
}

std::string StripFileScheme(absl::string_view p) {
  // file:/tmp/x and file:///tmp/x (empty authority) are /tmp/x.
  if (absl::StartsWith(p, "file:")) p.remove_prefix(5);
  if (absl::StartsWith(p, "///")) p.remove_prefix(2);
  return std::string(p);
}

}  // namespace

absl::StatusOr<std::string> LocalStatePath(const std::string& path, bool relative,
                                           const StateStreamSources& sources) {
  if (relative) {
    // As verify judges it: a relative handle names a file in the checkpoint
    // directory, nothing above or outside it (attack run 10: `state` read
    // /etc/hosts through ../../..).
    if (path.empty() || path[0] == '/' || absl::StrContains(path, "..")) {
      return absl::FailedPreconditionError(absl::StrCat(
          "relative handle path '", absl::CHexEscape(path),
          "' leaves the checkpoint directory; not read"));
    }
    if (sources.base_dir.empty()) return path;
    return absl::StrCat(sources.base_dir, "/", path);
  }
  const std::pair<std::string, std::string>* best = nullptr;
  for (const auto& root : sources.state_roots) {
    if (absl::StartsWith(path, root.first) &&
        (best == nullptr || root.first.size() > best->first.size())) {
      best = &root;
    }
  }
  if (best != nullptr) {
    absl::string_view rest = absl::string_view(path).substr(best->first.size());
    if (!rest.empty() && rest.front() != '/' && !best->second.empty() &&
        best->second.back() != '/' && best->first.back() != '/') {
      // The prefix must end on a path boundary.
      best = nullptr;
    } else {
      return absl::StrCat(best->second, rest);
    }
  }
  if (sources.read_object_store && objstore::IsObjectUrl(path)) return path;
  if (HasRemoteScheme(path)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "state file ", path, " is remote: give --state-root PREFIX=DIR for a local copy"));
  }
  return StripFileScheme(path);
}

std::string RelativeHandleDir(const StateFile& file, const std::string& path,
                              const StateStreamSources& sources) {
  if (file.kind != StateFileKind::kCompletedCheckpoint) {
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
  }
  if (file.completed == nullptr || file.completed->exclusive_checkpoint_dir.empty()) return "";
  absl::StatusOr<std::string> local =
      LocalStatePath(file.completed->exclusive_checkpoint_dir, false, sources);
  return local.ok() ? *local : "";
}

absl::StatusOr<ResolvedStream> ResolveStateStream(const StreamStateHandle& d,
                                                  serde::ByteView input,
                                                  const StateStreamSources& sources) {
  ResolvedStream r;
  switch (static_cast<HandleTag>(d.tag)) {
    case HandleTag::kByteStream:
      if (d.data.offset > input.size() || d.data.size > input.size() - d.data.offset) {
        return absl::OutOfRangeError("inline state bytes lie outside the file");
      }
      r.is_inline = true;
      r.source = "inline";
      r.bytes = input.subspan(d.data.offset, d.data.size);
      r.base_offset = d.data.offset;
      return r;
    case HandleTag::kFileStream:
    case HandleTag::kRelativeStream:
    case HandleTag::kSegmentFile: {
      FLINKSTATE_ASSIGN_OR_RETURN(
          r.source, LocalStatePath(d.path.value,
                                   d.tag == static_cast<uint8_t>(HandleTag::kRelativeStream),
                                   sources));
      FLINKSTATE_ASSIGN_OR_RETURN(r.file, serde::MappedFile::Open(r.source));
      r.bytes = r.file.bytes();
      if (d.tag == static_cast<uint8_t>(HandleTag::kSegmentFile)) {
        if (d.start_pos < 0 || d.state_size < 0 ||
            static_cast<uint64_t>(d.start_pos) > r.bytes.size() ||
            static_cast<uint64_t>(d.state_size) > r.bytes.size() - d.start_pos) {
          return absl::OutOfRangeError(absl::StrCat(
              "segment [", d.start_pos, ", +", d.state_size, ") lies outside ",
              r.source, " (", r.bytes.size(), " bytes)"));
        }
        r.bytes = r.bytes.subspan(d.start_pos, d.state_size);
        r.base_offset = d.start_pos;
      }
      return r;
    }
    case HandleTag::kEmptySegmentFile:
      // File merging's stand-in for a stream with no bytes (Flink 1.20+,
      // `EmptySegmentFileStateHandle`): an empty stream, not an unreadable one.
      r.source = "empty segment";
      return r;
    default:
      return absl::UnimplementedError(absl::StrCat(
          "an operator state handle delegating to ", HandleTagName(d.tag),
          " holds no stream this command reads"));
  }
}

namespace {

struct Totals {
  report::OperatorStateStreamReport::StateTotal total;
  absl::flat_hash_set<std::string> distinct;
};

// Rows of the Kafka table of one operator, keyed for sorting.
struct KafkaRow {
  uint64_t entries = 0;
  std::set<int32_t> subtasks;
  std::string form;
};
using KafkaKey = std::tuple<std::string, std::string, int32_t, int64_t, int64_t>;
struct OperatorAcc {
  std::map<std::string, Totals> totals;
  std::vector<std::string> order;
  std::map<KafkaKey, KafkaRow> kafka;
  std::vector<std::string> kafka_errors;
  // --kafka-source: SourceReaderState elements that decoded as a
  // KafkaPartitionSplit and those that did not (with their errors).
  uint64_t kafka_splits = 0;
  std::vector<std::string> kafka_split_errors;
  // Splits were found and none is a KafkaPartitionSplit: another source
  // (attack run 6, item 14: NumberSequenceSource was shown as a KafkaSource
  // with 0 partitions).
  bool NotKafkaSource() const { return kafka_splits == 0 && !kafka_split_errors.empty(); }
};

void FillMetaInfo(const StateMetaInfo& m, report::OperatorStateStreamReport::MetaInfo* out) {
  out->set_name(m.name);
  out->set_backend_state_type(BackendStateTypeName(m.backend_state_type));
  out->set_distribution_mode(m.distribution_mode);
  out->set_offset(m.range.offset);
  out->set_bytes(m.range.size);
  for (const SerializerSnapshotInfo& s : m.serializers) {
    auto* o = out->add_serializers();
    o->set_key(s.key);
    o->set_snapshot_class(s.snapshot_class);
    o->set_snapshot_version(s.snapshot_version);
    o->set_serializer_class(s.serializer_class);
    o->set_description(s.Describe());
    o->set_offset(s.range.offset);
    o->set_bytes(s.range.size);
  }
}

std::string SerializerText(const report::OperatorStateStreamReport::MetaInfo& m) {
  std::string out;
  for (const auto& s : m.serializers()) {
    if (!out.empty()) absl::StrAppend(&out, ", ");
    if (!s.key().empty() && m.serializers_size() > 1) absl::StrAppend(&out, s.key(), "=");
    absl::StrAppend(&out, s.description());
  }
  return out;
}

void ReportHandle(const OperatorStateHandle& h, int32_t subtask, const char* slot,
                  serde::ByteView input, const StateStreamSources& sources,
                  const StateReportOptions& options,
                  report::OperatorStateStreamReport* rep,
                  report::OperatorStateStreamReport::Operator* op, OperatorAcc* acc) {
  std::map<std::string, Totals>* totals = &acc->totals;
  std::vector<std::string>* order = &acc->order;
  auto* st = op->add_subtasks();
  st->set_subtask_index(subtask);
  st->set_slot(slot);
  rep->set_streams(rep->streams() + 1);
  // Names in handle order, so totals exist even for unreadable streams.
  for (const StateNameEntry& e : h.states) {
    if (!totals->count(e.name.value)) order->push_back(e.name.value);
    Totals& t = (*totals)[e.name.value];
    t.total.set_name(e.name.value);
    t.total.set_distribution_mode(DistributionModeName(e.mode));
    t.total.set_subtasks(t.total.subtasks() + 1);
  }
  if (!h.delegate) {
    st->set_error("the handle has no stream");
    rep->set_streams_unreadable(rep->streams_unreadable() + 1);
    return;
  }
  absl::StatusOr<ResolvedStream> rs = ResolveStateStream(*h.delegate, input, sources);
  if (!rs.ok()) {
    st->set_error(std::string(rs.status().message()));
    rep->set_streams_unreadable(rep->streams_unreadable() + 1);
    return;
  }
  st->set_source(rs->source);
  st->set_stream_offset(rs->base_offset);
  st->set_stream_bytes(rs->bytes.size());
  uint64_t header_end = 0;
  std::map<std::string, int64_t> fixed_length;
  absl::StatusOr<OperatorStateStreamHeader> hdr =
      rs->bytes.empty() ? absl::NotFoundError("empty stream")
                        : ReadOperatorStateStreamHeader(rs->bytes);
  if (rs->bytes.empty()) {
    // No header to read (an empty segment); offsets into it, if any, fail below.
  } else if (hdr.ok()) {
    st->set_proxy_version(hdr->version);
    st->set_header_bytes(hdr->range.size);
    for (const StateMetaInfo& m : hdr->operator_states) {
      FillMetaInfo(m, st->add_meta_infos());
      fixed_length[m.name] = FixedElementLength(m);
    }
    for (const StateMetaInfo& m : hdr->broadcast_states) FillMetaInfo(m, st->add_meta_infos());
    if (hdr->complete()) {
      header_end = hdr->range.size;
    } else {
      st->set_header_stopped(std::string(hdr->stopped.message()));
    }
  } else {
    st->set_header_stopped(std::string(hdr.status().message()));
  }
  absl::StatusOr<std::vector<StateElements>> els =
      ReadElementExtents(h, input, rs->bytes.size(), header_end, rs->bytes);
  if (!els.ok()) {
    st->set_error(std::string(els.status().message()));
    rep->set_streams_unreadable(rep->streams_unreadable() + 1);
    return;
  }
  for (const auto& m : st->meta_infos()) {
    bool referenced = false;
    for (const StateNameEntry& e : h.states) referenced |= e.name.value == m.name();
    if (!referenced) st->add_meta_infos_without_offsets(m.name());
  }
  uint64_t covered = 0;
  for (StateElements& se : *els) {
    auto fl = fixed_length.find(se.name);
    if (fl != fixed_length.end() && fl->second >= 0) {
      for (SourceRange& r : se.elements) {
        r.size = std::min<uint64_t>(r.size, static_cast<uint64_t>(fl->second));
      }
    }
    auto* o = st->add_states();
    o->set_name(se.name);
    o->set_distribution_mode(DistributionModeName(se.mode));
    o->set_elements(se.elements.size());
    uint64_t bytes = 0;
    Totals& t = (*totals)[se.name];
    for (const SourceRange& r : se.elements) {
      bytes += r.size;
      covered += r.size;
      const auto* p = reinterpret_cast<const char*>(rs->bytes.data() + r.offset);
      t.distinct.emplace(p, r.size);
    }
    o->set_element_bytes(bytes);
    // Flink 1.2/1.3 consumers kept the offsets in the default operator state
    // "_default_" (Java-serialized Tuple2s); decoded when they are that.
    const bool java_default =
        options.kafka_legacy_offsets && se.name == "_default_" && !se.elements.empty() &&
        se.elements[0].size >= 2 && rs->bytes[se.elements[0].offset] == 0xAC &&
        rs->bytes[se.elements[0].offset + 1] == 0xED;
    const bool legacy = java_default ||
                        (options.kafka_legacy_offsets && se.name == kKafkaOffsetsStateName);
    const bool splits = options.kafka_source_splits && se.name == kSourceReaderStateName;
    if (legacy || splits) {
      for (size_t i = 0; i < se.elements.size(); ++i) {
        const SourceRange& r = se.elements[i];
        serde::ByteView el = rs->bytes.subspan(r.offset, r.size);
        absl::StatusOr<KafkaPartitionOffset> k =
            legacy ? DecodeLegacyKafkaOffsetElement(el) : DecodeKafkaSplitElement(el);
        if (!k.ok()) {
          (legacy ? acc->kafka_errors : acc->kafka_split_errors)
              .push_back(absl::StrCat("subtask ", subtask, " ", se.name, " element ", i,
                                      " (stream byte ", r.offset, "): ", k.status().message()));
          continue;
        }
        if (!legacy) ++acc->kafka_splits;
        KafkaRow& row = acc->kafka[KafkaKey(se.name, k->topic, k->partition, k->offset,
                                            k->stopping_offset)];
        ++row.entries;
        row.subtasks.insert(subtask);
        row.form = k->form;
      }
    }
    o->set_broadcast_entries(se.broadcast_entries);
    t.total.set_elements(t.total.elements() + se.elements.size());
    if (rs->is_inline) {
      t.total.set_inline_bytes(t.total.inline_bytes() + bytes);
    } else {
      t.total.set_file_bytes(t.total.file_bytes() + bytes);
    }
    if (t.total.serializer().empty()) {
      for (const auto& m : st->meta_infos()) {
        if (m.name() == se.name) t.total.set_serializer(SerializerText(m));
      }
    }
  }
  if (header_end > 0 && rs->bytes.size() >= header_end + covered) {
    st->set_unreferenced_bytes(rs->bytes.size() - header_end - covered);
  }
}

void ReportSubtask(const OperatorSubtaskState& s, serde::ByteView input,
                   const StateStreamSources& sources, const StateReportOptions& options,
                   report::OperatorStateStreamReport* rep,
                   report::OperatorStateStreamReport::Operator* op, OperatorAcc* acc) {
  for (const OperatorStateHandle& h : s.managed_operator_state) {
    if (h.tag == 0) continue;
    ReportHandle(h, s.subtask_index, "managedOperatorState", input, sources, options, rep, op,
                 acc);
  }
  for (const OperatorStateHandle& h : s.raw_operator_state) {
    if (h.tag == 0) continue;
    ReportHandle(h, s.subtask_index, "rawOperatorState", input, sources, options, rep, op,
                 acc);
  }
}

// The coordinator state of a KafkaSource operator (inline bytes only: Flink
// always writes coordinator state as a ByteStreamStateHandle).
void ReportKafkaEnumerator(const StreamStateHandle& h, serde::ByteView input,
                           report::OperatorStateStreamReport::Operator* op) {
  if (h.data.offset > input.size() || h.data.size > input.size() - h.data.offset) {
    op->add_kafka_errors("coordinator state: outside the file");
    return;
  }
  const serde::ByteView bytes = input.subspan(h.data.offset, h.data.size);
  absl::StatusOr<KafkaSourceEnumState> st = DecodeKafkaSourceEnumState(bytes);
  if (!st.ok()) {
    op->add_kafka_errors(absl::StrCat("coordinator state (", h.data.size, " bytes at byte ",
                                      h.data.offset, "): ", st.status().message()));
    return;
  }
  auto* e = op->mutable_kafka_enumerator();
  e->set_present(true);
  e->set_coordinator_serde_version(st->coordinator_serde_version);
  e->set_enumerator_version(st->enumerator_version);
  e->set_split_serializer_version(st->split_serializer_version);
  e->set_has_initial_discovery_finished(st->has_initial_discovery_finished);
  e->set_initial_discovery_finished(st->initial_discovery_finished);
  e->set_trailing_bytes(st->trailing_bytes);
  e->set_bytes(h.data.size);
  for (const KafkaEnumeratorPartition& p : st->partitions) {
    auto* r = e->add_partitions();
    r->set_topic(p.topic);
    r->set_partition(p.partition);
    // AssignmentStatus constant names of the release that writes the version:
    // code 1 is UNASSIGNED_INITIAL in connector 3.3-4.x (v2), UNASSIGNED in 5.x (v3).
    r->set_assignment_status(p.assignment_status == 0 ? "ASSIGNED"
                             : st->enumerator_version == 2 ? "UNASSIGNED_INITIAL"
                                                           : "UNASSIGNED");
    r->set_has_offsets(p.has_offsets);
    r->set_starting_offset(p.starting_offset);
    r->set_stopping_offset(p.stopping_offset);
  }
}

void Finish(OperatorAcc* acc, report::OperatorStateStreamReport::Operator* op) {
  for (const std::string& name : acc->order) {
    Totals& t = acc->totals[name];
    t.total.set_distinct_elements(t.distinct.size());
    t.total.set_copies(t.total.elements() - t.distinct.size());
    *op->add_states() = t.total;
  }
  for (const auto& [key, row] : acc->kafka) {
    auto* k = op->add_kafka_offsets();
    k->set_state(std::get<0>(key));
    k->set_topic(std::get<1>(key));
    k->set_partition(std::get<2>(key));
    k->set_offset(std::get<3>(key));
    k->set_stopping_offset(std::get<4>(key));
    k->set_entries(row.entries);
    for (int32_t s : row.subtasks) k->add_subtasks(s);
    k->set_form(row.form);
  }
  for (const std::string& e : acc->kafka_errors) op->add_kafka_errors(e);
  if (acc->NotKafkaSource()) {
    op->set_not_kafka_source(absl::StrCat(
        "none of its ", acc->kafka_split_errors.size(),
        " SourceReaderState splits decodes as a KafkaPartitionSplit (",
        acc->kafka_split_errors.front(), ")"));
  } else {
    for (const std::string& e : acc->kafka_split_errors) op->add_kafka_errors(e);
  }
}

}  // namespace

report::OperatorStateStreamReport BuildOperatorStateStreamReport(
    const StateFile& file, serde::ByteView input, const StateStreamSources& sources,
    const StateReportOptions& options) {
  report::OperatorStateStreamReport rep;
  if (file.kind == StateFileKind::kOperatorSnapshot) {
    rep.set_kind("operatorSnapshot");
    auto* op = rep.add_operators();
    OperatorAcc acc;
    ReportSubtask(file.snapshot.state, input, sources, options, &rep, op, &acc);
    Finish(&acc, op);
    return rep;
  }
  rep.set_kind(file.kind == StateFileKind::kMetadata ? "metadata" : "completedCheckpoint");
  for (const OperatorState& o : file.metadata.operators) {
    OperatorAcc acc;
    report::OperatorStateStreamReport::Operator op;
    op.set_operator_id(o.IdHex());
    op.set_name(o.name.value);
    op.set_uid(o.uid.value);
    for (const OperatorSubtaskState& s : o.subtasks) {
      ReportSubtask(s, input, sources, options, &rep, &op, &acc);
    }
    // The enumerator of a source whose splits are not Kafka's is not read as
    // Kafka's: its bytes may parse as one by accident.
    if (options.kafka_source_splits && !acc.NotKafkaSource() &&
        o.coordinator_state.tag == static_cast<uint8_t>(HandleTag::kByteStream)) {
      ReportKafkaEnumerator(o.coordinator_state, input, &op);
    }
    if (op.subtasks_size() == 0 && !op.has_kafka_enumerator()) continue;
    Finish(&acc, &op);
    *rep.add_operators() = std::move(op);
  }
  return rep;
}

std::string RenderOperatorStateStreamText(const report::OperatorStateStreamReport& r) {
  std::string out;
  absl::StrAppend(&out, r.file(), ": ", r.kind(), ", ", r.streams(),
                  " operator-state streams", r.streams_unreadable()
                      ? absl::StrCat(" (", r.streams_unreadable(), " unreadable)")
                      : std::string(),
                  "\n");
  for (const auto& op : r.operators()) {
    absl::StrAppend(&out, "\noperator ", op.operator_id().empty() ? "-" : op.operator_id());
    if (!op.name().empty()) absl::StrAppend(&out, " \"", op.name(), "\"");
    if (!op.uid().empty()) absl::StrAppend(&out, " uid ", op.uid());
    absl::StrAppend(&out, "\n");
    absl::StrAppend(&out, absl::StrFormat("  %-32s %-16s %9s %9s %9s %12s %12s  %s\n",
                                          "state", "mode", "elements", "distinct",
                                          "copies", "inline B", "file B", "serializer"));
    for (const auto& t : op.states()) {
      absl::StrAppend(&out, absl::StrFormat("  %-32s %-16s %9d %9d %9d %12d %12d  %s\n",
                                            t.name(), t.distribution_mode(), t.elements(),
                                            t.distinct_elements(), t.copies(),
                                            t.inline_bytes(), t.file_bytes(),
                                            t.serializer()));
    }
    if (op.kafka_offsets_size() > 0) {
      absl::StrAppend(&out, absl::StrFormat("  kafka: %-30s %-24s %9s %20s %20s %8s  %s\n",
                                            "state", "topic", "partition", "offset",
                                            "stopping offset", "entries", "subtasks"));
      for (const auto& k : op.kafka_offsets()) {
        std::string subs;
        for (int32_t s : k.subtasks()) absl::StrAppend(&subs, subs.empty() ? "" : ",", s);
        absl::StrAppend(
            &out, absl::StrFormat("  kafka: %-30s %-24s %9d %20d %20s %8d  %s\n", k.state(),
                                  k.topic(), k.partition(), k.offset(),
                                  k.stopping_offset() == kKafkaNoStoppingOffset
                                      ? std::string("-")
                                      : absl::StrCat(k.stopping_offset()),
                                  k.entries(), subs));
      }
    }
    if (op.has_kafka_enumerator()) {
      const auto& e = op.kafka_enumerator();
      absl::StrAppend(&out, "  kafka enumerator: ", e.partitions_size(),
                      " partitions (KafkaSourceEnumState v", e.enumerator_version(),
                      ", coordinator serde v", e.coordinator_serde_version(), ", ", e.bytes(),
                      " B",
                      e.has_initial_discovery_finished()
                          ? absl::StrCat(", initial discovery ",
                                         e.initial_discovery_finished() ? "finished"
                                                                        : "not finished")
                          : std::string(),
                      e.trailing_bytes() ? absl::StrCat(", ", e.trailing_bytes(),
                                                        " B of reader registrations not decoded")
                                         : std::string(),
                      ")\n");
      for (const auto& p : e.partitions()) {
        absl::StrAppend(&out, absl::StrFormat("  kafka enumerator: %-24s %9d  %s", p.topic(),
                                              p.partition(),
                                              absl::AsciiStrToLower(p.assignment_status())));
        if (p.has_offsets()) {
          absl::StrAppend(&out, "  starting offset ", p.starting_offset(), ", stopping offset ",
                          p.stopping_offset() == kKafkaNoStoppingOffset
                              ? std::string("-")
                              : absl::StrCat(p.stopping_offset()));
        }
        absl::StrAppend(&out, "\n");
      }
    }
    for (const auto& e : op.kafka_errors()) absl::StrAppend(&out, "  kafka: not decoded: ", e, "\n");
    if (!op.not_kafka_source().empty()) {
      absl::StrAppend(&out, "  kafka: not a KafkaSource: ", op.not_kafka_source(),
                      "; its enumerator state is not decoded\n");
    }
    for (const auto& s : op.subtasks()) {
      absl::StrAppend(&out, "  subtask ", s.subtask_index(), " ", s.slot(), ": ");
      if (!s.error().empty() && s.source().empty()) {
        absl::StrAppend(&out, "unreadable: ", s.error(), "\n");
        continue;
      }
      absl::StrAppend(&out, s.source(), ", ", s.stream_bytes(), " B, proxy v",
                      s.proxy_version(), ", header ", s.header_bytes(), " B");
      if (s.unreferenced_bytes()) {
        absl::StrAppend(&out, ", ", s.unreferenced_bytes(), " B unreferenced");
      }
      absl::StrAppend(&out, "\n");
      for (const auto& m : s.meta_infos()) {
        absl::StrAppend(&out, "    meta info ", m.name(), " (", m.backend_state_type(), ", ",
                        m.distribution_mode(), "): ", SerializerText(m), "\n");
      }
      for (const auto& n : s.meta_infos_without_offsets()) {
        absl::StrAppend(&out, "    meta info without offsets in the handle: ", n,
                        " (Flink restores it; strip-state --deep removes it)\n");
      }
      if (!s.header_stopped().empty()) {
        absl::StrAppend(&out, "    header not decoded to its end: ", s.header_stopped(), "\n");
      }
      for (const auto& e : s.states()) {
        absl::StrAppend(&out, "    ", e.name(), ": ", e.elements(), " elements, ",
                        e.element_bytes(), " B");
        if (e.distribution_mode() == "BROADCAST") {
          absl::StrAppend(&out, ", ", e.broadcast_entries(), " map entries");
        }
        absl::StrAppend(&out, "\n");
      }
      if (!s.error().empty()) absl::StrAppend(&out, "    error: ", s.error(), "\n");
    }
  }
  return out;
}

}  // namespace flinkstate
