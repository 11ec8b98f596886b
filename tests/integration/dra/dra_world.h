// The fixture the DRA integration suites share: serve --mode=dra as a real process in a
// ProcessWorld (fake API server over HTTPS, the fake kubelet's DRA side, the simulated FM) on
// node-a, the stand-in scheduler, and the questions every test asks of them.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>

#include "sim/world/claim_scheduler.h"
#include "sim/world/process_world.h"
#include "tests/common/temp_dir.h"

namespace gfp::testing {

class DraWorldTest : public ::testing::Test {
 protected:
  using Json = nlohmann::json;

  // How often serve asks the API server about its prepared claims (--reconcile-interval).
  explicit DraWorldTest(std::chrono::milliseconds reconcile_interval)
      : reconcile_interval_(reconcile_interval) {}

  void SetUp() override {
    simworld::ProcessWorldOptions options;
    options.dir = dir_.path();
    options.fm_library = GFP_SIM_LIBRARY;
    options.plugin_binary = GFP_BINARY;
    options.reconcile_interval = reconcile_interval_;
    options.release_grace = std::chrono::milliseconds(600);
    options.node_name = "node-a";
    options.dra = true;
    auto created = simworld::ProcessWorld::Create(options);
    ASSERT_TRUE(created.ok()) << created.status().message();
    world_ = std::move(created).value();
  }

  // Starts serve and waits until it registered with kubelet and published its slice.
  void StartAndWait() {
    ASSERT_TRUE(world_->StartPlugin().ok());
    const Status ready = world_->WaitDraRegisteredAndPublished();
    ASSERT_TRUE(ready.ok()) << ready.message() << "\n" << Log();
  }

  std::string Log() const {
    std::ifstream in(world_->log_path());
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  bool Alive() { return !world_->PluginExited().has_value(); }

  // The stand-in scheduler's allocation of `n` GPUs of one partition, not yet stored.
  Json Allocate(const std::string& name, std::size_t n) {
    simworld::ClaimRequest request;
    request.name = name;
    request.gpus = n;
    request.pod = "virt-launcher-" + name;
    auto claim = scheduler_.Allocate(request, world_->api().Slices());
    EXPECT_TRUE(claim.ok()) << claim.status().message();
    return claim.ok() ? *claim : Json::object();
  }

  // `claim` as the API server stored it.
  Json Store(const Json& claim) {
    auto stored = world_->api().PutClaim(claim);
    EXPECT_TRUE(stored.ok()) << stored.status().message();
    return stored.ok() ? *stored : Json::object();
  }

  Json ScheduleClaim(const std::string& name, std::size_t n) { return Store(Allocate(name, n)); }

  static kubelet::DraClaim Ref(const Json& claim) {
    return {claim["metadata"]["uid"], claim["metadata"]["namespace"], claim["metadata"]["name"]};
  }

  // Successful activations the simulated FM saw.
  int FmActivations() {
    auto log = world_->fabric().CallLog();
    EXPECT_TRUE(log.ok());
    int n = 0;
    for (const auto& call : *log)
      n += call.function == "fmActivateFabricPartition" && call.code == 0;
    return n;
  }

  std::size_t ActiveInFm() {
    auto active = world_->FabricActive();
    EXPECT_TRUE(active.ok());
    return active.ok() ? active->size() : 0;
  }

  TempDir dir_;
  std::unique_ptr<simworld::ProcessWorld> world_;
  simworld::ClaimScheduler scheduler_{"gpu-fabric-plugin.io", "node-a"};

 private:
  std::chrono::milliseconds reconcile_interval_;
};

}  // namespace gfp::testing
