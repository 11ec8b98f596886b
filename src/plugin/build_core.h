// The composition root: the one place that turns a ServeConfig into a started PluginCore
// (journal and engine, pci.ids, node scan, module mapping, the FabricPort, Start).
// `serve` (Service::Create), the simulation tests and the benchmarks all build their core here;
// what they need differently is an override, not a second wiring.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "engine/engine.h"
#include "plugin/core/fabric_port.h"
#include "plugin/core/plugin_core.h"
#include "plugin/serve_config.h"

namespace gfp::plugin {

// What tests and benchmarks tune; `serve` uses the defaults.
struct CoreOverrides {
  engine::EngineOptions engine;
  // The FM client's reconnect backoff sleeps for real; simulations keep it tiny.
  std::optional<std::chrono::milliseconds> fm_reconnect_backoff_initial;
  std::optional<std::chrono::milliseconds> fm_reconnect_backoff_max;
  // With --fabric-manager: builds the FabricPort instead of the SDK client (the deterministic
  // simulation's in-memory Fabric Manager). Unset: FmLibraryPort over config.fm_library.
  std::function<Result<std::unique_ptr<core::FabricPort>>(const ServeConfig&)> fabric;
};

// Opens and recovers the journal, scans the node, loads pci.ids and (with Fabric Manager) the
// module mapping and the FM library, builds the PluginCore and journals its start. Errors are
// start-up errors. The core has not talked to Fabric Manager yet (SyncFabricManager does).
Result<std::unique_ptr<core::PluginCore>> BuildCore(const ServeConfig& config,
                                                    const std::string& version,
                                                    core::Clock clock = core::SystemClock,
                                                    const CoreOverrides& overrides = {});

}  // namespace gfp::plugin
