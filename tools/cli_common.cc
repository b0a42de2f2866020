// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "tools/cli_common.h"

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <csignal>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <streambuf>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/format_constants.h"
#include "flinkstate/ha_pointer.h"
#include "flinkstate/inspect.h"
#include "flinkstate/javaobj/stream_constants.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/metadata_writer.h"
#include "flinkstate/objstore/object_store.h"
#include "flinkstate/objstore/object_transaction.h"
#include "flinkstate/serde/file_transaction.h"
#include "flinkstate/serde/modified_utf8.h"
#include "flinkstate/serde/input_format.h"
#include "flinkstate/serde/status_macros.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/splice_writer.h"

namespace flinkstate::cli {

namespace {
// --input-format of the command being run (SetInputFormat).
std::string& InputFormatSetting() {
  static std::string* const s = new std::string("auto");
  return *s;
}
}  // namespace

void SetInputFormat(const std::string& format) { InputFormatSetting() = format; }

absl::StatusOr<Input> Load(const std::string& path) {
  // gzip, hex, Base64 and ConfigMap text are unwrapped by Open itself;
  // --input-format forces one layer.
  OpenOptions options;
  FLINKSTATE_ASSIGN_OR_RETURN(options.input_format,
                              serde::ParseInputFormat(InputFormatSetting()));
  return ::flinkstate::Open(path, options);
}

absl::StatusOr<Input> LoadStateFile(const std::string& path) {
  return ::flinkstate::OpenStateFile(path);
}

absl::StatusOr<Input> LoadStateFileToRead(const std::string& path) {
  FLINKSTATE_ASSIGN_OR_RETURN(Input in, Load(path));
  if (in.is_state_file()) return in;
  // Not a state file: OpenStateFile's message says what to do with it.
  return ::flinkstate::OpenStateFile(path).status();
}

absl::StatusOr<Input> LoadForEdit(const std::string& path) {
  OpenOptions options;
  FLINKSTATE_ASSIGN_OR_RETURN(options.input_format,
                              serde::ParseInputFormat(InputFormatSetting()));
  options.defer_metadata_model = true;
  return ::flinkstate::Open(path, options);
}

absl::StatusOr<Input> LoadStateFileForEdit(const std::string& path) {
  OpenOptions options;
  options.defer_metadata_model = true;
  return ::flinkstate::OpenStateFile(path, options);
}

namespace {

// See CliFileOps in the header.
class CrashTestFileOps : public serde::FileOps {
 public:
  CrashTestFileOps(int64_t kill_at, const char* log) : kill_at_(kill_at) {
    if (log != nullptr) log_ = std::fopen(log, "a");
  }
  absl::StatusOr<int> CreateExclusive(const std::string& p) override {
    Step("create", p);
    return FileOps::CreateExclusive(p);
  }
  absl::Status WritePlan(int fd, const std::string& p, const serde::EditPlan& plan,
                         const serde::MappedFile& in, const serde::SpliceOptions& o,
                         serde::SpliceStats* st) override {
    Step("write", p);
    return FileOps::WritePlan(fd, p, plan, in, o, st);
  }
  absl::Status WriteAll(int fd, const std::string& p, absl::string_view d) override {
    Step("write", p);
    return FileOps::WriteAll(fd, p, d);
  }
  absl::Status Fchmod(int fd, const std::string& p, mode_t m) override {
    Step("fchmod", p);
    return FileOps::Fchmod(fd, p, m);
  }
  absl::Status Fchown(int fd, const std::string& p, uid_t u, gid_t g) override {
    Step("fchown", p);
    return FileOps::Fchown(fd, p, u, g);
  }
  absl::Status Fsync(int fd, const std::string& p) override {
    Step("fsync", p);
    return FileOps::Fsync(fd, p);
  }
  absl::Status Close(int fd, const std::string& p) override {
    Step("close", p);
    return FileOps::Close(fd, p);
  }
  absl::Status Link(const std::string& a, const std::string& b) override {
    Step("link", b);
    return FileOps::Link(a, b);
  }
  absl::Status Rename(const std::string& a, const std::string& b) override {
    Step("rename", b);
    return FileOps::Rename(a, b);
  }
  absl::Status Unlink(const std::string& p) override {
    Step("unlink", p);
    return FileOps::Unlink(p);
  }
  absl::Status FsyncDirectory(const std::string& d) override {
    Step("fsync-dir", d);
    return FileOps::FsyncDirectory(d);
  }

