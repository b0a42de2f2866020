// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/serde/file_transaction.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate::serde {
namespace {

constexpr char kTempMarker[] = ".flinkstate-tmp-";
constexpr char kJournalPrefix[] = ".flinkstate-txn-";
constexpr char kJournalSuffix[] = ".journal";
constexpr char kJournalMagic[] = "flinkstate-txn 1";

std::string RandomToken() {
  uint8_t b[6];
  if (::getrandom(b, sizeof(b), 0) != static_cast<ssize_t>(sizeof(b))) {
    // No entropy source: pid and time are unique enough under the lock.
    const uint64_t v = static_cast<uint64_t>(::getpid()) * 1000003u ^
                       static_cast<uint64_t>(::time(nullptr));
    std::memcpy(b, &v, sizeof(b));
  }
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(b), sizeof(b)));
}

// The run token of a journal path ".../.flinkstate-txn-<token>.journal".
std::string JournalToken(absl::string_view journal) {
  const absl::string_view name = journal.substr(journal.rfind('/') + 1);
  return std::string(
      absl::StripSuffix(absl::StripPrefix(name, kJournalPrefix), kJournalSuffix));
}

// "0644": permission bits as ls and chmod write them.
std::string ModeText(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

int64_t MtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

bool SameInode(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return ::lstat(a.c_str(), &sa) == 0 && ::lstat(b.c_str(), &sb) == 0 &&
         sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// The inode flags of `path` (FS_IOC_GETFLAGS), 0 where the file system has
// none or the file cannot be opened for it.
long InodeFlags(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0;
  long flags = 0;
  if (::ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0) flags = 0;
  ::close(fd);
  return flags;
}

bool Exists(const std::string& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0;
}

// The journal: a text file, one record per line, fields tab-separated and
// C-escaped (paths may hold any byte but NUL).
struct JournalEntry {
  std::string target, temp, backup, backup_temp;
  // The original's size and modification time (ns since the epoch) when the
  // transaction began, for a target that existed and gets a backup; -1 for
  // none (and in journals written before these were recorded). Until the
  // rename the backup is a hard link to the target: a write into the target
  // (`cp` over it) changes the backup too, and only these tell (attack run
  // 11, M6).
  int64_t original_size = -1;
  int64_t original_mtime_ns = -1;
  // In a commit journal: the inode, size and modification time of the
  // verified output (`temp`, which the rename keeps), so that a target
  // replaced already can be told from a file put there since, or written
  // over in place (attack run 11, M1: the original restored by hand, `mv` or
  // `cp`, was reported as the run's output). -1 for none (size and mtime
  // also in journals written before they were recorded).
  int64_t output_ino = -1;
  int64_t output_size = -1;
  int64_t output_mtime_ns = -1;
};

// Of a committed entry whose rename is done: whether its target is no
// longer the output the run renamed there (another inode, or the same inode
// written to since: another size or mtime than the journal recorded).
bool ReplacedThenChanged(const JournalEntry& e) {
  if (e.output_ino < 0) return false;  // a journal without the stamp
  struct stat st;
  if (::lstat(e.target.c_str(), &st) != 0) return true;
  if (static_cast<int64_t>(st.st_ino) != e.output_ino) return true;
  return e.output_size >= 0 && (static_cast<int64_t>(st.st_size) != e.output_size ||
                                MtimeNs(st) != e.output_mtime_ns);
}
struct Journal {
  std::string path;
  std::string state;  // "prepare" or "commit"
  std::string intent;  // TransactionOptions::intent; "" for none
  std::vector<JournalEntry> entries;
};

// Of a committed entry whose rename is still to come: whether its target is
// no longer the original the journal's run kept as its backup: another file
// put there since (another inode), or the original written to since (same
// inode, so its backup link changed with it: another size or mtime than the
// journal recorded). Recovery must not rename the run's older output over
// it, and the backup no longer holds the original.
bool TargetChangedSince(const JournalEntry& e) {
  if (!SameInode(e.backup, e.target)) return true;
  if (e.original_size < 0) return false;  // a journal without the stamp
  struct stat st;
  if (::lstat(e.target.c_str(), &st) != 0) return false;
  return static_cast<int64_t>(st.st_size) != e.original_size ||
         MtimeNs(st) != e.original_mtime_ns;
}

std::string Field(const std::string& s) { return s.empty() ? "-" : absl::CEscape(s); }

std::string RenderJournal(const Journal& j) {
  std::string out = absl::StrCat(kJournalMagic, "\nstate\t", j.state, "\n");
  if (!j.intent.empty()) absl::StrAppend(&out, "intent\t", Field(j.intent), "\n");
  for (const JournalEntry& e : j.entries) {
    absl::StrAppend(&out, "file\t", Field(e.target), "\t", Field(e.temp), "\t",
                    Field(e.backup), "\t", Field(e.backup_temp));
    if (e.original_size >= 0) {
      absl::StrAppend(&out, "\t", e.original_size, ":", e.original_mtime_ns);
    } else if (e.output_ino >= 0) {
      absl::StrAppend(&out, "\t-");
    }
    if (e.output_ino >= 0) {
      absl::StrAppend(&out, "\t", e.output_ino);
      if (e.output_size >= 0) absl::StrAppend(&out, ":", e.output_size, ":", e.output_mtime_ns);
    }
    absl::StrAppend(&out, "\n");
  }
  absl::StrAppend(&out, "end\n");
  return out;
}

absl::StatusOr<Journal> ParseJournal(const std::string& path, absl::string_view text) {
  Journal j;
  j.path = path;
  auto bad = [&](absl::string_view why) {
    return absl::DataLossError(absl::StrCat("serde: transaction journal ", path, ": ", why,
                                            "; it is left in place, resolve by hand"));
  };
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  if (lines.empty() || lines[0] != kJournalMagic) return bad("not a journal");
  bool ended = false;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    std::vector<absl::string_view> f = absl::StrSplit(lines[i], '\t');
    if (f[0] == "state" && f.size() == 2) {
      j.state = std::string(f[1]);
    } else if (f[0] == "intent" && f.size() == 2) {
      std::string err;
      if (!absl::CUnescape(f[1], &j.intent, &err)) return bad("bad escape");
    } else if (f[0] == "file" && f.size() >= 5 && f.size() <= 7) {
      JournalEntry e;
      std::string* out[] = {&e.target, &e.temp, &e.backup, &e.backup_temp};
      for (int k = 0; k < 4; ++k) {
        if (f[k + 1] == "-") continue;
        std::string err;
        if (!absl::CUnescape(f[k + 1], out[k], &err)) return bad("bad escape");
      }
      if (f.size() == 7) {  // "INODE[:SIZE:MTIME_NS]" of the output
        std::vector<absl::string_view> o = absl::StrSplit(f[6], ':');
        if ((o.size() != 1 && o.size() != 3) || !absl::SimpleAtoi(o[0], &e.output_ino) ||
            e.output_ino < 0) {
          return bad("bad output inode");
        }
        if (o.size() == 3 && (!absl::SimpleAtoi(o[1], &e.output_size) ||
                              !absl::SimpleAtoi(o[2], &e.output_mtime_ns) || e.output_size < 0)) {
          return bad("bad output stamp");
        }
      }
      if (f.size() >= 6 && f[5] != "-") {  // "SIZE:MTIME_NS" of the original
        std::pair<absl::string_view, absl::string_view> st = absl::StrSplit(f[5], ':');
        if (!absl::SimpleAtoi(st.first, &e.original_size) ||
            !absl::SimpleAtoi(st.second, &e.original_mtime_ns) || e.original_size < 0) {
          return bad("bad original stamp");
        }
      }
      if (e.target.empty() || e.temp.empty()) return bad("file record without names");
      j.entries.push_back(std::move(e));
    } else if (f[0] == "end") {
      ended = true;
    } else {
      return bad(absl::StrCat("unknown record at line ", i + 1));
    }
  }
  // Journals are renamed into place whole, so a torn one is not ours.
  if (!ended || (j.state != "prepare" && j.state != "commit")) return bad("incomplete");
  // Recovery removes and renames only files of this run: each target's
  // temporary is "<target>.flinkstate-tmp-<token of this journal>", its
  // backup lies beside it, the backup's temporary is named the same way. A
  // journal naming anything else was not written by flinkstate (attack run
  // 8: a planted one made the next write remove a file elsewhere).
  const std::string suffix = absl::StrCat(kTempMarker, JournalToken(path));
  for (const JournalEntry& e : j.entries) {
    const bool ours =
        e.target[0] == '/' && e.temp == e.target + suffix &&
        (e.backup.empty()
             ? e.backup_temp.empty()
             : e.backup[0] == '/' && DirName(e.backup) == DirName(e.target) &&
                   e.backup != e.target && e.backup_temp == e.backup + suffix);
    if (!ours) {
      return bad(absl::StrCat("its record for ", e.target,
                              " names files that are not that run's own (", e.temp,
                              "): not a journal flinkstate wrote"));
    }
  }
  return j;
}

// Writes `j` atomically: to `<journal>.tmp`, fsynced, renamed over the
// journal, directory fsynced.
absl::Status WriteJournal(const Journal& j, FileOps* ops, bool sync) {
  const std::string tmp = j.path + ".tmp";
  ops->Unlink(tmp).IgnoreError();  // a leftover of an earlier crash
  FLINKSTATE_ASSIGN_OR_RETURN(int fd, ops->CreateExclusive(tmp));
  absl::Status s = ops->WriteAll(fd, tmp, RenderJournal(j));
  if (s.ok() && sync) s = ops->Fsync(fd, tmp);
  absl::Status c = ops->Close(fd, tmp);
  if (s.ok()) s = c;
  if (s.ok()) s = ops->Rename(tmp, j.path);
  if (!s.ok()) {
    ops->Unlink(tmp).IgnoreError();  // best effort; recovery removes it too
    return s;
  }
  if (sync) return ops->FsyncDirectory(DirName(j.path));
  return absl::OkStatus();
}

std::vector<std::string> DirsOf(const std::vector<JournalEntry>& entries,
                                const std::string& journal) {
  std::set<std::string> dirs;
  dirs.insert(DirName(journal));
  for (const JournalEntry& e : entries) {
    dirs.insert(DirName(e.target));
    if (!e.backup.empty()) dirs.insert(DirName(e.backup));
  }
  return {dirs.begin(), dirs.end()};
}

absl::Status SyncDirs(const std::vector<std::string>& dirs, FileOps* ops, bool sync) {
  if (!sync) return absl::OkStatus();
  for (const std::string& d : dirs) FLINKSTATE_RETURN_IF_ERROR(ops->FsyncDirectory(d));
  return absl::OkStatus();
}

// Removes `path` if it exists; a missing file is fine.
absl::Status RemoveIfPresent(const std::string& path, FileOps* ops,
                             std::vector<std::string>* actions) {
  absl::Status s = ops->Unlink(path);
  if (absl::IsNotFound(s)) return absl::OkStatus();
  if (s.ok() && actions != nullptr) actions->push_back(absl::StrCat("removed ", path));
  return s;
}

// The mode and owner a new file for `target` gets.
struct Attributes {
  bool from_original = false;
  mode_t mode = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

// `source`: the file the new content is made from, or null. A new file
// (no original) gets the source's permission bits less the umask, as `cp`
// gives a new copy: a 0600 checkpoint file does not become world-readable
// beside it. Without a readable local source, 0666 & ~umask.
Attributes AttributesFor(const struct stat* original, const MappedFile* source) {
  Attributes a;
  if (original != nullptr) {
    a.from_original = true;
    a.mode = original->st_mode & 07777;
    a.uid = original->st_uid;
    a.gid = original->st_gid;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode_t base = 0666;
    struct stat src;
    if (source != nullptr && !source->path().empty() &&
        ::stat(source->path().c_str(), &src) == 0 && S_ISREG(src.st_mode)) {
      base = src.st_mode & 0777;
    }
    a.mode = base & ~mask;
  }
  return a;
}

// Creates `path` exclusively with `attrs` set before any content is written.
absl::StatusOr<int> CreateLike(const std::string& path, const Attributes& attrs,
                               FileOps* ops) {
  FLINKSTATE_ASSIGN_OR_RETURN(int fd, ops->CreateExclusive(path));
  absl::Status s;
  if (attrs.from_original && (attrs.uid != ::geteuid() || attrs.gid != ::getegid())) {
    s = ops->Fchown(fd, path, attrs.uid, attrs.gid);
    if (absl::IsPermissionDenied(s)) {
      s = absl::PermissionDeniedError(absl::StrCat(
          "serde: cannot give ", path, " the original's owner ", attrs.uid, ":", attrs.gid,
          " (run as that user or as root, so that the file Flink reads keeps its owner)"));
    }
  }
  // After chown: chown clears set-id bits, fchmod restores the exact mode.
  if (s.ok()) s = ops->Fchmod(fd, path, attrs.mode);
  if (!s.ok()) {
    ops->Close(fd, path).IgnoreError();
    ops->Unlink(path).IgnoreError();
    return s;
  }
  return fd;
}

// Re-reads the temporary file of `c` and runs its verifier on it.
absl::Status VerifyTemp(const FileChange& c, const TransactionOptions& o) {
  absl::StatusOr<MappedFile> written = MappedFile::Open(c.temp);
  if (!written.ok()) return written.status();
  if (written->size() != c.plan->output_size()) {
    return absl::DataLossError(absl::StrCat("serde: ", c.temp, " has ", written->size(),
                                            " bytes, the plan ", c.plan->output_size()));
  }
  if (c.verify) {
    if (o.progress) o.progress("verifying", 0, written->size());
    absl::Status v = c.verify(written->bytes());
    if (v.ok()) v = written->CheckIntact();
    if (!v.ok()) {
      return serde::WithMessage(v, absl::StrCat("verification of the output failed: ",
                                                 v.message()));
    }
  }
  return absl::OkStatus();
}

// Writes, verifies and fsyncs one temporary file.
absl::Status WriteTemp(const FileChange& c, const Attributes& attrs,
                       const TransactionOptions& o, FileOps* ops) {
  FLINKSTATE_ASSIGN_OR_RETURN(int fd, CreateLike(c.temp, attrs, ops));
  SpliceOptions so = o.splice;
  so.sync = o.sync;
  if (o.progress) {
    so.progress = [&o](uint64_t done, uint64_t total) { o.progress("writing", done, total); };
  }
  // Written, re-read and verified, then fsynced: the verify reads the page
  // cache either way, and the disk writes back what was written while it
  // runs (started here, a hint whose errors the fsync reports), so that the
  // fsync at the end waits for little instead of for the whole file.
  absl::Status s = ops->WritePlan(fd, c.temp, *c.plan, *c.input, so, o.stats);
  if (s.ok() && o.sync) ::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
  if (s.ok()) s = c.input->CheckIntact();
  if (s.ok()) s = VerifyTemp(c, o);
  if (s.ok() && o.sync) s = ops->Fsync(fd, c.temp);
  absl::Status closed = ops->Close(fd, c.temp);
  if (s.ok()) s = closed;
  return s;
}

// Keeps the original: a hard link, else a verified copy via `backup_temp`.
absl::Status MakeBackup(const FileChange& c, const std::string& backup_temp,
                        const Attributes& attrs, const TransactionOptions& o,
                        FileOps* ops) {
  absl::Status s = ops->Link(c.target, c.backup);
  if (s.ok() || absl::IsAlreadyExists(s) || absl::IsNotFound(s)) return s;
  // No hard links here (some FUSE and network file systems): copy.
  FLINKSTATE_ASSIGN_OR_RETURN(MappedFile original, MappedFile::Open(c.target));
  const EditPlan identity = EditPlan::Identity(original.size());
  FLINKSTATE_ASSIGN_OR_RETURN(int fd, CreateLike(backup_temp, attrs, ops));
  s = ops->WritePlan(fd, backup_temp, identity, original, o.splice, nullptr);
  if (s.ok() && o.sync) s = ops->Fsync(fd, backup_temp);
  absl::Status closed = ops->Close(fd, backup_temp);
  if (s.ok()) s = closed;
  if (s.ok()) s = original.CheckIntact();
  if (s.ok()) s = ops->Rename(backup_temp, c.backup);
  return s;
}

}  // namespace

// --- PosixFileOps -----------------------------------------------------------

absl::StatusOr<int> FileOps::CreateExclusive(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoStatus(errno, "cannot create", path);
  return fd;
}
absl::Status FileOps::WritePlan(int fd, const std::string& path, const EditPlan& plan,
                                const MappedFile& input, const SpliceOptions& options,
                                SpliceStats* stats) {
  absl::Status s = ExecutePlan(plan, input, fd, options, stats);
  if (!s.ok()) return serde::WithMessage(s, absl::StrCat(path, ": ", s.message()));
  return s;
}
absl::Status FileOps::WriteAll(int fd, const std::string& path, absl::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "cannot write", path);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}
absl::Status FileOps::Fchmod(int fd, const std::string& path, mode_t mode) {
  if (::fchmod(fd, mode) != 0) return ErrnoStatus(errno, "cannot chmod", path);
  return absl::OkStatus();
}
absl::Status FileOps::Fchown(int fd, const std::string& path, uid_t uid, gid_t gid) {
  if (::fchown(fd, uid, gid) != 0) return ErrnoStatus(errno, "cannot chown", path);
  return absl::OkStatus();
}
absl::Status FileOps::Fsync(int fd, const std::string& path) {
  if (::fsync(fd) != 0) return ErrnoStatus(errno, "cannot fsync", path);
  return absl::OkStatus();
}
absl::Status FileOps::Close(int fd, const std::string& path) {
  if (::close(fd) != 0) return ErrnoStatus(errno, "cannot close", path);
  return absl::OkStatus();
}
absl::Status FileOps::Link(const std::string& from, const std::string& to) {
  if (::link(from.c_str(), to.c_str()) != 0) {
    return ErrnoStatus(errno, "cannot link", absl::StrCat(from, " -> ", to), to);
  }
  return absl::OkStatus();
}
absl::Status FileOps::Rename(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return ErrnoStatus(errno, "cannot rename", absl::StrCat(from, " -> ", to), to);
  }
  return absl::OkStatus();
}
absl::Status FileOps::Unlink(const std::string& path) {
  if (::unlink(path.c_str()) != 0) return ErrnoStatus(errno, "cannot remove", path);
  return absl::OkStatus();
}
absl::Status FileOps::FsyncDirectory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "cannot open directory", dir);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  // Some file systems cannot fsync a directory (EINVAL); nothing to do then.
  if (rc != 0 && err != EINVAL) return ErrnoStatus(err, "cannot fsync directory", dir);
  return absl::OkStatus();
}

