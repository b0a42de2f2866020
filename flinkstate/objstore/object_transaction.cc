// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/objstore/object_transaction.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <optional>
#include <random>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "flinkstate/objstore/object_store.h"
#include "flinkstate/objstore/s3_client.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/sparse_mapping.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate::objstore {
namespace {

constexpr char kJournalPrefix[] = ".flinkstate-txn-";
constexpr char kJournalMagic[] = "flinkstate object write 1";

std::string Token() {
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd() ^ ::getpid());
  static const char kHex[] = "0123456789abcdef";
  std::string t;
  for (int i = 0; i < 12; ++i) t += kHex[rng() % 16];
  return t;
}

// "bucket/a/b" for ".../a/b/c" (the key's "directory", with its '/').
std::string DirKey(const std::string& key) {
  const size_t slash = key.rfind('/');
  return slash == std::string::npos ? "" : key.substr(0, slash + 1);
}

// The "key value" lines of a journal text whose first line is `magic`, in
// order, to `fn(key, value)` (a value "-" is read as empty). False if the
// first line is not `magic`.
template <typename Fn>
bool ReadJournalFields(absl::string_view text, absl::string_view magic, Fn&& fn) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  if (lines.empty() || lines[0] != magic) return false;
  for (size_t i = 1; i < lines.size(); ++i) {
    const absl::string_view l = lines[i];
    const size_t sp = l.find(' ');
    if (sp == absl::string_view::npos) continue;
    std::string v(l.substr(sp + 1));
    if (v == "-") v.clear();
    fn(l.substr(0, sp), std::move(v));
  }
  return true;
}

struct Journal {
  std::string state;  // prepare | commit
  std::string target, temp, backup, etag, token;
  std::string intent;  // ObjectWrite::intent, C-escaped on its line
  std::string Render() const {
    return absl::StrCat(kJournalMagic, "\nstate ", state, "\ntarget ", target, "\ntemp ", temp,
                        "\nbackup ", backup.empty() ? "-" : backup, "\netag ",
                        etag.empty() ? "-" : etag, "\ntoken ", token, "\n",
                        intent.empty() ? "" : absl::StrCat("intent ", absl::CEscape(intent), "\n"));
  }
  static absl::StatusOr<Journal> Parse(const std::string& url, absl::string_view text) {
    Journal j;
    const bool magic = ReadJournalFields(text, kJournalMagic, [&j](absl::string_view k,
                                                                    std::string v) {
      if (k == "state") j.state = v;
      if (k == "target") j.target = v;
      if (k == "temp") j.temp = v;
      if (k == "backup") j.backup = v;
      if (k == "etag") j.etag = v;
      if (k == "token") j.token = v;
      if (k == "intent" && !absl::CUnescape(v, &j.intent)) j.intent.clear();
    });
    if (!magic) {
      return absl::InvalidArgumentError(
          absl::StrCat("objstore: ", url, ": not a flinkstate object-write journal"));
    }
    if (j.target.empty() || j.temp.empty() || j.token.empty() ||
        (j.state != "prepare" && j.state != "commit")) {
      return absl::InvalidArgumentError(
          absl::StrCat("objstore: ", url, ": an incomplete object-write journal"));
    }
    return j;
  }
};

serde::ByteView View(const std::string& s) {
  return serde::ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

absl::Status NothingReplaced(const absl::Status& s) {
  if (s.ok()) return s;
  return serde::WithMessage(s, absl::StrCat(s.message(), " (nothing was replaced)"));
}

// Whether the server refuses a copy whose `If-Match` cannot hold (S3 since
// 2024; some S3-compatible servers ignore the header, on a copy or on every
// write, and write anyway). Probed with the copy the protocols rely on: the
// small object `source` (the run's journal) copied to the absent key `probe`
// under an ETag no object has.
absl::StatusOr<bool> ProbeIfMatch(ObjectClient& s3, const ObjectUrl& probe,
                                  const ObjectUrl& source) {
  WriteConditions w;
  w.if_match = "\"flinkstate-probe-never-an-etag\"";
  absl::StatusOr<std::string> r = s3.Copy(source, probe, w);
  if (!r.ok() && (absl::IsFailedPrecondition(r.status()) || absl::IsNotFound(r.status()))) {
    return true;
  }
  // Written (the header is ignored), or unknown (the answer was lost): not
  // relied on, and the probe removed.
  if (absl::Status d = s3.Delete(probe); !d.ok() && !absl::IsNotFound(d)) return d;
  return false;
}

// Whether the server refuses a copy onto an existing key under
// `If-None-Match: *` (S3 honours it on a PUT since 2024; on a copy not every
// server does: moto writes anyway). The probe key is made (empty), `source`
// copied onto it under the condition, and the probe removed.
absl::StatusOr<bool> ProbeIfNoneMatch(ObjectClient& s3, const ObjectUrl& probe,
                                      const ObjectUrl& source) {
  if (absl::StatusOr<std::string> p = s3.Put(probe, serde::ByteView()); !p.ok()) {
    return p.status();
  }
  WriteConditions w;
  w.if_none_match = true;
  absl::StatusOr<std::string> r = s3.Copy(source, probe, w);
  const bool honoured = !r.ok() && absl::IsFailedPrecondition(r.status());
  if (absl::Status d = s3.Delete(probe); !d.ok() && !absl::IsNotFound(d)) return d;
  if (!r.ok() && !honoured) return r.status();
  return honoured;
}

// What step 2 made: the temporary key's ETag, and the output as verified
// (a mapping of the unlinked local file, identical to what was read back).
struct Uploaded {
  std::string etag;
  serde::MappedFile output;
};

// Step 2's upload of the output `out` of `plan` over `input` to `temp`: the
// composed upload `PlanComposedUpload` finds (the server refusing part
// copies: the plain one instead), else the plain one; what it moved counted
// into `st`. Only the upload differs: the read-back after compares every byte.
absl::StatusOr<std::string> PutOutput(ObjectClient& s3, const ObjectUrl& temp,
                                      const serde::MappedFile& input, const serde::EditPlan& plan,
                                      serde::ByteView out, const WriteConditions& when,
                                      ObjectWriteStats* st) {
  if (std::optional<ComposedUpload> c = PlanComposedUpload(s3, input, plan)) {
    absl::StatusOr<std::string> e =
        s3.PutComposed(temp, out, c->source, c->source_etag, c->parts, when);
    if (e.ok()) {
      st->bytes_up += UploadedBytes(c->parts);
      st->part_copy_bytes += CopiedBytes(c->parts);
      st->server_side_copy_bytes += CopiedBytes(c->parts);
      return e;
    }
    if (!absl::IsUnimplemented(e.status())) return e.status();
  }
  absl::StatusOr<std::string> e = s3.Put(temp, out, when);
  if (e.ok()) st->bytes_up += out.size();
  return e;
}

// Step 2 of both protocols: `plan` over `input` into a local temporary file,
// verified, uploaded to `temp` (tagged `token`, `If-None-Match: *`), read back,
// compared and verified again.
absl::StatusOr<Uploaded> UploadVerified(ObjectClient& s3, const ObjectUrl& temp,
                                           const std::string& token,
                                           const serde::MappedFile& input,
                                           const serde::EditPlan& plan,
                                           const serde::OutputVerifier& verify,
                                           ObjectWriteStats* st) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string local = absl::StrCat(tmpdir != nullptr ? tmpdir : "/tmp", "/flinkstate-s3-XXXXXX");
  const int fd = ::mkstemp(local.data());
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("objstore: mkstemp ", local, ": ",
                                            std::strerror(errno)));
  }
  absl::Status s = serde::ExecutePlan(plan, input, fd, serde::SpliceOptions{}, nullptr);
  ::close(fd);
  absl::StatusOr<serde::MappedFile> out =
      s.ok() ? serde::MappedFile::Open(local) : absl::StatusOr<serde::MappedFile>(s);
  ::unlink(local.c_str());
  if (!out.ok()) return out.status();
  if (absl::Status in_ok = input.CheckIntact(); !in_ok.ok()) return in_ok;
  st->output_bytes += out->size();
  if (verify) {
    if (absl::Status v = verify(out->bytes()); !v.ok()) return v;
  }
  WriteConditions tagged;
  tagged.txn_tag = token;
  tagged.if_none_match = true;
  absl::StatusOr<std::string> temp_etag = PutOutput(s3, temp, input, plan, out->bytes(), tagged, st);
  if (!temp_etag.ok()) return temp_etag.status();
  std::string back(out->size(), '\0');
  absl::Status g = s3.GetRange(
      temp, 0, absl::Span<uint8_t>(reinterpret_cast<uint8_t*>(back.data()), back.size()),
      *temp_etag);
  if (!g.ok()) return g;
  st->bytes_down += back.size();
  if (std::memcmp(back.data(), out->bytes().data(), back.size()) != 0) {
    return absl::DataLossError(absl::StrCat(
        "objstore: ", temp.ToString(), ": read back differs from what was uploaded"));
  }
  if (verify) {
    if (absl::Status v = verify(View(back)); !v.ok()) return v;
  }
  return Uploaded{*std::move(temp_etag), *std::move(out)};
}