 private:
  void Step(const char* what, const std::string& path) {
    ++n_;
    if (log_ != nullptr) {
      std::fprintf(log_, "%lld %s %s\n", static_cast<long long>(n_), what, path.c_str());
      std::fflush(log_);
    }
    if (n_ == kill_at_) ::raise(SIGKILL);
  }
  int64_t kill_at_;
  int64_t n_ = 0;
  std::FILE* log_ = nullptr;
};

}  // namespace

serde::FileOps* CliFileOps() {
  static serde::FileOps* const ops = []() -> serde::FileOps* {
    const char* kill_at = std::getenv("FLINKSTATE_TEST_KILL_AT");
    const char* log = std::getenv("FLINKSTATE_TEST_OPS_LOG");
    if (kill_at == nullptr && log == nullptr) return serde::PosixFileOps();
    return new CrashTestFileOps(kill_at != nullptr ? std::atoll(kill_at) : -1, log);
  }();
  return ops;
}

serde::OutputVerifier StateFileVerifier(
    std::function<absl::Status(const StateFile&, serde::ByteView)> check) {
  return [check](serde::ByteView out) -> absl::Status {
    absl::StatusOr<StateFile> model = ReadStateFile(out);
    if (!model.ok()) return model.status();
    absl::StatusOr<serde::EditPlan> plan = EncodeStateFile(*model, out);
    if (!plan.ok()) return plan.status();
    FLINKSTATE_RETURN_IF_ERROR(CheckReproducesInput(*plan, out));
    return check(*model, out);
  };
}

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string JsonQuote(absl::string_view text) {
  std::string out = "\"";
  const auto* b = reinterpret_cast<const uint8_t*>(text.data());
  size_t i = 0;
  while (i < text.size()) {
    const uint8_t c = b[i];
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          if (c < 0x20 || c == 0x7F) {
            absl::StrAppend(&out, "\\u00", absl::Hex(c, absl::kZeroPad2));
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    // A multi-byte character, if it is strict UTF-8 (no surrogate).
    const serde::Utf8Char ch = serde::DecodeUtf8Char(text, i);
    if (ch.is_strict()) {
      out.append(text.data() + i, ch.length);
      i += ch.length;
    } else {
      out += "\\ufffd";
      ++i;
    }
  }
  out.push_back('"');
  return out;
}

std::string ValidUtf8(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto* b = reinterpret_cast<const uint8_t*>(text.data());
  size_t i = 0;
  while (i < text.size()) {
    const uint8_t c = b[i];
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    // The same rule as JsonQuote: shortest form, no surrogates, <= U+10FFFF.
    size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    bool ok = len != 0 && i + len <= text.size();
    uint32_t cp = len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; ok && k < len; ++k) {
      ok = (b[i + k] & 0xC0) == 0x80;
      cp = (cp << 6) | (b[i + k] & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    ok = ok && cp >= kMin[len] && cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF);
    if (ok) {
      out.append(text.data() + i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    }
  }
  return out;
}

std::string Printable(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<uint8_t>(ch);
    if ((c < 0x20 && c != '\n') || c == 0x7F) {
      absl::StrAppend(&out, "\\x", absl::Hex(c, absl::kZeroPad2));
    } else {
      out.push_back(ch);
    }
  }
  return out;
}

namespace {

bool IsControl(uint8_t c) { return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7F; }

// The index of the first byte of `s[0, n)` that `IsControl`, or `n`: eight
// bytes at a time (a report of tens of MiB goes through here), with exact
// per-byte masks (no carries between bytes), the rest one by one.
size_t FindControl(const char* s, size_t n) {
  constexpr uint64_t kOnes7F = 0x7F7F7F7F7F7F7F7FULL;
  constexpr uint64_t kHigh = 0x8080808080808080ULL;
  constexpr uint64_t kEach = 0x0101010101010101ULL;
  // 0x80 in each byte of `x` that is zero.
  const auto zero = [](uint64_t x) { return ~(((x & kOnes7F) + kOnes7F) | x | kOnes7F); };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x;
    std::memcpy(&x, s + i, 8);
    // Bytes below 0x20 (high bit clear and x & 0x7F < 0x20), then those
    // that are '\n' or '\t', then 0x7F.
    const uint64_t low = ~(((x & kOnes7F) + 0x60 * kEach) | x) & kHigh;
    const uint64_t ctrl = (low & ~zero(x ^ ('\n' * kEach)) & ~zero(x ^ ('\t' * kEach))) |
                          zero(x ^ (0x7F * kEach));
    if (ctrl != 0) break;
  }
  for (; i < n; ++i) {
    if (IsControl(static_cast<uint8_t>(s[i]))) return i;
  }
  return n;
}

// The stream buffer behind std::cout and std::cerr (InstallOutputEscaping):
// text is held until a flush or 64 KiB, then written escaped to `sink`.
class EscapingStreambuf : public std::streambuf {
 public:
  EscapingStreambuf(std::streambuf* sink, std::vector<std::string> names)
      : sink_(sink), names_(std::move(names)) {
    for (const std::string& n : names_) longest_ = std::max(longest_, n.size());
  }

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    pending_.push_back(traits_type::to_char_type(c));
    if (pending_.size() >= kChunk) Drain(false);
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (!names_.empty()) {
      pending_.append(s, static_cast<size_t>(n));
      if (pending_.size() >= kChunk) Drain(false);
      return n;
    }
    // No names to look for: escaped straight from `s`, without a copy (a
    // report of tens of MiB is written with one call).
    Drain(true);
    const size_t size = static_cast<size_t>(n);
    size_t run = 0;
    for (size_t i = FindControl(s, size); i < size; i = run + FindControl(s + run, size - run)) {
      Put(s + run, static_cast<std::streamsize>(i - run));
      const auto c = static_cast<uint8_t>(s[i]);
      const std::string esc = absl::StrCat("\\x", absl::Hex(c, absl::kZeroPad2));
      Put(esc.data(), static_cast<std::streamsize>(esc.size()));
      run = i + 1;
    }
    Put(s + run, n - static_cast<std::streamsize>(run));
    return n;
  }
  int sync() override {
    Drain(true);
    errno = 0;
    const int r = sink_->pubsync();
    if (r != 0 && write_errno_ == 0) write_errno_ = errno != 0 ? errno : EIO;
    return r;
  }

 private:
  static constexpr size_t kChunk = 64 << 10;

  // Writes out `pending_`, or (not `all`) all of it but a tail that may be
  // the start of a name whose end has not come yet.
  void Drain(bool all) {
    const size_t keep = all || longest_ == 0 ? 0 : longest_ - 1;
    if (pending_.size() <= keep) return;
    size_t end = pending_.size() - keep;
    std::string out;
    out.reserve(end + 16);
    size_t i = 0;
    while (i < end) {
      const std::string* name = nullptr;
      for (const std::string& n : names_) {
        if (pending_.compare(i, n.size(), n) == 0) {
          name = &n;
          break;
        }
      }
      if (name != nullptr) {
        // A name starting before `end` lies in `pending_` whole (`keep`).
        for (char ch : *name) {
          const auto c = static_cast<uint8_t>(ch);
          if (c < 0x20 || c == 0x7F) {
            absl::StrAppend(&out, "\\x", absl::Hex(c, absl::kZeroPad2));
          } else {
            out.push_back(ch);
          }
        }
        i += name->size();
        end = std::max(end, i);
        continue;
      }
      const auto c = static_cast<uint8_t>(pending_[i]);
      if (IsControl(c)) {
        absl::StrAppend(&out, "\\x", absl::Hex(c, absl::kZeroPad2));
      } else {
        out.push_back(pending_[i]);
      }
      ++i;
    }
    pending_.erase(0, end);
    Put(out.data(), static_cast<std::streamsize>(out.size()));
  }

  // Writes to the sink; a short write (a full disk, a closed pipe) keeps the
  // first errno for `OutputWriteErrno`.
  void Put(const char* p, std::streamsize n) {
    if (n <= 0) return;
    errno = 0;
    if (sink_->sputn(p, n) != n && write_errno_ == 0) write_errno_ = errno != 0 ? errno : EIO;
  }

 public:
  int write_errno() const { return write_errno_; }

 private:
  int write_errno_ = 0;

  std::streambuf* sink_;
  std::vector<std::string> names_;  // longest first
  size_t longest_ = 0;
  std::string pending_;
};

struct JsonErrors {
  bool on = false;
  std::string command;
};
JsonErrors& JsonErrorMode() {
  static JsonErrors* const mode = new JsonErrors();
  return *mode;
}

// The layer names that start the layer part of a message (`kLayer` of each
// decoder and edit); "<layer> verify" is the verifier of that edit.
bool IsLayerName(absl::string_view segment) {
  static constexpr absl::string_view kLayers[] = {
      "serde", "javaobj", "metadata", "completedCheckpoint", "operator-state stream",
      "kafka state", "enumerator", "objstore", "ha-pointer", "base64", "hex", "gzip",
      "relocate", "relocate --to-relative", "relocate --to-absolute", "convert",
      "strip-state", "strip-state --deep", "drop-operator", "dedupe-union", "repair",
      "doctor", "inspect", "report", "verify", "round trip", "usage", "open", "metadata writer"};
  absl::ConsumeSuffix(&segment, " verify");
  return std::find(std::begin(kLayers), std::end(kLayers), segment) != std::end(kLayers);
}

// An item path: "operators[2].subtasks[0]", "version", "stateMetaInfos[1].name";
// no space outside brackets, not empty.
bool IsItemPath(absl::string_view segment) {
  if (segment.empty()) return false;
  int depth = 0;
  for (char c : segment) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth == 0 && (c == ' ' || c == '\n')) return false;
  }
  return true;
}

}  // namespace