FileOps* PosixFileOps() {
  static FileOps* const ops = new FileOps();
  return ops;
}

// --- DirectoryLocks -----------------------------------------------------------

DirectoryLocks::~DirectoryLocks() {
  for (const Held& h : held_) ::close(h.fd);  // releases the flock
}

absl::Status DirectoryLocks::Add(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "cannot open directory", dir);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    absl::Status s = ErrnoStatus(errno, "cannot stat", dir);
    ::close(fd);
    return s;
  }
  for (const Held& h : held_) {
    if (h.dev == st.st_dev && h.ino == st.st_ino) {
      ::close(fd);
      return absl::OkStatus();
    }
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return absl::FailedPreconditionError(absl::StrCat(
          "serde: another flinkstate run holds the lock on ", dir,
          "; wait for it to finish (nothing was written)"));
    }
    return ErrnoStatus(err, "cannot lock", dir);
  }
  held_.push_back({fd, st.st_dev, st.st_ino});
  return absl::OkStatus();
}

// --- Paths ----------------------------------------------------------------------

std::string DirName(absl::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == absl::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

std::string AbsolutePath(const std::string& path) {
  const std::string dir = DirName(path);
  const size_t slash = path.rfind('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  char buf[PATH_MAX];
  if (::realpath(dir.c_str(), buf) == nullptr) return "";
  const std::string real(buf);
  return real == "/" ? "/" + base : real + "/" + base;
}

bool IsTransactionLeftoverName(absl::string_view name) {
  const size_t slash = name.rfind('/');
  if (slash != absl::string_view::npos) name.remove_prefix(slash + 1);
  return absl::StrContains(name, kTempMarker) || absl::StartsWith(name, kJournalPrefix);
}

// --- CommitFiles ------------------------------------------------------------------

absl::Status CommitFiles(std::vector<FileChange>& changes, const TransactionOptions& o) {
  FileOps* ops = o.ops != nullptr ? o.ops : PosixFileOps();
  if (changes.empty()) return absl::OkStatus();
  const std::string token = RandomToken();
  Journal journal;
  journal.state = "prepare";
  journal.intent = o.intent;
  journal.path = absl::StrCat(o.journal_dir.empty() ? DirName(changes[0].target) : o.journal_dir,
                              "/", kJournalPrefix, token, kJournalSuffix);
  std::vector<Attributes> attrs;
  // 1. Checks, before anything is created.
  for (FileChange& c : changes) {
    if (c.input == nullptr || c.plan == nullptr || c.target.empty() || c.target[0] != '/') {
      return absl::FailedPreconditionError(
          "serde: transaction: each change needs an absolute target, an input and a plan");
    }
    FLINKSTATE_RETURN_IF_ERROR(CheckReplaceable(c.target, c.backup));
    struct stat st;
    const bool exists = ::stat(c.target.c_str(), &st) == 0;
    attrs.push_back(AttributesFor(exists ? &st : nullptr, c.input));
    c.temp = absl::StrCat(c.target, kTempMarker, token);
    JournalEntry e;
    e.target = c.target;
    e.temp = c.temp;
    e.backup = c.backup;
    if (exists && !c.backup.empty()) {
      e.original_size = static_cast<int64_t>(st.st_size);
      e.original_mtime_ns = MtimeNs(st);
    }
    if (!c.backup.empty()) e.backup_temp = absl::StrCat(c.backup, kTempMarker, token);
    journal.entries.push_back(std::move(e));
  }
  for (size_t i = 0; i < changes.size(); ++i) {
    for (size_t k = 0; k < i; ++k) {
      if (changes[i].target == changes[k].target) {
        return absl::InvalidArgumentError(absl::StrCat(
            "serde: ", changes[i].target, " is named twice (nothing was replaced)"));
      }
    }
  }
  const std::vector<std::string> dirs = DirsOf(journal.entries, journal.path);

  // 2. The intent journal.
  if (absl::Status s = WriteJournal(journal, ops, o.sync); !s.ok()) {
    ops->Unlink(journal.path).IgnoreError();  // renamed, then the dir fsync failed
    // Named by what was to be written (attack run 9: `doctor --html
    // /proc/x.html` named only the journal's temporary file).
    std::vector<absl::string_view> targets;
    for (const FileChange& c : changes) targets.push_back(c.target);
    return serde::WithMessage(s, absl::StrCat("cannot write ", absl::StrJoin(targets, ", "),
                                              ": ", s.message(), " (nothing was replaced)"));
  }

  // Undo for a failure before the commit point.
  std::vector<std::string> made;
  auto roll_back = [&](absl::Status s, absl::string_view file) {
    for (auto it = made.rbegin(); it != made.rend(); ++it) ops->Unlink(*it).IgnoreError();
    for (const JournalEntry& e : journal.entries) {
      ops->Unlink(e.temp).IgnoreError();
      if (!e.backup_temp.empty()) ops->Unlink(e.backup_temp).IgnoreError();
    }
    ops->Unlink(journal.path).IgnoreError();
    return serde::WithMessage(s, absl::StrCat(file, file.empty() ? "" : ": ", s.message(),
                                               " (nothing was replaced)"));
  };

  // 3. Every output written and verified.
  for (size_t i = 0; i < changes.size(); ++i) {
    if (absl::Status s = WriteTemp(changes[i], attrs[i], o, ops); !s.ok()) {
      return roll_back(s, changes[i].target);
    }
    if (o.progress) o.progress("verified", i + 1, changes.size());
  }
  // 4. Backups.
  for (size_t i = 0; i < changes.size(); ++i) {
    const FileChange& c = changes[i];
    if (c.backup.empty()) continue;
    absl::Status s = MakeBackup(c, journal.entries[i].backup_temp, attrs[i], o, ops);
    if (!s.ok()) return roll_back(s, c.target);
    made.push_back(c.backup);
  }
  if (absl::Status s = SyncDirs(dirs, ops, o.sync); !s.ok()) return roll_back(s, "");

  // 5. The commit point.
  journal.state = "commit";
  for (JournalEntry& e : journal.entries) {
    struct stat st;
    if (::lstat(e.temp.c_str(), &st) == 0) {
      e.output_ino = static_cast<int64_t>(st.st_ino);
      e.output_size = static_cast<int64_t>(st.st_size);
      e.output_mtime_ns = MtimeNs(st);
    }
  }
  if (absl::Status s = WriteJournal(journal, ops, o.sync); !s.ok()) {
    // The rename of the journal is the commit: if it failed, the prepare
    // journal is still there and rolling back is right.
    return roll_back(s, journal.path);
  }
  // 6. Renames.
  for (size_t i = 0; i < changes.size(); ++i) {
    if (o.progress) o.progress("committing", i, changes.size());
    if (absl::Status s = ops->Rename(changes[i].temp, changes[i].target); !s.ok()) {
      return serde::WithMessage(s, absl::StrCat(
          s.message(), "; the change is committed: run the same command again to finish it "
                       "(any flinkstate command that writes in ", DirName(journal.path),
          " finishes it; journal ", journal.path, ")"));
    }
  }
  if (absl::Status s = SyncDirs(dirs, ops, o.sync); !s.ok()) {
    return serde::WithMessage(s, absl::StrCat(s.message(), "; run the command again (journal ",
                                               journal.path, ")"));
  }
  // 7. Done.
  if (absl::Status s = ops->Unlink(journal.path); !s.ok()) {
    return serde::WithMessage(s, absl::StrCat(s.message(), "; every file is replaced: run the "
                                               "command again to remove the journal"));
  }
  return absl::OkStatus();
}

namespace {

absl::Status CheckReplaceableUnlocated(const std::string& target, const std::string& backup) {
  const bool keeps_backup = !backup.empty();
  const std::string dir = DirName(target);
  auto refuse = [&](absl::string_view why) {
    return absl::FailedPreconditionError(
        absl::StrCat("serde: ", target, why, " (nothing was replaced)"));
  };
  const long dir_flags = InodeFlags(dir);
  if ((dir_flags & (FS_IMMUTABLE_FL | FS_APPEND_FL)) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "serde: the directory ", dir, " of ", target, " is ",
        (dir_flags & FS_IMMUTABLE_FL) != 0 ? "immutable (chattr +i)" : "append-only (chattr +a)",
        ": no file in it can be replaced (nothing was replaced)"));
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "serde: cannot create files in the directory ", dir, " of ", target, ": ",
        std::strerror(errno), " (nothing was replaced)"));
  }
  struct stat st;
  if (::stat(target.c_str(), &st) != 0) return absl::OkStatus();  // a new file
  if (!S_ISREG(st.st_mode)) return refuse(" is not a regular file");
  const long flags = InodeFlags(target);
  if ((flags & FS_IMMUTABLE_FL) != 0) {
    return refuse(" is immutable (chattr +i): it cannot be replaced; chattr -i it first");
  }
  if ((flags & FS_APPEND_FL) != 0) {
    return refuse(" is append-only (chattr +a): it cannot be replaced; chattr -a it first");
  }
  if (!keeps_backup && (st.st_mode & 0222) == 0) {
    return refuse(absl::StrCat(" exists and is read-only (mode ", ModeText(st.st_mode),
                               "); remove it or give another name"));
  }
  if (keeps_backup && st.st_nlink > 1) {
    return refuse(absl::StrCat(
        " has ", st.st_nlink,
        " hard links; replacing it would leave the other names with the old content. "
        "Break the links first (cp FILE FILE.copy && mv FILE.copy FILE), or, for an edit, "
        "write to a new file instead (IN OUT)"));
  }
  if (!keeps_backup && st.st_nlink > 1) {
    // A new output over a file with other names: they would keep the old
    // content, where `cp` would have changed them too (attack run 10).
    return refuse(absl::StrCat(" exists and has ", st.st_nlink,
                               " hard links; replacing it would leave the other names with the "
                               "old content: remove it or give another name"));
  }
  if (keeps_backup && (backup[0] != '/' || DirName(backup) != dir)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "serde: transaction: the backup ", backup, " of ", target,
        " is not beside it in its directory (nothing was replaced)"));
  }
  if (keeps_backup && Exists(backup)) return BackupExistsError(backup);
  return absl::OkStatus();
}

}  // namespace

