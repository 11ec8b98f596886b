// Issue 10 item 4: `journal state` and `history` show device kinds, parent GPUs and VF lists.
// The journal is written event by event through the store, as serve would write it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_run.h"
#include "common/temp_dir.h"
#include "statemachine/apply.h"
#include "statemachine/event_codec.h"
#include "statemachine/event_subjects.h"
#include "statemachine/snapshot_codec.h"
#include "store/journal.h"

namespace gfp {
namespace {

using ::testing::HasSubstr;

// `gpu-fabric-plugin <args>`'s output; the run must succeed.
std::string Cli(const std::string& args) {
  const testing::CliRun run = testing::Cli(args);
  EXPECT_EQ(run.exit_code, 0) << args << ":\n" << run.output;
  return run.output;
}

constexpr std::int64_t kT0 = 1'800'000'000'000'000;

events::Device Dev(const std::string& id, events::DeviceKind kind, const std::string& parent,
                   const std::string& resource) {
  events::Device d;
  d.set_bdf(id);
  d.set_kind(kind);
  d.set_parent_bdf(parent);
  d.set_resource(resource);
  return d;
}

class JournalDeviceKindsTest : public ::testing::Test {
 protected:
  // Two GPUs with one VF each and one mdev; partition 3 activated with the VFs.
  void SetUp() override {
    path = (dir.path() / "journal.db").string();
    auto journal = store::Journal::Open(path, store::OpenMode::kReadWrite);
    ASSERT_TRUE(journal.ok()) << journal.status().message();
    std::vector<events::Event> list(4);
    auto* inventory = list[0].mutable_inventory_observed();
    *inventory->add_devices() =
        Dev("0000:1b:00.4", events::DEVICE_KIND_VGPU_VF, "0000:1b:00.0", "nvidia.com/H100XM-80C");
    *inventory->add_devices() =
        Dev("0000:43:00.4", events::DEVICE_KIND_VGPU_VF, "0000:43:00.0", "nvidia.com/H100XM-80C");
    *inventory->add_devices() =
        Dev("b1d5c6a8-0000-4000-8000-000000000001", events::DEVICE_KIND_MDEV, "0000:61:00.0",
            "nvidia.com/GRID_A100-4C");
    auto* requested = list[1].mutable_allocation_requested();
    requested->set_allocation_id("alloc-vf");
    requested->set_resource("nvidia.com/H100XM-80C");
    requested->add_device_ids("0000:43:00.4");
    requested->add_device_ids("0000:1b:00.4");
    auto* activation = list[2].mutable_partition_activation_requested();
    activation->set_partition_id(3);
    activation->set_allocation_id("alloc-vf");
    activation->add_vf_bdfs("0000:1b:00.4");
    activation->add_vf_bdfs("0000:43:00.4");
    auto* activated = list[3].mutable_partition_activated();
    activated->set_partition_id(3);
    activated->set_allocation_id("alloc-vf");
    *activated->mutable_vf_bdfs() = activation->vf_bdfs();
    std::vector<store::NewEvent> batch;
    for (std::size_t i = 0; i < list.size(); ++i) {
      list[i].set_time_unix_micros(kT0 + static_cast<std::int64_t>(i));
      batch.push_back({list[i].time_unix_micros(), sm::EventTypeName(list[i]),
                       sm::EncodeEvent(list[i]), sm::EventSubjects(list[i])});
      sm::Apply(state, i + 1, list[i]);
    }
    ASSERT_TRUE((*journal)->Append(batch).ok());
  }
  // A snapshot at the last seq with the VF lists apply keeps (active partition, allocation) and
  // a pending re-activation with the same list, so `state` shows them from the snapshot.
  void SaveSnapshotWithVfLists() {
    const std::vector<sm::Bdf> vfs = {"0000:1b:00.4", "0000:43:00.4"};
    state.active[3].owner = "alloc-vf";
    state.active[3].vf_bdfs = vfs;
    state.allocations["alloc-vf"].fabric_vfs = vfs;
    state.intents[7] = sm::PendingIntent{sm::IntentKind::kActivate, "alloc-vf", 4, kT0, vfs};
    auto journal = store::Journal::Open(path, store::OpenMode::kReadWrite);
    ASSERT_TRUE(journal.ok());
    ASSERT_TRUE((*journal)->SaveSnapshot(4, sm::EncodeSnapshot(state)).ok());
  }
  gfp::testing::TempDir dir;
  std::string path;
  sm::State state;
};

TEST_F(JournalDeviceKindsTest, HistoryTextCountsKindsAndPrintsVfLists) {
  const std::string out = Cli("journal history --journal " + path);
  EXPECT_THAT(out, HasSubstr("3 devices (1 mdev, 2 vgpu-vf):")) << out;
  EXPECT_THAT(out, HasSubstr("partition 3 activation requested for alloc-vf "
                             "vfs=[0000:1b:00.4,0000:43:00.4]"))
      << out;
  EXPECT_THAT(out, HasSubstr("partition 3 active for alloc-vf vfs=[0000:1b:00.4,0000:43:00.4]"))
      << out;
}

TEST_F(JournalDeviceKindsTest, HistoryJsonCarriesKindsParentsAndVfLists) {
  std::istringstream lines(Cli("journal history --format json --journal " + path));
  std::vector<nlohmann::json> events;
  for (std::string line; std::getline(lines, line);) events.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0]["devices"][0]["kind"], "DEVICE_KIND_VGPU_VF");
  EXPECT_EQ(events[0]["devices"][0]["parent_bdf"], "0000:1b:00.0");
  EXPECT_EQ(events[0]["devices"][2]["kind"], "DEVICE_KIND_MDEV");
  const nlohmann::json vfs = {"0000:1b:00.4", "0000:43:00.4"};
  EXPECT_EQ(events[2]["vf_bdfs"], vfs);
  EXPECT_EQ(events[3]["vf_bdfs"], vfs);
}

