#include "sim/kubelet/fake_dra_kubelet.h"

#include <grpcpp/client_context.h>

#include <algorithm>

#include "adapters/kubelet/grpc_lifetime.h"
#include "adapters/kubelet/grpc_status.h"
#include "adapters/kubelet/unix_channel.h"
#include "pluginregistration/v1/api.grpc.pb.h"

namespace gfp::kubelet {

namespace dra = k8s::io::kubelet::pkg::apis::dra::v1;

namespace {

std::chrono::system_clock::time_point DeadlineAfter(std::chrono::milliseconds timeout) {
  return std::chrono::system_clock::now() + timeout;
}

std::shared_ptr<grpc::Channel> Dial(const std::filesystem::path& socket,
                                    std::chrono::milliseconds deadline) {
  auto channel = adapters::kubelet::MakeUnixSocketChannel(socket.string());
  return channel->WaitForConnected(DeadlineAfter(deadline)) ? channel : nullptr;
}

// Why kubelet's DRA registration handler would refuse this GetInfo answer; empty: it takes it.
std::string InfoProblem(const pluginregistration::PluginInfo& info, const std::string& driver) {
  if (info.type() != "DRAPlugin") return "plugin type \"" + info.type() + "\" is not DRAPlugin";
  if (info.name() != driver) {
    return "plugin name \"" + info.name() + "\" differs from its socket's driver \"" + driver +
           "\"";
  }
  if (info.endpoint().empty() || !std::filesystem::path(info.endpoint()).is_absolute()) {
    return "endpoint \"" + info.endpoint() + "\" is not an absolute path";
  }
  const auto& versions = info.supported_versions();
  if (std::find(versions.begin(), versions.end(), "v1.DRAPlugin") == versions.end()) {
    return "none of the supported versions is v1.DRAPlugin";
  }
  return "";
}

DraAnswers PrepareAnswers(const dra::NodePrepareResourcesResponse& response) {
  DraAnswers answers;
  for (const auto& [uid, claim] : response.claims()) {
    DraClaimAnswer& answer = answers[uid];
    answer.error = claim.error();
    for (const dra::Device& device : claim.devices()) {
      answer.devices.push_back({{device.request_names().begin(), device.request_names().end()},
                                device.pool_name(),
                                device.device_name(),
                                {device.cdi_device_ids().begin(), device.cdi_device_ids().end()}});
    }
  }
  return answers;
}

template <typename Request>
Request RequestOf(const std::vector<DraClaim>& claims) {
  Request request;
  for (const DraClaim& claim : claims) {
    dra::Claim* wire = request.add_claims();
    wire->set_uid(claim.uid);
    wire->set_namespace_(claim.namespace_name);
    wire->set_name(claim.name);
  }
  return request;
}

}  // namespace

FakeDraKubelet::FakeDraKubelet(std::filesystem::path registry_dir, FakeDraKubeletOptions options)
    : registry_dir_(std::move(registry_dir)), options_(options) {
  adapters::kubelet::KeepGrpcInitialized();
}

FakeDraKubelet::~FakeDraKubelet() = default;

void FakeDraKubelet::Forget() { stub_.reset(); }

Status FakeDraKubelet::Discover(const std::string& driver, std::chrono::milliseconds deadline) {
  Forget();
  info_.reset();
  const auto socket = registration_socket(driver);
  auto channel = Dial(socket, deadline);
  if (!channel) {
    return Unavailable("RegisterPlugin error -- dial failed at socket " + socket.string());
  }
  auto registration = pluginregistration::Registration::NewStub(channel);
  pluginregistration::PluginInfo info;
  {
    grpc::ClientContext context;
    context.set_deadline(DeadlineAfter(deadline));
    GFP_RETURN_IF_ERROR(adapters::kubelet::StatusFromGrpc(
        registration->GetInfo(&context, pluginregistration::InfoRequest(), &info),
        "RegisterPlugin error -- failed to get plugin info using RPC GetInfo at socket " +
            socket.string()));
  }
  info_ = info;
  std::string problem = InfoProblem(info, driver);
  std::shared_ptr<grpc::Channel> endpoint;
  if (problem.empty()) {
    endpoint = Dial(info.endpoint(), deadline);
    if (!endpoint) problem = "cannot connect to the endpoint " + info.endpoint();
  }
  pluginregistration::RegistrationStatus status;
  status.set_plugin_registered(problem.empty());
  if (!problem.empty()) {
    status.set_error("RegisterPlugin error -- plugin validation failed with err: " + problem);
  }
  grpc::ClientContext context;
  context.set_deadline(DeadlineAfter(deadline));
  pluginregistration::RegistrationStatusResponse ignored;
  const grpc::Status notified = registration->NotifyRegistrationStatus(&context, status, &ignored);
  notices_.push_back({status.plugin_registered(), status.error()});
  if (!problem.empty()) return FailedPrecondition(status.error());
  GFP_RETURN_IF_ERROR(adapters::kubelet::StatusFromGrpc(
      notified, "NotifyRegistrationStatus to " + socket.string()));
  stub_ = dra::DRAPlugin::NewStub(endpoint);
  return Status::Ok();
}

RpcOutcome<dra::NodePrepareResourcesResponse> FakeDraKubelet::PrepareRaw(
    const dra::NodePrepareResourcesRequest& request) {
  RpcOutcome<dra::NodePrepareResourcesResponse> out;
  if (!stub_) {
    out.status = grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "no DRA driver registered");
    return out;
  }
  grpc::ClientContext context;
  context.set_deadline(DeadlineAfter(options_.call_timeout));
  out.status = stub_->NodePrepareResources(&context, request, &out.response);
  return out;
}

RpcOutcome<dra::NodeUnprepareResourcesResponse> FakeDraKubelet::UnprepareRaw(
    const dra::NodeUnprepareResourcesRequest& request) {
  RpcOutcome<dra::NodeUnprepareResourcesResponse> out;
  if (!stub_) {
    out.status = grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "no DRA driver registered");
    return out;
  }
  grpc::ClientContext context;
  context.set_deadline(DeadlineAfter(options_.call_timeout));
  out.status = stub_->NodeUnprepareResources(&context, request, &out.response);
  return out;
}

RpcOutcome<DraAnswers> FakeDraKubelet::Prepare(const std::vector<DraClaim>& claims) {
  const auto raw = PrepareRaw(RequestOf<dra::NodePrepareResourcesRequest>(claims));
  RpcOutcome<DraAnswers> out;
  out.status = raw.status;
  if (raw.ok()) out.response = PrepareAnswers(raw.response);
  return out;
}

RpcOutcome<DraAnswers> FakeDraKubelet::Unprepare(const std::vector<DraClaim>& claims) {
  const auto raw = UnprepareRaw(RequestOf<dra::NodeUnprepareResourcesRequest>(claims));
  RpcOutcome<DraAnswers> out;
  out.status = raw.status;
  if (!raw.ok()) return out;
  for (const auto& [uid, claim] : raw.response.claims()) out.response[uid].error = claim.error();
  return out;
}

}  // namespace gfp::kubelet
