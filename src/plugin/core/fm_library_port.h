// The FabricPort `serve` uses: Fabric Manager's SDK (libnvfm.so.1) through the FM adapter's
// client (dlopen, bounded calls on a worker thread, reconnect with backoff), its answers turned
// into journal form.
#pragma once

#include <memory>
#include <vector>

#include "adapters/fm/fabric_manager_client.h"
#include "common/status.h"
#include "plugin/core/fabric_port.h"

namespace gfp::plugin::core {

events::FmResult ToEventResult(const adapters::fm::FmStatus& status);
// FM's supported partitions in journal form, sorted by id; `degraded` (FM's unsupported list)
// are marked unsupported.
std::vector<events::Partition> ToEventPartitions(
    const std::vector<adapters::fm::PartitionInfo>& supported,
    const std::vector<std::uint32_t>& degraded);

// One partition operation on a client with the SDK client's calls (Activate,
// ActivatePartitionWithVfs, Deactivate, SetActivatedPartitions), in journal form: the one
// mapping of an effect onto FM's calls, for this port and the simulation's in-memory one.
template <typename Client>
events::FmResult CarryOn(Client& client, const sm::Effect& effect) {
  switch (effect.kind) {
    case sm::Effect::Kind::kActivatePartition:
      // vGPU VFs (FABRIC_MODE=2) name their VFs; whole GPUs (FABRIC_MODE=1) do not.
      if (!effect.vf_bdfs.empty()) {
        return ToEventResult(client.ActivatePartitionWithVfs(effect.partition_id, effect.vf_bdfs));
      }
      return ToEventResult(client.Activate(effect.partition_id));
    case sm::Effect::Kind::kDeactivatePartition:
      return ToEventResult(client.Deactivate(effect.partition_id));
    case sm::Effect::Kind::kSetActivatedPartitions:
      return ToEventResult(client.SetActivatedPartitions(effect.partition_ids));
  }
  return ToEventResult(adapters::fm::FmStatus());
}

class FmLibraryPort final : public FabricPort {
 public:
  explicit FmLibraryPort(std::unique_ptr<adapters::fm::FabricManagerClient> client);

  events::FmResult Connect() override;
  bool connected() const override;
  int connect_struct_version() const override;
  const std::string& address() const override;
  Result<std::vector<events::Partition>> FabricState(events::FmResult* failure) override;
  events::FmResult Carry(const sm::Effect& effect) override;

 private:
  std::unique_ptr<adapters::fm::FabricManagerClient> client_;
};

}  // namespace gfp::plugin::core
