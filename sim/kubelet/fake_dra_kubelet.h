// The fake kubelet's DRA side for tests and the demo, over real gRPC on Unix sockets: the plugin
// watcher's registration of a DRA driver and the DRAPlugin v1 calls kubelet makes.
//
// - Discover(driver): like kubelet's plugin watcher, dials <registry-dir>/<driver>-reg.sock, asks
//   GetInfo, checks it (type "DRAPlugin", the name, an absolute endpoint, "v1.DRAPlugin" among the
//   versions), dials the endpoint and answers NotifyRegistrationStatus(true); a check or dial
//   that fails is answered NotifyRegistrationStatus(false, reason) and returned as the error.
// - Prepare / Unprepare: NodePrepareResources / NodeUnprepareResources on the discovered
//   endpoint, the answer per claim uid.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "dra/v1/api.grpc.pb.h"
#include "pluginregistration/v1/api.pb.h"
#include "sim/kubelet/rpc_outcome.h"

namespace gfp::kubelet {

struct FakeDraKubeletOptions {
  std::chrono::milliseconds dial_timeout{10'000};
  std::chrono::milliseconds call_timeout{45'000};  // kubelet's DRA plugin client timeout
};

// A claim as kubelet sends it.
struct DraClaim {
  std::string uid;
  std::string namespace_name;
  std::string name;
};

// The wire's Device and per-claim answers, as plain structs.
struct DraDeviceAnswer {
  std::vector<std::string> request_names;
  std::string pool_name;
  std::string device_name;
  std::vector<std::string> cdi_device_ids;
  bool operator==(const DraDeviceAnswer&) const = default;
};
struct DraClaimAnswer {
  std::vector<DraDeviceAnswer> devices;  // Prepare only
  std::string error;
};
using DraAnswers = std::map<std::string, DraClaimAnswer>;  // by claim uid

// One NotifyRegistrationStatus the fake kubelet sent.
struct DraRegistrationNotice {
  bool registered = false;
  std::string error;
};

class FakeDraKubelet {
 public:
  explicit FakeDraKubelet(std::filesystem::path registry_dir, FakeDraKubeletOptions options = {});
  ~FakeDraKubelet();
  FakeDraKubelet(const FakeDraKubelet&) = delete;
  FakeDraKubelet& operator=(const FakeDraKubelet&) = delete;

  // Registers `driver` as kubelet's plugin watcher does, each dial waiting up to `deadline`.
  // Replaces an earlier registration.
  Status Discover(const std::string& driver, std::chrono::milliseconds deadline);

  // FAILED_PRECONDITION before a successful Discover.
  RpcOutcome<DraAnswers> Prepare(const std::vector<DraClaim>& claims);
  RpcOutcome<DraAnswers> Unprepare(const std::vector<DraClaim>& claims);
  // The raw calls, for requests no well-formed claim list can express.
  RpcOutcome<k8s::io::kubelet::pkg::apis::dra::v1::NodePrepareResourcesResponse> PrepareRaw(
      const k8s::io::kubelet::pkg::apis::dra::v1::NodePrepareResourcesRequest& request);
  RpcOutcome<k8s::io::kubelet::pkg::apis::dra::v1::NodeUnprepareResourcesResponse> UnprepareRaw(
      const k8s::io::kubelet::pkg::apis::dra::v1::NodeUnprepareResourcesRequest& request);

  // The latest GetInfo answer (also when it was refused).
  std::optional<pluginregistration::PluginInfo> info() const { return info_; }
  // Every NotifyRegistrationStatus sent, in order.
  const std::vector<DraRegistrationNotice>& notices() const { return notices_; }
  bool registered() const { return stub_ != nullptr; }
  // Forgets the registration (kubelet restarted, or the driver's sockets were wiped).
  void Forget();

  std::filesystem::path registration_socket(const std::string& driver) const {
    return registry_dir_ / (driver + "-reg.sock");
  }

 private:
  const std::filesystem::path registry_dir_;
  const FakeDraKubeletOptions options_;
  std::optional<pluginregistration::PluginInfo> info_;
  std::vector<DraRegistrationNotice> notices_;
  std::unique_ptr<k8s::io::kubelet::pkg::apis::dra::v1::DRAPlugin::Stub> stub_;
};

}  // namespace gfp::kubelet
