// Fuzz target: the kubelet-facing device-plugin handlers with random requests. One PluginCore is
// built as `serve` builds it (plugin::BuildCore, from serve's command line) in the deterministic
// simulation's world (sim/world: a fake H100 node, the in-memory Fabric Manager behind the core's
// FabricPort, a manual clock), journal on tmpfs. Each input's first byte picks a handler (bits
// 0-1), a Fabric Manager fault injected before the call (bits 2-4, with the FM code in bits 5-6)
// and whether the service serves the node's real resource or one it does not have (bit 7); the rest
// is parsed as that handler's request protobuf and handed to the real DevicePluginService
// in-process. Afterwards the fault is cleared, FM re-synced, and an empty PodResources view
// reconciled twice, so every allocation is released and the next input starts from a free node; the
// state must then pass the invariant check. The world is rebuilt every kRebuildEvery inputs to keep
// the journal small.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "fm_codes/fm_codes.h"
#include "fuzz/fuzz_support.h"
#include "plugin/rpc/device_plugin_service.h"
#include "sim/world/deterministic_world.h"
#include "statemachine/invariants.h"

namespace {

constexpr int kRebuildEvery = 2000;
constexpr int kFaultCodes[] = {gfp::fm_codes::kTimeout, gfp::fm_codes::kInUse,
                               gfp::fm_codes::kGenericError, gfp::fm_codes::kNvlinkError};

class World {
 public:
  World() : scratch_("grpc") {
    gfp::simworld::DeterministicOptions options;
    options.dir = scratch_.path();
    options.release_grace = std::chrono::milliseconds(0);
    options.check_invariants_after_execute = true;  // a broken invariant fails the call
    auto world = gfp::simworld::DeterministicWorld::Create(options);
    if (!world.ok() || !(*world)->StartPlugin().ok()) std::abort();
    world_ = std::move(world).value();
    served_ =
        std::make_unique<gfp::plugin::rpc::DevicePluginService>(world_->core(), world_->resource());
    unknown_ =
        std::make_unique<gfp::plugin::rpc::DevicePluginService>(world_->core(), "nvidia.com/none");
  }

  void Run(std::uint8_t selector, const std::string& request) {
    auto& service = (selector & 0x80) ? *unknown_ : *served_;
    const bool faulted = InjectFault((selector >> 2) & 7, kFaultCodes[(selector >> 5) & 3]);
    Call(service, selector, request);
    if (faulted) {
      (void)world_->fm().ClearFailures();
      world_->core().SyncFabricManager();
    }
    // No pod holds anything: the first pass marks allocations absent, the second releases them.
    for (int pass = 0; pass < 2; ++pass) {
      world_->Advance(1'000'000);
      world_->core().Reconcile({});
    }
    if (!gfp::sm::CheckInvariants(world_->core().engine().CopyState()).ok()) std::abort();
  }

 private:
  // 0-2: no fault; 3/4: the next activation/deactivation fails with `code`; 5: FM drops every
  // connection; 6/7: FM restarts with/without resiliency.
  bool InjectFault(int fault, int code) {
    switch (fault) {
      case 3:
        return world_->fm().InjectFailure("fmActivateFabricPartition", code).ok();
      case 4:
        return world_->fm().InjectFailure("fmDeactivateFabricPartition", code).ok();
      case 5:
        return world_->fm().DropConnections().ok();
      case 6:
      case 7:
        return world_->fm().Restart(fault == 6).ok();
      default:
        return false;
    }
  }

  void Call(gfp::plugin::rpc::DevicePluginService& service, std::uint8_t selector,
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
  std::unique_ptr<gfp::simworld::DeterministicWorld> world_;
  std::unique_ptr<gfp::plugin::rpc::DevicePluginService> served_;
  std::unique_ptr<gfp::plugin::rpc::DevicePluginService> unknown_;
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
