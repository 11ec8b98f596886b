// One reconciliation pass with a successful PodResources List (SPEC §4.6): journal the pods that
// now hold allocated devices, release allocations whose devices were in no pod for the release
// grace, release partitions no allocation owns and no pod holds, then sync Fabric Manager (which
// repairs drift). Callers hold PluginCore's operation lock.
#pragma once

#include <vector>

#include "adapters/kubelet/pod_device_assignment.h"
#include "engine/engine.h"
#include "plugin/core/fabric_sync.h"
#include "plugin/core/plugin_clock.h"
#include "plugin/core/saga_runner.h"
#include "plugin/serve_config.h"
#include "statemachine/release_tracker.h"

namespace gfp::plugin::core {

class Reconciler {
 public:
  Reconciler(const ServeConfig& config, engine::Engine& engine, SagaRunner& sagas,
             FabricSync& fabric_sync, const Clock& clock);

  void Reconcile(const std::vector<adapters::kubelet::ContainerDeviceAssignment>& containers);

 private:
  void ReleaseAllocations(const sm::ReleaseTracker::Due& due);
  void ReleaseOrphans(const sm::ReleaseTracker::Due& due);

  const ServeConfig& config_;
  engine::Engine& engine_;
  SagaRunner& sagas_;
  FabricSync& fabric_sync_;
  const Clock& clock_;
  sm::ReleaseTracker release_tracker_;
};

}  // namespace gfp::plugin::core