absl::Status BackupExistsError(const std::string& backup) {
  return absl::FailedPreconditionError(absl::StrCat(
      "backup ", backup, " already exists; move it away first (nothing was replaced)"));
}

absl::Status CheckReplaceable(const std::string& target, const std::string& backup) {
  return LocatedIn(CheckReplaceableUnlocated(target, backup), "serde", target);
}

absl::Status CheckFreeSpace(const std::vector<PlannedFile>& files) {
  struct Need {
    std::string dir;  // the first directory of this file system
    uint64_t bytes = 0;
    uint64_t available = 0;
  };
  std::map<dev_t, Need> by_device;
  for (const PlannedFile& f : files) {
    const std::string dir = DirName(f.path);
    struct stat st;
    struct statvfs vfs;
    if (::stat(dir.c_str(), &st) != 0 || ::statvfs(dir.c_str(), &vfs) != 0) continue;
    Need& n = by_device[st.st_dev];
    if (n.dir.empty()) {
      n.dir = dir;
      n.available = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    }
    n.bytes += f.bytes;
  }
  for (const auto& [dev, n] : by_device) {
    if (n.bytes > n.available) {
      return LocatedIn(absl::ResourceExhaustedError(absl::StrCat(
                           "serde: not enough free space in ", n.dir, ": the new files need ",
                           n.bytes, " bytes there and ", n.available,
                           " are available (nothing was written)")),
                       "serde", n.dir);
    }
  }
  return absl::OkStatus();
}

