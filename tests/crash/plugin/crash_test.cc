// Crash tests: the real `serve` binary under an allocation/release storm from a fake kubelet,
// SIGKILLed at random moments, restarted, over and over. After every restart:
//   - the journal verifies (hash chain, decoding, replay with invariants);
//   - every pod that kubelet still runs has its partition active in FM and in the journal, and
//     no such partition was deactivated across the crash;
//   - once reconciled, FM's active set equals the journal's;
// and at the end, with every pod gone, no partition is left active (nothing leaked).
//
// Reproduce a failure with GFP_CRASH_SEED=<seed printed>; run longer with
// GFP_CRASH_ITERATIONS=<n> (default 8). KEEP_TEST_DIRS=1 keeps the world, including serve.log.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <random>
#include <thread>

#include "cli/demo/demo_world.h"
#include "cli/journal_command.h"
#include "common/temp_dir.h"

namespace gfp::cli {
namespace {

std::uint64_t EnvOr(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::strtoull(v, nullptr, 10) : fallback;
}

// Small deterministic helpers: std distributions differ between standard libraries.
struct Rng {
  std::mt19937_64 engine;
  std::uint64_t Below(std::uint64_t n) { return n ? engine() % n : 0; }
};

class CrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed = EnvOr("GFP_CRASH_SEED", std::random_device{}());
    iterations = EnvOr("GFP_CRASH_ITERATIONS", 8);
    std::cout << "GFP_CRASH_SEED=" << seed << " iterations=" << iterations << " dir "
              << dir.path().string() << std::endl;
    DemoOptions options;
    options.dir = dir.path();
    options.fm_library = GFP_SIM_LIBRARY;
    options.plugin_binary = GFP_BINARY;
    options.reconcile_interval = std::chrono::milliseconds(100);
    options.release_grace = std::chrono::milliseconds(400);
    auto created = DemoWorld::Create(options);
    ASSERT_TRUE(created.ok()) << created.status().message();
    world = std::move(created).value();
  }

  std::vector<std::string> RunningPods() {
    std::vector<std::string> names;
    for (const auto& pod : world->kubelet().Pods()) names.push_back(pod.pod_name);
    return names;
  }

  // What every running pod holds, as kubelet sees it.
  std::map<std::string, std::vector<std::string>> PodDevices() {
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& pod : world->kubelet().Pods())
      out[pod.pod_name] = pod.containers.at(0).device_ids;
    return out;
  }

  gfp::testing::TempDir dir;
  std::unique_ptr<DemoWorld> world;
  std::uint64_t seed = 0;
  std::uint64_t iterations = 0;
};

TEST_F(CrashTest, SigkillDuringAllocationStormsLosesAndLeaksNothing) {
  Rng rng{std::mt19937_64(seed)};
  const int sizes[] = {1, 1, 2, 2, 4, 8};
  int next_pod = 0;
  ASSERT_TRUE(world->StartPlugin().ok());
  ASSERT_TRUE(world->WaitRegisteredAndHealthy(1).ok()) << "seed " << seed;
  int registrations = 1;

  for (std::uint64_t round = 0; round < iterations; ++round) {
    SCOPED_TRACE("GFP_CRASH_SEED=" + std::to_string(seed) + " round " + std::to_string(round));
    // The storm: pods come and go on another thread while the plugin is killed.
    std::atomic<bool> stop{false};
    const std::uint64_t storm_seed = rng.engine();
    std::thread storm([&, storm_seed] {
      Rng r{std::mt19937_64(storm_seed)};
      while (!stop.load()) {
        auto pods = world->kubelet().Pods();
        if (!pods.empty() && r.Below(3) == 0) {
          world->kubelet().DeletePod("vms", pods[r.Below(pods.size())].pod_name);
        } else {
          const int gpus = sizes[r.Below(std::size(sizes))];
          world->kubelet().AdmitPod("vms", "vm-" + std::to_string(next_pod++), {{"compute", gpus}},
                                    world->resource());
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(r.Below(30)));
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50 + rng.Below(400)));
    ASSERT_TRUE(world->CrashPlugin().ok());
    stop = true;
    storm.join();

    // The partitions of running pods, as FM has them right after the crash.
    auto fm_before = world->FabricActive();
    ASSERT_TRUE(fm_before.ok());
    auto calls_before = world->fabric().CallLog();
    ASSERT_TRUE(calls_before.ok());

    ASSERT_TRUE(world->StartPlugin().ok());
    ASSERT_TRUE(world->WaitRegisteredAndHealthy(++registrations).ok())
        << "serve did not come back; see " << world->log_path().string();

    // Every running pod's devices form an active partition in the journal and in FM.
    Status held = DemoWorld::Eventually(
        [&]() -> Status {
          for (const auto& [pod, devices] : PodDevices()) {
            GFP_RETURN_IF_ERROR(world->PartitionHolding(devices).status().WithContext(pod));
          }
          return world->FabricMatchesJournal();
        },
        std::chrono::seconds(10));
    ASSERT_TRUE(held.ok()) << held.message() << "; see " << world->log_path().string();

    // No running pod's partition was deactivated across the crash and restart.
    auto calls_after = world->fabric().CallLog();
    ASSERT_TRUE(calls_after.ok());
    auto state = world->JournalState();
    ASSERT_TRUE(state.ok()) << state.status().message();
    std::set<std::string> running_partitions;
    for (const auto& [pod, devices] : PodDevices()) {
      if (auto pid = sm::PartitionWithExactDevices(*state, devices)) {
        running_partitions.insert("(" + std::to_string(*pid) + ")");
      }
    }
    for (std::size_t i = calls_before->size(); i < calls_after->size(); ++i) {
      const auto& call = (*calls_after)[i];
      if (call.function != "fmDeactivateFabricPartition" || call.code != 0) continue;
      for (const auto& p : running_partitions) {
        EXPECT_EQ(call.args.find(p), std::string::npos)
            << "a running pod's partition was deactivated: " << call.function << call.args;
      }
    }
  }

  // The journal is intact.
  {
    JournalQuery query;
    query.path = world->journal_path().string();
    query.format = "json";
    EXPECT_EQ(VerifyJournal(query), 0);
  }
  // Every pod gone: nothing stays active.
  for (const auto& pod : RunningPods()) world->kubelet().DeletePod("vms", pod);
  Status drained = DemoWorld::Eventually(
      [&]() -> Status {
        GFP_ASSIGN_OR_RETURN(auto fm, world->FabricActive());
        if (!fm.empty())
          return FailedPrecondition(std::to_string(fm.size()) + " partitions still active");
        return world->FabricMatchesJournal();
      },
      std::chrono::seconds(15));
  EXPECT_TRUE(drained.ok()) << drained.message() << "; see " << world->log_path().string();
  auto code = world->StopPlugin();
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 0);
}

}  // namespace
}  // namespace gfp::cli
