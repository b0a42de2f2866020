// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// C++ half of the JDK conformance check (see Conformance.java).
//
//   javaobj_conformance describe-all DIR   decodes every DIR/<case>.bin, prints
//       its canonical description, compares it with DIR/<case>.expected.txt
//       (written by the JDK from the live objects) and checks that decode ->
//       encode reproduces the stream byte for byte. Exit 1 on any mismatch.
//   javaobj_conformance rewrite-all DIR    applies the rewrite of each rw_* case
//       and writes DIR/<case>.rw.bin through serde::WritePlanAtomically, for
//       `java Conformance check-rewrites DIR` to read back.

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "flinkstate/javaobj/canonical.h"
#include "flinkstate/javaobj/layouts.h"
#include "flinkstate/javaobj/rewriter.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/javaobj/stream_writer.h"
#include "flinkstate/serde/mapped_file.h"
#include "flinkstate/serde/splice_writer.h"
#include "flinkstate/serde/status_macros.h"
#include "tests/javaobj/test_util.h"

namespace flinkstate::javaobj {
namespace {

std::string Describe(serde::ByteView bytes) {
  absl::StatusOr<Stream> s = DecodeStream(bytes);
  if (!s.ok()) {
    if (s.status().code() == absl::StatusCode::kUnimplemented) {
      return "error unimplemented\n";
    }
    return "error " + s.status().ToString() + "\n";
  }
  absl::StatusOr<std::string> d = DescribeStream(*s);
  if (!d.ok()) return "error " + d.status().ToString() + "\n";
  return *d;
}

int DescribeAll(const std::string& dir) {
  int ok = 0, bad = 0;
  for (const std::string& f : testing::ListFiles(dir, ".bin")) {
    if (f.size() > 7 && f.compare(f.size() - 7, 7, ".rw.bin") == 0) continue;
    std::string name = f.substr(0, f.size() - 4);
    absl::StatusOr<serde::MappedFile> file = serde::MappedFile::Open(dir + "/" + f);
    if (!file.ok()) {
      std::cout << "FAIL " << name << ": " << file.status() << "\n";
      ++bad;
      continue;
    }
    std::string actual = Describe(file->bytes());
    std::ifstream has_expected(dir + "/" + name + ".expected.txt");
    if (!has_expected) {
      // Streams checked only against what ObjectInputStream reads
      // (check_dump_json.py): decoding must still be lossless.
      absl::Status rt = VerifyRoundTrip(file->bytes());
      if (rt.ok()) {
        ++ok;
        std::cout << "OK   " << name << " (" << file->size() << " bytes, byte-identical re-encode; "
                  << "values checked by check_dump_json.py)\n";
      } else {
        ++bad;
        std::cout << "FAIL " << name << " round trip: " << rt << "\n";
      }
      continue;
    }
    std::string expected = testing::ReadFileOrDie(dir + "/" + name + ".expected.txt");
    bool same = actual == expected;
    absl::Status rt = absl::OkStatus();
    if (actual.rfind("error unimplemented", 0) != 0) rt = VerifyRoundTrip(file->bytes());
    if (same && rt.ok()) {
      ++ok;
      std::cout << "OK   " << name << " (" << file->size() << " bytes, byte-identical re-encode)\n";
      continue;
    }
    ++bad;
    std::cout << "FAIL " << name << (rt.ok() ? "" : " round trip: " + rt.ToString()) << "\n";
    if (!same) {
      std::istringstream a(actual), e(expected);
      std::string la, le;
      for (int line = 1;; ++line) {
        bool ga = static_cast<bool>(std::getline(a, la));
        bool ge = static_cast<bool>(std::getline(e, le));
        if (!ga && !ge) break;
        if (!ga || !ge || la != le) {
          std::cout << "  first difference at line " << line << "\n  expected: "
                    << (ge ? le : "<end>") << "\n  actual:   " << (ga ? la : "<end>") << "\n";
          break;
        }
      }
    }
  }
  std::cout << ok << " streams match the JDK's description, " << bad << " differ\n";
  return bad == 0 && ok > 0 ? 0 : 1;
}

absl::Status RewriteCase(const std::string& name, const Stream& s,
                         StreamRewriter* rw) {
  ItemId root = s.top_level().at(0);
  if (name == "rw_hashmap_remove_referenced") {
    FLINKSTATE_ASSIGN_OR_RETURN(ContainerView list, ViewContainer(s, root));
    FLINKSTATE_ASSIGN_OR_RETURN(ContainerView map, ViewContainer(s, list.entries.at(0).value));
    for (size_t i = 0; i < map.entries.size(); ++i) {
      if (s.StringEquals(map.entries[i].key, "k1")) return rw->RemoveEntry(map, i);
    }
    return absl::NotFoundError("k1");
  }
  if (name == "rw_drop_first_shared_desc") {
    FLINKSTATE_ASSIGN_OR_RETURN(ContainerView list, ViewContainer(s, root));
    return rw->RemoveEntry(list, 0);
  }
  if (name == "rw_replace_string") {
    std::string nv = "new-";
    for (int i = 0; i < 40000; ++i) nv += "\xC3\xA9";
    return rw->ReplaceValue(s.FieldValue(root, "x"), NewValue::String(nv));
  }
  if (name == "rw_enum_map_remove") {
    FLINKSTATE_ASSIGN_OR_RETURN(ContainerView map, ViewContainer(s, root));
    for (size_t i = 0; i < map.entries.size(); ++i) {
      if (s.StringEquals(map.entries[i].key, "a")) return rw->RemoveEntry(map, i);
    }
    return absl::NotFoundError("a");
  }
  return absl::NotFoundError("unknown rewrite case " + name);
}

int RewriteAll(const std::string& dir) {
  int bad = 0, ok = 0;
  for (const std::string& f : testing::ListFiles(dir, ".rw.expected.txt")) {
    std::string name = f.substr(0, f.size() - std::string(".rw.expected.txt").size());
    absl::Status st = [&]() -> absl::Status {
      FLINKSTATE_ASSIGN_OR_RETURN(serde::MappedFile in,
                                  serde::MappedFile::Open(dir + "/" + name + ".bin"));
      FLINKSTATE_ASSIGN_OR_RETURN(Stream s, DecodeStream(in.bytes()));
      StreamRewriter rw(s);
      FLINKSTATE_RETURN_IF_ERROR(RewriteCase(name, s, &rw));
      FLINKSTATE_ASSIGN_OR_RETURN(serde::EditPlan plan, rw.BuildPlan());
      serde::SpliceOptions opts;
      opts.sync = false;
      return serde::WritePlanAtomically(
          plan, in, dir + "/" + name + ".rw.bin",
          [](serde::ByteView out) { return DecodeStream(out).status(); }, opts);
    }();
    if (st.ok()) {
      ++ok;
      std::cout << "OK   rewrote " << name << "\n";
    } else {
      ++bad;
      std::cout << "FAIL " << name << ": " << st << "\n";
    }
  }
  return bad == 0 && ok > 0 ? 0 : 1;
}

// Decodes FILE once (for /usr/bin/time -v peak-RSS comparisons with the JDK).
int DecodeOnce(const std::string& path) {
  absl::StatusOr<serde::MappedFile> f = serde::MappedFile::Open(path);
  if (!f.ok()) {
    std::cout << f.status() << "\n";
    return 1;
  }
  auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<Stream> s = DecodeStream(f->bytes());
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!s.ok()) {
    std::cout << s.status() << "\n";
    return 1;
  }
  std::cout << "decoded " << f->size() << " bytes, " << s->num_items() << " items in "
            << secs << " s\n";
  return 0;
}

}  // namespace
}  // namespace flinkstate::javaobj

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: javaobj_conformance describe-all|rewrite-all DIR | decode FILE\n";
    return 2;
  }
  std::string mode = argv[1];
  if (mode == "describe-all") return flinkstate::javaobj::DescribeAll(argv[2]);
  if (mode == "decode") return flinkstate::javaobj::DecodeOnce(argv[2]);
  if (mode == "rewrite-all") return flinkstate::javaobj::RewriteAll(argv[2]);
  std::cerr << "unknown mode " << mode << "\n";
  return 2;
}
