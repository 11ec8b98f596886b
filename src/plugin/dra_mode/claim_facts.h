// A claim's facts as the files and the answer need them, joined from the state (what the journal
// holds of the claim) and the host (each GPU's device nodes, found as Allocate finds them).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "plugin/core/node_inventory.h"
#include "plugin/dra/claim_files.h"
#include "plugin/dra_mode/dra_settings.h"
#include "statemachine/state.h"

namespace gfp::plugin::dra_mode {

// Device name (gpu-0000-1b-00-0) -> BDF of every whole GPU the node serves.
std::map<std::string, std::string> DeviceNamesOfNode(const core::NodeInventory& inventory);

// The prepared claim of `claim` holding `devices` (the allocation's order, one per request
// entry), with each GPU's device nodes; `iommufd` as the host uses it.
Result<dra::PreparedClaim> PreparedClaimOf(const sm::Claim& claim,
                                           const std::vector<sm::Bdf>& devices,
                                           const DraSettings& settings,
                                           const core::NodeInventory& inventory, bool iommufd);

}  // namespace gfp::plugin::dra_mode
