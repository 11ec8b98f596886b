#include "plugin/rpc/dra_registration_service.h"

#include <spdlog/spdlog.h>

#include "common/text_escape.h"

namespace gfp::plugin::rpc {

namespace {
constexpr std::size_t kShownErrorBytes = 1024;  // of kubelet's error text, in the log
}  // namespace

DraRegistrationService::DraRegistrationService(DraHandler& handler, std::string driver,
                                               std::filesystem::path endpoint)
    : handler_(handler), driver_(std::move(driver)), endpoint_(std::move(endpoint)) {}

grpc::Status DraRegistrationService::GetInfo(grpc::ServerContext* /*context*/,
                                             const pluginregistration::InfoRequest* /*request*/,
                                             pluginregistration::PluginInfo* response) {
  response->set_type(kDraPluginType);
  response->set_name(driver_);
  response->set_endpoint(endpoint_.string());
  response->add_supported_versions(kDraServiceVersion);
  return grpc::Status::OK;
}

grpc::Status DraRegistrationService::NotifyRegistrationStatus(
    grpc::ServerContext* /*context*/, const pluginregistration::RegistrationStatus* request,
    pluginregistration::RegistrationStatusResponse* /*response*/) {
  registered_.store(request->plugin_registered());
  if (request->plugin_registered()) {
    spdlog::info("kubelet registered DRA driver {} (endpoint {})", driver_, endpoint_.string());
  } else {
    spdlog::error("kubelet refused to register DRA driver {}: {}", driver_,
                  request->error().empty() ? std::string("(no reason given)")
                                           : EscapeAndTruncate(request->error(), kShownErrorBytes));
  }
  handler_.RegistrationStatus(request->plugin_registered(), request->error());
  return grpc::Status::OK;
}

}  // namespace gfp::plugin::rpc