report::ErrorReport ErrorReportOf(const absl::Status& s, absl::string_view command,
                                  int exit_code) {
  report::ErrorReport r;
  r.set_command(std::string(command));
  r.set_code(absl::StatusCodeToString(s.code()));
  r.set_message(ValidUtf8(s.message()));
  r.set_exit_code(exit_code);
  const absl::string_view m = s.message();
  if (std::optional<serde::ErrorLocation> where = serde::LocationOf(s);
      where.has_value() && !where->layer.empty()) {
    // The decoder's own fields (error_location.h); the problem is what
    // follows "LAYER: ITEM_PATH: " in the message.
    r.set_file(ValidUtf8(where->file));
    r.set_layer(ValidUtf8(where->layer));
    r.set_item_path(ValidUtf8(where->item_path));
    if (where->offset.has_value()) r.set_offset(*where->offset);
    const std::string head = where->item_path.empty()
                                 ? absl::StrCat(where->layer, ": ")
                                 : absl::StrCat(where->layer, ": ", where->item_path, ": ");
    const size_t at = m.find(head);
    r.set_problem(ValidUtf8(at == absl::string_view::npos ? m : m.substr(at + head.size())));
    if (where->file.empty() && at != absl::string_view::npos && at >= 2 &&
        m.substr(0, at - 2).find(": ") == absl::string_view::npos) {
      r.set_file(ValidUtf8(m.substr(0, at - 2)));  // "FILE: " put in front without InFile
    }
    return r;
  }
  // Errors without a location (I/O, edits): "[FILE: ]LAYER: PROBLEM", no
  // offset (an error with an offset carries it as its location).
  std::vector<absl::string_view> parts = absl::StrSplit(m, ": ");
  size_t layer = parts.size();
  for (size_t i = 0; i < parts.size(); ++i) {
    if (IsLayerName(parts[i])) {
      layer = i;
      break;
    }
  }
  size_t rest = 0;
  if (layer < parts.size()) {
    r.set_file(ValidUtf8(absl::StrJoin(parts.begin(), parts.begin() + layer, ": ")));
    r.set_layer(std::string(parts[layer]));
    rest = layer + 1;
  } else if (parts.size() > 1 && parts[0].find_first_of("/.") != absl::string_view::npos &&
             parts[0].find(' ') == absl::string_view::npos) {
    r.set_file(ValidUtf8(parts[0]));  // "<file>: <problem>" (e.g. an open error)
    rest = 1;
  }
  if (!r.layer().empty() && parts.size() - rest >= 2 && IsItemPath(parts[rest])) {
    r.set_item_path(ValidUtf8(parts[rest]));
    ++rest;
  }
  r.set_problem(ValidUtf8(absl::StrJoin(parts.begin() + std::min(rest, parts.size()),
                                        parts.end(), ": ")));
  // A location with only a file (serde::LocatedIn(s, "", file): an edit's
  // refusal of its input) names the file its message does not.
  if (std::optional<serde::ErrorLocation> where = serde::LocationOf(s);
      where.has_value() && !where->file.empty() && r.file().empty()) {
    r.set_file(ValidUtf8(where->file));
  }
  return r;
}

void SetJsonErrors(const std::string& command, bool json) {
  JsonErrorMode().command = command;
  JsonErrorMode().on = json;
}

namespace {

// Under --json: the ErrorReport of `s` on stdout.
void PrintJsonError(const absl::Status& s, int exit_code) {
  if (!JsonErrorMode().on) return;
  absl::StatusOr<std::string> json =
      RenderJson(ErrorReportOf(s, JsonErrorMode().command, exit_code));
  if (!json.ok()) return;
  std::cout << *json;
  if (!json->empty() && json->back() != '\n') std::cout << "\n";
  std::cout.flush();
}

int FailText(const absl::Status& s) {
  // Messages quote names from the file; a hostile one (a 64 KiB class name)
  // is cut in the middle, keeping the layer and path in front and the
  // offset at the end.
  absl::string_view m = s.message();
  constexpr size_t kHead = 2048, kTail = 1024;
  if (m.size() > kHead + kTail + 64) {
    std::cerr << "flinkstate: " << Printable(m.substr(0, kHead)) << "...("
              << m.size() - kHead - kTail << " bytes of the message omitted)..."
              << Printable(m.substr(m.size() - kTail)) << "\n";
  } else {
    std::cerr << "flinkstate: " << Printable(m) << "\n";
  }
  return s.code() == absl::StatusCode::kInvalidArgument &&
                 absl::StartsWith(s.message(), "usage:")
             ? kExitUsage
             : kExitInput;
}

}  // namespace

int Fail(const absl::Status& s) {
  const int rc = FailText(s);
  PrintJsonError(s, rc);
  return rc;
}

int Usage(absl::string_view problem) {
  std::cerr << "flinkstate: " << Printable(problem) << "\n(run `flinkstate help` for usage)\n";
  // With --json a usage error is a report too: a script reading stdout
  // gets the exit code and the problem, not an empty document.
  // Layer "usage" for every usage error, whether CLI11 or a command found it.
  PrintJsonError(serde::LocatedIn(absl::InvalidArgumentError(problem), "usage", ""), kExitUsage);
  return kExitUsage;
}

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

absl::Status ParseStateRoots(const CommandArgs& a,
                             std::vector<std::pair<std::string, std::string>>* roots) {
  for (const std::string& root : a.state_roots) {
    const size_t eq = root.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == root.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--state-root takes PREFIX=DIR, not \"", root, "\""));
    }
    roots->emplace_back(root.substr(0, eq), root.substr(eq + 1));
  }
  return absl::OkStatus();
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 &&
         sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

namespace {

}  // namespace

ProgressLine::ProgressLine(const char* label, uint64_t total, int mode)
    : label_(label),
      enabled_(mode > 0 || (mode == 0 && ::isatty(2) && total >= (uint64_t{64} << 20))) {}

ProgressLine::~ProgressLine() {
  if (enabled_ && shown_ && ::isatty(2)) std::fprintf(stderr, "\r\033[K");
}

std::function<void(absl::string_view, uint64_t, uint64_t)> ProgressLine::Sink() {
  return [this](absl::string_view phase, uint64_t done, uint64_t total) {
    Show(phase, done, total);
  };
}

void ProgressLine::Show(absl::string_view phase, uint64_t done, uint64_t total) {
  if (!enabled_) return;
  const bool tty = ::isatty(2);
  const int pct = total == 0 ? -1 : static_cast<int>(done * 100 / total);
  if (phase == phase_ && pct == last_) return;
  const bool new_phase = phase != phase_;
  phase_ = std::string(phase);
  last_ = pct;
  shown_ = true;
  // On a terminal one line redrawn; elsewhere (--progress into a log) one
  // line per change of phase or per 10%.
  if (!tty && !new_phase && pct % 10 != 0) return;
  std::fprintf(stderr, "%s%s", tty ? "\r\033[K" : "", phase_.c_str());
  if (pct >= 0) {
    std::fprintf(stderr, " %3d%%", pct);
  } else {
    std::fprintf(stderr, " ...");
  }
  if (!tty) std::fprintf(stderr, "\n");
}

