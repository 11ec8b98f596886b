// The FabricPort `serve` uses: Fabric Manager's SDK (libnvfm.so.1) through the FM adapter's
// client (dlopen, bounded calls on a worker thread, reconnect with backoff), its answers turned
// into journal form.
#pragma once

#include <memory>
#include <vector>

#include "adapters/fm/fabric_manager_client.h"
#include "common/status.h"
#include "plugin/core/fabric_port.h"

namespace gfp::plugin {

events::FmResult ToEventResult(const fm::FmStatus& status);
// FM's supported partitions in journal form, sorted by id; `degraded` (FM's unsupported list)
// are marked unsupported.
std::vector<events::Partition> ToEventPartitions(const std::vector<fm::PartitionInfo>& supported,
                                                 const std::vector<std::uint32_t>& degraded);

class FmLibraryPort final : public FabricPort {
 public:
  explicit FmLibraryPort(std::unique_ptr<fm::FabricManagerClient> client);

  events::FmResult Connect() override;
  bool connected() const override;
  int connect_struct_version() const override;
  const std::string& address() const override;
  Result<std::vector<events::Partition>> FabricState(events::FmResult* failure) override;
  events::FmResult Carry(const sm::Effect& effect) override;

 private:
  std::unique_ptr<fm::FabricManagerClient> client_;
};

}  // namespace gfp::plugin