// The single-object journals beside `target` that name `target_url`.
absl::StatusOr<std::vector<std::pair<ObjectUrl, Journal>>> JournalsOf(
    ObjectClient& s3, const ObjectUrl& target, const std::string& target_url) {
  ObjectUrl prefix{target.bucket, DirKey(target.key) + kJournalPrefix, target.scheme};
  absl::StatusOr<ObjectClient::Listing> l = s3.List(prefix, "/");
  if (!l.ok()) return l.status();
  std::vector<std::pair<ObjectUrl, Journal>> out;
  for (const auto& [key, size] : l->objects) {
    if (!absl::EndsWith(key, ".journal")) continue;
    ObjectUrl ju{target.bucket, key, target.scheme};
    absl::StatusOr<std::string> text = s3.GetSmall(ju, 1 << 20);
    if (!text.ok()) return text.status();
    absl::StatusOr<Journal> j = Journal::Parse(ju.ToString(), *text);
    if (!j.ok()) return j.status();
    if (j->target != target_url) continue;
    out.emplace_back(std::move(ju), *std::move(j));
  }
  return out;
}

// Deletes a file's temporary key and the If-Match probe beside it (an
// interrupted run may have left either; neither may exist).
absl::Status DeleteTemporaries(ObjectClient& s3, const std::string& temp_url) {
  absl::StatusOr<ObjectUrl> temp = ParseObjectUrl(temp_url);
  if (!temp.ok()) return temp.status();
  for (const ObjectUrl& u : {*temp, ObjectUrl{temp->bucket, temp->key + ".probe", temp->scheme}}) {
    if (absl::Status d = s3.Delete(u); !d.ok() && !absl::IsNotFound(d)) return d;
  }
  return absl::OkStatus();
}

// `client`, or a new S3Client (kept in `own`) of the current configuration.
absl::StatusOr<ObjectClient*> ClientOr(ObjectClient* client, std::unique_ptr<S3Client>* own) {
  if (client != nullptr) return client;
  absl::StatusOr<S3Config> config = CurrentS3Config();
  if (!config.ok()) return config.status();
  *own = std::make_unique<S3Client>(*std::move(config));
  return own->get();
}

// The ETag the edit of `target` was planned from (both protocols' journal
// field): `expected`; else the opened object's, when `input` was opened from
// `target`; else, when a backup is to be made, the target's now (HEAD); else
// "" (a target replaced whatever it holds).
absl::StatusOr<std::string> PlannedEtag(ObjectClient& s3, const ObjectUrl& target,
                                        const std::string& target_url,
                                        const std::string& backup, const std::string& expected,
                                        const serde::MappedFile& input) {
  if (!expected.empty()) return expected;
  if (input.path() == target_url) {
    std::string opened = OpenedEtag(input);
    if (!opened.empty()) return opened;
  }
  if (backup.empty()) return std::string();
  absl::StatusOr<ObjectInfo> now = s3.Head(target);
  if (!now.ok()) return now.status();
  return now->etag;
}


absl::Status ChangedSinceRead(const std::string& target, const std::string& planned,
                              const std::string& now) {
  return absl::FailedPreconditionError(absl::StrCat(
      "objstore: ", target, " was changed by someone else since it was read (ETag ", planned,
      ", now ", now, "); is Flink still writing it? refused"));
}

// Step 4 of both protocols for one target (`url`, named `name`): OK if it
// still has the ETag `planned` it was read with (an empty `planned`: there
// was no original to keep), else the error to undo the run with.
absl::Status Unchanged(ObjectClient& s3, const ObjectUrl& url, const std::string& name,
                       const std::string& planned) {
  if (planned.empty()) return absl::OkStatus();
  absl::StatusOr<ObjectInfo> now = s3.Head(url);
  if (!now.ok()) return now.status();
  if (now->etag != planned) return ChangedSinceRead(name, planned, now->etag);
  return absl::OkStatus();
}

// What both protocols share up to their commit point: the journal created
// with `If-None-Match: *` (step 1), the keys the run makes after it, deleted
// again by `Undo` on a failure before the commit point, and the commit record
// (step 5).
class JournaledRun {
 public:
  JournaledRun(ObjectClient& s3, ObjectUrl journal, std::string token)
      : s3_(s3), journal_(std::move(journal)), token_(std::move(token)) {}

