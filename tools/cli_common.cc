// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "tools/cli_common.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/ha_pointer.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/metadata_writer.h"
#include "flinkstate/serde/status_macros.h"

ABSL_FLAG(bool, json, false, "print JSON instead of text (inspect, dump, diff)");
ABSL_FLAG(bool, in_place, false,
          "rewrite the input file itself, keeping the original as FILE.bak");
ABSL_FLAG(std::string, backup_suffix, ".bak", "suffix of the backup --in-place keeps");
ABSL_FLAG(bool, fsync, true, "fsync the output before renaming it into place");
ABSL_FLAG(bool, progress, true, "show progress on a terminal for large files");

namespace flinkstate::cli {

std::vector<std::string> CommandArgs::List(const std::string& flag) const {
  std::vector<std::string> out;
  auto it = repeated.find(flag);
  if (it == repeated.end()) return out;
  for (const std::string& v : it->second) {
    for (absl::string_view part : absl::StrSplit(v, ',', absl::SkipEmpty())) {
      out.emplace_back(part);
    }
  }
  return out;
}

FileKind SniffFileKind(serde::ByteView b) {
  if (b.size() >= 4 && b[0] == 0x49 && b[1] == 0x60 && b[2] == 0x67 && b[3] == 0x2D) {
    return FileKind::kMetadata;
  }
  if (b.size() >= 4 && b[0] == 0xAC && b[1] == 0xED && b[2] == 0x00 && b[3] == 0x05) {
    return LooksLikeCompletedCheckpoint(b) ? FileKind::kCompletedCheckpoint
                                           : FileKind::kJavaStream;
  }
  if (LooksLikeBase64JavaStream(b)) return FileKind::kBase64JavaStream;
  if (b.size() >= 5 && b[0] == 0 && b[1] == 0 && b[2] == 0 && (b[3] == 0 || b[3] == 3) &&
      b[4] <= 17) {
    return FileKind::kOperatorSnapshot;
  }
  return FileKind::kUnknown;
}

const char* FileKindName(FileKind kind) {
  switch (kind) {
    case FileKind::kMetadata:
      return "Flink _metadata";
    case FileKind::kOperatorSnapshot:
      return "operator snapshot";
    case FileKind::kJavaStream:
      return "Java serialization stream";
    case FileKind::kCompletedCheckpoint:
      return "Flink HA completedCheckpoint";
    case FileKind::kBase64JavaStream:
      return "Base64 text of a Java serialization stream";
    default:
      return "unknown";
  }
}

absl::StatusOr<Input> Load(const std::string& path) {
  Input in;
  in.path = path;
  FLINKSTATE_ASSIGN_OR_RETURN(in.file, serde::MappedFile::Open(path));
  in.kind = SniffFileKind(in.file.bytes());
  if (in.kind == FileKind::kMetadata || in.kind == FileKind::kOperatorSnapshot) {
    absl::StatusOr<StateFile> model = ReadStateFile(in.file.bytes());
    if (!model.ok()) {
      return absl::Status(model.status().code(),
                          absl::StrCat(path, ": ", model.status().message()));
    }
    in.model = *std::move(model);
  } else if (in.kind == FileKind::kCompletedCheckpoint) {
    auto stream = std::make_shared<javaobj::Stream>();
    absl::StatusOr<StateFile> model =
        ReadCompletedCheckpointBytes(in.file.bytes(), stream.get());
    if (!model.ok()) {
      return absl::Status(model.status().code(),
                          absl::StrCat(path, ": ", model.status().message()));
    }
    in.model = *std::move(model);
    in.stream = std::move(stream);
  } else if (in.kind == FileKind::kBase64JavaStream) {
    absl::StatusOr<std::string> raw = DecodeBase64JavaStream(in.file.bytes());
    if (!raw.ok()) {
      return absl::Status(raw.status().code(),
                          absl::StrCat(path, ": ", raw.status().message()));
    }
    in.decoded = std::make_shared<const std::string>(*std::move(raw));
  }
  return in;
}

absl::StatusOr<Input> LoadStateFile(const std::string& path) {
  FLINKSTATE_ASSIGN_OR_RETURN(Input in, Load(path));
  if (in.kind == FileKind::kMetadata || in.kind == FileKind::kOperatorSnapshot ||
      in.kind == FileKind::kCompletedCheckpoint) {
    return in;
  }
  if (in.kind == FileKind::kBase64JavaStream) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": Base64 text of a Java stream (a Kubernetes HA value); this command does "
              "not rewrite Base64: decode it (base64 -d), run the command on the raw bytes, "
              "and encode the result (base64 -w0)"));
  }
  if (in.kind == FileKind::kJavaStream) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": a Java serialization stream; this command works on _metadata, "
              "operator-snapshot and completedCheckpoint files (see `flinkstate dump`)"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": metadata: header: neither a Flink metadata file (magic 49 60 67 2d), an "
            "operator snapshot (header 0 or 3) nor a Java serialization stream (ac ed 00 05) "
            "at byte 0"));
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
    // A multi-byte sequence: shortest form, no surrogates, at most U+10FFFF.
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
      out += "\\ufffd";
      ++i;
    }
  }
  out.push_back('"');
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

