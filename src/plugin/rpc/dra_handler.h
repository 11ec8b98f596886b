// What the DRA kubelet plugin's gRPC side (dra_plugin_service.h, dra_registration_service.h) asks
// of the plugin: prepare and unprepare one claim, hear kubelet's registration answer. The claims
// logic implements it elsewhere; this side only checks the wire input and shapes the answers.
// No gRPC here. Called on gRPC's threads: the claims of one call arrive one after the other, but
// two kubelet calls (two pods) may be in the handler at once.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace gfp::plugin::rpc {

struct DraClaimRef {
  std::string uid;
  std::string namespace_name;
  std::string name;
  // Every API call made for the claim ends by then: what is left of the kubelet call's budget
  // (its deadline, less a margin for the answer), shared by all the call's claims.
  std::optional<std::chrono::steady_clock::time_point> api_deadline;
};

struct DraDevice {
  std::vector<std::string> request_names;
  std::string pool_name;
  std::string device_name;
  std::vector<std::string> cdi_device_ids;
};

struct DraPrepareAnswer {
  std::vector<DraDevice> devices;
  std::string error;  // error empty = ok
};

class DraHandler {
 public:
  virtual ~DraHandler() = default;
  virtual DraPrepareAnswer Prepare(const DraClaimRef& claim) = 0;
  virtual std::string Unprepare(const DraClaimRef& claim) = 0;  // error text, empty = ok
  virtual void RegistrationStatus(bool registered, const std::string& error) = 0;
};

}  // namespace gfp::plugin::rpc
