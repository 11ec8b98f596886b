// Fuzz target: the kubelet-facing device-plugin handlers with random requests. One PluginCore is
// built as `serve` builds it (plugin::BuildCore) on a fake H100 node with the simulated Fabric
// Manager, journal on tmpfs. Each input's first byte picks a handler (bits 0-1), a Fabric Manager
// fault injected before the call (bits 2-4, with the FM code in bits 5-6) and whether the service
// serves the node's real resource or one it does not have (bit 7); the rest is parsed as that
// handler's request protobuf and handed to the real DevicePluginService in-process. Afterwards the
// fault is cleared, FM re-synced, and an empty PodResources view reconciled twice, so every
// allocation is released and the next input starts from a free node; the state must then pass
// the invariant check. The world is rebuilt every kRebuildEvery inputs to keep the journal small.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "fm_codes/fm_codes.h"
#include "fuzz/fuzz_support.h"
#include "plugin/build_core.h"
#include "plugin/grpc/device_plugin_service.h"
#include "sim/fm/fm_sim_control.h"
#include "sim/node/fake_node.h"
#include "statemachine/invariants.h"

namespace {

constexpr int kRebuildEvery = 2000;
constexpr int kFaultCodes[] = {gfp::sm::fm_code::kTimeout, gfp::sm::fm_code::kInUse,
                               gfp::sm::fm_code::kGenericError, gfp::sm::fm_code::kNvlinkError};

class World {
 public:
  World() : scratch_("grpc") {
    auto node = gfp::sim::BuildFakeNode(scratch_.path() / "node", {});
    const std::string state = (scratch_.path() / "fabric-manager.state").string();
    auto fm = gfp::fmsim::FmSimControl::Create(state, "h100");
    if (!node.ok() || !fm.ok() || ::setenv("NVFM_SIM_STATE", state.c_str(), 1) != 0) std::abort();
    fm_ = std::make_unique<gfp::fmsim::FmSimControl>(std::move(fm).value());
    gfp::plugin::ServeConfig config;
    config.fabric_manager = true;
    config.fm_library = GFP_FM_SIM_LIBRARY;
    config.pci_module_mapping = node->module_mapping_file;
    config.sysfs_root = node->sysfs_root;
    config.dev_root = node->dev_root;
    config.journal = scratch_.path() / "journal" / "journal.db";
    config.pci_ids = node->pci_ids_file;
    config.release_grace = std::chrono::milliseconds(0);
    config.fm_call_deadline = std::chrono::milliseconds(2000);
    gfp::plugin::CoreOverrides overrides;
    overrides.engine.check_invariants_after_execute = true;  // a broken invariant fails the call
    overrides.fm_reconnect_backoff_initial = std::chrono::milliseconds(1);
    overrides.fm_reconnect_backoff_max = std::chrono::milliseconds(2);
    auto core = gfp::plugin::BuildCore(
        config, "fuzz", [this] { return now_; }, overrides);
    if (!core.ok()) std::abort();
    core_ = std::move(core).value();
    core_->SyncFabricManager();
    core_->CheckHealth();
    const std::string resource = core_->inventory().resources.front().naming.resource_name;
    served_ = std::make_unique<gfp::plugin::DevicePluginService>(*core_, resource);
    unknown_ = std::make_unique<gfp::plugin::DevicePluginService>(*core_, "nvidia.com/none");
  }

  void Run(std::uint8_t selector, const std::string& request) {
    auto& service = (selector & 0x80) ? *unknown_ : *served_;
    const bool faulted = InjectFault((selector >> 2) & 7, kFaultCodes[(selector >> 5) & 3]);
    Call(service, selector, request);
    if (faulted) {
      (void)fm_->ClearFailures();
      core_->SyncFabricManager();
    }
    // No pod holds anything: the first pass marks allocations absent, the second releases them.
    for (int pass = 0; pass < 2; ++pass) {
      now_ += 1'000'000;
      core_->Reconcile({});
    }
    if (!gfp::sm::CheckInvariants(core_->engine().CopyState()).ok()) std::abort();
  }

 private:
  // 0-2: no fault; 3/4: the next activation/deactivation fails with `code`; 5: FM drops every
  // connection; 6/7: FM restarts with/without resiliency.
  bool InjectFault(int fault, int code) {
    switch (fault) {
      case 3:
        return fm_->InjectFailure("fmActivateFabricPartition", code).ok();
      case 4:
        return fm_->InjectFailure("fmDeactivateFabricPartition", code).ok();
      case 5:
        return fm_->DropConnections().ok();
      case 6:
      case 7:
        return fm_->Restart(fault == 6).ok();
      default:
        return false;
    }
  }

  void Call(gfp::plugin::DevicePluginService& service, std::uint8_t selector,
            const std::string& request) {
    switch (selector % 4) {
      case 0: {
        v1beta1::Empty in;
        v1beta1::DevicePluginOptions out;
        (void)service.GetDevicePluginOptions(nullptr, &in, &out);
        break;
      }
      case 1: {
        v1beta1::PreferredAllocationRequest in;
        v1beta1::PreferredAllocationResponse out;
        if (in.ParseFromString(request)) (void)service.GetPreferredAllocation(nullptr, &in, &out);
        break;
      }
      case 2: {
        v1beta1::AllocateRequest in;
        v1beta1::AllocateResponse out;
        if (in.ParseFromString(request)) (void)service.Allocate(nullptr, &in, &out);
        break;
      }
      default: {
        v1beta1::PreStartContainerRequest in;
        v1beta1::PreStartContainerResponse out;
        if (in.ParseFromString(request)) (void)service.PreStartContainer(nullptr, &in, &out);
        break;
      }
    }
  }

  gfp::fuzz::ScratchDir scratch_;
  std::unique_ptr<gfp::fmsim::FmSimControl> fm_;
  std::int64_t now_ = 1'700'000'000'000'000;
  std::unique_ptr<gfp::plugin::PluginCore> core_;
  std::unique_ptr<gfp::plugin::DevicePluginService> served_;
  std::unique_ptr<gfp::plugin::DevicePluginService> unknown_;
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  gfp::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static std::unique_ptr<World> world;
  static int inputs = 0;
  if (size == 0) return 0;
  if (!world || ++inputs % kRebuildEvery == 0) {
    world.reset();
    world = std::make_unique<World>();
  }
  world->Run(data[0], std::string(reinterpret_cast<const char*>(data + 1), size - 1));
  return 0;
}
