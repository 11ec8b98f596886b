// NodePrepareResources and NodeUnprepareResources for one claim (SPEC §11), journal first:
//   Prepare:   GET the claim (the one API call) -> ReadClaim -> PrepareClaim (the partition
//              saga, shared with Allocate) -> write the CDI and metadata files -> RecordClaimFiles
//              -> answer. A first Prepare stages its files, unseen, on another thread while the
//              saga commits, and only puts them in place once the claim is granted. A claim the
//              journal already holds is never fetched again: its repeated Prepare re-checks the
//              partition and the files and repairs them, journal first.
//   Unprepare: UnprepareClaim (deactivate) -> remove the files -> RecordClaimFilesRemoved.
// Each step reads where the claim stands from the state (sm::ClaimProgressOf), so a Prepare or
// Unprepare that a crash cut short is finished by the next call, whichever step it stopped at.
#pragma once

#include <string>
#include <vector>

#include "plugin/core/plugin_core.h"
#include "plugin/dra_mode/claim_file_stager.h"
#include "plugin/dra_mode/dra_settings.h"
#include "plugin/dra_mode/kube_api.h"

namespace gfp::plugin::dra_mode {

struct ClaimKey {
  std::string uid;
  std::string namespace_name;
  std::string name;
};

// One device of the answer (kubelet's dra/v1 Device).
struct PreparedDevice {
  std::string request;
  std::string pool;
  std::string device_name;
  std::vector<std::string> cdi_device_ids;
};

struct PrepareOutcome {
  std::vector<PreparedDevice> devices;
  std::string error;  // empty when prepared
};

class ClaimPreparer {
 public:
  ClaimPreparer(core::PluginCore& core, KubeApi& api, DraSettings settings);

  // A first Prepare's GET ends by `api_deadline` (what is left of kubelet's call budget).
  PrepareOutcome Prepare(const ClaimKey& claim, ApiDeadline api_deadline = std::nullopt);

  // An unknown or already unprepared uid is no error. Returns the error text, empty when done.
  std::string Unprepare(const std::string& uid,
                        events::ClaimUnprepareRequested::Reason reason =
                            events::ClaimUnprepareRequested::REASON_KUBELET,
                        const std::string& detail = {});

  const DraSettings& settings() const { return settings_; }

 private:
  // The command for a claim the journal does not hold yet: its one GET; or the error text.
  Result<sm::PrepareClaim> NewClaimCommand(const ClaimKey& claim, ApiDeadline api_deadline);
  // The command for a claim the journal holds: from the journal, with whether its files are
  // all in place; std::nullopt when it holds none.
  std::optional<sm::PrepareClaim> RepeatedClaimCommand(const ClaimKey& claim);
  // Runs the saga (once more after FM_ST_IN_USE, as Allocate does), then writes the files. A
  // repeated Prepare syncs FM first, so a partition FM lost is activated again.
  PrepareOutcome RunPrepare(sm::PrepareClaim command, bool repeated);
  // A first Prepare's files, handed to the stager thread; nothing when their facts cannot be
  // had (the Prepare then fails on the same error after the saga).
  StagedFiles StageAhead(const sm::PrepareClaim& command);
  Status WriteFilesAndRecord(const std::string& uid, StagedFiles* staged);
  Status RemoveFilesAndRecord(const std::string& uid);
  PrepareOutcome Answer(const std::string& uid);

  core::PluginCore& core_;
  KubeApi& api_;
  const DraSettings settings_;
  ClaimFileStager stager_;
};

}  // namespace gfp::plugin::dra_mode
