// One broken-state test per check of CheckInvariants (invariants.cc). Each fixture is a small valid
// State built by hand (not through Decide or Apply, so the states do not depend on the code the
// checks watch); each test breaks it in exactly one way and expects CheckInvariants to fail naming
// what is broken. "Exactly one way" matters: a state that a second check also rejects would keep
// its test green after its own check is removed. Where one breakage needs more than one field
// changed, the comment says why.
#include "statemachine/invariants.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gfp::sm {
namespace {

using ::testing::HasSubstr;

// Module i+1 is GPU kGpus[i]; its VFs are .4 and .5 of the same address.
const std::vector<Bdf> kGpus = {"0000:0a:00.0", "0000:0b:00.0", "0000:0c:00.0",
                                "0000:0d:00.0", "0000:0e:00.0", "0000:0f:00.0"};
Bdf Gpu(int module) { return kGpus.at(static_cast<std::size_t>(module - 1)); }
Bdf Vf(int module, int fn = 4) {
  const Bdf gpu = Gpu(module);
  return gpu.substr(0, gpu.size() - 1) + std::to_string(fn);
}

void MapModules(State& s, int count) {
  std::map<Bdf, ModuleId> module_of_bdf;
  std::map<ModuleId, Bdf> bdf_of_module;
  for (int m = 1; m <= count; ++m) {
    module_of_bdf[Gpu(m)] = static_cast<ModuleId>(m);
    bdf_of_module[static_cast<ModuleId>(m)] = Gpu(m);
  }
  s.module_of_bdf = module_of_bdf;
  s.bdf_of_module = bdf_of_module;
}

void SetPartitions(State& s, const std::map<PartitionId, std::vector<ModuleId>>& table) {
  std::map<PartitionId, PartitionState> partitions;
  for (const auto& [id, modules] : table) {
    partitions[id] = PartitionState{id, modules, 18, 18, false};
  }
  s.partitions = partitions;
}

DeviceState Device(const Bdf& bdf, DeviceKind kind, const Bdf& parent) {
  DeviceState d;
  d.bdf = bdf;
  d.resource = kind == DeviceKind::kVgpuVf ? "nvidia.com/NVIDIA_H100XM-80C" : "nvidia.com/H100";
  d.kind = kind;
  d.parent_bdf = parent;
  return d;
}

Allocation Alloc(const AllocationId& id, AllocationStatus status, std::vector<Bdf> devices,
                 std::optional<PartitionId> partition) {
  Allocation a;
  a.id = id;
  a.status = status;
  a.devices = std::move(devices);
  a.partition = partition;
  a.requested_at = 100;
  a.granted_at = status == AllocationStatus::kRequested ? 0 : 200;
  return a;
}

PendingIntent Intent(IntentKind kind, const AllocationId& id, std::uint64_t seq) {
  PendingIntent intent;
  intent.kind = kind;
  intent.allocation_id = id;
  intent.requested_seq = seq;
  return intent;
}

// Fails unless CheckInvariants rejects `broken` with a message containing `names`.
void ExpectCaught(const State& broken, const std::string& names) {
  const Status status = CheckInvariants(broken);
  ASSERT_FALSE(status.ok()) << "CheckInvariants passed a state it should reject with: " << names;
  EXPECT_THAT(status.message(), HasSubstr(names));
}

// Whole GPUs A-D (modules 1-4); partitions 1={A,B}, 2={C,D}, 3={B,C}, 4={D}. alloc-1 is bound
// to active partition 1; alloc-2 is requested, its activation of partition 2 pending.
class WholeGpuInvariantsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    s.fm_enabled = true;
    s.last_seq = 10;
    std::map<Bdf, DeviceState> devices;
    for (int m = 1; m <= 4; ++m) devices[Gpu(m)] = Device(Gpu(m), DeviceKind::kPciPassthrough, "");
    s.devices = devices;
    MapModules(s, 4);
    SetPartitions(s, {{1, {1, 2}}, {2, {3, 4}}, {3, {2, 3}}, {4, {4}}});
    s.allocations["alloc-1"] =
        Alloc("alloc-1", AllocationStatus::kBound, {Gpu(2), Gpu(1)}, PartitionId{1});
    s.allocations["alloc-2"] =
        Alloc("alloc-2", AllocationStatus::kRequested, {Gpu(3), Gpu(4)}, std::nullopt);
    s.next_allocation_number = 3;
    s.active[1] = ActivePartition{"alloc-1", false, 200, {}};
    s.intents[2] = Intent(IntentKind::kActivate, "alloc-2", 9);
    const Status valid = CheckInvariants(s);
    ASSERT_TRUE(valid.ok()) << "the valid state fails: " << valid.message();
  }
  State s;
};