std::string RealPath(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) != nullptr ? std::string(buf) : std::string();
}

namespace {
EscapingStreambuf* g_stdout_filter = nullptr;
}  // namespace

int FinishStdout() {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int at_flush = errno;
  if (flushed && !std::ferror(stdout)) return 0;
  int e = g_stdout_filter != nullptr ? g_stdout_filter->write_errno() : 0;
  if (e == 0) e = at_flush != 0 ? at_flush : EIO;
  return e;
}

void InstallOutputEscaping(int argc, char** argv) {
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (std::none_of(arg.begin(), arg.end(), [](char c) {
          const auto u = static_cast<uint8_t>(c);
          return u < 0x20 || u == 0x7F;
        })) {
      continue;
    }
    // `--flag=VALUE`: the value.
    const size_t eq = absl::StartsWith(arg, "--") ? arg.find('=') : std::string::npos;
    const std::string path = eq == std::string::npos ? arg : arg.substr(eq + 1);
    // Each form, and each of its prefixes that ends a component holding a
    // control character: the directory that paths built from it start with
    // ("DIR/_metadata", "DIR/<relative handle>").
    for (const std::string& form : {path, serde::AbsolutePath(path), RealPath(path)}) {
      bool control = false;
      for (size_t i = 0; i <= form.size(); ++i) {
        if (i == form.size() || form[i] == '/') {
          if (control && absl::c_find(names, form.substr(0, i)) == names.end()) {
            names.push_back(form.substr(0, i));
          }
          control = false;
        } else {
          const auto u = static_cast<uint8_t>(form[i]);
          control |= u < 0x20 || u == 0x7F;
        }
      }
    }
  }
  std::sort(names.begin(), names.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  // Leaked: the streams flush through them during exit.
  g_stdout_filter = new EscapingStreambuf(std::cout.rdbuf(), names);
  std::cout.rdbuf(g_stdout_filter);
  std::cerr.rdbuf(new EscapingStreambuf(std::cerr.rdbuf(), std::move(names)));
}

namespace {

// Resolves an interrupted earlier run beside `output` and says what it did;
// true if that run was `intent` writing `output` and is now complete.
// Whether `dir` holds the journal or temporaries of an interrupted run.
bool InterruptedRunIn(const std::string& dir) {
  absl::StatusOr<std::vector<serde::InterruptedRun>> runs = serde::FindInterruptedRuns(dir);
  return runs.ok() && !runs->empty();
}

// For a dry run, which resolves nothing: the refusal the write's recovery in
// the directory of `output` would make (serde::ForeseeRecoveryRefusal).
absl::Status ForeseeRecoveryBeside(const std::string& output) {
  const std::string target = serde::AbsolutePath(output);
  if (target.empty()) return absl::OkStatus();
  return serde::ForeseeRecoveryRefusal({serde::DirName(target)});
}

// For a dry run, which resolves nothing: whether the write would only finish
// an interrupted run of the same command that had committed `output` (what
// RecoverBeside then reports), so that the dry run says what the write does.
bool CommittedRunWouldFinish(const std::string& output, const std::string& dry_run_intent,
                             bool* renamed) {
  // The write's command line is the dry run's without its --dry-run.
  const std::string intent = absl::StrReplaceAll(dry_run_intent, {{" --dry-run", ""}});
  const std::string target = serde::AbsolutePath(output);
  if (target.empty() || intent.empty()) return false;
  absl::StatusOr<std::vector<serde::InterruptedRun>> runs =
      serde::FindInterruptedRuns(serde::DirName(target));
  if (!runs.ok()) return false;
  for (const serde::InterruptedRun& r : *runs) {
    if (r.state == "commit" && r.changed.empty() && r.intent == intent &&
        std::find(r.targets.begin(), r.targets.end(), target) != r.targets.end()) {
      *renamed = r.unreplaced.empty();  // only its clean-up is left
      return true;
    }
  }
  return false;
}

// Whether resolving the interrupted runs in `dir` may remove a backup there:
// a run that had not committed (or whose journal is unreadable or elsewhere)
// is rolled back, removing the backup link it made.
// With `target`: only a run that wrote `target` counts (a run of another
// file rolls back its own backup link, not `target`'s).
bool RecoveryMayRemoveBackups(const std::string& dir, const std::string& target = "") {
  absl::StatusOr<std::vector<serde::InterruptedRun>> runs = serde::FindInterruptedRuns(dir);
  if (!runs.ok()) return true;
  for (const serde::InterruptedRun& r : *runs) {
    // Committed runs roll forward; one stopped while writing its first
    // journal created nothing (its rollback removes only that journal).
    if (r.state == "commit" || (!target.empty() && r.state == "unstarted")) continue;
    // A run whose journal does not say what it wrote may have written it.
    if (target.empty() || r.state != "prepare" ||
        std::find(r.targets.begin(), r.targets.end(), target) != r.targets.end()) {
      return true;
    }
  }
  return false;
}

// Whether the files `a` and `b` both exist and hold the same bytes.
bool SameBytes(const std::string& a, const std::string& b) {
  absl::StatusOr<serde::MappedFile> fa = serde::MappedFile::Open(a);
  absl::StatusOr<serde::MappedFile> fb = serde::MappedFile::Open(b);
  if (!fa.ok() || !fb.ok() || fa->size() != fb->size()) return false;
  return fa->size() == 0 || std::memcmp(fa->bytes().data(), fb->bytes().data(), fa->size()) == 0;
}

absl::StatusOr<bool> RecoverBeside(const std::string& output, const std::string& intent) {
  std::vector<std::string> actions;
  std::vector<serde::RecoveredTransaction> transactions;
  if (serde::IsUrl(output)) {
    absl::StatusOr<objstore::ObjectRecoveryReport> r = objstore::RecoverObjectWrite(output);
    if (!r.ok()) return r.status();
    actions = std::move(r->actions);
    transactions = std::move(r->transactions);
  } else {
    absl::StatusOr<serde::RecoveryReport> r =
        serde::RecoverInterruptedWrite(output, CliFileOps());
    if (!r.ok()) return r.status();
    actions = std::move(r->actions);
    transactions = std::move(r->transactions);
  }
  for (const std::string& a : actions) {
    std::cerr << "flinkstate: interrupted earlier run: " << Printable(a) << "\n";
  }
  const std::string target = serde::IsUrl(output) ? output : serde::AbsolutePath(output);
  for (const serde::RecoveredTransaction& t : transactions) {
    if (t.completed && !intent.empty() && t.intent == intent &&
        std::find(t.targets.begin(), t.targets.end(), target) != t.targets.end()) {
      return true;
    }
  }
  return false;
}

}  // namespace

int OutputProblem(const absl::Status& s) {
  return absl::StartsWith(s.message(), "usage: ") ? Usage(s.message()) : Fail(s);
}