  // Step 1. The journal's key is this run's own, so a failed PUT (which may
  // still have written it) is undone too. Returns the undone error.
  absl::Status Begin(const std::string& text) {
    WriteConditions create;
    create.if_none_match = true;
    absl::StatusOr<std::string> e = s3_.Put(journal_, View(text), create);
    if (!e.ok()) return Undo(e.status());
    etag_ = *e;
    return absl::OkStatus();
  }

  // A key the run may make next (before making it, since a failed request may
  // still have made it). For a key that may hold someone else's object (a
  // backup whose If-None-Match copy was refused), `if_tag` / `if_etag`: it is
  // deleted only if it carries that token / has that ETag.
  void Made(ObjectUrl url, std::string if_tag = "", std::string if_etag = "") {
    made_.push_back({std::move(url), std::move(if_tag), std::move(if_etag)});
  }

  // Deletes what was made, in reverse order, then the journal, which is kept
  // if anything else could not be deleted (a rerun's recovery then finishes
  // the rollback). Returns `s` saying nothing was replaced (and what is left).
  absl::Status Undo(const absl::Status& s) {
    std::string failed;
    for (auto it = made_.rbegin(); it != made_.rend(); ++it) {
      if (!it->if_tag.empty() || !it->if_etag.empty()) {
        absl::StatusOr<ObjectInfo> o = s3_.Head(it->url);
        if (absl::IsNotFound(o.status())) continue;
        if (o.ok() && ((!it->if_tag.empty() && o->txn_tag != it->if_tag) ||
                       (!it->if_etag.empty() && o->etag != it->if_etag))) {
          continue;
        }
        if (!o.ok()) {
          failed = it->url.ToString();
          continue;
        }
      }
      if (absl::Status d = s3_.Delete(it->url); !d.ok() && !absl::IsNotFound(d)) {
        failed = it->url.ToString();
      }
    }
    if (failed.empty()) {
      absl::Status d = s3_.Delete(journal_);
      if (d.ok() || absl::IsNotFound(d)) return NothingReplaced(s);
      failed = journal_.ToString();
    }
    return serde::WithMessage(s, absl::StrCat(s.message(), " (nothing was replaced; removing ", failed,
                               " failed too: rerun the same command, which finishes the "
                               "rollback from the journal ", journal_.ToString(), ")"));
  }

  // Step 5: the journal rewritten to `text` (state commit), `If-Match` its
  // ETag where the server honours it. A lost answer (the record may be
  // written) is not undone: the journal decides, and the error says to rerun.
  absl::Status Commit(const std::string& text, bool if_match_honoured) {
    WriteConditions replace;
    if (if_match_honoured) replace.if_match = etag_;
    absl::StatusOr<std::string> c = s3_.Put(journal_, View(text), replace);
    if (c.ok()) return absl::OkStatus();
    if (!absl::IsUnavailable(c.status())) return Undo(c.status());
    return serde::WithMessage(c.status(),
        absl::StrCat(c.status().message(), " (nothing was replaced yet; whether the commit "
                     "record ", journal_.ToString(), " was written is unknown: rerun the same "
                     "command, which completes or rolls back the write by it)"));
  }

  // Step 5 after the probe both protocols make just before it: whether the
  // server honours If-Match (`ProbeIfMatch` on a key beside `temp`, made and
  // removed by this run) into `*honoured`, then `Commit(text, *honoured)`.
  absl::Status ProbeAndCommit(const ObjectUrl& temp, const std::string& text, bool* honoured) {
    const ObjectUrl probe{temp.bucket, temp.key + ".probe", temp.scheme};
    Made(probe);
    absl::StatusOr<bool> h = ProbeIfMatch(s3_, probe, journal_);
    if (!h.ok()) return Undo(h.status());
    *honoured = *h;
    return Commit(text, *honoured);
  }

  const ObjectUrl& journal() const { return journal_; }

 private:
  struct Key {
    ObjectUrl url;
    std::string if_tag, if_etag;
  };
  ObjectClient& s3_;
  ObjectUrl journal_;
  std::string token_;
  std::string etag_;
  std::vector<Key> made_;
};

}  // namespace

std::string OpenedEtag(const serde::MappedFile& file) {
  const serde::SparseMapping* m = file.sparse();
  if (m == nullptr) return "";
  const auto* s = dynamic_cast<const S3Source*>(&m->source());
  return s != nullptr ? s->info().etag : "";
}

std::optional<ComposedUpload> PlanComposedUpload(const ObjectClient& client,
                                                 const serde::MappedFile& input,
                                                 const serde::EditPlan& plan) {
  const std::optional<ObjectClient::PartCopyConfig> config = client.part_copy();
  if (!config || plan.output_size() <= config->threshold || plan.is_streamed() ||
      !IsObjectUrl(input.path())) {
    return std::nullopt;
  }
  ComposedUpload c;
  c.source_etag = OpenedEtag(input);
  absl::StatusOr<ObjectUrl> source = ParseObjectUrl(input.path());
  if (c.source_etag.empty() || !source.ok()) return std::nullopt;
  c.source = *std::move(source);
  c.parts = PlanMultipartParts(plan.pieces(), config->limits);
  if (c.parts.empty()) return std::nullopt;
  return c;
}

absl::StatusOr<UploadTransfer> PlanUploadTransfer(const serde::MappedFile& input,
                                                  const serde::EditPlan& plan) {
  UploadTransfer t;
  t.upload_bytes = plan.output_size();
  if (!IsObjectUrl(input.path())) return t;
  absl::StatusOr<S3Config> config = CurrentS3Config();
  if (!config.ok()) return config.status();
  const S3Client s3(*std::move(config));
  if (std::optional<ComposedUpload> c = PlanComposedUpload(s3, input, plan)) {
    t.upload_bytes = UploadedBytes(c->parts);
    t.part_copy_bytes = CopiedBytes(c->parts);
  }
  return t;
}

