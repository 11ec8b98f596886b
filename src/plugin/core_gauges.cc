#include "plugin/core_gauges.h"

#include <spdlog/spdlog.h>

#include "statemachine/free_partitions.h"

namespace gfp::plugin {
namespace {

std::uint64_t FirstDamagedSeq(core::PluginCore& core) {
  const store::BackgroundVerifier* verifier = core.engine().background_verification();
  return verifier ? verifier->first_damaged_seq() : 0;
}

// What readiness needs in both modes: FM usable, no journal damage.
metrics::ReadinessInputs CollectCommonReadiness(core::PluginCore& core) {
  metrics::ReadinessInputs inputs;
  inputs.fabric_manager_enabled = core.fabric_managed();
  inputs.fabric_manager_usable = core.fabric_manager_usable();
  if (!inputs.fabric_manager_usable) inputs.fabric_manager_problem = core.fabric_manager_problem();
  inputs.first_damaged_seq = FirstDamagedSeq(core);
  const Status journal = core.engine().CheckJournalStillAtPath();
  if (!journal.ok()) inputs.journal_problem = journal.message();
  return inputs;
}

}  // namespace

metrics::GaugeValues CollectGauges(core::PluginCore& core) {
  metrics::GaugeValues values;
  for (const auto& resource : core.inventory().resources) {
    metrics::ResourceDeviceCount count{resource.naming.resource_name, 0, 0};
    for (const core::DeviceView& device : core.Devices(resource.naming.resource_name)) {
      ++(device.healthy ? count.healthy : count.unhealthy);
    }
    values.devices.push_back(std::move(count));
  }
  core.engine().Read([&](const sm::State& s) {
    FillStateGauges(s, values);
    values.fabric_manager_up =
        core.fabric_managed() && s.fm_connected && core.fabric_manager_usable();
    return 0;
  });
  values.journal_first_damaged_seq = FirstDamagedSeq(core);
  values.partitions_free = SchedulableFreePartitions(core);
  return values;
}

std::map<std::size_t, std::size_t> SchedulableFreePartitions(core::PluginCore& core) {
  const bool fm_usable = core.fabric_manager_usable();
  return core.engine().Read([&](const sm::State& s) {
    std::map<std::size_t, std::size_t> free_by_size = sm::FreePartitionsBySize(s);
    // As PluginCore::Devices decides a fabric device's health.
    if (core.fabric_managed() && !(s.fm_connected && fm_usable)) {
      for (auto& [size, count] : free_by_size) count = 0;
    }
    return free_by_size;
  });
}

void FillStateGauges(const sm::State& state, metrics::GaugeValues& values) {
  values.partitions_active = state.active.size();
  values.partitions_free = sm::FreePartitionsBySize(state);
  values.journal_last_seq = state.last_seq;
  values.dra_claims_prepared = PreparedClaims(state);
  values.resource_slice_generation = state.resource_slice.generation;
}

std::size_t PreparedClaims(const sm::State& state) {
  std::size_t prepared = 0;
  for (const auto& [id, allocation] : state.allocations) {
    if (allocation.claim && allocation.claim->prepared) ++prepared;
  }
  return prepared;
}

metrics::ReadinessInputs CollectReadiness(
    core::PluginCore& core, const std::vector<std::unique_ptr<rpc::ResourceServer>>& servers) {
  metrics::ReadinessInputs inputs = CollectCommonReadiness(core);
  for (const auto& server : servers) {
    if (!server->registered())
      inputs.unregistered_resources.push_back(server->naming().resource_name);
  }
  if (servers.empty()) inputs.unregistered_resources.push_back("(serving has not started)");
  return inputs;
}

metrics::ReadinessInputs CollectDraReadiness(core::PluginCore& core, bool registered,
                                             bool slice_published, const std::string& api_problem) {
  metrics::ReadinessInputs inputs = CollectCommonReadiness(core);
  inputs.dra_mode = true;
  inputs.dra_registered = registered;
  inputs.slice_published = slice_published;
  inputs.api_server_problem = api_problem;
  return inputs;
}

void CorePublisher::PublishIfChanged(core::PluginCore& core,
                                     const metrics::ReadinessInputs& readiness) {
  if (readiness.journal_problem != journal_problem_) {
    if (!readiness.journal_problem.empty()) {
      spdlog::error("{}: no more allocations are granted; /readyz fails until serve restarts",
                    readiness.journal_problem);
    }
    journal_problem_ = readiness.journal_problem;
  }
  std::string not_ready = metrics::NotReadyReason(readiness);
  if (not_ready != not_ready_ || !published_) {
    probes_.SetNotReadyReason(not_ready);
    not_ready_ = std::move(not_ready);
  }
  const std::uint64_t version = core.version();
  const std::uint64_t last_seq = core.engine().Read([](const sm::State& s) { return s.last_seq; });
  const std::uint64_t damaged = FirstDamagedSeq(core);
  if (published_ && version == version_ && last_seq == last_seq_ && damaged == first_damaged_seq_) {
    return;
  }
  registry_.Publish(CollectGauges(core));
  published_ = true;
  version_ = version;
  last_seq_ = last_seq;
  first_damaged_seq_ = damaged;
}

}  // namespace gfp::plugin