absl::StatusOr<OutputTarget> ResolveOutput(const CommandArgs& a) {
  const std::vector<std::string>& args = a.positional;
  OutputTarget t;
  t.fsync = a.fsync;
  t.progress = a.progress;
  if (a.in_place) {
    if (args.size() != 1) {
      return absl::InvalidArgumentError("usage: --in-place takes exactly one FILE");
    }
    FLINKSTATE_RETURN_IF_ERROR(serde::CheckBackupSuffix(a.backup_suffix));
    FLINKSTATE_ASSIGN_OR_RETURN(t.input, CheckpointFilePath(args[0]));
    if (serde::IsUrl(t.input)) {
      // An object (a prefix: its _metadata), replaced by objstore's
      // write protocol.
      FLINKSTATE_ASSIGN_OR_RETURN(t.input, objstore::ResolveObjectUrl(t.input));
    }
    const std::string real = serde::IsUrl(t.input) ? std::string() : RealPath(t.input);
    t.output = real.empty() ? t.input : real;
    t.backup = t.output + a.backup_suffix;
    t.intent = a.command_line;
    t.dry_run = a.dry_run;
    if (!t.dry_run) {
      FLINKSTATE_ASSIGN_OR_RETURN(t.finished_by_recovery, RecoverBeside(t.output, t.intent));
    }
    if (serde::IsUrl(t.output) && !t.finished_by_recovery) {
      // The backup object an earlier run kept: the edit then finds out
      // whether that run finished (the object is its output over the
      // backup: ConfirmDoneEarlier) before the write would be refused for it.
      if (objstore::ObjectSize(t.backup).ok()) {
        const absl::Status taken = objstore::BackupExistsError(t.backup, t.output);
        t.backup_taken = serde::LocatedIn(
            serde::WithMessage(taken, absl::StrCat(taken.message(), " (nothing was replaced)")),
            "objstore", t.output);
      }
      return t;
    }
    bool renamed = !t.dry_run;  // by the recovery just run
    if (t.dry_run && !real.empty()) FLINKSTATE_RETURN_IF_ERROR(ForeseeRecoveryBeside(t.output));
    if (t.dry_run) {
      t.finished_by_recovery =
          !real.empty() && CommittedRunWouldFinish(t.output, t.intent, &renamed);
      t.recovery_renames_pending = t.finished_by_recovery && !renamed;
    }
    if (renamed && t.finished_by_recovery && !real.empty() && SameBytes(t.output, t.backup)) {
      // The journal says the run replaced the file, but the file holds the
      // original again (restored since): not claimed as written (attack run
      // 10: "wrote ... verified" for a file that kept the state).
      return serde::LocatedIn(
          absl::FailedPreconditionError(absl::StrCat(
              t.output, " holds the same bytes as its backup ", t.backup,
              ": the interrupted run's output is no longer in place (restored since?). Move ",
              t.backup, " away and rerun to write it again (nothing was written)")),
          "serde", t.output);
    }
    // A dry run does not resolve an interrupted run, whose backup link or
    // backup may be there: the write resolves it first, so its refusals are
    // not foreseen then (the plan warns about the run instead; attack run 10).
    const bool interrupted =
        t.dry_run && !real.empty() && InterruptedRunIn(serde::DirName(t.output));
    // A backup that is a regular file of its own (not a link, directory or
    // FIFO) may be what a finished earlier run of this command left: then
    // the edit finds out (ConfirmDoneEarlier) before any refusal, since a
    // rerun with nothing to write needs no writable directory either
    // (attack of 2026-12-03: a rerun in a chattr +i directory was refused
    // where `repair --apply` said nothing to do).
    struct stat bst;
    const bool backup_is_file =
        !real.empty() && ::lstat(t.backup.c_str(), &bst) == 0 && S_ISREG(bst.st_mode);
    if (!t.finished_by_recovery && !real.empty() && !interrupted) {
      // Before any work: what the transaction would refuse at its start.
      absl::Status refusal = serde::CheckReplaceable(t.output, t.backup);
      if (!refusal.ok() && !backup_is_file) return refusal;
      t.backup_taken = refusal;
    } else if (interrupted && backup_is_file &&
               !RecoveryMayRemoveBackups(serde::DirName(t.output), t.output)) {
      // The interrupted run's recovery keeps the backup (it rolls forward,
      // or it is another file's): the write would find it there, as the dry
      // run does now. (Not CheckReplaceable: before the recovery's rename
      // the file still shares its inode with the backup link, which the
      // write will not see.)
      t.backup_taken = serde::LocatedIn(serde::BackupExistsError(t.backup), "serde", t.output);
    }
    return t;
  }
  if (args.size() != 2) {
    return absl::InvalidArgumentError("usage: expected IN OUT (or --in-place FILE)");
  }
  FLINKSTATE_ASSIGN_OR_RETURN(t.input, CheckpointFilePath(args[0]));
  t.output = args[1];
  if (SameFile(t.input, t.output) || (serde::IsUrl(t.output) && t.input == t.output)) {
    return absl::InvalidArgumentError(
        "usage: OUT is the input file; use --in-place to rewrite it (a backup is kept)");
  }
  t.intent = a.command_line;
  t.dry_run = a.dry_run;
  if (!serde::IsUrl(t.output)) {
    FLINKSTATE_ASSIGN_OR_RETURN(t.output, OutputThroughSymlink(t.output));
    if (SameFile(t.input, t.output)) {
      return absl::InvalidArgumentError(
          "usage: OUT is a link to the input file; use --in-place to rewrite it (a backup is "
          "kept)");
    }
  }
  if (!t.dry_run) {
    FLINKSTATE_ASSIGN_OR_RETURN(t.finished_by_recovery, RecoverBeside(t.output, t.intent));
  } else {
    if (!serde::IsUrl(t.output)) FLINKSTATE_RETURN_IF_ERROR(ForeseeRecoveryBeside(t.output));
    bool renamed = false;
    t.finished_by_recovery =
        !serde::IsUrl(t.output) && CommittedRunWouldFinish(t.output, t.intent, &renamed);
    t.recovery_renames_pending = t.finished_by_recovery && !renamed;
  }
  // An existing OUT is replaced as `cp` replaces it, but not one made
  // read-only (attack run 6, item 17: a 0444 OUT was replaced, by root too),
  // nor a directory or device, nor one chattr +i: checked here, before any
  // work, as the transaction checks it at its start.
  if (!t.finished_by_recovery && !serde::IsUrl(t.output)) {
    FLINKSTATE_RETURN_IF_ERROR(CheckOutputPath(t.output).status());
  }
  return t;
}