TEST_F(WholeGpuInvariantsTest, NoGpuInTwoActivePartitions) {
  s.active[3] = ActivePartition{"", /*adopted=*/true, 300, {}};  // B is also in partition 1
  ExpectCaught(s, "GPU 0000:0b:00.0 is in active partition 1 and partition 3");
}

TEST_F(WholeGpuInvariantsTest, ActivePartitionNotBothAdoptedAndOwned) {
  s.active[1].adopted = true;
  ExpectCaught(s, "partition 1 is both adopted and owned by alloc-1");
}

TEST_F(WholeGpuInvariantsTest, ActivePartitionOwnedByALiveAllocation) {
  s.active[1].owner = "alloc-9";  // kept nowhere
  ExpectCaught(s, "partition 1 is owned by allocation alloc-9 which is not live");
}

TEST_F(WholeGpuInvariantsTest, ActivePartitionOwnedByTheAllocationGrantedIt) {
  s.active[4] = ActivePartition{"alloc-1", false, 300, {}};  // alloc-1 was granted partition 1
  ExpectCaught(s, "partition 4 is owned by allocation alloc-1 which was granted another partition");
}

TEST_F(WholeGpuInvariantsTest, NoPendingActivationOfAnActivePartition) {
  s.intents[1] = Intent(IntentKind::kActivate, "alloc-1", 5);
  ExpectCaught(s, "partition 1 has a pending activation but is already active");
}

TEST_F(WholeGpuInvariantsTest, NoPendingDeactivationOfAnInactivePartition) {
  s.intents[4] = Intent(IntentKind::kDeactivate, "", 5);
  ExpectCaught(s, "partition 4 has a pending deactivation but is not active");
}

TEST_F(WholeGpuInvariantsTest, NoIntentFromTheFuture) {
  s.intents[2].requested_seq = 11;  // the state has seen seq 10
  ExpectCaught(s, "partition 2 has an intent from the future (seq 11)");
}

TEST_F(WholeGpuInvariantsTest, OnlyLiveAllocationsAreKept) {
  s.allocations["alloc-2"].status = AllocationStatus::kRejected;
  ExpectCaught(s, "allocation alloc-2 is kept in memory while finished");
}

TEST_F(WholeGpuInvariantsTest, NoPartitionBeforeTheGrant) {
  s.allocations["alloc-2"].partition = 2;
  ExpectCaught(s, "allocation alloc-2 has a partition before its grant");
}

TEST_F(WholeGpuInvariantsTest, NoGrantBeforeTheRequest) {
  s.allocations["alloc-1"].granted_at = 50;  // requested at 100
  ExpectCaught(s, "allocation alloc-1 was granted before it was requested");
}

TEST_F(WholeGpuInvariantsTest, AGrantHoldsExactlyItsPartitionsGpus) {
  s.allocations["alloc-1"].devices = {Gpu(1), Gpu(3)};  // partition 1 is A and B
  ExpectCaught(s, "allocation alloc-1 holds devices that are not exactly the GPUs of partition 1");
}

TEST_F(WholeGpuInvariantsTest, NoVfListForWholeGpus) {
  // The owner's list and the active one agree and are a permutation of its devices: only the
  // kind of the devices (whole GPUs) says the list should be empty.
  s.allocations["alloc-1"].fabric_vfs = {Gpu(1), Gpu(2)};
  s.active[1].vf_bdfs = {Gpu(1), Gpu(2)};
  ExpectCaught(s, "partition 1 is active with VFs for whole GPUs of allocation alloc-1");
}

TEST_F(WholeGpuInvariantsTest, ModuleMappingHasOneEntryEachWay) {
  s.module_of_bdf.mutable_value()["0000:1a:00.0"] = 9;  // no module 9 -> BDF entry
  ExpectCaught(s, "module mapping is not one-to-one");
}

TEST_F(WholeGpuInvariantsTest, ModuleMappingEntriesPointAtEachOther) {
  // Module 4 (partition 4, in no active partition or grant) points at a BDF that points nowhere.
  s.bdf_of_module.mutable_value()[4] = "0000:1a:00.0";
  ExpectCaught(s, "module mapping is not one-to-one at 0000:0d:00.0");
}

TEST_F(WholeGpuInvariantsTest, AllocationCounterIsAheadOfEveryAllocation) {
  s.next_allocation_number = 2;  // alloc-2 is kept
  ExpectCaught(s, "allocation counter 2 is not ahead of alloc-2");
}

