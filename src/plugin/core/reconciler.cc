#include "plugin/core/reconciler.h"

#include <spdlog/spdlog.h>

#include "common/log_context.h"
#include "plugin/core/log_scope.h"

namespace gfp::plugin::core {

Reconciler::Reconciler(const ServeConfig& config, engine::Engine& engine, SagaRunner& sagas,
                       FabricSync& fabric_sync, const Clock& clock)
    : config_(config), engine_(engine), sagas_(sagas), fabric_sync_(fabric_sync), clock_(clock) {}

void Reconciler::Reconcile(
    const std::vector<adapters::kubelet::ContainerDeviceAssignment>& containers) {
  sm::ObservePodResources observed;
  observed.now = clock_();
  for (const auto& c : containers) {
    observed.containers.push_back(
        {c.pod_namespace, c.pod_name, c.container_name, c.resource_name, c.device_ids});
  }
  auto bound = sagas_.ExecuteLogged(observed);
  if (!bound.ok()) {
    spdlog::error("journaling pods seen: {}", bound.status().message());
    return;
  }
  const sm::ReleaseTracker::Due due =
      release_tracker_.Observe(engine_.CopyState(), observed.containers, observed.now);
  ReleaseAllocations(due);
  ReleaseOrphans(due);
  fabric_sync_.Sync(true, release_tracker_.held());
}

void Reconciler::ReleaseAllocations(const sm::ReleaseTracker::Due& due) {
  for (const auto& id : due.newly_absent) {
    ScopedLogContext allocation_scope;
    AddAllocation(allocation_scope, engine_, id);
    spdlog::debug(
        "{}: its devices are in no pod; release scheduled in {} ms unless a pod shows "
        "them again",
        id, config_.release_grace.count());
  }
  for (const auto& id : due.allocations) {
    ScopedLogContext allocation_scope;
    AddAllocation(allocation_scope, engine_, id);
    spdlog::info("releasing {}: its devices were in no pod for {} ms", id,
                 config_.release_grace.count());
    sm::ReleaseAllocation release;
    release.now = clock_();
    release.allocation_id = id;
    release.detail = "devices absent from every pod for the release grace";
    auto done = sagas_.Run(release);
    if (!done.ok()) spdlog::error("releasing an allocation: {}", done.status().message());
  }
}

void Reconciler::ReleaseOrphans(const sm::ReleaseTracker::Due& due) {
  for (const auto pid : due.orphan_partitions) {
    ScopedLogContext partition_scope;
    AddPartition(partition_scope, engine_, pid);
    spdlog::info("releasing ownerless partition {}: no pod holds its GPUs", pid);
    auto done = sagas_.Run(sm::ReleaseOrphanPartition{clock_(), pid, "no pod holds its GPUs"});
    if (!done.ok()) spdlog::error("releasing an ownerless partition: {}", done.status().message());
  }
}

}  // namespace gfp::plugin::core