absl::StatusOr<std::string> OutputThroughSymlink(const std::string& output) {
  // OUT and every hop of its links: /dev/stdout, /dev/fd/N, /proc/self/fd/N
  // are streams, never a file flinkstate makes and renames (attack run 11: a
  // link to /dev/stdout reached the file stdout was redirected to).
  std::string hop = output;
  for (int i = 0; i < 40; ++i) {
    const std::string abs = serde::AbsolutePath(hop);
    for (absl::string_view kernel : {"/dev/", "/proc/", "/sys/"}) {
      if (absl::StartsWith(abs, kernel) && !absl::StartsWith(abs, "/dev/shm/")) {
        const std::string via = abs == output ? "" : absl::StrCat(" (it links to ", abs, ")");
        return serde::LocatedIn(
            absl::FailedPreconditionError(absl::StrCat(
                "cannot write ", output, ": OUT must be a regular file, not a device or a "
                "stream under ", kernel, via, " (nothing was written)")),
            "serde", output);
      }
    }
    char link[PATH_MAX];
    const ssize_t n = ::readlink(hop.c_str(), link, sizeof(link) - 1);
    if (n <= 0) break;  // not a link (or unreadable: judged below)
    const std::string to(link, static_cast<size_t>(n));
    hop = to[0] == '/' ? to : absl::StrCat(serde::DirName(abs), "/", to);
  }
  struct stat st;
  if (::lstat(output.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return output;
  // Written through, as `cp` writes through a link to a file (attack run 10:
  // the link was replaced by a regular file, /dev/stdout included).
  char buf[PATH_MAX];
  if (::realpath(output.c_str(), buf) == nullptr) {
    return serde::LocatedIn(
        absl::FailedPreconditionError(absl::StrCat(
            "cannot write ", output, ": it is a symbolic link whose target cannot be resolved (",
            std::strerror(errno), "); remove the link or give another name (nothing was written)")),
        "serde", output);
  }
  const std::string target(buf);
  if (::stat(target.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return serde::LocatedIn(
        absl::FailedPreconditionError(absl::StrCat(
            "cannot write ", output, ": it is a symbolic link to ", target,
            ", which is not a regular file (nothing was written)")),
        "serde", output);
  }
  return target;
}

absl::StatusOr<std::string> CheckOutputPath(const std::string& given) {
  FLINKSTATE_ASSIGN_OR_RETURN(const std::string output, OutputThroughSymlink(given));
  const std::string abs = serde::AbsolutePath(output);
  if (abs.empty()) {
    // Said before any work, and by a dry run too (attack run 9: a dry run
    // into a missing directory printed "verified" and exited 0).
    const std::string dir = serde::DirName(output);
    struct stat st;
    const bool is_dir = ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    return serde::LocatedIn(
        absl::FailedPreconditionError(absl::StrCat(
            "cannot write ", output, ": its directory ", dir, " ",
            is_dir ? "cannot be resolved" : "does not exist", " (nothing was written)")),
        "serde", output);
  }
  if (struct statfs fs; ::statfs(serde::DirName(abs).c_str(), &fs) == 0 &&
                         (fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC)) {
    // The kernel's own files: no temporary file can be made there.
    return serde::LocatedIn(
        absl::FailedPreconditionError(absl::StrCat(
            "cannot write ", output, ": its directory is in ",
            fs.f_type == PROC_SUPER_MAGIC ? "/proc" : "/sys",
            ", where no file can be created (nothing was written)")),
        "serde", output);
  }
  FLINKSTATE_RETURN_IF_ERROR(serde::CheckReplaceable(abs, /*backup=*/""));
  return abs;
}

namespace {

// Whether the file `path` holds exactly what `plan` writes over `in`,
// compared piece by piece (memory: that of the two mappings). Errors: opening
// `path`; the plan's own; `DataLoss` when either file was cut under the
// comparison (it read zeros there: the truncation is said as what it is, not
// as a difference).
absl::StatusOr<bool> HoldsPlannedOutput(const std::string& path, const Input& in,
                                        const serde::EditPlan& plan) {
  FLINKSTATE_ASSIGN_OR_RETURN(serde::MappedFile now, serde::MappedFile::Open(path));
  absl::StatusOr<bool> same = plan.OutputEquals(in.bytes(), now.bytes());
  FLINKSTATE_RETURN_IF_ERROR(in.file.CheckIntact());
  FLINKSTATE_RETURN_IF_ERROR(now.CheckIntact());
  return same;
}

// The EditReport of an edit found done without writing: the target's names,
// verified (the file is the checked output), and whether this was a dry run.
report::EditReport VerifiedEditReport(const CommandArgs& a, const OutputTarget& t) {
  report::EditReport r;
  r.set_command(a.command);
  r.set_input(ValidUtf8(t.input));
  r.set_output(ValidUtf8(t.output));
  r.set_backup(ValidUtf8(t.backup));
  r.set_verified(true);
  r.set_dry_run(t.dry_run);
  return r;
}

}  // namespace

int FinishedByRecovery(const CommandArgs& a, const OutputTarget& t) {
  std::ostream& out = Text(a);
  if (t.dry_run) {
    out << "would finish " << Printable(t.output)
        << ": an interrupted run of this command had committed it (verified before the "
           "commit); the write would only finish its rename and clean-up\n";
    if (!t.backup.empty()) out << "original kept as " << Printable(t.backup) << "\n";
    out << "dry run, nothing written (drop --dry-run to write)\n";
  } else {
    out << "wrote " << Printable(t.output)
        << ": an interrupted run of this command had committed it (verified before the "
           "commit); its rename is now finished, nothing more to do\n";
    if (!t.backup.empty()) out << "original kept as " << Printable(t.backup) << "\n";
  }
  if (!a.json) return kExitOk;
  report::EditReport r = VerifiedEditReport(a, t);
  r.set_finished_by_recovery(true);
  return PrintJson(r);
}

const std::string& EditInputPath(const OutputTarget& t) {
  if (t.backup.empty()) return t.input;
  if (!t.backup_taken.ok()) return t.backup;
  // An object finished by recovery is claimed without a plan
  // (FinishedWithoutConfirming).
  return t.finished_by_recovery && !serde::IsUrl(t.output) ? t.backup : t.input;
}

bool FinishedWithoutConfirming(const OutputTarget& t) {
  return t.finished_by_recovery && (serde::IsUrl(t.output) || t.recovery_renames_pending);
}

int ConfirmFinishedByRecovery(const CommandArgs& a, const OutputTarget& t, const Input& in,
                              const serde::EditPlan& plan) {
  if (FinishedWithoutConfirming(t)) return FinishedByRecovery(a, t);
  absl::StatusOr<bool> same = HoldsPlannedOutput(t.output, in, plan);
  if (!same.ok()) return Fail(same.status());
  if (*same) return FinishedByRecovery(a, t);
  return Fail(serde::LocatedIn(
      absl::FailedPreconditionError(absl::StrCat(
          t.output, " changed after an interrupted run of this command replaced it: it is not "
                    "the output that run wrote and verified",
          t.backup.empty() ? "; remove it or give another OUT to write it again"
                           : absl::StrCat("; ", t.backup,
                                          " holds the original: move it away and rerun to "
                                          "write it again"),
          " (nothing was written)")),
      "serde", t.output));
}

absl::Status NotDoneEarlier(const OutputTarget& t, const absl::Status& why) {
  if (why.ok()) return t.backup_taken;
  // The refusal stands; why the earlier run could not be recognised is
  // said too (attack of 2026-12-03: an unreadable backup, or memory, gave
  // only "backup ... already exists").
  return serde::WithMessage(
      t.backup_taken,
      absl::StrCat(t.backup_taken.message(), "; it is not what an earlier run of this command "
                                             "left, as far as could be checked: ",
                   why.message()));
}

int ConfirmDoneEarlier(const CommandArgs& a, const OutputTarget& t, const Input& in,
                       const serde::EditPlan& plan) {
  absl::StatusOr<bool> same = HoldsPlannedOutput(t.output, in, plan);
  if (!same.ok()) {
    return Fail(absl::IsDataLoss(same.status()) ? same.status()
                                                : NotDoneEarlier(t, same.status()));
  }
  if (!*same) return Fail(t.backup_taken);
  Text(a) << "nothing to do: " << Printable(t.output)
          << " holds what this command writes over the original, kept as "
          << Printable(t.backup) << " by an earlier run (compared byte for byte)"
          << (t.dry_run ? "; dry run, nothing written" : "") << "\n";
  if (!a.json) return kExitOk;
  report::EditReport r = VerifiedEditReport(a, t);
  r.set_input_kind(KindName(in.kind));
  r.set_input_bytes(in.file.size());
  r.set_output_bytes(plan.output_size());  // the file's size: it holds the output
  r.set_already_done(true);
  return PrintJson(r);
}

absl::StatusOr<report::WritePlan> PlanWrite(const OutputTarget& t, const Input& in,
                                            const serde::EditPlan& plan) {
  if (in.decoded) {
    return absl::InvalidArgumentError(absl::StrCat(
        in.path, ": decoded from its on-disk form; rewrite the raw bytes instead"));
  }
  report::WritePlan p;
  const auto step = [&p](const char* action, const std::string& object, uint64_t bytes,
                         const std::string& source = "", const std::string& range = "") {
    report::WritePlan::Step* s = p.add_steps();
    s->set_action(action);
    s->set_object(ValidUtf8(object));
    s->set_source(ValidUtf8(source));
    s->set_bytes(bytes);
    s->set_source_range(range);
  };
  if (serde::IsUrl(t.output)) {
    objstore::ObjectWrite w;
    w.target = t.output;
    w.backup = t.backup;
    FLINKSTATE_ASSIGN_OR_RETURN(objstore::ObjectWritePlan o,
                                objstore::PlanObjectWrite(w, in.file, plan));
    for (const objstore::PlannedObjectStep& s : o.steps) {
      step(s.action.c_str(), s.object, s.bytes, s.source, s.source_range);
    }
    p.set_output_bytes(o.output_bytes);
    p.set_upload_bytes(o.upload_bytes);
    p.set_read_back_bytes(o.read_back_bytes);
    p.set_server_side_copy_bytes(o.server_side_copy_bytes);
    p.set_input_bytes_kept(o.input_bytes_kept);
    for (const std::string& s : o.problems) p.add_problems(ValidUtf8(s));
    for (const std::string& s : o.interrupted) p.add_interrupted(ValidUtf8(s));
    return p;
  }
  // serde::WriteFileTransaction's files (file_transaction.h; its journal
  // beside them is left out): the temporary file, the backup (a hard link:
  // no bytes copied), the rename.
  const std::string dir = serde::DirName(t.output);
  const std::string temp = absl::StrCat(t.output, ".flinkstate-tmp-<token>");
  step("write", temp, plan.output_size());
  step("read back", temp, plan.output_size());
  if (!t.backup.empty()) {
    step("backup", t.backup, 0, t.output);
    // The write's recovery removes a backup only for a run that had not
    // committed (its own link); a committed run keeps it, and the write is
    // refused (attack run 11, M2: said so, and exited 0).
    if (::access(t.backup.c_str(), F_OK) == 0 && !RecoveryMayRemoveBackups(dir)) {
      p.add_problems(ValidUtf8(absl::StrCat(t.backup, " exists already (an earlier backup): "
                                            "the write would be refused; move it away first")));
    }
  }
  step("rename", t.output, plan.output_size(), temp);
  p.set_output_bytes(plan.output_size());
  p.set_input_bytes_kept(plan.copied_bytes());
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string n = it->path().filename().string();
    if (absl::StartsWith(n, ".flinkstate-txn-")) p.add_interrupted(ValidUtf8(it->path().string()));
  }
  return p;
}

int FinishDryRun(const CommandArgs& a, const OutputTarget& t, const Input& in,
                 const serde::EditPlan& plan, const serde::OutputVerifier& verify,
                 report::EditReport rep) {
  absl::StatusOr<report::WritePlan> p = PlanWrite(t, in, plan);
  if (!p.ok()) return Fail(p.status());
  const bool remote = serde::IsUrl(t.output) || serde::IsUrl(in.path);
  if (!remote) {
    if (absl::Status v = serde::VerifyPlanInMemory(plan, in.file, verify); !v.ok()) {
      return Fail(serde::WithMessage(v, absl::StrCat(v.message(), " (dry run, nothing written)")));
    }
  }
  // strip-state --deep: its new state files come first in the same
  // transaction (new targets: written, read back, renamed; no backup).
  if (rep.new_state_files_size() > 0) {
    report::WritePlan merged = *p;
    merged.clear_steps();
    for (const report::EditReport::NewStateFile& f : rep.new_state_files()) {
      if (f.exists()) continue;  // there already, with these bytes: nothing to write
      const std::string temp = absl::StrCat(f.path(), ".flinkstate-tmp-<token>");
      const auto step = [&](const char* action, const std::string& object,
                            const std::string& source, uint64_t bytes) {
        report::WritePlan::Step* s = merged.add_steps();
        s->set_action(action);
        s->set_object(ValidUtf8(object));
        s->set_source(ValidUtf8(source));
        s->set_bytes(bytes);
      };
      if (serde::IsUrl(f.path())) {
        // A new object (objstore::CommitObjects): uploaded, read back, its
        // key checked free, copied in place before the output.
        step("upload", temp, "", f.bytes());
        step("read back", temp, "", f.bytes());
        step("check absent", f.path(), "", 0);
        step("server-side copy", f.path(), temp, f.bytes());
        step("delete", temp, "", 0);
        merged.set_upload_bytes(merged.upload_bytes() + f.bytes());
        merged.set_read_back_bytes(merged.read_back_bytes() + f.bytes());
        merged.set_server_side_copy_bytes(merged.server_side_copy_bytes() + f.bytes());
        absl::StatusOr<uint64_t> there = objstore::ObjectSize(f.path());
        if (there.ok()) {
          merged.add_problems(ValidUtf8(absl::StrCat(f.path(), " exists already")));
        } else if (!absl::IsNotFound(there.status())) {
          return Fail(there.status());
        }
        continue;
      }
      step("write", temp, "", f.bytes());
      step("read back", temp, "", f.bytes());
      step("rename", f.path(), temp, f.bytes());
      if (::access(f.path().c_str(), F_OK) == 0) {
        merged.add_problems(ValidUtf8(absl::StrCat(f.path(), " exists already")));
      } else if (absl::Status c = serde::CheckReplaceable(f.path(), ""); !c.ok()) {
        // Its directory may be another than OUT's (an absolute handle's):
        // the write checks each new file (attack run 11, M5: the dry run
        // said nothing of a read-only state-file directory).
        merged.add_problems(ValidUtf8(absl::StripSuffix(c.message(), " (nothing was replaced)")));
      }
    }
    for (const report::WritePlan::Step& s : p->steps()) *merged.add_steps() = s;
    *p = std::move(merged);
  }
  if (!remote) {
    // Room for every file the write creates beside what it replaces.
    std::vector<serde::PlannedFile> files = {{serde::AbsolutePath(t.output), plan.output_size()}};
    for (const report::EditReport::NewStateFile& f : rep.new_state_files()) {
      if (!f.exists()) files.push_back({f.path(), f.bytes()});
    }
    if (absl::Status c = serde::CheckFreeSpace(files); !c.ok()) {
      p->add_problems(ValidUtf8(absl::StripSuffix(c.message(), " (nothing was written)")));
    }
  }
  rep.set_dry_run(true);
  rep.set_verified(!remote);
  *rep.mutable_write_plan() = *p;
  // As `repair` without --apply: exit 1 when the write would be refused.
  const int rc = p->problems().empty() ? kExitOk : kExitInput;
  if (a.json) return PrintJson(rep, rc);
  const auto n = [](uint64_t b) { return absl::StrCat(Human(b), " (", b, " B)"); };
  std::string out = absl::StrCat("would write ", t.output, " (", plan.output_size(), " B)");
  if (!t.backup.empty()) absl::StrAppend(&out, "; backup ", t.backup);
  for (const report::EditReport::NewStateFile& f : rep.new_state_files()) {
    absl::StrAppend(&out, f.exists() ? "; existing state file " : "; new state file ", f.path(),
                    " (", f.bytes(), " B)");
  }
  absl::StrAppend(&out, "\n");
  int i = 0;
  for (const report::WritePlan::Step& s : p->steps()) {
    absl::StrAppend(&out, "  ", ++i, ". ", s.action(), " ", s.object());
    if (!s.source().empty()) absl::StrAppend(&out, " <- ", s.source());
    if (!s.source_range().empty()) absl::StrAppend(&out, " ", s.source_range());
    if (s.bytes() > 0 || s.action() == "upload" || s.action() == "write") {
      absl::StrAppend(&out, " (", s.bytes(), " B)");
    }
    absl::StrAppend(&out, "\n");
  }
  if (serde::IsUrl(t.output)) {
    absl::StrAppend(&out, "transfer: upload ", n(p->upload_bytes()), ", read back ",
                    n(p->read_back_bytes()), ", server-side copy ",
                    n(p->server_side_copy_bytes()), ", input kept ", n(p->input_bytes_kept()),
                    "\n");
  }
  for (const std::string& j : p->interrupted()) {
    absl::StrAppend(&out, "warning: an interrupted run left ", j,
                    "; writing first resolves it (a committed run completed, any other rolled back)\n");
  }
  for (const std::string& w : p->problems()) absl::StrAppend(&out, "warning: ", w, "\n");
  absl::StrAppend(&out, remote ? "not verified: a remote dry run reads only the structure; the "
                                 "write verifies its output before it replaces anything\n"
                               : "verified: the planned output, built in memory, passes the "
                                 "check the write makes\n");
  absl::StrAppend(&out, rc == kExitOk
                            ? "dry run, nothing written (drop --dry-run to write)\n"
                            : "dry run, nothing written; the write would be refused as things "
                              "stand (above)\n");
  std::cout << Printable(out);
  return rc;
}

absl::Status WriteVerified(const OutputTarget& t, const Input& in,
                           const serde::EditPlan& plan,
                           const serde::OutputVerifier& verify,
                           serde::SpliceStats* stats) {
  if (in.decoded) {
    return absl::InvalidArgumentError(absl::StrCat(
        in.path, ": decoded from its on-disk form; rewrite the raw bytes instead"));
  }
  if (t.dry_run) return absl::InternalError("cli: WriteVerified under --dry-run (a bug)");
  if (serde::IsUrl(t.output)) {
    objstore::ObjectWrite w;
    w.target = t.output;
    w.backup = t.backup;
    w.intent = t.intent;
    objstore::ObjectWriteStats st;
    FLINKSTATE_RETURN_IF_ERROR(objstore::WriteObjectVerified(w, in.file, plan, verify, &st));
    if (stats != nullptr) stats->bytes_written += st.output_bytes;
    return absl::OkStatus();
  }
  ProgressLine progress("writing", plan.output_size(), t.progress);
  serde::TransactionOptions options;
  options.sync = t.fsync;
  options.ops = CliFileOps();
  options.stats = stats;
  // Writing, then re-reading and verifying (as long as writing on large files).
  options.progress = progress.Sink();
  // Plans of many small pieces read most of the input through the mapping.
  options.splice.release_consumed_input = true;
  options.intent = t.intent;
  return serde::WriteFileTransaction(t.output, t.backup, in.file, plan, verify, options);
}

std::string Human(uint64_t n) { return HumanBytes(n); }

std::ostream& Text(const CommandArgs& a) {
  static std::ostream* const null = new std::ostream(nullptr);  // badbit: discards
  return a.json ? *null : std::cout;
}

int PrintJson(const google::protobuf::Message& message, int rc) {
  absl::StatusOr<std::string> json = RenderJson(message);
  if (!json.ok()) return Fail(json.status());
  std::cout << *json;
  if (!json->empty() && json->back() != '\n') std::cout << "\n";
  return rc;
}

const char* KindName(FileKind kind) {
  switch (kind) {
    case FileKind::kMetadata:
      return "metadata";
    case FileKind::kOperatorSnapshot:
      return "operatorSnapshot";
    case FileKind::kCompletedCheckpoint:
      return "completedCheckpoint";
    case FileKind::kHaPointer:
      return "haPointer";
    case FileKind::kJavaStream:
      return "javaStream";
    default:
      return "unknown";
  }
}

report::EditReport EditReportOf(const char* command, const OutputTarget& t, const Input& in,
                                uint64_t output_bytes) {
  report::EditReport r;
  r.set_command(command);
  r.set_input(ValidUtf8(t.input));
  r.set_output(ValidUtf8(t.output));
  r.set_backup(ValidUtf8(t.backup));
  r.set_input_kind(KindName(in.kind));
  r.set_input_bytes(in.file.size());
  r.set_output_bytes(output_bytes);
  r.set_verified(true);
  return r;
}

void AddStripped(const std::vector<StrippedEntry>& removed, report::EditReport* out) {
  static constexpr const char* kModes[] = {"SPLIT_DISTRIBUTE", "UNION", "BROADCAST"};
  for (const StrippedEntry& e : removed) {
    report::EditReport::StrippedEntry* p = out->add_removed();
    p->set_operator_id(e.operator_id);
    p->set_subtask_index(e.subtask_index);
    p->set_slot(ValidUtf8(e.slot));
    p->set_distribution_mode(e.mode < 3 ? kModes[e.mode] : absl::StrCat("mode ", e.mode));
    p->set_entry_count(e.entry_count);
    p->set_bytes(e.bytes);
  }
}

absl::Status AddRelocated(const RelocateResult& result, report::EditReport* out) {
  return result.ForEachChanged([out](const RelocatedString& c) {
    report::EditReport::RelocatedPath* p = out->add_relocated();
    p->set_what(c.what);
    p->set_before(ValidUtf8(c.before));
    p->set_after(ValidUtf8(c.after));
    p->set_offset(c.offset);
    return true;
  });
}

}  // namespace flinkstate::cli