absl::Status CheckBackupSuffix(absl::string_view suffix) {
  if (suffix.empty() || absl::StrContains(suffix, '/')) {
    return absl::InvalidArgumentError(absl::StrCat(
        "usage: the backup suffix must be non-empty, without '/' (got '", absl::CHexEscape(suffix),
        "')"));
  }
  // A backup named like our temporaries would be taken for the leftover of
  // an interrupted run (and block every later write there); a control
  // character would forge lines of the output (attack run 10).
  if (IsTransactionLeftoverName(absl::StrCat("x", suffix)) ||
      std::any_of(suffix.begin(), suffix.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7F; })) {
    return absl::InvalidArgumentError(absl::StrCat(
        "usage: the backup suffix must not hold '", kTempMarker,
        "' or a control character (got '", absl::CHexEscape(suffix), "')"));
  }
  return absl::OkStatus();
}

namespace {

absl::Status WriteFileTransactionUnlocated(const std::string& output, const std::string& backup,
                                           const MappedFile& input, const EditPlan& plan,
                                           const OutputVerifier& verify,
                                           const TransactionOptions& o) {
  std::vector<FileChange> changes(1);
  changes[0].target = AbsolutePath(output);
  if (changes[0].target.empty()) {
    return absl::NotFoundError(absl::StrCat("serde: the directory of ", output,
                                            " does not exist (nothing was written)"));
  }
  if (!backup.empty()) {
    changes[0].backup = AbsolutePath(backup);
    if (changes[0].backup.empty()) {
      return absl::NotFoundError(absl::StrCat("serde: the directory of the backup ", backup,
                                              " does not exist (nothing was replaced)"));
    }
  }
  changes[0].input = &input;
  changes[0].plan = &plan;
  changes[0].verify = verify;
  DirectoryLocks locks;
  FLINKSTATE_RETURN_IF_ERROR(locks.Add(DirName(changes[0].target)));
  if (!backup.empty()) FLINKSTATE_RETURN_IF_ERROR(locks.Add(DirName(changes[0].backup)));
  return CommitFiles(changes, o);
}

}  // namespace

