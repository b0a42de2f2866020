// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/javaobj/stream_editor.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "flinkstate/javaobj/stream_constants.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate::javaobj {

StreamEditor::StreamEditor(StreamCursor* cursor) : cursor_(cursor), input_(cursor->input()) {
  cursor_->set_observer(this);
}

StreamEditor::~StreamEditor() { cursor_->set_observer(nullptr); }

// --- pieces --------------------------------------------------------------------

void StreamEditor::CopyUpTo(uint64_t offset) {
  if (offset <= copied_until_) return;
  if (emitting_ > 0) {
    // A definition written again lies before the plan's copy position: its
    // bytes become inserted bytes (a plan copies the input in order).
    const uint64_t n = offset - copied_until_;
    if (!pieces_.empty() && pieces_.back().insert &&
        pieces_.back().offset + pieces_.back().size == inserts_.size() &&
        pieces_.back().size + n < 0x80000000u) {
      pieces_.back().size += static_cast<uint32_t>(n);
      inserts_.append(reinterpret_cast<const char*>(input_.data() + copied_until_), n);
    } else {
      Insert(input_.data() + copied_until_, n);
    }
    copied_until_ = offset;
    return;
  }
  uint64_t at = copied_until_;
  while (at < offset) {
    // Pieces hold 32-bit sizes; a longer copy is split.
    const uint64_t n = std::min<uint64_t>(offset - at, 0x80000000u);
    if (!pieces_.empty() && !pieces_.back().insert &&
        pieces_.back().offset + pieces_.back().size == at &&
        pieces_.back().size + n < 0x80000000u) {
      pieces_.back().size += static_cast<uint32_t>(n);
    } else {
      pieces_.push_back({at, static_cast<uint32_t>(n), false});
    }
    at += n;
  }
  copied_until_ = offset;
}

void StreamEditor::Insert(const uint8_t* bytes, size_t n) {
  pieces_.push_back({inserts_.size(), static_cast<uint32_t>(n), true});
  inserts_.append(reinterpret_cast<const char*>(bytes), n);
}

void StreamEditor::InsertReference(uint32_t handle) {
  uint8_t b[5];
  b[0] = kTcReference;
  serde::EncodeBigEndian32(static_cast<uint32_t>(kBaseWireHandle) + handle, b + 1);
  Insert(b, 5);
}

void StreamEditor::SetNumber(uint64_t h, uint32_t n) {
  while (h >= numbers_size_) {
    const uint64_t k = numbers_size_ & (kChunk - 1);
    if (k == 0) {
      numbers_.emplace_back(new uint32_t[kChunk]);
      std::fill_n(numbers_.back().get(), kChunk, kAbsent);
    }
    // Handles are numbered in order: fill up to `h` (absent) a chunk at a time.
    const uint64_t upto = std::min<uint64_t>(h + 1, numbers_size_ - k + kChunk);
    numbers_size_ = upto;
  }
  numbers_[h >> kChunkBits][h & (kChunk - 1)] = n;
}

uint64_t StreamEditor::planned_output_size() const {
  uint64_t n = 0;
  for (const Piece& p : pieces_) n += p.size;
  return n;
}

// --- marks, removals, patches --------------------------------------------------

void StreamEditor::TruncatePieces(size_t n, uint32_t last_size) {
  size_t first_insert = inserts_.size();
  for (size_t i = n; i < pieces_.size(); ++i) {
    if (pieces_[i].insert) first_insert = std::min<size_t>(first_insert, pieces_[i].offset);
  }
  pieces_.resize(n);
  if (n > 0) {
    Piece& last = pieces_.back();
    last.size = last_size;
    if (last.insert) first_insert = std::min<size_t>(first_insert, last.offset + last_size);
  }
  inserts_.resize(std::min(inserts_.size(), first_insert));
  // Patches are added in piece order: those past `n` are at the back.
  while (!patches_.empty() && patches_.back() >= n) patches_.pop_back();
}

