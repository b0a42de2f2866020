// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// A replacement for libFuzzer's driver in builds without it (gcc, the default
// build): replays every file given on the command line, and every regular
// file below every directory given, through `LLVMFuzzerTestOneInput` once.
// The ctest `fuzz_replay_<target>` runs it over the seeds and the saved
// crashers. A violated property aborts the process (the test fails with the
// report on stderr); the allocation cap is armed by the entry itself.
//
//   metadata_reader_fuzzer fuzz/corpus/metadata_reader_fuzzer ../shared/corpus
//
// Options: `--missing-ok` lets a named path not exist (CI checkouts without
// ../shared); `--max-len=N` skips files larger than N bytes; `-...` arguments
// that look like libFuzzer flags are ignored so the same command lines work.

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// The input being run, for the crash message (signal-safe: written once per
// input before the call, read only by the handler).
const char* volatile g_current = nullptr;

void OnCrash(int sig) {
  const char* f = g_current;
  if (f != nullptr) {
    const char kMsg[] = "\nstandalone fuzz driver: crashed on input ";
    ssize_t ignored = write(2, kMsg, sizeof(kMsg) - 1);
    ignored = write(2, f, strlen(f));
    ignored = write(2, "\n", 1);
    (void)ignored;
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

bool ReadWhole(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  bool missing_ok = false;
  // The file name goes to stderr before each input only with -v, or when
  // FLINKSTATE_FUZZ_VERBOSE is set; a crash report names the input anyway
  // through the abort message below.
  bool verbose = std::getenv("FLINKSTATE_FUZZ_VERBOSE") != nullptr;
  uint64_t max_len = UINT64_MAX;
  std::vector<std::string> files;
  int missing = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--missing-ok") {
      missing_ok = true;
      continue;
    }
    if (a.rfind("--max-len=", 0) == 0) {
      max_len = std::strtoull(a.c_str() + 10, nullptr, 10);
      continue;
    }
    if (a == "-v") {
      verbose = true;
      continue;
    }
    if (a.rfind("-", 0) == 0) continue;  // a libFuzzer flag
    std::error_code ec;
    const std::filesystem::path p(a);
    if (std::filesystem::is_directory(p, ec)) {
      for (auto it = std::filesystem::recursive_directory_iterator(p, ec);
           !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_regular_file(ec)) files.push_back(it->path().string());
      }
    } else if (std::filesystem::is_regular_file(p, ec)) {
      files.push_back(a);
    } else {
      std::fprintf(stderr, "standalone fuzz driver: %s does not exist\n", a.c_str());
      ++missing;
    }
  }
  if (missing > 0 && !missing_ok) return 2;
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) signal(sig, OnCrash);
  std::sort(files.begin(), files.end());  // a stable order for reproducing
  size_t ran = 0, skipped = 0;
  uint64_t bytes = 0;
  const auto start = std::chrono::steady_clock::now();
  std::string data;
  for (const std::string& f : files) {
    if (!ReadWhole(f, &data)) {
      std::fprintf(stderr, "standalone fuzz driver: cannot read %s\n", f.c_str());
      return 2;
    }
    if (data.size() > max_len) {
      ++skipped;
      continue;
    }
    // A copy in an exact-size heap buffer, as libFuzzer does, so that an
    // overread is caught by ASan builds.
    std::unique_ptr<uint8_t[]> copy(new uint8_t[data.size()]);
    std::memcpy(copy.get(), data.data(), data.size());
    if (verbose) std::fprintf(stderr, "Running: %s\n", f.c_str());
    g_current = f.c_str();
    LLVMFuzzerTestOneInput(copy.get(), data.size());
    ++ran;
    bytes += data.size();
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("standalone fuzz driver: %zu inputs (%llu bytes) passed in %.2f s, %zu skipped\n",
              ran, static_cast<unsigned long long>(bytes), secs, skipped);
  std::fflush(stdout);
  flinkstate::fuzz::PrintStats();
  return 0;
}