int Fail(const absl::Status& s) {
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

int Usage(absl::string_view problem) {
  std::cerr << "flinkstate: " << problem << "\n(run `flinkstate help` for usage)\n";
  return kExitUsage;
}

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 &&
         sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

namespace {

// Shows "label 42%" on stderr when it is a terminal and the work is large.
class Progress {
 public:
  Progress(const char* label, uint64_t total)
      : label_(label),
        enabled_(absl::GetFlag(FLAGS_progress) && ::isatty(2) &&
                 total >= (uint64_t{64} << 20)) {}
  ~Progress() {
    if (enabled_ && shown_) std::fprintf(stderr, "\r\033[K");
  }
  void Update(uint64_t done, uint64_t total) {
    if (!enabled_ || total == 0) return;
    const int pct = static_cast<int>(done * 100 / total);
    if (pct == last_) return;
    last_ = pct;
    shown_ = true;
    std::fprintf(stderr, "\r%s %3d%%", label_, pct);
  }

 private:
  const char* label_;
  bool enabled_;
  bool shown_ = false;
  int last_ = -1;
};

}  // namespace

std::string RealPath(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) != nullptr ? std::string(buf) : std::string();
}

absl::StatusOr<OutputTarget> ResolveOutput(const std::vector<std::string>& args) {
  OutputTarget t;
  if (absl::GetFlag(FLAGS_in_place)) {
    if (args.size() != 1) {
      return absl::InvalidArgumentError("usage: --in-place takes exactly one FILE");
    }
    t.input = args[0];
    const std::string real = RealPath(args[0]);
    t.output = real.empty() ? args[0] : real;
    t.backup = t.output + absl::GetFlag(FLAGS_backup_suffix);
    return t;
  }
  if (args.size() != 2) {
    return absl::InvalidArgumentError("usage: expected IN OUT (or --in-place FILE)");
  }
  t.input = args[0];
  t.output = args[1];
  if (SameFile(t.input, t.output)) {
    return absl::InvalidArgumentError(
        "usage: OUT is the input file; use --in-place to rewrite it (a backup is kept)");
  }
  return t;
}

namespace {

// Keeps the original beside itself before it is replaced: a hard link (no
// copy; the original inode survives the rename), or a copy where links fail.
absl::Status MakeBackup(const OutputTarget& t, const serde::MappedFile& original) {
  if (t.backup.empty()) return absl::OkStatus();
  struct stat st;
  if (::stat(t.backup.c_str(), &st) == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "backup ", t.backup, " already exists; move it away first (nothing was written)"));
  }
  // `output` is the file being replaced (a symlink given as input resolved;
  // link(2) would otherwise link the symlink itself).
  if (::link(t.output.c_str(), t.backup.c_str()) == 0) return absl::OkStatus();
  return serde::WritePlanAtomically(serde::EditPlan::Identity(original.size()),
                                    original, t.backup, nullptr);
}

// Writes `plan` over `in` to the target after `verify` accepted the result.
}  // namespace

absl::Status WriteVerified(const OutputTarget& t, const Input& in,
                           const serde::EditPlan& plan,
                           const serde::OutputVerifier& verify,
                           serde::SpliceStats* stats) {
  FLINKSTATE_RETURN_IF_ERROR(MakeBackup(t, in.file));
  Progress progress("writing", plan.output_size());
  serde::SpliceOptions options;
  options.sync = absl::GetFlag(FLAGS_fsync);
  options.progress = [&progress](uint64_t done, uint64_t total) {
    progress.Update(done, total);
  };
  absl::Status s = serde::WritePlanAtomically(plan, in.file, t.output, verify, options, stats);
  if (!s.ok() && !t.backup.empty()) ::unlink(t.backup.c_str());
  return s;
}

std::string Human(uint64_t n) {
  if (n >= (uint64_t{1} << 20)) return absl::StrFormat("%.2f MiB", n / 1048576.0);
  if (n >= 1024) return absl::StrFormat("%.1f KiB", n / 1024.0);
  return absl::StrCat(n, " B");
}


}  // namespace flinkstate::cli
