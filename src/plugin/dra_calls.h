// kubelet's DRA calls (rpc::DraHandler, on gRPC threads) onto DRA mode's ClaimPreparer, timed
// for gpu_fabric_dra_prepare_seconds, and kubelet's registration answer logged.
#pragma once

#include <atomic>

#include "plugin/dra_mode/claim_preparer.h"
#include "plugin/rpc/dra_handler.h"

namespace gfp::plugin {

class ServeMetrics;

class DraCalls : public rpc::DraHandler {
 public:
  explicit DraCalls(dra_mode::ClaimPreparer& preparer) : preparer_(preparer) {}
  // Null without --metrics-address.
  void SetMetrics(ServeMetrics* metrics) { metrics_.store(metrics); }

  rpc::DraPrepareAnswer Prepare(const rpc::DraClaimRef& claim) override;
  std::string Unprepare(const rpc::DraClaimRef& claim) override;
  void RegistrationStatus(bool registered, const std::string& error) override;

 private:
  dra_mode::ClaimPreparer& preparer_;
  std::atomic<ServeMetrics*> metrics_{nullptr};
};

}  // namespace gfp::plugin