absl::Status WriteFileTransaction(const std::string& output, const std::string& backup,
                                  const MappedFile& input, const EditPlan& plan,
                                  const OutputVerifier& verify, const TransactionOptions& o) {
  // Whatever stops the write is about `output` (a report names it).
  return LocatedIn(WriteFileTransactionUnlocated(output, backup, input, plan, verify, o), "serde",
                   output);
}

absl::StatusOr<RecoveryReport> RecoverInterruptedWrite(const std::string& output,
                                                       FileOps* ops) {
  const std::string abs = AbsolutePath(output);
  if (abs.empty()) return RecoveryReport();
  DirectoryLocks locks;
  return RecoverTransactions({DirName(abs)}, &locks, ops);
}

// --- Recovery -----------------------------------------------------------------------

// A journal recovery may act on: a regular file (not a symlink, which could
// point anywhere) owned by the user running (a journal planted by another
// user, e.g. in a shared directory, could otherwise make root rename that
// user's temporary file over one of root's). Returns the reason otherwise.
absl::Status CheckJournalOwnership(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("serde: transaction journal ", path, " is gone"));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "serde: transaction journal ", path,
        " is not a regular file (a symlink?); flinkstate never writes one: remove it by hand"));
  }
  if ((st.st_mode & 022) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "serde: transaction journal ", path, " is writable by others (mode ", ModeText(st.st_mode),
        "); flinkstate writes journals 0600 and does not act on one anybody could have edited: "
        "remove it by hand"));
  }
  if (st.st_uid != ::geteuid()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "serde: transaction journal ", path, " belongs to uid ", st.st_uid, ", not to uid ",
        ::geteuid(), " running now; flinkstate resolves only its own user's interrupted runs: "
        "rerun the interrupted command as that user, or remove the journal by hand"));
  }
  return absl::OkStatus();
}