// vGPU VFs: GPUs A-F (modules 1-6) on the host; VFs .4 of each and .5 of A and B are the
// devices. Partitions 1={A,B}, 2={C,D}, 3={E,F}. alloc-1 is bound to active partition 1 with
// VFs [A.4, B.4]; partition 2 is active with [C.4, D.4], its owner released and its deactivation
// pending; alloc-2 is granted partition 3 with [E.4, F.4], which FM lost: its re-activation is
// pending.
class VfInvariantsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    s.fm_enabled = true;
    s.last_seq = 10;
    std::map<Bdf, DeviceState> devices;
    for (int m = 1; m <= 6; ++m) devices[Vf(m)] = Device(Vf(m), DeviceKind::kVgpuVf, Gpu(m));
    for (int m = 1; m <= 2; ++m) devices[Vf(m, 5)] = Device(Vf(m, 5), DeviceKind::kVgpuVf, Gpu(m));
    s.devices = devices;
    MapModules(s, 6);
    SetPartitions(s, {{1, {1, 2}}, {2, {3, 4}}, {3, {5, 6}}});
    Allocation one = Alloc("alloc-1", AllocationStatus::kBound, {Vf(2), Vf(1)}, PartitionId{1});
    one.fabric_vfs = {Vf(1), Vf(2)};
    s.allocations["alloc-1"] = one;
    Allocation two = Alloc("alloc-2", AllocationStatus::kGranted, {Vf(5), Vf(6)}, PartitionId{3});
    two.fabric_vfs = {Vf(5), Vf(6)};
    s.allocations["alloc-2"] = two;
    s.next_allocation_number = 3;
    s.active[1] = ActivePartition{"alloc-1", false, 200, {Vf(1), Vf(2)}};
    s.active[2] = ActivePartition{"", false, 200, {Vf(3), Vf(4)}};
    s.intents[2] = Intent(IntentKind::kDeactivate, "", 8);
    s.intents[3] = Intent(IntentKind::kActivate, "alloc-2", 9);
    s.intents[3].vf_bdfs = {Vf(5), Vf(6)};
    const Status valid = CheckInvariants(s);
    ASSERT_TRUE(valid.ok()) << "the valid state fails: " << valid.message();
  }
  State s;
};

TEST_F(VfInvariantsTest, AnActiveVfListIsInItsPartitionsGpuOrder) {
  s.active[2].vf_bdfs = {Vf(4), Vf(3)};  // ownerless: no owner's list to disagree with
  ExpectCaught(s,
               "partition 2 is active with VF 0000:0d:00.4 in place 0, which is GPU "
               "0000:0c:00.0 and not its GPU 0000:0d:00.0");
}

TEST_F(VfInvariantsTest, APendingVfListHasOneVfPerGpu) {
  s.intents[3].vf_bdfs = {Vf(5)};
  ExpectCaught(s, "partition 3 has a pending activation with 1 VFs for 2 GPUs");
}

TEST_F(VfInvariantsTest, AGrantedVfListIsAPermutationOfTheDevices) {
  s.allocations["alloc-1"].devices = {Vf(2, 5), Vf(1)};  // B.5 where the list has B.4
  ExpectCaught(s,
               "allocation alloc-1 has VF list [0000:0a:00.4,0000:0b:00.4] which is not a "
               "permutation of its devices");
}

TEST_F(VfInvariantsTest, AGrantedVfListIsInItsPartitionsGpuOrder) {
  s.allocations["alloc-2"].fabric_vfs = {Vf(6), Vf(5)};  // partition 3 is not active
  ExpectCaught(s, "partition 3 is granted with VF 0000:0f:00.4 in place 0");
}

TEST_F(VfInvariantsTest, AnOwnedPartitionIsActiveWithItsOwnersVfs) {
  s.active[1].vf_bdfs = {Vf(1, 5), Vf(2, 5)};  // well formed, but not alloc-1's
  ExpectCaught(s,
               "partition 1 is active with VFs [0000:0a:00.5,0000:0b:00.5], its owner "
               "alloc-1 has [0000:0a:00.4,0000:0b:00.4]");
}

TEST_F(VfInvariantsTest, AnOwnerHoldingVfsIsNeverActiveForWholeGpus) {
  // Activated without VFs for an owner that holds VFs. With partition 1 in the table, the grant
  // check sees the same damage first (VFs are not the partition's GPUs), so the table changed
  // since the grant: only this check can tell.
  s.allocations["alloc-1"].fabric_vfs.clear();
  s.active[1].vf_bdfs.clear();
  SetPartitions(s, {{2, {3, 4}}, {3, {5, 6}}});
  ExpectCaught(s, "partition 1 is active without VFs for VFs of allocation alloc-1");
}

}  // namespace
}  // namespace gfp::sm