absl::Status WriteObjectVerified(const ObjectWrite& w, const serde::MappedFile& input,
                                 const serde::EditPlan& plan,
                                 const serde::OutputVerifier& verify, ObjectWriteStats* stats) {
  absl::StatusOr<ObjectUrl> target = ParseObjectUrl(w.target);
  if (!target.ok()) return target.status();
  std::unique_ptr<S3Client> own;
  FLINKSTATE_ASSIGN_OR_RETURN(ObjectClient* const client, ClientOr(w.client, &own));
  ObjectClient& s3 = *client;
  ObjectWriteStats st;

  Journal j;
  j.state = "prepare";
  j.token = Token();
  j.target = w.target;
  j.temp = absl::StrCat(w.target, ".flinkstate-tmp-", j.token);
  j.backup = w.backup;
  absl::StatusOr<std::string> etag =
      PlannedEtag(s3, *target, w.target, w.backup, w.expected_etag, input);
  if (!etag.ok()) return NothingReplaced(etag.status());
  j.etag = *etag;
  j.intent = w.intent;
  ObjectUrl temp = *ParseObjectUrl(j.temp);
  JournaledRun run(s3,
                   ObjectUrl{target->bucket,
                             absl::StrCat(DirKey(target->key), kJournalPrefix, j.token,
                                          ".journal"),
                             target->scheme},
                   j.token);
  const ObjectUrl& journal = run.journal();
  auto undo = [&run](const absl::Status& s) { return run.Undo(s); };

  // 1. The journal.
  if (absl::Status b = run.Begin(j.Render()); !b.ok()) return b;

  // 2. The output: a local temporary file, verified, uploaded, read back.
  run.Made(temp);
  absl::StatusOr<Uploaded> uploaded = UploadVerified(s3, temp, j.token, input, plan, verify, &st);
  if (!uploaded.ok()) return undo(uploaded.status());
  const uint64_t output_size = st.output_bytes;

  // 3. The backup.
  if (!w.backup.empty()) {
    absl::StatusOr<ObjectUrl> backup = ParseObjectUrl(w.backup);
    if (!backup.ok()) return undo(backup.status());
    // Checked by HEAD too: not every server honours If-None-Match on a copy.
    if (absl::StatusOr<ObjectInfo> there = s3.Head(*backup); there.ok()) {
      return undo(BackupExistsError(w.backup, w.target));
    } else if (!absl::IsNotFound(there.status())) {
      return undo(there.status());
    }
    WriteConditions bc;
    bc.if_none_match = true;
    bc.source_if_match = j.etag;
    bc.txn_tag = j.token;  // so that a rollback deletes only the backup this run made
    absl::StatusOr<std::string> b = s3.Copy(*target, *backup, bc);
    if (!b.ok()) {
      if (absl::IsFailedPrecondition(b.status())) {
        return undo(BackupExistsError(w.backup, w.target));
      }
      // Perhaps made, the answer lost: the backup is this run's if it holds
      // the original (there was none a request ago). Untagged, unlike
      // CommitObjects' backups: restoring it must not tag the original.
      run.Made(*backup, "", j.etag);
      return undo(b.status());
    }
    run.Made(*backup);
    absl::StatusOr<ObjectInfo> bi = s3.Head(*backup);
    if (!bi.ok()) return undo(bi.status());
    if (bi->size != input.size() && input.path() == w.target) {
      return undo(absl::DataLossError(absl::StrCat("objstore: ", w.backup, " has ", bi->size,
                                                   " bytes, the original ", input.size())));
    }
    st.server_side_copy_bytes += bi->size;
  }

  // 4. The original unchanged?
  if (absl::Status u = Unchanged(s3, *target, w.target, j.etag); !u.ok()) return undo(u);

  // 5. Commit point.
  j.state = "commit";
  if (absl::Status c = run.ProbeAndCommit(temp, j.Render(), &st.if_match_honoured); !c.ok()) {
    return c;
  }

  // 6. The copy over the target.
  WriteConditions over;
  if (st.if_match_honoured && !j.etag.empty()) over.if_match = j.etag;
  absl::StatusOr<std::string> done = s3.Copy(temp, *target, over);
  if (!done.ok()) {
    if (absl::IsFailedPrecondition(done.status())) {
      // Changed between the check and the copy: nothing replaced, undo.
      return undo(absl::FailedPreconditionError(absl::StrCat(
          "objstore: ", w.target, " was changed by someone else during the write (If-Match ",
          j.etag, " failed); refused")));
    }
    return serde::WithMessage(done.status(),
                        absl::StrCat(done.status().message(), "; the write is committed in ",
                                     journal.ToString(), ": rerun to complete it"));
  }
  st.server_side_copy_bytes += output_size;
  absl::StatusOr<ObjectInfo> after = s3.Head(*target);
  if (!after.ok() || after->txn_tag != j.token) {
    return absl::DataLossError(absl::StrCat(
        "objstore: ", w.target, " does not carry this write's tag after the copy",
        after.ok() ? "" : absl::StrCat(" (", after.status().message(), ")"),
        "; rerun to complete it (journal ", journal.ToString(), ")"));
  }
  // 7. Clean up: the journal last, kept while the temporary key is there.
  for (const ObjectUrl& u : {temp, journal}) {
    if (absl::Status d = s3.Delete(u); !d.ok() && !absl::IsNotFound(d)) {
      return serde::WithMessage(d, absl::StrCat("objstore: ", w.target, " is replaced, but ", d.message(),
                                 "; rerun to finish the clean-up (journal ",
                                 journal.ToString(), ")"));
    }
  }
  if (stats != nullptr) *stats = st;
  return absl::OkStatus();
}