namespace {

// What one directory holds of the protocol: journals, the temporary files of
// runs by their token, and journal temporaries ("*.journal.tmp", written
// before the journal is renamed into place). Absolute paths.
struct DirectoryScan {
  std::set<std::string> journals;
  std::map<std::string, std::vector<std::string>> temps;  // by run token
  std::set<std::string> journal_temps;
};

// Lists `dir`; a directory that cannot be listed holds nothing of ours.
DirectoryScan ScanTransactionDirectory(const std::string& dir) {
  DirectoryScan scan;
  DIR* dp = ::opendir(dir.c_str());
  if (dp == nullptr) return scan;
  const std::string journal_temp_suffix = absl::StrCat(kJournalSuffix, ".tmp");
  while (dirent* e = ::readdir(dp)) {
    const absl::string_view n = e->d_name;
    if (absl::StartsWith(n, kJournalPrefix)) {
      if (absl::EndsWith(n, kJournalSuffix)) {
        scan.journals.insert(AbsolutePath(absl::StrCat(dir, "/", n)));
      } else if (absl::EndsWith(n, journal_temp_suffix)) {
        scan.journal_temps.insert(AbsolutePath(absl::StrCat(dir, "/", n)));
      }
    } else if (const size_t t = n.rfind(kTempMarker); t != absl::string_view::npos) {
      scan.temps[std::string(n.substr(t + std::strlen(kTempMarker)))].push_back(
          AbsolutePath(absl::StrCat(dir, "/", n)));
    }
  }
  ::closedir(dp);
  for (auto& [token, files] : scan.temps) std::sort(files.begin(), files.end());
  return scan;
}

// True for a journal temporary whose journal was never renamed into place:
// the transaction stopped before it created anything.
bool IsStrayJournalTemp(const DirectoryScan& scan, const std::string& journal_temp) {
  return scan.journals.count(journal_temp.substr(0, journal_temp.size() - 4)) == 0;
}

}  // namespace

