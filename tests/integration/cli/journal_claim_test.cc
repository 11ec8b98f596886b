// `journal history --claim` and `journal state` on a DRA node's journal (SPEC §2.2): the real
// binary on a real journal written by the engine.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_run.h"
#include "common/sm_fixtures.h"
#include "common/temp_dir.h"
#include "engine/engine.h"

namespace gfp {
namespace {

using gfp::testing::Cli;
using gfp::testing::CliRun;
using gfp::testing::H100Node;
using gfp::testing::Modules;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class JournalClaimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = engine::Engine::Open(journal);
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    engine = std::move(*opened);
    Run(sm::StartPlugin{now, "test", true, "node-a", sm::kDefaultReleaseGrace});
    Run(gfp::testing::InventoryOf(node, now));
    Run(gfp::testing::MappingOf(node, now));
    Run(sm::ObserveFabricManagerConnection{now, true, "/run/fm.sock", 2, "", {}});
    sm::ObserveFabricState table;
    table.now = now;
    table.partitions = gfp::testing::PartitionsOf(node);
    Run(table);
  }

  // Executes `command` and every effect it leads to, Fabric Manager saying yes.
  void Run(const sm::Command& command) {
    auto decision = engine->Execute(command);
    ASSERT_TRUE(decision.ok()) << decision.status().message();
    std::vector<sm::Effect> effects = decision->effects;
    while (!effects.empty()) {
      now += 1000;
      auto next = engine->Execute(sm::OutcomeOf(effects.front(), now, {}));
      ASSERT_TRUE(next.ok()) << next.status().message();
      effects.erase(effects.begin());
      effects.insert(effects.end(), next->effects.begin(), next->effects.end());
    }
  }

  void Prepare(const std::string& uid, const std::string& name, std::vector<int> modules) {
    now += 1000;
    sm::PrepareClaim c;
    c.now = now;
    c.claim.set_uid(uid);
    c.claim.set_namespace_("vms");
    c.claim.set_name(name);
    const auto gpus = Modules(node, std::move(modules));
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      auto& d = c.devices.emplace_back();
      d.set_request("gpu" + std::to_string(i));
      d.set_bdf(gpus[i]);
    }
    c.reserved_for = {"vms/virt-launcher-" + name};
    Run(c);
    Run(sm::RecordClaimFiles{now, uid});
  }

  void Unprepare(const std::string& uid) {
    now += 1000;
    Run(sm::UnprepareClaim{now, uid, events::ClaimUnprepareRequested::REASON_KUBELET, ""});
    Run(sm::RecordClaimFilesRemoved{now, uid});
  }

  // The type column of `journal history` output.
  static std::vector<std::string> Types(const std::string& output) {
    std::vector<std::string> types;
    std::istringstream lines(output);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream fields(line);
      std::string seq, time, type;
      fields >> seq >> time >> type;
      types.push_back(type);
    }
    return types;
  }

  gfp::testing::TempDir dir;
  std::string journal = (dir.path() / "journal.db").string();
  gfp::testing::NodeFixture node = H100Node();
  std::unique_ptr<engine::Engine> engine;
  sm::Micros now = 1'700'000'000'000'000;
};

TEST_F(JournalClaimTest, HistoryOfAClaimIsItsLifeByUidOrByName) {
  Prepare("uid-a", "vm-a", {1, 2, 3, 4});
  Prepare("uid-b", "vm-b", {5, 7});
  Unprepare("uid-a");
  engine.reset();

  const CliRun by_uid = Cli("journal history --claim uid-a --journal " + journal);
  ASSERT_EQ(by_uid.exit_code, 0) << by_uid.output;
  EXPECT_THAT(Types(by_uid.output),
              ElementsAre("ClaimPrepareRequested", "PartitionActivationRequested",
                          "PartitionActivated", "AllocationGranted", "ClaimPrepared",
                          "ClaimUnprepareRequested", "ClaimUnprepared"));
  EXPECT_THAT(by_uid.output, HasSubstr("claim vms/vm-a (uid uid-a) prepare requested"));
  EXPECT_THAT(by_uid.output, Not(HasSubstr("uid-b")));

  const CliRun by_name = Cli("journal history --claim vms/vm-a --journal " + journal);
  ASSERT_EQ(by_name.exit_code, 0) << by_name.output;
  EXPECT_EQ(by_name.output, by_uid.output);

  const CliRun other = Cli("journal history --claim vms/vm-b --format json --journal " + journal);
  ASSERT_EQ(other.exit_code, 0) << other.output;
  EXPECT_THAT(other.output, HasSubstr("\"type\":\"ClaimPrepared\""));
  EXPECT_THAT(other.output, Not(HasSubstr("uid-a")));

  // No such claim: nothing listed (exit 0), and stderr says which claim was not found.
  const CliRun none = Cli("journal history --claim vms/never --journal " + journal,
                          gfp::testing::CliOutput::kStdout);
  EXPECT_EQ(none.exit_code, 0) << none.output;
  EXPECT_EQ(none.output, "");
  const CliRun said = Cli("journal history --claim vms/never --journal " + journal,
                          gfp::testing::CliOutput::kStderr);
  EXPECT_EQ(said.output, "journal " + journal + " holds no DRA claim vms/never\n");
}

TEST_F(JournalClaimTest, StateNamesTheClaimOfAnActivePartitionAndVerifyPasses) {
  Prepare("uid-b", "vm-b", {5, 7});
  engine.reset();
  const CliRun state = Cli("journal state --format json --journal " + journal);
  ASSERT_EQ(state.exit_code, 0) << state.output;
  const nlohmann::json json = nlohmann::json::parse(state.output);
  ASSERT_EQ(json["active_partitions"].size(), 1u) << state.output;
  const auto& active = json["active_partitions"][0];
  EXPECT_EQ(active["claim"]["uid"], "uid-b");
  EXPECT_EQ(active["claim"]["namespace"], "vms");
  EXPECT_EQ(active["claim"]["name"], "vm-b");
  EXPECT_EQ(active["pod"], "vms/virt-launcher-vm-b");
  EXPECT_FALSE(active.contains("allocation_id"));

  const CliRun verify = Cli("journal verify --journal " + journal);
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
}

}  // namespace
}  // namespace gfp
