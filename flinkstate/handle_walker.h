// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: handle_walker.h
// -----------------------------------------------------------------------------
// Visits every state handle of a `StateFile`, nested handles included, in file
// order. Inspection, stripping and verification are written as visitors.
//
//   ```c++ (const StateFile& file)
//   struct CountTags : HandleVisitor {
//     void OnStream(const HandleContext&, const StreamStateHandle& h) override {
//       ++tags[h.tag];
//     }
//     std::map<int, int> tags;
//   } v;
//   WalkStateFile(file, &v);
//   ```
//
// Thread safety: `WalkStateFile` only reads the model and calls the visitor
// on the calling thread; several walks of one model may run concurrently, each
// with its own visitor.

#ifndef FLINKSTATE_FLINKSTATE_HANDLE_WALKER_H_
#define FLINKSTATE_FLINKSTATE_HANDLE_WALKER_H_

#include <string>

#include "flinkstate/checkpoint_metadata.h"

namespace flinkstate {

// Where a handle sits. `op` is null for operator-snapshot files; `subtask` is
// null for coordinator state.
struct HandleContext {
  const OperatorState* op = nullptr;
  int operator_index = -1;
  const OperatorSubtaskState* subtask = nullptr;
  // "managedOperatorState", "rawOperatorState", "managedKeyedState",
  // "rawKeyedState", "inputChannelState", "resultSubpartitionState",
  // "legacyOperatorState", "coordinatorState".
  const char* slot = "";
  // True for keyed handles nested in another keyed handle (the materialized
  // and non-materialized parts of a changelog handle).
  bool nested = false;
};

// Where `c` sits as an item path, as `verify`'s findings and errors name it:
// "operators[INDEX].subtasks[N].SLOT", "operators[INDEX].SLOT" for
// coordinator state, "snapshot.subtasks[N].SLOT" in an operator snapshot.
std::string HandleItemPath(const HandleContext& c);

class HandleVisitor {
 public:
  virtual ~HandleVisitor() = default;
  virtual void OnOperatorHandle(const HandleContext&, const OperatorStateHandle&) {}
  virtual void OnKeyedHandle(const HandleContext&, const KeyedStateHandle&) {}
  virtual void OnChannelHandle(const HandleContext&, const ChannelStateHandle&) {}
  // Every stream handle, including delegates nested in the handles above.
  virtual void OnStream(const HandleContext&, const StreamStateHandle&) {}
};

void WalkStateFile(const StateFile& file, HandleVisitor* visitor);

// The handles of one operator, as `WalkStateFile` visits them; `index` is its
// position in the file (`HandleContext::operator_index`). For streaming reads
// (`ReadCheckpointMetadataStreaming`).
void WalkOperator(const OperatorState& op, int index, HandleVisitor* visitor);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_HANDLE_WALKER_H_