absl::StatusOr<ObjectWritePlan> PlanObjectWrite(const ObjectWrite& w,
                                                const serde::MappedFile& input,
                                                const serde::EditPlan& plan) {
  absl::StatusOr<ObjectUrl> target = ParseObjectUrl(w.target);
  if (!target.ok()) return target.status();
  std::optional<ObjectUrl> backup;
  if (!w.backup.empty()) {
    absl::StatusOr<ObjectUrl> b = ParseObjectUrl(w.backup);
    if (!b.ok()) return b.status();
    backup = *b;
  }
  absl::StatusOr<S3Config> config = CurrentS3Config();
  if (!config.ok()) return config.status();
  S3Client s3(*std::move(config));
  ObjectWritePlan p;
  absl::StatusOr<std::vector<std::pair<ObjectUrl, Journal>>> journals =
      JournalsOf(s3, *target, w.target);
  if (!journals.ok()) return journals.status();
  for (const auto& [ju, j] : *journals) p.interrupted.push_back(ju.ToString());

  // The journal as step 1 writes it; the token's length is fixed, so its
  // size is exact whatever the token.
  constexpr char kToken[] = "<token>";
  Journal j;
  j.state = "prepare";
  j.token = std::string(Token().size(), 'x');
  j.target = w.target;
  j.temp = absl::StrCat(w.target, ".flinkstate-tmp-", j.token);
  j.backup = w.backup;
  j.intent = w.intent;
  j.etag = w.expected_etag;
  if (j.etag.empty() && input.path() == w.target) j.etag = OpenedEtag(input);
  uint64_t original_size = input.path() == w.target ? input.size() : 0;
  absl::StatusOr<ObjectInfo> now = s3.Head(*target);
  if (now.ok()) {
    original_size = now->size;
    if (!w.backup.empty() && j.etag.empty()) j.etag = now->etag;
    if (!j.etag.empty() && now->etag != j.etag) {
      p.problems.push_back(absl::StrCat(w.target, " changed since it was read (ETag ", j.etag,
                                        ", now ", now->etag, "): the write would be refused"));
    }
  } else if (!absl::IsNotFound(now.status())) {
    return now.status();
  } else if (backup) {
    p.problems.push_back(absl::StrCat(w.target, " does not exist, so there is nothing to back "
                                      "up: the write would fail"));
  }
  if (backup) {
    absl::StatusOr<ObjectInfo> there = s3.Head(*backup);
    if (there.ok()) {
      p.problems.push_back(absl::StrCat(w.backup, " exists already (an earlier backup): the "
                                        "write would be refused; move it away first"));
    } else if (!absl::IsNotFound(there.status())) {
      return there.status();
    }
  }
  const uint64_t journal_bytes = j.Render().size();
  j.state = "commit";
  const uint64_t commit_bytes = j.Render().size();

  const std::string journal = ObjectUrl{target->bucket,
                                        absl::StrCat(DirKey(target->key), kJournalPrefix, kToken,
                                                     ".journal"),
                                        target->scheme}
                                  .ToString();
  const std::string temp = absl::StrCat(w.target, ".flinkstate-tmp-", kToken);
  const uint64_t out = plan.output_size();
  p.output_bytes = out;
  p.input_bytes_kept = plan.copied_bytes();
  const auto step = [&p](const char* action, std::string object, uint64_t bytes,
                         std::string source = "", std::string range = "") {
    p.steps.push_back(PlannedObjectStep{action, std::move(object), std::move(source), bytes,
                                        std::move(range)});
  };
  step("create journal", journal, journal_bytes);
  if (std::optional<ComposedUpload> c = PlanComposedUpload(s3, input, plan)) {
    // The uploaded parts, then each part copied from the original.
    step("upload", temp, UploadedBytes(c->parts));
    p.upload_bytes += UploadedBytes(c->parts);
    for (const MultipartPart& part : c->parts) {
      if (part.kind != MultipartPart::Kind::kCopy) continue;
      step("server-side copy", temp, part.size, c->source.ToString(),
           absl::StrCat("bytes=", part.source_offset, "-", part.source_offset + part.size - 1));
    }
    p.part_copy_bytes += CopiedBytes(c->parts);
    p.server_side_copy_bytes += CopiedBytes(c->parts);
  } else {
    step("upload", temp, out);
    p.upload_bytes += out;
  }
  step("read back", temp, out);
  p.read_back_bytes += out;
  if (backup) {
    step("server-side copy", w.backup, original_size, w.target);
    p.server_side_copy_bytes += original_size;
  }
  if (!j.etag.empty()) step("check", w.target, 0);
  step("probe If-Match", temp + ".probe", 0);
  step("rewrite journal", journal, commit_bytes);
  step("server-side copy", w.target, out, temp);
  p.server_side_copy_bytes += out;
  step("delete", temp, 0);
  step("delete", journal, 0);
  return p;
}

namespace {

constexpr char kMultiJournalMagic[] = "flinkstate object transaction 1";

struct MultiJournal {
  struct File {
    std::string target, temp, backup, etag;
    bool create = false;  // a new object (journal line `create yes`)
  };
  std::string state;  // prepare | commit
  std::string token;
  std::vector<File> files;  // new objects first (the order of step 6)
  // ObjectTransactionOptions::intent or ObjectWrite::intent, C-escaped on
  // its line.
  std::string intent;
  bool single = false;  // read from a single-object write's journal