StreamEditor::Mark StreamEditor::MarkHere() {
  Mark m;
  m.offset = cursor_->position();
  CopyUpTo(m.offset);  // the plan reaches the mark exactly
  m.pieces = pieces_.size();
  m.last_piece_size = pieces_.empty() ? 0 : pieces_.back().size;
  m.copied_until = copied_until_;
  m.next_handle = next_handle_;
  m.epoch = epoch_;
  undo_.clear();
  m.undo = 0;
  marking_ = true;
  mark_stats_ = stats_;
  return m;
}

absl::Status StreamEditor::RemoveSince(const Mark& mark) {
  if (!marking_ || mark.epoch != epoch_ || mark.offset < last_removal_end_ ||
      mark.pieces > pieces_.size()) {
    return absl::FailedPreconditionError(
        "javaobj: stream editor: a removal must follow its mark within one epoch");
  }
  for (size_t i = mark.undo; i < undo_.size(); ++i) SetNumber(undo_[i], kAbsent);
  undo_.resize(mark.undo);
  next_handle_ = mark.next_handle;
  // Drop what was planned since the mark (renumbered references and written
  // definitions inside the removed part).
  TruncatePieces(mark.pieces, mark.last_piece_size);
  stats_ = mark_stats_;
  ++stats_.removed_items;
  copied_until_ = cursor_->position();
  last_removal_end_ = copied_until_;
  marking_ = false;
  return absl::OkStatus();
}

size_t StreamEditor::AddPatch(serde::SourceRange range) {
  CopyUpTo(range.offset);
  Insert(input_.data() + range.offset, range.size);
  copied_until_ = range.end();
  patches_.push_back(pieces_.size() - 1);
  return pieces_.size() - 1;
}

void StreamEditor::SetPatch(size_t index, const std::string& bytes) {
  Piece& p = pieces_[index];
  if (!p.insert || p.size != bytes.size()) return;
  inserts_.replace(p.offset, p.size, bytes);
  ++stats_.patched_counts;
}

absl::StatusOr<serde::EditPlan> StreamEditor::Finish() {
  FLINKSTATE_RETURN_IF_ERROR(status_);
  CopyUpTo(input_.size());
  serde::EditPlan plan;
  for (const Piece& p : pieces_) {
    if (p.insert) {
      plan.AddInsert(inserts_.substr(p.offset, p.size));
    } else {
      plan.AddCopy({p.offset, p.size});
    }
  }
  return plan;
}

// --- events ----------------------------------------------------------------------

void StreamEditor::OnReset() {
  numbers_.clear();
  numbers_size_ = 0;
  next_handle_ = 0;
  ++epoch_;
  marking_ = false;
}

bool StreamEditor::Silenced(uint64_t offset) const {
  return silent_ > 0 || (offset >= silent_from_ && offset < silent_until_);
}

void StreamEditor::OnHandle(uint64_t h, uint64_t offset) {
  if (Silenced(offset)) return;
  if (emitting_ > 0 && NewNumber(h) != kAbsent) {
    // Already in the output (written in full earlier): a reference here.
    const uint8_t tag = input_[offset];
    uint64_t end = 0;
    if (tag == kTcString) {
      end = offset + 3 + serde::DecodeBigEndian16(input_.data() + offset + 1);
    } else if (tag == kTcLongString) {
      end = offset + 9 + serde::DecodeBigEndian64(input_.data() + offset + 1);
    } else if (tag == kTcClassDesc || tag == kTcProxyClassDesc) {
      const DescId d = cursor_->DescAt(offset);
      if (d != kNoDesc) end = cursor_->desc_end(d);
    }
    if (end != 0) {
      CopyUpTo(offset);
      InsertReference(NewNumber(h));
      copied_until_ = end;
      // The events of its content (a descriptor's field types, super class)
      // are not ours; those of the value around it (an object whose handle
      // follows its descriptor) are.
      silent_from_ = offset;
      silent_until_ = end;
      ++stats_.demoted_definitions;
      return;
    }
    demote_ = h;  // `EmitNext` replaces the value once it is read
    return;
  }
  SetNumber(h, next_handle_++);
  if (emitting_ > 0) emitted_.push_back(h);
  if (marking_) undo_.push_back(h);
}

