// DraCrashRun's checks from outside serve: the journal read-only, FM's state and call log, the
// files, the API server. See dra_crash_run.h for the rules.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "cli/journal_command.h"
#include "common/strings.h"
#include "statemachine/claims.h"
#include "tests/common/claim_staging.h"
#include "tests/crash/dra/dra_crash_run.h"

namespace gfp::crashtest {
namespace {

using namespace std::chrono_literals;

// "gpu-0000-1b-00-0" back to "0000:1b:00.0", written apart from the product's naming.
std::string BdfOfDeviceName(const std::string& name) {
  std::string bdf = name.substr(4);
  if (bdf.size() != 12) return name;
  bdf[4] = ':';
  bdf[7] = ':';
  bdf[10] = '.';
  return bdf;
}

}  // namespace

// Every claim kubelet holds that the plugin answered prepared: its allocation in the journal
// with the answered GPUs, its partition active in FM and never deactivated since, its CDI file.
void DraCrashRun::CheckHeld() {
  auto state = world_->JournalState();
  ASSERT_TRUE(state.ok()) << state.status().message();
  auto fm = world_->FabricActive();
  ASSERT_TRUE(fm.ok()) << fm.status().message();
  auto calls = world_->fabric().CallLog();
  ASSERT_TRUE(calls.ok()) << calls.status().message();
  for (const auto& [uid, held] : held_) {
    if (!held.answered) continue;
    const std::string& name = held.ref.name;
    const sm::Allocation* a = sm::ClaimAllocation(*state, uid);
    ASSERT_NE(a, nullptr) << "the journal no longer holds prepared claim " << name << SeeLog();
    std::multiset<std::string> answered, journaled(a->devices.begin(), a->devices.end());
    for (const auto& d : held.devices) answered.insert(BdfOfDeviceName(d.device_name));
    EXPECT_EQ(answered, journaled) << name << ": the journal holds other GPUs than answered";
    ASSERT_TRUE(a->partition.has_value()) << name << " has no partition in the journal";
    const std::uint32_t pid = *a->partition;
    EXPECT_TRUE(fm->count(pid)) << name << "'s partition " << pid << " is inactive in FM"
                                << SeeLog();
    for (std::size_t i = held.fm_calls_after; i < calls->size(); ++i) {
      const auto& call = (*calls)[i];
      if (call.function != kFmDeactivate || call.code != 0) continue;
      EXPECT_NE(call.args, std::to_string(pid))
          << name << "'s partition was deactivated while kubelet held it prepared" << SeeLog();
    }
    EXPECT_TRUE(std::filesystem::is_regular_file(CdiFile(uid)))
        << name << " was answered prepared but has no CDI file " << CdiFile(uid) << SeeLog();
  }
}

// Nothing pending; the journal's claims exactly kubelet's; every active partition owned by a
// held claim and FM's active set the journal's; one slice.
Status DraCrashRun::Settled() {
  GFP_ASSIGN_OR_RETURN(sm::State state, world_->JournalState());
  if (!state.intents.empty()) return Unavailable("an FM intent is pending");
  if (!state.unpreparing_claims.empty()) {
    return Unavailable("claim " + sm::ClaimText(state.unpreparing_claims.begin()->second.claim) +
                       " is still being unprepared");
  }
  std::set<std::string> journal_claims, owners;
  for (const auto& [id, a] : state.allocations) {
    if (!a.live() || !a.claim) continue;
    const auto progress = sm::ClaimProgressOf(state, a.claim->uid);
    if (progress != sm::ClaimProgress::kPrepared) {
      return Unavailable("claim " + sm::ClaimText(*a.claim) + " is " +
                         sm::ClaimProgressName(progress));
    }
    journal_claims.insert(a.claim->uid);
    owners.insert(id);
  }
  std::set<std::string> kubelet_claims;
  for (const auto& [uid, held] : held_) kubelet_claims.insert(uid);
  if (journal_claims != kubelet_claims) {
    return Unavailable("the journal holds claims [" + Join(journal_claims) + "], kubelet [" +
                       Join(kubelet_claims) + "]");
  }
  for (const auto& [pid, active] : state.active) {
    if (!owners.count(active.owner)) {
      return Unavailable("partition " + std::to_string(pid) + " is active without a held claim");
    }
  }
  GFP_RETURN_IF_ERROR(world_->FabricMatchesJournal());
  const std::size_t slices = world_->api().Slices().size();
  if (slices != 1) return Unavailable(std::to_string(slices) + " ResourceSlices, not 1");
  return Status::Ok();
}

// kubelet retries what is not done (Prepare of claims not answered, Unprepare of claims not
// unprepared) until everything settled, 20 s at most.
void DraCrashRun::Settle() {
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  Status settled = Unavailable("not checked");
  while (std::chrono::steady_clock::now() < deadline) {
    for (auto& [uid, held] : held_) {
      if (!held.answered) PrepareHeld(uid, "retried");
    }
    std::vector<std::string> unpreparing;
    for (const auto& [uid, held] : unpreparing_) unpreparing.push_back(uid);
    for (const auto& uid : unpreparing) UnprepareClaim(uid, "retried");
    settled = unpreparing_.empty() ? Settled() : Unavailable("kubelet still unprepares claims");
    if (settled.ok()) break;
    std::this_thread::sleep_for(150ms);
  }
  ASSERT_TRUE(settled.ok()) << "never settled: " << settled.message() << SeeLog();
  ASSERT_NO_FATAL_FAILURE(CheckHeld());
  ASSERT_NO_FATAL_FAILURE(CheckFiles());
  Trace("  settled: " + std::to_string(held_.size()) + " claims prepared");
}

// Once settled, no CDI file names a claim kubelet does not hold (each names its claim's uid), no
// metadata folder is of a claim kubelet does not hold, and nothing is left staged (a Prepare
// killed while its files were staged leaves them in .claim-staging; the next start clears it).
void DraCrashRun::CheckFiles() {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(world_->setup().cdi_dir(), ec)) {
    const std::string file = entry.path().filename().string();
    if (file.starts_with(".")) continue;  // the atomic writes' staging folder
    bool ours = false;
    for (const auto& [uid, held] : held_) ours = ours || file.find(uid) != std::string::npos;
    EXPECT_TRUE(ours) << "CDI file " << file << " belongs to no prepared claim" << SeeLog();
  }
  const auto plugin_dir = world_->setup().kubelet_plugins_dir() / world_->setup().dra_driver;
  for (const auto& entry :
       std::filesystem::directory_iterator(plugin_dir / "dra-device-metadata", ec)) {
    const std::string folder = entry.path().filename().string();
    bool ours = false;
    for (const auto& [uid, held] : held_) ours = ours || folder == uid;
    EXPECT_TRUE(ours) << "metadata folder " << folder << " belongs to no prepared claim"
                      << SeeLog();
  }
  const auto staging = plugin_dir / ".claim-staging";
  EXPECT_TRUE(gfp::testing::LeftStaged(staging).empty())
      << "files of claims are left staged in " << staging << ": "
      << gfp::Join(gfp::testing::LeftStaged(staging), ", ") << SeeLog();
}

// Every claim unprepared: nothing active in FM, no files, the journal verifies, SIGTERM ends
// serve cleanly.
void DraCrashRun::Drain() {
  Trace("drain");
  std::vector<std::string> uids;
  for (const auto& [uid, held] : held_) uids.push_back(uid);
  for (const auto& uid : uids) {
    StartUnprepare(uid);
    UnprepareClaim(uid, "");
  }
  ASSERT_NO_FATAL_FAILURE(Settle());
  auto fm = world_->FabricActive();
  ASSERT_TRUE(fm.ok());
  EXPECT_TRUE(fm->empty()) << fm->size() << " partitions still active" << SeeLog();
  cli::JournalQuery query;
  query.path = world_->journal_path().string();
  query.format = "json";
  EXPECT_EQ(cli::VerifyJournal(query), 0);
  auto code = world_->StopPlugin();
  ASSERT_TRUE(code.ok()) << code.status().message();
  EXPECT_EQ(*code, 0) << SeeLog();
}

}  // namespace gfp::crashtest
