#include "plugin/dra_mode/claim_preparer.h"

#include <spdlog/spdlog.h>

#include "adapters/host/vfio_nodes.h"
#include "common/text_escape.h"
#include "plugin/core/journal_failure.h"
#include "plugin/dra/claim_file_store.h"
#include "plugin/dra/claim_json.h"
#include "plugin/dra/resource_slice.h"
#include "plugin/dra_mode/claim_facts.h"
#include "statemachine/claims.h"

namespace gfp::plugin::dra_mode {
namespace {

// The largest claim whose folders and files are made ahead (2 descriptors per GPU are held).
constexpr std::size_t kReservedGpus = 8;

std::string KeyText(const ClaimKey& claim) {
  return EscapeAndTruncate(claim.namespace_name + "/" + claim.name, 300) + " (uid " +
         EscapeAndTruncate(claim.uid, 80) + ")";
}

events::ClaimRef RefOf(const std::string& uid, const std::string& ns, const std::string& name) {
  events::ClaimRef ref;
  ref.set_uid(uid);
  ref.set_namespace_(ns);
  ref.set_name(name);
  return ref;
}

std::vector<events::ClaimDevice> DevicesOf(const std::vector<std::string>& requests,
                                           const std::vector<sm::Bdf>& bdfs) {
  std::vector<events::ClaimDevice> out;
  for (std::size_t i = 0; i < bdfs.size() && i < requests.size(); ++i) {
    events::ClaimDevice d;
    d.set_request(requests[i]);
    d.set_bdf(bdfs[i]);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

ClaimPreparer::ClaimPreparer(core::PluginCore& core, KubeApi& api, DraSettings settings)
    : core_(core),
      api_(api),
      settings_(std::move(settings)),
      stager_(std::make_unique<dra::InodeReserve>(
          settings_.dirs, dra::ReserveSize::ForClaimOf(std::min(
                              DeviceNamesOfNode(core_.inventory()).size(), kReservedGpus)))) {}

PrepareOutcome ClaimPreparer::Prepare(const ClaimKey& claim, ApiDeadline api_deadline) {
  std::optional<sm::PrepareClaim> command = RepeatedClaimCommand(claim);
  const bool repeated = command.has_value();
  if (!command) {
    // The GET happens outside the operation lock: a slow API server must not stall the others.
    auto fetched = NewClaimCommand(claim, api_deadline);
    if (!fetched.ok()) return {{}, fetched.status().message()};
    command = std::move(fetched).value();
  }
  return RunPrepare(std::move(*command), repeated);
}

Result<sm::PrepareClaim> ClaimPreparer::NewClaimCommand(const ClaimKey& claim,
                                                        ApiDeadline api_deadline) {
  auto answer = api_.GetClaim(claim.namespace_name, claim.name, api_deadline);
  if (!answer.ok()) {
    return Unavailable("cannot read claim " + KeyText(claim) + ": " + answer.status().message());
  }
  if (!answer->has_value()) {
    return NotFound("claim " + KeyText(claim) + " is not in the API server");
  }
  const dra::ClaimReading reading = dra::ReadClaim(
      **answer,
      {claim.uid, settings_.driver, settings_.node, DeviceNamesOfNode(core_.inventory())});
  if (reading.problem != dra::ClaimProblem::kNone) return FailedPrecondition(reading.reason);
  if (reading.namespace_name != claim.namespace_name || reading.name != claim.name) {
    return FailedPrecondition(
        "claim " + KeyText(claim) + ": the API server answered an object named \"" +
        EscapeAndTruncate(reading.namespace_name + "/" + reading.name, 300) + "\"; refused");
  }
  sm::PrepareClaim command;
  command.claim = RefOf(claim.uid, reading.namespace_name, reading.name);
  for (const auto& device : reading.devices) {
    events::ClaimDevice d;
    d.set_request(device.request);
    d.set_bdf(device.bdf);
    command.devices.push_back(std::move(d));
  }
  command.reserved_for = reading.reserved_for;
  command.pod_claim_name = reading.pod_claim_name;
  return command;
}

std::optional<sm::PrepareClaim> ClaimPreparer::RepeatedClaimCommand(const ClaimKey& claim) {
  std::optional<sm::PrepareClaim> command;
  std::optional<std::pair<sm::Claim, std::vector<sm::Bdf>>> held;
  core_.engine().Read([&](const sm::State& s) {
    if (const sm::Allocation* a = sm::ClaimAllocation(s, claim.uid); a && a->claim) {
      held.emplace(*a->claim, a->devices);
    }
    return 0;
  });
  if (!held) return std::nullopt;
  const auto& [c, devices] = *held;
  command.emplace();
  command->claim = RefOf(c.uid, c.namespace_name, c.name);
  command->devices = DevicesOf(c.requests, devices);
  command->reserved_for = c.reserved_for;
  command->pod_claim_name = c.pod_claim_name;
  auto prepared = PreparedClaimOf(c, devices, settings_, core_.inventory(),
                                  adapters::host::IommufdAvailable(settings_.dev_root));
  command->files_present =
      prepared.ok() && dra::ClaimFilesPresent(dra::ClaimFiles(*prepared, settings_.dirs));
  return command;
}

StagedFiles ClaimPreparer::StageAhead(const sm::PrepareClaim& command) {
  sm::Claim claim{command.claim.uid(),   command.claim.namespace_(), command.claim.name(), {}, {},
                  command.pod_claim_name};
  std::vector<sm::Bdf> devices;
  for (const auto& device : command.devices) {
    claim.requests.push_back(device.request());
    devices.push_back(device.bdf());
  }
  auto iommufd = adapters::host::DetectIommufd(settings_.dev_root);
  if (!iommufd.ok()) return {};
  auto prepared = PreparedClaimOf(claim, devices, settings_, core_.inventory(), *iommufd);
  if (!prepared.ok()) return {};
  return stager_.Stage(settings_.dirs, std::move(prepared).value());
}

PrepareOutcome ClaimPreparer::RunPrepare(sm::PrepareClaim command, bool repeated) {
  const std::string uid = command.claim.uid();
  // Waited for (and removed if never published) however the Prepare ends.
  StagedFiles staged = repeated ? StagedFiles() : StageAhead(command);
  const std::string text = KeyText({uid, command.claim.namespace_(), command.claim.name()});
  auto ran = core_.Exclusive(
      [&](core::SagaRunner& sagas, core::FabricSync& fabric) -> Result<core::SagaResult> {
        // A repeated Prepare re-checks what the claim stands on: a partition FM lost shows up
        // as drift here, and the saga below activates it again (journaled first).
        if (repeated && core_.fabric_managed()) fabric.Sync(false, {});
        command.now = core_.Now();
        GFP_ASSIGN_OR_RETURN(core::SagaResult saga, sagas.Run(command));
        if (!saga.refusal.empty() && saga.fm_in_use) {
          spdlog::warn("{}; refreshing Fabric Manager's state and retrying once", saga.refusal);
          fabric.Sync(false, {});
          command.now = core_.Now();
          GFP_ASSIGN_OR_RETURN(saga, sagas.Run(command));
        }
        if (saga.refusal.empty()) GFP_RETURN_IF_ERROR(WriteFilesAndRecord(uid, &staged));
        return saga;
      });
  if (!ran.ok()) return {{}, "claim " + text + ": " + core::JournalFailure(ran.status()).message()};
  if (!ran->refusal.empty()) return {{}, ran->refusal};
  return Answer(uid);
}

// Called under the operation lock.
Status ClaimPreparer::WriteFilesAndRecord(const std::string& uid, StagedFiles* staged) {
  std::optional<std::pair<sm::Claim, std::vector<sm::Bdf>>> held;
  core_.engine().Read([&](const sm::State& s) {
    if (sm::ClaimProgressOf(s, uid) != sm::ClaimProgress::kWriteFiles) return 0;
    const sm::Allocation* a = sm::ClaimAllocation(s, uid);
    held.emplace(*a->claim, a->devices);
    return 0;
  });
  if (!held) return Status::Ok();  // prepared already, or the saga still waits on FM
  GFP_ASSIGN_OR_RETURN(bool iommufd, adapters::host::DetectIommufd(settings_.dev_root));
  GFP_ASSIGN_OR_RETURN(
      dra::PreparedClaim prepared,
      PreparedClaimOf(held->first, held->second, settings_, core_.inventory(), iommufd));
  // Staged files are used only when they are exactly the claim's as granted; whatever Publish
  // could not do (something in the way) is done, or named, by writing the files in place.
  std::unique_ptr<dra::StagedClaimFiles> ahead = staged->Take();
  Status placed = FailedPrecondition("the files were not staged as the claim was granted");
  if (ahead && ahead->claim() == prepared) placed = ahead->Publish();
  if (!placed.ok()) {
    if (ahead) spdlog::debug("claim {}: writing its files in place: {}", uid, placed.message());
    GFP_RETURN_IF_ERROR(
        dra::WriteClaimFiles(settings_.dirs, dra::ClaimFiles(prepared, settings_.dirs)));
  }
  // The files are not fsynced, so neither is the event that records them: a power cut loses
  // both or neither matters (docs/recovery.md, row 19), and the grant before it stays durable.
  GFP_RETURN_IF_ERROR(
      core_.engine()
          .Execute(sm::RecordClaimFiles{core_.Now(), uid}, store::Durability::kSurvivesProcessCrash)
          .status());
  core_.NoteChange();
  return Status::Ok();
}

PrepareOutcome ClaimPreparer::Answer(const std::string& uid) {
  PrepareOutcome out;
  std::optional<std::pair<sm::Claim, std::vector<sm::Bdf>>> held;
  sm::ClaimProgress progress = sm::ClaimProgress::kUnknown;
  core_.engine().Read([&](const sm::State& s) {
    progress = sm::ClaimProgressOf(s, uid);
    if (const sm::Allocation* a = sm::ClaimAllocation(s, uid); a && a->claim) {
      held.emplace(*a->claim, a->devices);
    }
    return 0;
  });
  if (progress != sm::ClaimProgress::kPrepared || !held) {
    out.error = "claim uid " + EscapeAndTruncate(uid, 80) + " is not prepared yet (" +
                sm::ClaimProgressName(progress) + "); try again";
    return out;
  }
  dra::PreparedClaim claim{settings_.driver,
                           settings_.node,
                           uid,
                           held->first.namespace_name,
                           held->first.name,
                           held->first.pod_claim_name,
                           {}};
  for (std::size_t i = 0; i < held->second.size(); ++i) {
    claim.gpus.push_back({held->first.requests[i], held->second[i], {}});
  }
  for (std::size_t i = 0; i < claim.gpus.size(); ++i) {
    out.devices.push_back({claim.gpus[i].request, settings_.node,
                           dra::DeviceName(claim.gpus[i].bdf), dra::CdiDeviceIds(claim, i)});
  }
  return out;
}

std::string ClaimPreparer::Unprepare(const std::string& uid,
                                     events::ClaimUnprepareRequested::Reason reason,
                                     const std::string& detail) {
  auto done = core_.Exclusive([&](core::SagaRunner& sagas, core::FabricSync&) -> Status {
    const auto progress =
        core_.engine().Read([&](const sm::State& s) { return sm::ClaimProgressOf(s, uid); });
    if (progress == sm::ClaimProgress::kUnknown) return Status::Ok();
    if (progress != sm::ClaimProgress::kRemoveFiles) {
      GFP_ASSIGN_OR_RETURN(core::SagaResult saga,
                           sagas.Run(sm::UnprepareClaim{core_.Now(), uid, reason, detail}));
      if (!saga.refusal.empty()) return FailedPrecondition(saga.refusal);
    }
    return RemoveFilesAndRecord(uid);
  });
  if (!done.ok()) return core::JournalFailure(done).message();
  return {};
}

// Called under the operation lock.
Status ClaimPreparer::RemoveFilesAndRecord(const std::string& uid) {
  std::optional<sm::UnpreparingClaim> unpreparing;
  sm::ClaimProgress progress = sm::ClaimProgress::kUnknown;
  core_.engine().Read([&](const sm::State& s) {
    progress = sm::ClaimProgressOf(s, uid);
    if (auto it = s.unpreparing_claims.find(uid); it != s.unpreparing_claims.end()) {
      unpreparing = it->second;
    }
    return 0;
  });
  if (progress == sm::ClaimProgress::kUnknown) return Status::Ok();
  if (progress != sm::ClaimProgress::kRemoveFiles || !unpreparing) {
    return FailedPrecondition("claim " +
                              sm::ClaimText(unpreparing ? unpreparing->claim : sm::Claim{}) +
                              " is still " + sm::ClaimProgressName(progress) + "; try again");
  }
  dra::PreparedClaim claim{settings_.driver,
                           settings_.node,
                           uid,
                           unpreparing->claim.namespace_name,
                           unpreparing->claim.name,
                           unpreparing->claim.pod_claim_name,
                           {}};
  for (std::size_t i = 0; i < unpreparing->devices.size(); ++i) {
    const std::string request =
        i < unpreparing->claim.requests.size() ? unpreparing->claim.requests[i] : "";
    claim.gpus.push_back({request, unpreparing->devices[i], {}});
  }
  GFP_RETURN_IF_ERROR(dra::RemoveClaimFilesOf(settings_.dirs, claim));
  GFP_RETURN_IF_ERROR(
      core_.engine().Execute(sm::RecordClaimFilesRemoved{core_.Now(), uid}).status());
  core_.NoteChange();
  return Status::Ok();
}

}  // namespace gfp::plugin::dra_mode
