// After a power cut or an I/O error: "reboot" (drop the plugin, reset the fault VFS, optionally
// lose FM's partitions as a node power loss does), start the plugin again with the real code and
// check what the workload was told against what the journal holds.
#pragma once

#include <cstdint>
#include <string>

#include "common/fault_vfs.h"
#include "fault/powercut/workload.h"

namespace gfp::faulttest {

struct RecoveryOutcome {
  std::string failure;          // empty when every check held
  std::uint64_t decisions = 0;  // acknowledged decisions checked
  std::uint64_t lost = 0;       // of which not in the journal after the reboot
  bool second_cut_hit = false;  // the power also failed during the first recovery
};

// Checks, in order:
// 1. the plugin starts again (engine recovery from the journal as found on disk);
// 2. every acknowledged decision is in the journal: none stood on a seq beyond what was
//    recovered, and replaying the journal up to the last acknowledged seq gives exactly the state
//    the engine had acknowledged (every grant, refusal and release, with what it decided);
// 3. Journal::Verify passes (contiguous seqs, hash chain, snapshots);
// 4. replay from seq 1, with the invariants checked after every event, equals the live state;
// 5. after a reconcile with kubelet's pods, no intent is open and FM's active set equals the
//    journal's.
// With second_cut (the nth I/O point of the first restart), the power also fails during that
// recovery (in `mode`); the node then boots once more before the checks.
struct Reboot {
  bool fm_loses_partitions = false;
  std::uint64_t second_cut = 0;
  testing::fault::CutMode mode = testing::fault::CutMode::kDiscardUnsynced;
};
RecoveryOutcome RebootAndCheck(Workload& workload, const Reboot& reboot);

}  // namespace gfp::faulttest
