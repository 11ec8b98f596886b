#include "plugin/rpc/dra_plugin_service.h"

#include <spdlog/spdlog.h>

#include <set>
#include <string_view>
#include <vector>

#include "common/k8s_names.h"
#include "common/text_escape.h"

namespace gfp::plugin::rpc {

namespace dra = k8s::io::kubelet::pkg::apis::dra::v1;

namespace {

constexpr std::size_t kShownBytes = 80;  // of a refused value, in an error or a log line

// One claim of a request, once per uid, with why it is refused (empty: it goes to the handler).
struct CheckedClaim {
  DraClaimRef ref;
  std::string problem;
};

std::string FieldProblem(std::string_view field, std::string_view value,
                         const std::string& problem) {
  if (problem.empty()) return "";
  return "claim " + std::string(field) + " \"" + EscapeAndTruncate(value, kShownBytes) + "\" " +
         problem + "; not a Kubernetes " + std::string(field) + ", refused";
}

std::string ClaimProblem(const dra::Claim& claim) {
  if (auto p = FieldProblem("uid", claim.uid(), UidProblem(claim.uid())); !p.empty()) return p;
  if (auto p = FieldProblem("namespace", claim.namespace_(), DnsLabelProblem(claim.namespace_()));
      !p.empty()) {
    return p;
  }
  return FieldProblem("name", claim.name(), DnsSubdomainProblem(claim.name()));
}

// The claims of a request in order, a repeated uid dropped, each checked.
std::vector<CheckedClaim> CheckClaims(
    const google::protobuf::RepeatedPtrField<dra::Claim>& claims) {
  std::vector<CheckedClaim> checked;
  std::set<std::string_view> seen;
  const bool too_many = static_cast<std::size_t>(claims.size()) > kMaxClaimsPerRequest;
  for (const dra::Claim& claim : claims) {
    if (!seen.insert(claim.uid()).second) continue;
    CheckedClaim entry{{claim.uid(), claim.namespace_(), claim.name(), std::nullopt}, ""};
    entry.problem = too_many ? "claims: the request has " + std::to_string(claims.size()) +
                                   " claims, more than " + std::to_string(kMaxClaimsPerRequest) +
                                   " in one call; refused"
                             : ClaimProblem(claim);
    checked.push_back(std::move(entry));
  }
  return checked;
}

// One log line per request, not per claim: a hostile request must not flood the log.
void LogRefusals(std::string_view call, const std::vector<CheckedClaim>& checked) {
  std::size_t refused = 0;
  const CheckedClaim* first = nullptr;
  for (const CheckedClaim& claim : checked) {
    if (claim.problem.empty()) continue;
    if (++refused == 1) first = &claim;
  }
  if (first == nullptr) return;
  spdlog::warn("{}: refused {} of {} claims without handling them; first: {}", call, refused,
               checked.size(), first->problem);
}

void SetDevices(const std::vector<DraDevice>& devices, dra::NodePrepareResourceResponse* out) {
  for (const DraDevice& device : devices) {
    dra::Device* wire = out->add_devices();
    for (const std::string& request : device.request_names) wire->add_request_names(request);
    wire->set_pool_name(device.pool_name);
    wire->set_device_name(device.device_name);
    for (const std::string& id : device.cdi_device_ids) wire->add_cdi_device_ids(id);
  }
}

// The API calls of one NodePrepareResources end by kubelet's deadline less a margin for the
// answer, and never later than kMaxApiTimePerCall: a hung API server fails the call's claims
// in time for kubelet to hear why, rather than past its own timeout.
std::chrono::steady_clock::time_point ApiDeadlineOf(const grpc::ServerContext* context) {
  using std::chrono::steady_clock;
  using std::chrono::system_clock;
  constexpr std::chrono::seconds kMaxApiTimePerCall{30};
  constexpr std::chrono::seconds kAnswerMargin{2};
  const auto now = steady_clock::now();
  auto deadline = now + kMaxApiTimePerCall;
  if (context != nullptr && context->deadline() != system_clock::time_point::max()) {
    const auto left = context->deadline() - system_clock::now() - kAnswerMargin;
    deadline = std::min(deadline, now + std::chrono::duration_cast<steady_clock::duration>(left));
  }
  return deadline;
}

}  // namespace

DraPluginService::DraPluginService(DraHandler& handler) : handler_(handler) {}

grpc::Status DraPluginService::NodePrepareResources(grpc::ServerContext* context,
                                                    const dra::NodePrepareResourcesRequest* request,
                                                    dra::NodePrepareResourcesResponse* response) {
  const auto api_deadline = ApiDeadlineOf(context);
  std::vector<CheckedClaim> checked = CheckClaims(request->claims());
  for (CheckedClaim& claim : checked) claim.ref.api_deadline = api_deadline;
  LogRefusals("NodePrepareResources", checked);
  auto& answers = *response->mutable_claims();
  for (const CheckedClaim& claim : checked) {
    dra::NodePrepareResourceResponse& answer = answers[claim.ref.uid];
    if (!claim.problem.empty()) {
      answer.set_error(claim.problem);
      continue;
    }
    const DraPrepareAnswer prepared = handler_.Prepare(claim.ref);
    if (!prepared.error.empty()) {
      answer.set_error(prepared.error);
      continue;
    }
    SetDevices(prepared.devices, &answer);
  }
  return grpc::Status::OK;
}

grpc::Status DraPluginService::NodeUnprepareResources(
    grpc::ServerContext* /*context*/, const dra::NodeUnprepareResourcesRequest* request,
    dra::NodeUnprepareResourcesResponse* response) {
  const std::vector<CheckedClaim> checked = CheckClaims(request->claims());
  LogRefusals("NodeUnprepareResources", checked);
  auto& answers = *response->mutable_claims();
  for (const CheckedClaim& claim : checked) {
    dra::NodeUnprepareResourceResponse& answer = answers[claim.ref.uid];
    answer.set_error(claim.problem.empty() ? handler_.Unprepare(claim.ref) : claim.problem);
  }
  return grpc::Status::OK;
}

}  // namespace gfp::plugin::rpc
