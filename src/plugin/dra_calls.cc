#include "plugin/dra_calls.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "common/text_escape.h"
#include "plugin/serve_metrics.h"

namespace gfp::plugin {

rpc::DraPrepareAnswer DraCalls::Prepare(const rpc::DraClaimRef& claim) {
  const auto started = std::chrono::steady_clock::now();
  dra_mode::PrepareOutcome outcome =
      preparer_.Prepare({claim.uid, claim.namespace_name, claim.name}, claim.api_deadline);
  if (ServeMetrics* metrics = metrics_.load()) {
    metrics->registry().RecordDraPrepare(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  rpc::DraPrepareAnswer answer;
  answer.error = outcome.error;
  if (!outcome.error.empty()) {
    spdlog::warn("NodePrepareResources {}/{}: {}", EscapeAndTruncate(claim.namespace_name, 64),
                 EscapeAndTruncate(claim.name, 256), outcome.error);
  }
  for (auto& device : outcome.devices) {
    answer.devices.push_back(
        {{device.request}, device.pool, device.device_name, std::move(device.cdi_device_ids)});
  }
  return answer;
}

std::string DraCalls::Unprepare(const rpc::DraClaimRef& claim) {
  std::string error = preparer_.Unprepare(claim.uid);
  if (!error.empty()) {
    spdlog::warn("NodeUnprepareResources {}/{}: {}", EscapeAndTruncate(claim.namespace_name, 64),
                 EscapeAndTruncate(claim.name, 256), error);
  }
  return error;
}

void DraCalls::RegistrationStatus(bool registered, const std::string& error) {
  // The registration service logs kubelet's answer itself; nothing else depends on it here
  // (DraServer::registered() is what readiness reads).
  if (!registered) spdlog::debug("kubelet refused the DRA registration: {}", error);
}

}  // namespace gfp::plugin