  std::string Render() const {
    std::string out = absl::StrCat(kMultiJournalMagic, "\nstate ", state, "\ntoken ", token, "\n");
    if (!intent.empty()) absl::StrAppend(&out, "intent ", absl::CEscape(intent), "\n");
    for (const File& f : files) {
      absl::StrAppend(&out, "target ", f.target, "\ntemp ", f.temp, "\nbackup ",
                      f.backup.empty() ? "-" : f.backup, "\netag ", f.etag.empty() ? "-" : f.etag,
                      "\n", f.create ? "create yes\n" : "");
    }
    return out;
  }
  static absl::StatusOr<MultiJournal> Parse(const std::string& url, absl::string_view text) {
    MultiJournal j;
    const bool magic = ReadJournalFields(text, kMultiJournalMagic, [&j](absl::string_view k,
                                                                         std::string v) {
      if (k == "state") j.state = v;
      if (k == "token") j.token = v;
      if (k == "intent" && !absl::CUnescape(v, &j.intent)) j.intent.clear();
      if (k == "target") j.files.push_back(File{v, "", "", "", false});
      if (j.files.empty()) return;
      if (k == "temp") j.files.back().temp = v;
      if (k == "backup") j.files.back().backup = v;
      if (k == "etag") j.files.back().etag = v;
      if (k == "create") j.files.back().create = v == "yes";
    });
    if (!magic) {
      return absl::DataLossError(
          absl::StrCat("objstore: ", url, ": not a flinkstate object-transaction journal"));
    }
    bool ok = !j.token.empty() && !j.files.empty() &&
              (j.state == "prepare" || j.state == "commit");
    for (const File& f : j.files) ok = ok && !f.target.empty() && !f.temp.empty();
    if (!ok) {
      return absl::DataLossError(absl::StrCat(
          "objstore: ", url, ": an incomplete object-transaction journal (left in place)"));
    }
    return j;
  }
};

// "s3://b/a/chk-1/" -> the journal prefix URL under it.
absl::StatusOr<ObjectUrl> JournalPrefix(const std::string& dir) {
  absl::StatusOr<ObjectUrl> u = ParseObjectUrl(dir);
  if (!u.ok()) return u.status();
  if (!u->key.empty() && !absl::EndsWith(u->key, "/")) u->key += '/';
  u->key += kJournalPrefix;
  return u;
}

absl::StatusOr<std::vector<ObjectUrl>> JournalsIn(ObjectClient& s3,
                                                  const std::vector<std::string>& dirs) {
  std::vector<ObjectUrl> out;
  for (const std::string& d : dirs) {
    absl::StatusOr<ObjectUrl> prefix = JournalPrefix(d);
    if (!prefix.ok()) return prefix.status();
    absl::StatusOr<ObjectClient::Listing> l = s3.List(*prefix, "/");
    if (!l.ok()) return l.status();
    for (const auto& [key, size] : l->objects) {
      if (!absl::EndsWith(key, ".journal")) continue;
      ObjectUrl u{prefix->bucket, key, prefix->scheme};
      bool seen = false;
      for (const ObjectUrl& o : out) seen = seen || o.ToString() == u.ToString();
      if (!seen) out.push_back(std::move(u));
    }
  }
  return out;
}

absl::Status CreatedElsewhere(const std::string& target) {
  return absl::FailedPreconditionError(absl::StrCat(
      "objstore: ", target, " exists: someone else created it since it was planned as a new "
      "object; refused"));
}

// Deletes the new objects of `files` that carry `token` (put in place by the
// run, never anyone else's). Returns the first failure.
absl::Status DeleteCreated(ObjectClient& s3, const std::vector<MultiJournal::File>& files,
                           const std::string& token, std::vector<std::string>* actions) {
  for (const MultiJournal::File& f : files) {
    if (!f.create) continue;
    absl::StatusOr<ObjectUrl> u = ParseObjectUrl(f.target);
    if (!u.ok()) return u.status();
    absl::StatusOr<ObjectInfo> o = s3.Head(*u);
    if (absl::IsNotFound(o.status())) continue;
    if (!o.ok()) return o.status();
    if (o->txn_tag != token) continue;
    if (absl::Status d = s3.Delete(*u); !d.ok() && !absl::IsNotFound(d)) return d;
    if (actions != nullptr) actions->push_back(absl::StrCat("removed ", f.target));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CommitObjects(std::vector<ObjectChange>& changes,
                           const ObjectTransactionOptions& options, ObjectWriteStats* stats) {
  if (changes.empty()) return absl::OkStatus();
  std::unique_ptr<S3Client> own;
  FLINKSTATE_ASSIGN_OR_RETURN(ObjectClient* const client, ClientOr(options.client, &own));
  ObjectClient& s3 = *client;
  ObjectWriteStats st;
  MultiJournal j;
  j.state = "prepare";
  j.token = Token();
  j.intent = options.intent;
  // The journal's order, that of the copies in step 6: new objects first.
  std::vector<size_t> order;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < changes.size(); ++i) {
      if (changes[i].create == (pass == 0)) order.push_back(i);
    }
  }
  std::vector<ObjectUrl> targets, temps;
  for (size_t i : order) {
    ObjectChange& c = changes[i];
    absl::StatusOr<ObjectUrl> t = ParseObjectUrl(c.target);
    if (!t.ok()) return t.status();
    if (c.input == nullptr || c.plan == nullptr || (c.create && !c.backup.empty())) {
      return absl::FailedPreconditionError(absl::StrCat(
          "objstore: CommitObjects: ", c.target,
          c.create ? ": a new object with a backup" : ": a change without input/plan"));
    }
    MultiJournal::File f;
    f.target = c.target;
    f.temp = absl::StrCat(c.target, ".flinkstate-tmp-", j.token);
    f.backup = c.backup;
    f.create = c.create;
    if (!c.create) {
      absl::StatusOr<std::string> etag =
          PlannedEtag(s3, *t, c.target, c.backup, c.expected_etag, *c.input);
      if (!etag.ok()) return NothingReplaced(etag.status());
      f.etag = *etag;
    }
    c.temp = f.temp;
    c.written = serde::ByteView();
    targets.push_back(*t);
    temps.push_back(*ParseObjectUrl(f.temp));
    j.files.push_back(std::move(f));
  }
  absl::StatusOr<ObjectUrl> jprefix = JournalPrefix(options.journal_dir.empty()
                                                        ? DirKey(changes[0].target)
                                                        : options.journal_dir);
  if (!jprefix.ok()) return jprefix.status();
  JournaledRun run(s3,
                   ObjectUrl{jprefix->bucket, absl::StrCat(jprefix->key, j.token, ".journal"),
                             jprefix->scheme},
                   j.token);
  const ObjectUrl& journal = run.journal();
  auto undo = [&run](const absl::Status& s) { return run.Undo(s); };

  // 1. The journal.
  if (absl::Status b = run.Begin(j.Render()); !b.ok()) return b;
  auto progress = [&](absl::string_view phase, uint64_t done, uint64_t total) {
    if (options.progress) options.progress(phase, done, total);
  };

  // 2. Every output uploaded and verified, in the callers' order (a verify
  // may read an earlier change's `written`).
  uint64_t total = 0, done = 0;
  for (const ObjectChange& c : changes) total += c.plan->output_size();
  std::vector<uint64_t> sizes(changes.size());  // by journal position
  std::vector<size_t> position(changes.size());
  for (size_t k = 0; k < order.size(); ++k) position[order[k]] = k;
  std::vector<serde::MappedFile> outputs;  // kept: `written` points into them
  outputs.reserve(changes.size());
  for (size_t i = 0; i < changes.size(); ++i) {
    const size_t k = position[i];
    progress("uploading", done, total);
    run.Made(temps[k]);
    const uint64_t before = st.output_bytes;
    absl::StatusOr<Uploaded> e = UploadVerified(s3, temps[k], j.token, *changes[i].input,
                                                *changes[i].plan, changes[i].verify, &st);
    if (!e.ok()) {
      return undo(serde::WithMessage(e.status(),
                               absl::StrCat(changes[i].target, ": ", e.status().message())));
    }
    outputs.push_back(std::move(e->output));
    changes[i].written = outputs.back().bytes();
    sizes[k] = st.output_bytes - before;
    done += sizes[k];
  }
  progress("uploading", total, total);

  // 3. The backups, tagged with the token.
  for (size_t k = 0; k < j.files.size(); ++k) {
    const MultiJournal::File& f = j.files[k];
    if (f.backup.empty()) continue;
    const ObjectChange& c = changes[order[k]];
    absl::StatusOr<ObjectUrl> backup = ParseObjectUrl(f.backup);
    if (!backup.ok()) return undo(backup.status());
    const auto exists = [&f] { return BackupExistsError(f.backup, f.target); };
    if (absl::StatusOr<ObjectInfo> there = s3.Head(*backup); there.ok()) {
      return undo(exists());
    } else if (!absl::IsNotFound(there.status())) {
      return undo(there.status());
    }
    WriteConditions bc;
    bc.if_none_match = true;
    bc.source_if_match = f.etag;
    bc.txn_tag = j.token;
    run.Made(*backup, j.token);  // (a failed copy may have made it)
    absl::StatusOr<std::string> b = s3.Copy(targets[k], *backup, bc);
    if (!b.ok()) {
      if (absl::IsFailedPrecondition(b.status())) {
        // Either the backup appeared or the original changed: say which.
        absl::StatusOr<ObjectInfo> now = s3.Head(targets[k]);
        if (now.ok() && now->etag != f.etag) {
          return undo(ChangedSinceRead(f.target, f.etag, now->etag));
        }
        return undo(exists());
      }
      return undo(b.status());
    }
    absl::StatusOr<ObjectInfo> bi = s3.Head(*backup);
    if (!bi.ok()) return undo(bi.status());
    if (c.input->path() == f.target && bi->size != c.input->size()) {
      return undo(absl::DataLossError(absl::StrCat("objstore: ", f.backup, " has ", bi->size,
                                                   " bytes, the original ", c.input->size())));
    }
    st.server_side_copy_bytes += bi->size;
  }

  // 4. Every original unchanged, every new object's key free?
  bool any_create = false;
  for (size_t k = 0; k < j.files.size(); ++k) {
    const MultiJournal::File& f = j.files[k];
    any_create = any_create || f.create;
    if (!f.create) {
      if (absl::Status u = Unchanged(s3, targets[k], f.target, f.etag); !u.ok()) return undo(u);
      continue;
    }
    absl::StatusOr<ObjectInfo> now = s3.Head(targets[k]);
    if (now.ok()) return undo(CreatedElsewhere(f.target));
    if (!absl::IsNotFound(now.status())) return undo(now.status());
  }
  if (any_create) {
    const ObjectUrl probe{temps[0].bucket, temps[0].key + ".probe", temps[0].scheme};
    run.Made(probe);
    absl::StatusOr<bool> inm = ProbeIfNoneMatch(s3, probe, run.journal());
    if (!inm.ok()) return undo(inm.status());
    st.if_none_match_honoured = *inm;
  }

  // 5. Commit point.
  j.state = "commit";
  if (absl::Status cr = run.ProbeAndCommit(temps[0], j.Render(), &st.if_match_honoured);
      !cr.ok()) {
    return cr;
  }

  // 6. The copies: the new objects, then over the targets.
  const std::string rerun =
      absl::StrCat("; the transaction is committed and journaled in ", journal.ToString(),
                   ": rerun the same command to complete it");
  // A new object's key taken meanwhile: nothing is replaced yet (new objects
  // go first), so the whole transaction is undone, its new objects too.
  const auto taken = [&](const MultiJournal::File& f) {
    const absl::Status why = CreatedElsewhere(f.target);
    if (absl::Status d = DeleteCreated(s3, j.files, j.token, nullptr); !d.ok()) {
      return serde::WithMessage(why, absl::StrCat(why.message(), "; removing this run's new "
                                                  "objects failed (", d.message(), ")", rerun));
    }
    return undo(why);
  };
  for (size_t k = 0; k < j.files.size(); ++k) {
    progress("committing", k, j.files.size());
    const MultiJournal::File& f = j.files[k];
    WriteConditions over;
    if (f.create) {
      if (st.if_none_match_honoured) {
        over.if_none_match = true;
      } else {
        // The checked HEAD: the window of one request.
        absl::StatusOr<ObjectInfo> now = s3.Head(targets[k]);
        if (now.ok()) return taken(f);
        if (!absl::IsNotFound(now.status())) {
          return serde::WithMessage(now.status(), absl::StrCat(now.status().message(), rerun));
        }
      }
    } else if (st.if_match_honoured && !f.etag.empty()) {
      over.if_match = f.etag;
    }
    absl::StatusOr<std::string> r = s3.Copy(temps[k], targets[k], over);
    if (!r.ok()) {
      if (f.create && absl::IsFailedPrecondition(r.status())) return taken(f);
      if ((k == 0 || j.files[k - 1].create) && absl::IsFailedPrecondition(r.status())) {
        // The first original to replace changed: nothing replaced yet.
        if (absl::Status d = DeleteCreated(s3, j.files, j.token, nullptr); !d.ok()) {
          return serde::WithMessage(d, absl::StrCat(d.message(), rerun));
        }
        return undo(absl::FailedPreconditionError(absl::StrCat(
            "objstore: ", f.target, " was changed by someone else during the write (If-Match ",
            f.etag, " failed); refused")));
      }
      return serde::WithMessage(r.status(), absl::StrCat(r.status().message(), rerun));
    }
    st.server_side_copy_bytes += sizes[k];
    absl::StatusOr<ObjectInfo> after = s3.Head(targets[k]);
    // A new object replaced by someone else's right after the copy.
    if (f.create && after.ok() && after->txn_tag != j.token) return taken(f);
    if (!after.ok() || after->txn_tag != j.token) {
      return absl::DataLossError(absl::StrCat(
          "objstore: ", f.target, " does not carry this write's tag after the copy",
          after.ok() ? "" : absl::StrCat(" (", after.status().message(), ")"), rerun));
    }
  }
  progress("committing", j.files.size(), j.files.size());

  // 7. Clean up: the journal goes last, only once no temporary key is left.
  for (const ObjectUrl& t : temps) {
    if (absl::Status d = s3.Delete(t); !d.ok() && !absl::IsNotFound(d)) {
      return serde::WithMessage(d, absl::StrCat("objstore: every object is in place, but ",
                                                 d.message(), rerun));
    }
  }
  if (absl::Status d = s3.Delete(journal); !d.ok() && !absl::IsNotFound(d)) {
    return serde::WithMessage(d, absl::StrCat("objstore: every object is in place, but ",
                                               d.message(), rerun));
  }
  if (stats != nullptr) *stats = st;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> ListObjectJournals(const std::vector<std::string>& dirs,
                                                            ObjectClient* client) {
  std::unique_ptr<S3Client> own;
  FLINKSTATE_ASSIGN_OR_RETURN(ObjectClient* const c, ClientOr(client, &own));
  ObjectClient& s3 = *c;
  FLINKSTATE_ASSIGN_OR_RETURN(const std::vector<ObjectUrl> js, JournalsIn(s3, dirs));
  std::vector<std::string> out;
  for (const ObjectUrl& u : js) out.push_back(u.ToString());
  return out;
}

namespace {

// The one resolution of an interrupted object write, either journal kind:
// `commit` completed (the remaining copies made: new objects where their key
// is free, replacements over targets that still hold the planned ETag),
// `prepare` rolled back (temporary keys and the backups this run made
// deleted), then the journal deleted. A committed run whose new object's key
// someone else took before any original was replaced is rolled back too (its
// own new objects deleted as well).
absl::Status ResolveObjectJournal(ObjectClient& s3, const ObjectUrl& ju, const MultiJournal& j,
                                  ObjectRecoveryReport* report) {
  const std::string where = absl::StrCat(" (journal ", ju.ToString(), " left in place)");
  serde::RecoveredTransaction done;
  done.journal = ju.ToString();
  done.intent = j.intent;
  done.completed = j.state == "commit";
  for (const MultiJournal::File& f : j.files) done.targets.push_back(f.target);
  const auto roll_back = [&]() -> absl::Status {
    FLINKSTATE_RETURN_IF_ERROR(DeleteCreated(s3, j.files, j.token, &report->actions));
    for (const MultiJournal::File& f : j.files) {
      FLINKSTATE_RETURN_IF_ERROR(DeleteTemporaries(s3, f.temp));
      if (f.backup.empty()) continue;
      ObjectUrl backup = *ParseObjectUrl(f.backup);
      absl::StatusOr<ObjectInfo> b = s3.Head(backup);
      if (!b.ok() && !absl::IsNotFound(b.status())) return b.status();
      // Made by this run, nobody else's: tagged with its token (single-object
      // writes of earlier releases did not tag it: the original's ETag).
      if (b.ok() && (b->txn_tag == j.token || (j.single && !f.etag.empty() && b->etag == f.etag))) {
        if (absl::Status d = s3.Delete(backup); !d.ok()) return d;
        report->actions.push_back(absl::StrCat("removed ", f.backup));
      }
    }
    ++report->rolled_back;
    return absl::OkStatus();
  };
  // Whether an original was replaced already (it carries the run's token).
  const auto any_replaced = [&]() -> absl::StatusOr<bool> {
    for (const MultiJournal::File& f : j.files) {
      if (f.create) continue;
      absl::StatusOr<ObjectInfo> now = s3.Head(*ParseObjectUrl(f.target));
      if (now.ok() && now->txn_tag == j.token) return true;
      if (!now.ok() && !absl::IsNotFound(now.status())) return now.status();
    }
    return false;
  };
  // A new object's key taken by someone else: rolled back while no original
  // is replaced, else left to the user.
  const auto taken = [&](const MultiJournal::File& f) -> absl::Status {
    absl::StatusOr<bool> replaced = any_replaced();
    if (!replaced.ok()) return replaced.status();
    if (*replaced) {
      return absl::FailedPreconditionError(absl::StrCat(
          "objstore: ", f.target, " was created by someone else, and the interrupted run had "
          "replaced originals already: decide which to keep", where));
    }
    report->actions.push_back(absl::StrCat(f.target, " was created by someone else: the "
                                           "interrupted run is rolled back"));
    done.completed = false;
    return roll_back();
  };
  bool rolled_back = false;
  if (done.completed) {
    std::optional<bool> honoured, inm_honoured;
    for (const MultiJournal::File& f : j.files) {
      ObjectUrl target = *ParseObjectUrl(f.target);
      ObjectUrl temp = *ParseObjectUrl(f.temp);
      const ObjectUrl probe{temp.bucket, temp.key + ".probe", temp.scheme};
      absl::StatusOr<ObjectInfo> now = s3.Head(target);
      if (!now.ok() && !absl::IsNotFound(now.status())) return now.status();
      if (now.ok() && now->txn_tag == j.token) continue;  // copied before the crash
      if (f.create && now.ok()) {
        FLINKSTATE_RETURN_IF_ERROR(taken(f));
        rolled_back = true;
        break;
      }
      if (now.ok() && !f.etag.empty() && now->etag != f.etag) {
        return absl::FailedPreconditionError(absl::StrCat(
            "objstore: ", f.target, " changed since the interrupted run read it (ETag ",
            f.etag, ", now ", now->etag, ") and its verified new content was not put in place "
            "yet: decide which to keep", where));
      }
      absl::StatusOr<ObjectInfo> t = s3.Head(temp);
      if (!t.ok()) {
        return absl::DataLossError(absl::StrCat(
            "objstore: ", f.target, ": the committed output ", f.temp, " is gone (",
            t.status().message(), ")", where));
      }
      WriteConditions over;
      if (f.create) {
        if (!inm_honoured) {
          absl::StatusOr<bool> h = ProbeIfNoneMatch(s3, probe, ju);
          if (!h.ok()) return h.status();
          inm_honoured = *h;
        }
        over.if_none_match = *inm_honoured;  // else: the HEAD above
      } else {
        if (!honoured) {
          absl::StatusOr<bool> h = ProbeIfMatch(s3, probe, ju);
          if (!h.ok()) return h.status();
          honoured = *h;
        }
        if (*honoured && now.ok()) over.if_match = now->etag;
      }
      absl::StatusOr<std::string> r = s3.Copy(temp, target, over);
      if (!r.ok() && f.create && absl::IsFailedPrecondition(r.status())) {
        FLINKSTATE_RETURN_IF_ERROR(taken(f));
        rolled_back = true;
        break;
      }
      if (!r.ok()) {
        return serde::WithMessage(r.status(), absl::StrCat(r.status().message(), where));
      }
      absl::StatusOr<ObjectInfo> after = s3.Head(target);
      if (!after.ok() || after->txn_tag != j.token) {
        return absl::DataLossError(absl::StrCat(
            "objstore: ", f.target, " does not carry the interrupted run's tag after the copy",
            where));
      }
      report->actions.push_back(absl::StrCat(f.create ? "created " : "completed ", f.target,
                                             " from ", f.temp));
    }
    if (!rolled_back) {
      for (const MultiJournal::File& f : j.files) {
        FLINKSTATE_RETURN_IF_ERROR(DeleteTemporaries(s3, f.temp));
      }
      ++report->completed;
    }
  } else {
    FLINKSTATE_RETURN_IF_ERROR(roll_back());
  }
  if (absl::Status d = s3.Delete(ju); !d.ok()) return d;
  report->actions.push_back(absl::StrCat(done.completed ? "completed " : "rolled back ",
                                         ju.ToString(), " (", j.state, ")"));
  report->transactions.push_back(std::move(done));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ObjectRecoveryReport> RecoverObjectTransactions(
    const std::vector<std::string>& dirs, ObjectClient* client) {
  std::unique_ptr<S3Client> own;
  FLINKSTATE_ASSIGN_OR_RETURN(ObjectClient* const c, ClientOr(client, &own));
  ObjectClient& s3 = *c;
  FLINKSTATE_ASSIGN_OR_RETURN(const std::vector<ObjectUrl> js, JournalsIn(s3, dirs));
  ObjectRecoveryReport report;
  for (const ObjectUrl& ju : js) {
    absl::StatusOr<std::string> text = s3.GetSmall(ju, 1 << 20);
    if (absl::IsNotFound(text.status())) continue;  // resolved meanwhile
    if (!text.ok()) return text.status();
    MultiJournal j;
    if (absl::StartsWith(*text, kJournalMagic)) {
      absl::StatusOr<Journal> one = Journal::Parse(ju.ToString(), *text);
      if (!one.ok()) return one.status();
      j.state = one->state;
      j.token = one->token;
      j.intent = one->intent;
      j.single = true;
      j.files.push_back(MultiJournal::File{one->target, one->temp, one->backup, one->etag});
    } else {
      absl::StatusOr<MultiJournal> multi = MultiJournal::Parse(ju.ToString(), *text);
      if (!multi.ok()) return multi.status();
      j = *std::move(multi);
    }
    FLINKSTATE_RETURN_IF_ERROR(ResolveObjectJournal(s3, ju, j, &report));
  }
  return report;
}

absl::StatusOr<ObjectRecoveryReport> RecoverObjectWrite(const std::string& target_url,
                                                        ObjectClient* client) {
  absl::StatusOr<ObjectUrl> target = ParseObjectUrl(target_url);
  if (!target.ok()) return target.status();
  return RecoverObjectTransactions(
      {ObjectUrl{target->bucket, DirKey(target->key), target->scheme}.ToString()}, client);
}

absl::Status BackupExistsError(const std::string& backup, const std::string& target) {
  return absl::FailedPreconditionError(absl::StrCat(
      "objstore: ", backup, " exists already (an earlier backup, or another run replacing ",
      target, " now): move it away first"));
}

}  // namespace flinkstate::objstore