void StreamEditor::OnReference(uint64_t h, uint64_t offset) {
  if (Silenced(offset)) return;
  const uint32_t n = NewNumber(h);
  if (n == kAbsent) {
    Rematerialize(h, offset);
    return;
  }
  if (n != h) {
    CopyUpTo(offset + 1);
    uint8_t b[4];
    serde::EncodeBigEndian32(static_cast<uint32_t>(kBaseWireHandle) + n, b);
    Insert(b, 4);
    copied_until_ = offset + 5;
    if (emitting_ == 0) ++stats_.renumbered_references;
  }
}

// --- writing a removed definition again --------------------------------------------

void StreamEditor::Rematerialize(uint64_t h, uint64_t ref_offset) {
  if (!status_.ok()) return;
  CopyUpTo(ref_offset);
  const uint64_t def = cursor_->handle_offset(h);
  const uint64_t saved_silent_from = silent_from_;
  const uint64_t saved_silent_until = silent_until_;
  copied_until_ = def;
  silent_from_ = silent_until_ = 0;
  ++emitting_;
  cursor_->set_observer(this, /*observe_replays=*/true);
  CursorValue r;
  r.reference = true;
  r.def = def;
  r.handle = h;
  r.tag = input_[def];
  uint64_t end = 0;
  const bool ok = cursor_->AtDefinition(r, [&](CursorValue* d) {
    if (!EmitBody(d)) return false;
    end = d->end;
    return true;
  });
  if (!ok) {
    status_ = cursor_->ok() ? absl::InternalError("javaobj: stream editor: a definition could "
                                                  "not be written again")
                            : cursor_->status();
  } else {
    CopyUpTo(end);
  }
  --emitting_;
  cursor_->set_observer(this, /*observe_replays=*/emitting_ > 0);
  silent_from_ = saved_silent_from;
  silent_until_ = saved_silent_until;
  copied_until_ = ref_offset + 5;
  ++stats_.rematerialized;
}

bool StreamEditor::EmitNext() {
  const size_t pieces = pieces_.size();
  const uint32_t last_size = pieces_.empty() ? 0 : pieces_.back().size;
  const uint64_t copied = copied_until_;
  const size_t emitted = emitted_.size();
  const size_t undo = undo_.size();
  const uint32_t next = next_handle_;
  const RewriteStats stats = stats_;
  CursorValue v;
  if (!cursor_->ReadValue(&v)) return false;
  if (demote_ != kNoHandle && v.handle == demote_ && !v.reference) {
    // A definition already written (the value's head may have numbered or
    // demoted its class descriptor meanwhile: undone, the whole value
    // becomes one reference).
    const uint32_t n = NewNumber(demote_);
    demote_ = kNoHandle;
    for (size_t i = emitted; i < emitted_.size(); ++i) SetNumber(emitted_[i], kAbsent);
    emitted_.resize(emitted);
    if (undo_.size() > undo) undo_.resize(undo);
    next_handle_ = next;
    TruncatePieces(pieces, last_size);
    stats_ = stats;
    copied_until_ = copied;
    CopyUpTo(v.def);
    InsertReference(n);
    ++silent_;
    const bool finished = cursor_->FinishValue(&v);
    --silent_;
    if (!finished) return false;
    copied_until_ = v.end;
    ++stats_.demoted_definitions;
    return true;
  }
  return EmitBody(&v);
}

bool StreamEditor::EmitBody(CursorValue* v) {
  if (v->end != 0) return true;  // leaves and references: events did the work
  if (v->tag == kTcObject) {
    struct Visit {
      StreamEditor& e;
      void Class(DescId, uint64_t) {}
      bool Field(DescId, uint32_t) { return e.EmitNext(); }
      bool Annotation(DescId) {
        for (;;) {
          bool at_end = false;
          if (!e.cursor_->NextAnnotationItem(&at_end)) return false;
          if (at_end) return true;
          if (!e.EmitNext()) return false;
        }
      }
    } visit{*this};
    return cursor_->ReadObjectData(v, visit);
  }
  return cursor_->ReadElements(v, [this](uint64_t) { return EmitNext(); });
}

}  // namespace flinkstate::javaobj
