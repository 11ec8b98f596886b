// A googletest fixture that runs the real `gpu-fabric-plugin serve` against a fake node tree, the
// simulated Fabric Manager (libnvfm-sim.so through --fm-library, state file in $NVFM_SIM_STATE)
// and the fake kubelet, all in one temporary directory.
//
// On failure it prints the scenario (test name), the temp dir (kept with KEEP_TEST_DIRS=1), the
// command lines to reproduce, and every captured plugin log.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/temp_dir.h"
#include "integration/plugin/plugin_process.h"
#include "sim/fm/fm_sim_control.h"
#include "sim/kubelet/fake_kubelet.h"
#include "sim/node/fake_node.h"
#include "sim/world/serve_setup.h"

namespace gfp::testing {

using namespace std::chrono_literals;

// Paths of the binaries under test, set by the suite's CMake (compile definitions).
std::filesystem::path PluginBinary();
std::filesystem::path FmSimLibrary();

// For tests that wait for serve to release an allocation whose pod is gone.
inline constexpr const char* kShortReleaseGrace = "300ms";

struct ServeSetup {
  sim::NodePreset preset = sim::NodePreset::kHgxH100;
  // A vGPU or Grace node instead of `preset`. The VF node's Fabric Manager runs in
  // FABRIC_MODE=2 with every VF's parent known; resource_ and env_key_ name the node's first
  // vGPU type (mdev) or profile (VF); the Grace node's are its GPUs'.
  std::optional<sim::VgpuNodePreset> vgpu_preset;
  bool fabric_manager = true;
  bool with_iommufd = false;
  std::string reconcile_interval = "100ms";
  // Long by default: a test's allocation is often in no pod, and a slow step under a sanitizer
  // (a journal CLI run) outlasted a short grace, so serve released it behind the test's back.
  // Tests of releasing set kShortReleaseGrace.
  std::string release_grace = "10m";
  std::string log_level = "debug";
};

class ServeFixture : public ::testing::Test {
 protected:
  void TearDown() override;

  // Assembles the world (sim/world/world_parts.h): the fake node, a fresh simulated FM for the
  // node's table and the fake kubelet, started. Call once per test, before StartServe. Fails the
  // test (fatal) on error.
  void Prepare(const ServeSetup& setup);

  // The world's layout and serve settings (sim/world/serve_setup.h, the one mapping of a world
  // onto serve's command line).
  simworld::ServeSetup WorldSetup() const;
  // The serve flags for this setup; `overrides` replace flags by name ("--journal" -> value) or
  // add them; a value of "<unset>" drops the flag.
  std::vector<std::string> ServeArgs(
      const std::map<std::string, std::string>& overrides = {}) const;
  ProcessOptions ServeOptions(const std::vector<std::string>& args,
                              const std::string& log_name) const;
  // Starts one more serve process (logged as <log_name>.log in the temp dir) and tracks it.
  std::unique_ptr<PluginProcess> Spawn(const std::vector<std::string>& args,
                                       const std::string& log_name);
  // Starts the main serve process (serve_) and waits until the kubelet sees it registered with
  // its ListAndWatch stream open. With `expect_healthy`, also waits for every device Healthy.
  void StartServe(bool expect_healthy = true,
                  const std::map<std::string, std::string>& overrides = {});
  // Starts `options` as the main serve process (serve_) and waits until the kubelet sees it
  // registered with its ListAndWatch stream open; `more_context` adds to failure messages.
  void StartServeProcess(const ProcessOptions& options,
                         const std::function<std::string()>& more_context = {});

  // --- the journal, through `gpu-fabric-plugin journal ...` ---
  CommandResult Journal(const std::vector<std::string>& verb_args, const std::string& journal = "");
  std::vector<nlohmann::json> History(const std::string& journal = "");
  std::vector<std::string> HistoryTypes(const std::string& journal = "");
  nlohmann::json State(const std::string& journal = "");
  // `journal verify` exits 0 (checked with EXPECT, so the test goes on).
  void ExpectJournalVerifies(const std::string& journal = "");
  // Waits until an event of `type` satisfying `predicate` is in the journal.
  bool WaitForEvent(const std::string& type,
                    const std::function<bool(const nlohmann::json&)>& predicate,
                    std::chrono::milliseconds timeout);

  // --- the node and Fabric Manager ---
  // GPUs of a partition of the preset's table, as BDFs in PCI order (through the module ids the
  // mapping file gives).
  std::vector<std::string> PartitionBdfs(std::uint32_t partition_id) const;
  // Partition ids of the preset's table with `size` GPUs.
  std::vector<std::uint32_t> PartitionsOfSize(std::size_t size) const;
  std::vector<std::size_t> PartitionSizes() const;
  std::uint32_t ModuleOf(const std::string& bdf) const;
  std::string GroupOf(const std::string& bdf) const;
  std::vector<std::uint32_t> ActivePartitions() const;
  // Number of calls of an FM SDK function in the simulator's call log.
  int FmCalls(const std::string& function) const;
  std::vector<std::string> FmCallSequence() const;  // "fmActivateFabricPartition(1)=0" ...

  // --- kubelet-side helpers ---
  bool WaitForDevices(const std::function<bool(const std::vector<v1beta1::Device>&)>& predicate,
                      std::chrono::milliseconds timeout = 10s) const;
  static bool AllHealth(const std::vector<v1beta1::Device>& devices, const std::string& health);
  static std::string HealthOf(const std::vector<v1beta1::Device>& devices, const std::string& id);
  kubelet::RpcOutcome<v1beta1::AllocateResponse> Allocate(
      const std::vector<std::vector<std::string>>& containers);
  kubelet::RpcOutcome<v1beta1::PreferredAllocationResponse> Preferred(
      const std::vector<std::string>& available, const std::vector<std::string>& must_include,
      int size);
  kubelet::RpcOutcome<v1beta1::PreStartContainerResponse> PreStart(
      const std::vector<std::string>& devices);

  // Something to paste into a failure message.
  std::string Describe(const grpc::Status& status) const;

  const std::filesystem::path& dir() const { return tmp_.path(); }

  TempDir tmp_;
  ServeSetup setup_;
  sim::FakeNode node_;
  std::string fm_table_;
  std::optional<fmsim::FmSimControl> fm_;
  std::filesystem::path device_plugin_dir_;
  std::filesystem::path pod_resources_socket_;
  std::filesystem::path journal_;
  std::filesystem::path fm_state_;
  std::unique_ptr<kubelet::FakeKubelet> kubelet_;
  std::unique_ptr<PluginProcess> serve_;
  std::string resource_;  // nvidia.com/<NAME> expected for the preset
  std::string env_key_;   // PCI_RESOURCE_NVIDIA_COM_<NAME>

 private:
  std::vector<std::pair<std::filesystem::path, std::string>> logs_;  // log file, command line
  int commands_ = 0;
};

}  // namespace gfp::testing
