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
//   bounce1m   pread/write through a reused page-aligned 1 MiB buffer
//   bounce1m-spread  the same, the data placed half a page past the source's
//              page offset (what serde's writer does for pieces whose output
//              lies 1..63 bytes past the input modulo 4 KiB: 4K aliasing)
//   bounce256k, bounce256k-spread  the same with 256 KiB
//   bounce8m   the same with 8 MiB
//   mmap8m     write() straight from a read-only mapping (MADV_SEQUENTIAL), 8 MiB per call
//   mmap64m    the same, 64 MiB per call
//   splice     splice() through a pipe of 1 MiB (the unprivileged maximum,
//              /proc/sys/fs/pipe-max-size), 1 MiB per round
//   splice64k  the same through a default 64 KiB pipe
//   splice256k the same through a 256 KiB pipe
//   sendfile   sendfile() file to file (the kernel's own internal pipe, as
//              copy_file_range uses where the file system cannot clone)
// --fsync fsyncs OUT before closing (as strip-state does without --nofsync).
// --flush-behind M (cfr, bounce*, splice*, sendfile): copies in segments of M
// MiB and starts the write-back of each (sync_file_range WRITE) once copied,
// so that the disk writes while the copy goes on and the fsync waits for
// little.

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
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

// `spread`: place the buffer 2 KiB off the source's page offset, so that
// neither copy (page cache -> buffer, buffer -> page cache) runs forward
// with its destination a few bytes past its source modulo 4 KiB (the
// "4K aliasing" of x86 string moves); else at the start of a page.
void Bounce(int in, int out, off_t off, uint64_t left, size_t buf_size, bool spread = false) {
  std::vector<uint8_t> storage(buf_size + 8192);
  uint8_t* const page = storage.data() + (4096 - reinterpret_cast<uintptr_t>(storage.data()) % 4096);
  uint8_t* const data = spread ? page + (static_cast<uint64_t>(off) + 2048) % 4096 : page;
  while (left > 0) {
    ssize_t n = ::pread(in, data, std::min<uint64_t>(left, buf_size), off);
    if (n < 0) {
      if (errno == EINTR) continue;
      Die("pread");
    }
    if (n == 0) break;
    WriteAll(out, data, static_cast<size_t>(n));
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

void Splice(int in, int out, off_t off, uint64_t left, int pipe_size) {
  int p[2];
  if (::pipe(p) != 0) Die("pipe");
  if (pipe_size != 65536 && ::fcntl(p[1], F_SETPIPE_SZ, pipe_size) < 0) Die("F_SETPIPE_SZ");
  loff_t o = off;
  while (left > 0) {
    ssize_t n = ::splice(in, &o, p[1], nullptr, std::min<uint64_t>(left, pipe_size), SPLICE_F_MOVE);
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

void Sendfile(int in, int out, off_t off, uint64_t left) {
  while (left > 0) {
    ssize_t n = ::sendfile(out, in, &off, std::min<uint64_t>(left, 1u << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      Die("sendfile");
    }
    if (n == 0) break;
    left -= static_cast<uint64_t>(n);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: copy_path cfr|bounce1m[-spread]|bounce256k[-spread]|bounce8m|mmap8m|mmap64m|splice|splice64k|splice256k|sendfile IN OUT [--shift N] [--fsync]\n");
    return 2;
  }
  const std::string method = argv[1];
  size_t shift = 3;
  bool sync = false;
  uint64_t segment = 0;
  for (int i = 4; i < argc; ++i) {
    if (std::strcmp(argv[i], "--fsync") == 0) {
      sync = true;
    } else if (std::strcmp(argv[i], "--flush-behind") == 0 && i + 1 < argc) {
      segment = static_cast<uint64_t>(std::strtoul(argv[++i], nullptr, 10)) << 20;
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
  uint64_t left = size - static_cast<uint64_t>(start);
  if (segment > 0 && method.compare(0, 4, "mmap") != 0) {
    // Each segment by the method, then its write-back started.
    off_t at = start;
    const off_t out_at = static_cast<off_t>(head.size());
    while (left > 0) {
      const uint64_t n = std::min(left, segment);
      if (method == "cfr") {
        Cfr(in, out, at, n);
      } else if (method == "splice") {
        Splice(in, out, at, n, 1 << 20);
      } else if (method == "bounce1m-spread") {
        Bounce(in, out, at, n, size_t{1} << 20, true);
      } else if (method == "bounce1m") {
        Bounce(in, out, at, n, size_t{1} << 20);
      } else if (method == "sendfile") {
        Sendfile(in, out, at, n);
      } else {
        std::fprintf(stderr, "copy_path: --flush-behind with %s is not supported\n", method.c_str());
        return 2;
      }
      ::sync_file_range(out, out_at + (at - start), static_cast<off_t>(n), SYNC_FILE_RANGE_WRITE);
      at += static_cast<off_t>(n);
      left -= n;
    }
    left = 0;
  }
  if (left == 0) {
    // done above
  } else if (method == "cfr") {
    Cfr(in, out, start, left);
  } else if (method == "bounce1m") {
    Bounce(in, out, start, left, size_t{1} << 20);
  } else if (method == "bounce1m-spread") {
    Bounce(in, out, start, left, size_t{1} << 20, true);
  } else if (method == "bounce256k") {
    Bounce(in, out, start, left, size_t{256} << 10);
  } else if (method == "bounce256k-spread") {
    Bounce(in, out, start, left, size_t{256} << 10, true);
  } else if (method == "bounce8m") {
    Bounce(in, out, start, left, size_t{8} << 20);
  } else if (method == "mmap8m") {
    FromMapping(in, out, start, left, size, size_t{8} << 20);
  } else if (method == "mmap64m") {
    FromMapping(in, out, start, left, size, size_t{64} << 20);
  } else if (method == "splice") {
    Splice(in, out, start, left, 1 << 20);
  } else if (method == "splice64k") {
    Splice(in, out, start, left, 1 << 16);
  } else if (method == "splice256k") {
    Splice(in, out, start, left, 1 << 18);
  } else if (method == "sendfile") {
    Sendfile(in, out, start, left);
  } else {
    std::fprintf(stderr, "copy_path: unknown method %s\n", method.c_str());
    return 2;
  }
  if (sync && ::fsync(out) != 0) Die("fsync");
  if (::close(out) != 0) Die("close");
  ::close(in);
  return 0;
}
