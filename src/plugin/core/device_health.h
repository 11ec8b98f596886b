// Device health as the host has it now: the driver, IOMMU group, identity and /dev node of every
// served device re-checked against what was discovered, by kind. A change is journaled
// (DeviceHealthChanged), so the state machine refuses an unhealthy device with its reason and
// ListAndWatch reports it. Callers hold PluginCore's operation lock.
#pragma once

#include "common/status.h"
#include "engine/engine.h"
#include "plugin/core/change_counter.h"
#include "plugin/core/node_inventory.h"
#include "plugin/core/plugin_clock.h"
#include "plugin/serve_config.h"

namespace gfp::plugin::core {

class DeviceHealth {
 public:
  DeviceHealth(const ServeConfig& config, const NodeInventory& inventory, engine::Engine& engine,
               ChangeCounter& changes, const Clock& clock);

  // The device as the host has it now (driver, group, type, /dev node), by its kind.
  Status HostCheck(const ServedDevice& device) const;

  // Re-checks one device and journals its health; returns whether it changed. A journal
  // failure is returned (Allocate fails with it rather than deciding on an old health).
  Result<bool> Recheck(const ServedDevice& device);

  // Re-checks every served device (the serve loop's health pass); journal failures are logged.
  void RecheckAll();

 private:
  const ServeConfig& config_;
  const NodeInventory& inventory_;
  engine::Engine& engine_;
  ChangeCounter& changes_;
  const Clock& clock_;
};

}  // namespace gfp::plugin::core
