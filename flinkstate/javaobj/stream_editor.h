// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: stream_editor.h
// -----------------------------------------------------------------------------
// A rewriter that works in the same single pass as a `StreamCursor` reader:
// the reader walks the stream, and where it decides that a part it has just
// read must go (a map entry, say), it tells the editor, which turns the
// decisions into a zero-copy edit plan with the consequences fixed as
// `StreamRewriter` fixes them (docs/formats/java-serialization.md §12):
//   * every later TC_REFERENCE whose handle shifts is renumbered (handles are
//     numbered in output order; a definition carries no number on the wire);
//   * a definition that a removed part introduced and a later part still
//     refers to is written in full at its first later reference (recursively,
//     with its own references renumbered), and every reference after that
//     points to the new position; a definition already written that way is
//     replaced by a reference where it occurs again inside another one;
//   * counts the reader names (a HashMap's size in its block data) are
//     patched in place.
// For the same decisions the plan's output is byte for byte that of
// `StreamRewriter` (tests/javaobj/stream_editor_test.cc holds it to that).
//
//   ```c++ (serde::ByteView input)
//   javaobj::StreamCursor c(input);
//   javaobj::StreamEditor editor(&c);
//   if (!c.ReadHeader()) return c.status();
//   while (!c.AtStreamEnd() && c.ok()) {
//     const javaobj::StreamEditor::Mark m = editor.MarkHere();
//     javaobj::CursorValue v;
//     if (!c.ReadContent(&v) || !c.FinishValue(&v)) break;
//     // ... decide, e.g. editor.RemoveSince(m) for a top-level item to drop
//   }
//   if (!c.ok()) return c.status();
//   FLINKSTATE_ASSIGN_OR_RETURN(serde::EditPlan plan, editor.Finish());
//   ```
//
// Memory: 4 bytes per handle of the current epoch (its number in the
// output) and ~16 bytes per plan piece; the plan's pieces refer to the input.
//
// Lifetime: the editor observes `cursor` (it installs itself as its
// observer) and must not outlive it; the plan it returns refers to the input
// bytes, which must outlive the plan.
//
// Thread safety: not thread-safe; use from the cursor's thread.

#ifndef FLINKSTATE_JAVAOBJ_STREAM_EDITOR_H_
#define FLINKSTATE_JAVAOBJ_STREAM_EDITOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "flinkstate/javaobj/rewriter.h"
#include "flinkstate/javaobj/stream_cursor.h"
#include "flinkstate/serde/edit_plan.h"

namespace flinkstate::javaobj {

class StreamEditor : public StreamCursor::Observer {
 public:
  explicit StreamEditor(StreamCursor* cursor);
  ~StreamEditor() override;
  StreamEditor(const StreamEditor&) = delete;
  StreamEditor& operator=(const StreamEditor&) = delete;

  // A point of the pass to come back to: what is read after it may be
  // removed with `RemoveSince`. Take it at the first byte of the part (the
  // cursor's position), before reading it.
  struct Mark {
    uint64_t offset = 0;
    size_t pieces = 0;
    uint32_t last_piece_size = 0;  // the last piece may grow after the mark
    uint64_t copied_until = 0;
    uint32_t next_handle = 0;
    size_t undo = 0;
    uint32_t epoch = 0;
  };
  Mark MarkHere();
  // Leaves the input from `mark.offset` to the cursor's position out of the
  // output, with every handle it defined (a later reference writes the
  // definition again). Precondition: the part lies within one epoch and the
  // cursor is not replaying.
  // Return values: `FailedPrecondition` if `mark` is older than another
  // removal's or than the last reset.
  [[nodiscard]] absl::Status RemoveSince(const Mark& mark);

  // Writes the input bytes `range` (a count read from block data, before
  // anything after it was emitted) as their own piece, to be overwritten with
  // `SetPatch` once the value is known. Returns the patch's index.
  size_t AddPatch(serde::SourceRange range);
  // Precondition: `bytes` has the range's size.
  void SetPatch(size_t index, const std::string& bytes);

  // The plan: everything not removed, with the patches and the references
  // fixed. Call once, after the cursor read the whole stream.
  [[nodiscard]] absl::StatusOr<serde::EditPlan> Finish();
  const RewriteStats& stats() const { return stats_; }
  // The output's size so far (input bytes copied or planned + inserts).
  uint64_t planned_output_size() const;

  // --- StreamCursor::Observer ----------------------------------------------------
  void OnHandle(uint64_t h, uint64_t offset) override;
  void OnReference(uint64_t h, uint64_t offset) override;
  void OnReset() override;

 private:
  static constexpr uint32_t kAbsent = 0xFFFFFFFFu;
  struct Piece {
    uint64_t offset;  // copy: input offset; insert: offset in `inserts_`
    uint32_t size;
    bool insert;
  };
  void CopyUpTo(uint64_t offset);
  // Takes the plan back to `n` pieces, the last of size `last_size`.
  void TruncatePieces(size_t n, uint32_t last_size);
  void Insert(const uint8_t* bytes, size_t n);
  void InsertReference(uint32_t handle);
  uint32_t NewNumber(uint64_t h) const {
    return h < numbers_size_ ? numbers_[h >> kChunkBits][h & (kChunk - 1)] : kAbsent;
  }
  void SetNumber(uint64_t h, uint32_t n);
  // Writes the definition of handle `h` in full here (the first reference
  // after its removal).
  void Rematerialize(uint64_t h, uint64_t ref_offset);
  // While rematerializing: reads the next value, or replaces it with a
  // reference if it is a definition already written (`demote_`).
  bool EmitNext();
  // Reads the rest of the value `v` (just read) while rematerializing.
  bool EmitBody(CursorValue* v);

  StreamCursor* cursor_;
  serde::ByteView input_;
  std::vector<Piece> pieces_;
  std::string inserts_;
  std::vector<size_t> patches_;  // piece indexes
  uint64_t copied_until_ = 0;
  // The output number of each input handle of the epoch, kAbsent if it is
  // not (yet) in the output; in chunks that never move.
  static constexpr int kChunkBits = 14;
  static constexpr uint64_t kChunk = uint64_t{1} << kChunkBits;
  std::vector<std::unique_ptr<uint32_t[]>> numbers_;
  uint64_t numbers_size_ = 0;
  uint32_t next_handle_ = 0;
  std::vector<uint64_t> undo_;  // handles numbered since the last mark
  bool marking_ = false;
  RewriteStats mark_stats_;
  std::vector<uint64_t> emitted_;  // handles numbered while rematerializing
  uint64_t last_removal_end_ = 0;
  uint32_t epoch_ = 0;
  // Rematerializing: events of the replay are ours; a definition already in
  // the output is `demote_` (its handle) until `EmitValue` replaces it.
  int emitting_ = 0;
  uint64_t demote_ = kNoHandle;
  // Events to ignore: a demoted definition's own content, the offsets
  // [silent_from_, silent_until_).
  bool Silenced(uint64_t offset) const;
  uint64_t silent_from_ = 0;
  uint64_t silent_until_ = 0;
  int silent_ = 0;
  absl::Status status_;
  RewriteStats stats_;
};

}  // namespace flinkstate::javaobj

#endif  // FLINKSTATE_JAVAOBJ_STREAM_EDITOR_H_