TEST_F(JournalDeviceKindsTest, StateShowsEachDeviceKindAndParent) {
  const std::string text = Cli("journal state --journal " + path);
  EXPECT_THAT(text, HasSubstr("0000:1b:00.4 vgpu-vf on 0000:1b:00.0 nvidia.com/H100XM-80C"));
  EXPECT_THAT(text, HasSubstr("b1d5c6a8-0000-4000-8000-000000000001 mdev on 0000:61:00.0"));
  auto json = nlohmann::json::parse(Cli("journal state --format json --journal " + path));
  EXPECT_EQ(json["devices"], 3);  // the existing count stays
  ASSERT_EQ(json["device_list"].size(), 3u);
  EXPECT_EQ(json["device_list"][0]["id"], "0000:1b:00.4");
  EXPECT_EQ(json["device_list"][0]["kind"], "vgpu-vf");
  EXPECT_EQ(json["device_list"][0]["parent_bdf"], "0000:1b:00.0");
  EXPECT_EQ(json["device_list"][2]["kind"], "mdev");
}

TEST_F(JournalDeviceKindsTest, StateShowsVfListsOfPartitionsAllocationsAndIntents) {
  SaveSnapshotWithVfLists();
  const std::string text = Cli("journal state --journal " + path);
  EXPECT_THAT(text, HasSubstr("partition 3 [] vfs=[0000:1b:00.4,0000:43:00.4] alloc-vf")) << text;
  EXPECT_THAT(text, HasSubstr("alloc-vf requested [0000:43:00.4,0000:1b:00.4] "
                              "vfs=[0000:1b:00.4,0000:43:00.4]"))
      << text;
  EXPECT_THAT(text, HasSubstr("pending: activate partition 7 (seq 4) vfs=[0000:1b:00.4,")) << text;
  auto json = nlohmann::json::parse(Cli("journal state --format json --journal " + path));
  const nlohmann::json vfs = {"0000:1b:00.4", "0000:43:00.4"};
  EXPECT_EQ(json["active_partitions"][0]["vf_bdfs"], vfs);
  EXPECT_EQ(json["live_allocations"][0]["fabric_vfs"], vfs);
  EXPECT_EQ(json["pending_intents"][0]["vf_bdfs"], vfs);
}

// Whole GPUs (the demo-day fixture): no VF keys at all, every device passthrough.
TEST(JournalDeviceKindsWholeGpus, StateOmitsEmptyVfLists) {
  const std::string fixture =
      std::string(GFP_SOURCE_DIR) + "/tests/fixtures/journal-v1-demo-day.db";
  auto json =
      nlohmann::json::parse(Cli("journal state --at 20 --format json --journal " + fixture));
  ASSERT_FALSE(json["active_partitions"].empty());
  for (const auto& p : json["active_partitions"]) EXPECT_FALSE(p.contains("vf_bdfs")) << p;
  for (const auto& a : json["live_allocations"]) EXPECT_FALSE(a.contains("fabric_vfs")) << a;
  for (const auto& d : json["device_list"]) {
    EXPECT_EQ(d["kind"], "passthrough") << d;
    EXPECT_FALSE(d.contains("parent_bdf")) << d;
  }
}

}  // namespace
}  // namespace gfp
