// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// copy_path: the copy loop of a copy-dominated edit, one method per run, so
// that bench/run_all.sh (and anyone deciding how serde's splice writer should
// copy) can time each method as a whole process beside `cp`.
//
//   copy_path METHOD IN OUT [--shift N] [--fsync]
//
// Writes N inserted bytes (default 3: an edit that shifts everything after
// it, so the pieces are not page-congruent; 0 keeps them congruent), then
// copies IN from offset 4096 to its end with METHOD:
//   cfr        copy_file_range
//   bounce1m   pread/write through a reused 1 MiB buffer (serde today)
//   bounce8m   the same with 8 MiB
//   mmap8m     write() straight from a read-only mapping (MADV_SEQUENTIAL), 8 MiB per call
//   mmap64m    the same, 64 MiB per call
//   splice     splice() through a pipe, 1 MiB per round
// --fsync fsyncs OUT before closing (as strip-state does without --nofsync).

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "copy_path: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

void WriteAll(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      Die("write");
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void Bounce(int in, int out, off_t off, uint64_t left, size_t buf_size) {
  std::vector<uint8_t> buf(buf_size);
  while (left > 0) {
    ssize_t n = ::pread(in, buf.data(), std::min<uint64_t>(left, buf.size()), off);
    if (n < 0) {
      if (errno == EINTR) continue;
      Die("pread");
    }
    if (n == 0) break;
    WriteAll(out, buf.data(), static_cast<size_t>(n));
    off += n;
    left -= static_cast<uint64_t>(n);
  }
}

void FromMapping(int in, int out, off_t off, uint64_t left, uint64_t size, size_t chunk) {
  void* m = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, in, 0);
  if (m == MAP_FAILED) Die("mmap");
  ::madvise(m, size, MADV_SEQUENTIAL);
  const uint8_t* p = static_cast<const uint8_t*>(m) + off;
  while (left > 0) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(left, chunk));
    WriteAll(out, p, n);
    p += n;
    left -= n;
  }
  ::munmap(m, size);
}

void Cfr(int in, int out, off_t off, uint64_t left) {
  loff_t o = off;
  while (left > 0) {
    ssize_t n = ::copy_file_range(in, &o, out, nullptr, std::min<uint64_t>(left, 1u << 30), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      Die("copy_file_range");
    }
    if (n == 0) break;
    left -= static_cast<uint64_t>(n);
  }
}

void Splice(int in, int out, off_t off, uint64_t left) {
  int p[2];
  if (::pipe(p) != 0) Die("pipe");
  ::fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
  loff_t o = off;
  while (left > 0) {
    ssize_t n = ::splice(in, &o, p[1], nullptr, std::min<uint64_t>(left, 1u << 20), SPLICE_F_MOVE);
    if (n < 0) {
      if (errno == EINTR) continue;
      Die("splice in");
    }
    if (n == 0) break;
    ssize_t k = n;
    while (k > 0) {
      ssize_t w = ::splice(p[0], nullptr, out, nullptr, static_cast<size_t>(k), SPLICE_F_MOVE);
      if (w < 0) {
        if (errno == EINTR) continue;
        Die("splice out");
      }
      k -= w;
    }
    left -= static_cast<uint64_t>(n);
  }
  ::close(p[0]);
  ::close(p[1]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: copy_path cfr|bounce1m|bounce8m|mmap8m|mmap64m|splice IN OUT [--shift N] [--fsync]\n");
    return 2;
  }
  const std::string method = argv[1];
  size_t shift = 3;
  bool sync = false;
  for (int i = 4; i < argc; ++i) {
    if (std::strcmp(argv[i], "--fsync") == 0) {
      sync = true;
    } else if (std::strcmp(argv[i], "--shift") == 0 && i + 1 < argc) {
      shift = static_cast<size_t>(std::strtoul(argv[++i], nullptr, 10));
    } else {
      std::fprintf(stderr, "copy_path: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  int in = ::open(argv[2], O_RDONLY | O_CLOEXEC);
  if (in < 0) Die("open input");
  struct stat st;
  if (::fstat(in, &st) != 0) Die("fstat");
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const off_t start = size > 4096 ? 4096 : 0;
  int out = ::open(argv[3], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) Die("open output");
  std::vector<uint8_t> head(start + shift, 0x5a);
  WriteAll(out, head.data(), head.size());
  const uint64_t left = size - static_cast<uint64_t>(start);
  if (method == "cfr") {
    Cfr(in, out, start, left);
  } else if (method == "bounce1m") {
    Bounce(in, out, start, left, size_t{1} << 20);
  } else if (method == "bounce8m") {
    Bounce(in, out, start, left, size_t{8} << 20);
  } else if (method == "mmap8m") {
    FromMapping(in, out, start, left, size, size_t{8} << 20);
  } else if (method == "mmap64m") {
    FromMapping(in, out, start, left, size, size_t{64} << 20);
  } else if (method == "splice") {
    Splice(in, out, start, left);
  } else {
    std::fprintf(stderr, "copy_path: unknown method %s\n", method.c_str());
    return 2;
  }
  if (sync && ::fsync(out) != 0) Die("fsync");
  if (::close(out) != 0) Die("close");
  ::close(in);
  return 0;
}
