// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: fault_file_ops.h
// -----------------------------------------------------------------------------
// A serde::FileOps for tests that fails one step of a transaction, or
// "crashes" there (that step and every later one fail, as if the process had
// died: no cleanup runs), to check recovery after every step.

#ifndef FLINKSTATE_TESTS_TESTING_FAULT_FILE_OPS_H_
#define FLINKSTATE_TESTS_TESTING_FAULT_FILE_OPS_H_

#include <unistd.h>

#include <string>

#include "flinkstate/serde/file_transaction.h"

namespace flinkstate::testing {

using serde::EditPlan;
using serde::FileOps;
using serde::MappedFile;
using serde::SpliceOptions;
using serde::SpliceStats;

// Fails call number `fail_at` (1-based). kError: only that call; kCrash: that
// call and every later one (descriptors are still closed, as the kernel
// would on death).
class FaultOps : public FileOps {
 public:
  enum Mode { kError, kCrash };
  FaultOps(int fail_at, Mode mode) : fail_at_(fail_at), mode_(mode) {}
  int calls() const { return n_; }
  const std::string& failed_step() const { return failed_step_; }

  absl::StatusOr<int> CreateExclusive(const std::string& p) override {
    if (Fail("create " + p)) return Injected();
    return FileOps::CreateExclusive(p);
  }
  absl::Status WritePlan(int fd, const std::string& p, const EditPlan& plan,
                         const MappedFile& in, const SpliceOptions& o, SpliceStats* s) override {
    if (Fail("write " + p)) {
      // A crash mid-write leaves a partial file.
      if (mode_ == kCrash) FileOps::WriteAll(fd, p, "partial").IgnoreError();
      return Injected();
    }
    return FileOps::WritePlan(fd, p, plan, in, o, s);
  }
  absl::Status WriteAll(int fd, const std::string& p, absl::string_view d) override {
    if (Fail("write " + p)) return Injected();
    return FileOps::WriteAll(fd, p, d);
  }
  absl::Status Fchmod(int fd, const std::string& p, mode_t m) override {
    if (Fail("fchmod " + p)) return Injected();
    return FileOps::Fchmod(fd, p, m);
  }
  absl::Status Fchown(int fd, const std::string& p, uid_t u, gid_t g) override {
    if (Fail("fchown " + p)) return Injected();
    return FileOps::Fchown(fd, p, u, g);
  }
  absl::Status Fsync(int fd, const std::string& p) override {
    if (Fail("fsync " + p)) return Injected();
    return FileOps::Fsync(fd, p);
  }
  absl::Status Close(int fd, const std::string& p) override {
    if (Fail("close " + p)) {
      ::close(fd);
      return Injected();
    }
    return FileOps::Close(fd, p);
  }
  absl::Status Link(const std::string& a, const std::string& b) override {
    if (Fail("link " + b)) return Injected();
    return FileOps::Link(a, b);
  }
  absl::Status Rename(const std::string& a, const std::string& b) override {
    if (Fail("rename " + a)) return Injected();
    return FileOps::Rename(a, b);
  }
  absl::Status Unlink(const std::string& p) override {
    if (Fail("unlink " + p)) return Injected();
    return FileOps::Unlink(p);
  }
  absl::Status FsyncDirectory(const std::string& d) override {
    if (Fail("fsync-dir " + d)) return Injected();
    return FileOps::FsyncDirectory(d);
  }

 private:
  bool Fail(const std::string& step) {
    ++n_;
    const bool fail = n_ == fail_at_ || (mode_ == kCrash && fail_at_ > 0 && n_ > fail_at_);
    if (n_ == fail_at_) failed_step_ = step;
    return fail;
  }
  static absl::Status Injected() { return absl::InternalError("injected failure"); }
  int fail_at_;
  Mode mode_;
  int n_ = 0;
  std::string failed_step_;
};

}  // namespace flinkstate::testing

#endif  // FLINKSTATE_TESTS_TESTING_FAULT_FILE_OPS_H_