absl::Status OrphanTemporaryRefusal(const std::string& temporary) {
  return LocatedIn(
      absl::FailedPreconditionError(absl::StrCat(
          "serde: ", temporary,
          " belongs to an interrupted flinkstate run whose journal is not in this directory; "
          "rerun that command (a repair: the same repair, or any write in its first checkpoint "
          "directory) to finish or undo it, or remove the file if no run was interrupted "
          "(nothing was written)")),
      "serde", temporary);
}

absl::StatusOr<std::vector<InterruptedRun>> FindInterruptedRuns(const std::string& dir) {
  std::vector<InterruptedRun> runs;
  DirectoryScan scan = ScanTransactionDirectory(dir);
  for (const std::string& path : scan.journals) {
    InterruptedRun run;
    run.journal = path;
    scan.temps.erase(JournalToken(path));
    if (absl::Status own = CheckJournalOwnership(path); !own.ok()) {
      if (absl::IsNotFound(own)) continue;  // resolved meanwhile
      run.state = "unreadable";
      run.problem = std::string(own.message());
      runs.push_back(std::move(run));
      continue;
    }
    absl::StatusOr<std::string> text = ReadSmallFile(path, uint64_t{64} << 20);
    if (!text.ok()) {
      if (absl::IsNotFound(text.status())) continue;  // resolved meanwhile
      run.state = "unreadable";
      run.problem = std::string(text.status().message());
      runs.push_back(std::move(run));
      continue;
    }
    absl::StatusOr<Journal> j = ParseJournal(path, *text);
    if (!j.ok()) {
      run.state = "unreadable";
      run.problem = std::string(j.status().message());
    } else {
      run.state = j->state;
      run.intent = j->intent;
      for (const JournalEntry& e : j->entries) {
        run.targets.push_back(e.target);
        if (run.state == "commit" && Exists(e.temp) && !e.backup.empty() && Exists(e.target) &&
            TargetChangedSince(e)) {
          run.changed.push_back(e.target);
        } else if (run.state != "commit" || Exists(e.temp)) {
          run.unreplaced.push_back(e.target);
        } else if (ReplacedThenChanged(e)) {
          run.replaced_then_changed.push_back(e.target);
        }
      }
    }
    runs.push_back(std::move(run));
  }
  for (auto& [token, files] : scan.temps) {
    InterruptedRun run;
    run.temporaries = std::move(files);
    run.journal_name = absl::StrCat(kJournalPrefix, token, kJournalSuffix);
    runs.push_back(std::move(run));
  }
  // A run stopped while writing its journal: it replaced nothing, and the
  // next write here removes the file.
  for (const std::string& s : scan.journal_temps) {
    if (!IsStrayJournalTemp(scan, s)) continue;
    InterruptedRun run;
    run.state = "unstarted";
    run.temporaries.push_back(s);
    runs.push_back(std::move(run));
  }
  return runs;
}

