// The plugin's side of Fabric Manager: carries out the state machine's effects through the FM
// client and turns what FM says into command data (partition tables, outcomes with FM names).
#pragma once

#include <memory>
#include <vector>

#include "adapters/fm/fabric_manager_client.h"
#include "common/status.h"
#include "statemachine/decide.h"
#include "statemachine/events.pb.h"

namespace gfp::plugin {

events::FmResult ToEventResult(const fm::FmStatus& status);

class FabricLink {
 public:
  explicit FabricLink(std::unique_ptr<fm::FabricManagerClient> client);

  // Connects (or checks the connection); the result in journal form.
  events::FmResult Connect();
  bool connected() const;
  int connect_struct_version() const;
  const std::string& address() const;

  // FM's supported partitions with isActive flags, degraded ones marked unsupported.
  Result<std::vector<events::Partition>> FabricState(events::FmResult* failure);

  // Carries out one activate / deactivate / set-activated effect.
  events::FmResult Carry(const sm::Effect& effect);

  fm::FabricManagerClient& client() { return *client_; }

 private:
  std::unique_ptr<fm::FabricManagerClient> client_;
};

}  // namespace gfp::plugin