absl::Status ForeseeRecoveryRefusal(const std::vector<std::string>& dirs) {
  std::vector<InterruptedRun> runs;
  std::set<std::string> journal_names;
  for (const std::string& d : dirs) {
    absl::StatusOr<std::vector<InterruptedRun>> here = FindInterruptedRuns(d);
    if (!here.ok()) return here.status();
    for (InterruptedRun& r : *here) {
      if (!r.journal.empty()) journal_names.insert(r.journal.substr(r.journal.rfind('/') + 1));
      runs.push_back(std::move(r));
    }
  }
  for (const InterruptedRun& r : runs) {
    // Temporaries of a run whose journal is in none of `dirs` (a killed
    // repair's HA file, or a file made by hand: attack run 11, M3).
    if (r.journal.empty() && r.state.empty() && !r.temporaries.empty() &&
        journal_names.count(r.journal_name) == 0) {
      return OrphanTemporaryRefusal(r.temporaries.front());
    }
    if (r.state == "unreadable") {
      return LocatedIn(absl::DataLossError(absl::StrCat("serde: transaction journal ", r.journal,
                                                        ": ", r.problem)),
                       "serde", r.journal);
    }
    if (r.state == "commit" && !r.changed.empty()) {
      return LocatedIn(
          absl::FailedPreconditionError(absl::StrCat(
              absl::StrJoin(r.changed, ", "),
              " changed after an interrupted flinkstate write had committed (journal ",
              r.journal, "): the write would refuse to finish that run over it; inspect says "
              "how to keep the file or finish the write (dry run, nothing written)")),
          "serde", r.changed[0]);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<RecoveryReport> RecoverTransactions(const std::vector<std::string>& dirs,
                                                   DirectoryLocks* locks, FileOps* ops) {
  if (ops == nullptr) ops = PosixFileOps();
  RecoveryReport report;
  // Temporary files by the token of their run: each must belong to a journal
  // found here (the protocol creates none before its journal and removes its
  // journal last).
  std::set<std::string> journals, strays;
  std::map<std::string, std::string> temps;
  for (const std::string& d : dirs) {
    FLINKSTATE_RETURN_IF_ERROR(locks->Add(d));
    const DirectoryScan scan = ScanTransactionDirectory(d);
    journals.insert(scan.journals.begin(), scan.journals.end());
    for (const auto& [token, files] : scan.temps) temps.emplace(token, files.front());
    for (const std::string& s : scan.journal_temps) {
      if (IsStrayJournalTemp(scan, s)) strays.insert(s);
    }
  }
  std::vector<Journal> parsed;
  for (const std::string& path : journals) {
    FLINKSTATE_RETURN_IF_ERROR(CheckJournalOwnership(path));
    FLINKSTATE_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, uint64_t{64} << 20));
    FLINKSTATE_ASSIGN_OR_RETURN(Journal j, ParseJournal(path, text));
    temps.erase(JournalToken(path));
    parsed.push_back(std::move(j));
  }
  if (!temps.empty()) {
    // A file of a run whose journal lives in another directory (`repair`
    // keeps it in its first checkpoint directory): writing here now could
    // mix that run's files with ours.
    return OrphanTemporaryRefusal(temps.begin()->second);
  }
  // A journal temporary whose journal is missing was never renamed: the
  // transaction had created nothing yet.
  for (const std::string& s : strays) {
    FLINKSTATE_RETURN_IF_ERROR(RemoveIfPresent(s, ops, &report.actions));
  }
  for (Journal& j : parsed) {
    const std::string& path = j.path;
    const std::vector<std::string> touched = DirsOf(j.entries, path);
    for (const std::string& d : touched) FLINKSTATE_RETURN_IF_ERROR(locks->Add(d));
    // The one rule, whoever recovers: a committed transaction is completed
    // (its outputs were verified and fsynced before the commit record), one
    // not yet committed is rolled back (its targets were never replaced).
    const bool committed = j.state == "commit";
    if (committed) {
      // A target still to be replaced must still be the original the run
      // kept as its backup (a hard link): a file put there after the crash
      // would be lost under the run's older output. Checked for every entry
      // before any rename.
      for (const JournalEntry& e : j.entries) {
        if (e.backup.empty() || !Exists(e.temp) || !Exists(e.target)) continue;
        if (TargetChangedSince(e)) {
          const std::string how =
              SameInode(e.backup, e.target)
                  ? absl::StrCat("it was written to since: its size or modification time is not "
                                 "the original's, and its backup ", e.backup,
                                 " is a hard link to it, so the backup changed too and the "
                                 "original is no longer kept")
                  : absl::StrCat("it is no longer the original kept as ", e.backup);
          return absl::FailedPreconditionError(absl::StrCat(
              "serde: ", e.target, " changed after an interrupted flinkstate write had "
              "committed (", how, "); nothing was renamed. The write's output is ", e.temp,
              ": to keep the file as it is now, remove that and the journal ", path,
              "; to finish the write, move the file away and rerun"));
        }
      }
    }
    RecoveredTransaction done;
    done.journal = path;
    done.intent = j.intent;
    done.completed = committed;
    for (const JournalEntry& e : j.entries) {
      done.targets.push_back(e.target);
      if (!e.backup_temp.empty()) {
        FLINKSTATE_RETURN_IF_ERROR(RemoveIfPresent(e.backup_temp, ops, &report.actions));
      }
      if (!committed) {
        FLINKSTATE_RETURN_IF_ERROR(RemoveIfPresent(e.temp, ops, &report.actions));
        if (!e.backup.empty() && Exists(e.backup)) {
          // Ours: the journal was written before it, while its name was free
          // and the directory locked. A link shares the target's inode.
          struct stat sb, st;
          const bool ours = SameInode(e.backup, e.target) ||
                            (::stat(e.backup.c_str(), &sb) == 0 &&
                             ::stat(e.target.c_str(), &st) == 0 && sb.st_size == st.st_size);
          if (ours) FLINKSTATE_RETURN_IF_ERROR(RemoveIfPresent(e.backup, ops, &report.actions));
        }
      } else if (Exists(e.temp)) {
        // The temporary file carries the target's mode and owner already
        // (set before its first byte), so the rename keeps them.
        FLINKSTATE_RETURN_IF_ERROR(ops->Rename(e.temp, e.target));
        report.actions.push_back(absl::StrCat("renamed ", e.temp, " to ", e.target));
      }
    }
    FLINKSTATE_RETURN_IF_ERROR(SyncDirs(touched, ops, true));
    FLINKSTATE_RETURN_IF_ERROR(RemoveIfPresent(path + ".tmp", ops, &report.actions));
    FLINKSTATE_RETURN_IF_ERROR(RemoveIfPresent(path, ops, &report.actions));
    ++(committed ? report.completed : report.rolled_back);
    report.transactions.push_back(std::move(done));
  }
  return report;
}

}  // namespace flinkstate::serde
