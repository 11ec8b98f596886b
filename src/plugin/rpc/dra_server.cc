#include "plugin/rpc/dra_server.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace gfp::plugin::rpc {

namespace {

// <plugins-dir>/<driver>/ with mode 0750 (kubelet, root, reads it; the metadata files live here).
Status MakeDriverDir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Internal("cannot create " + dir.string() + ": " + ec.message());
  if (!std::filesystem::is_directory(std::filesystem::symlink_status(dir, ec))) {
    return FailedPrecondition(dir.string() + " is not a directory; refusing to serve there");
  }
  if (::chmod(dir.c_str(), 0750) != 0) {
    return Internal("cannot set mode 0750 on " + dir.string() + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

DraServer::DraServer(DraHandler& handler, std::string driver,
                     const std::filesystem::path& registry_dir,
                     const std::filesystem::path& plugins_dir)
    : driver_(std::move(driver)),
      dra_service_(handler),
      // The endpoint is absolute: kubelet dials it as it is.
      registration_service_(handler, driver_,
                            std::filesystem::absolute(plugins_dir / driver_ / "dra.sock")),
      dra_socket_("DRA driver " + driver_, plugins_dir / driver_ / "dra.sock"),
      registration_socket_("DRA registration of " + driver_,
                           registry_dir / (driver_ + "-reg.sock")) {}

DraServer::~DraServer() { Stop(); }

Status DraServer::Serve() {
  if (!dra_socket_.serving()) {
    GFP_RETURN_IF_ERROR(MakeDriverDir(dra_socket_.socket_path().parent_path()));
    GFP_RETURN_IF_ERROR(dra_socket_.Serve({&dra_service_}));
  }
  if (!registration_socket_.serving()) {
    std::error_code ec;
    const auto registry_dir = registration_socket_.socket_path().parent_path();
    std::filesystem::create_directories(registry_dir, ec);
    if (ec) return Internal("cannot create " + registry_dir.string() + ": " + ec.message());
    registration_service_.ForgetRegistration();
    GFP_RETURN_IF_ERROR(registration_socket_.Serve({&registration_service_}));
  }
  last_serve_failure_.clear();
  return Status::Ok();
}

void DraServer::ReportServeFailure(const Status& status) {
  const std::string text = "cannot serve DRA driver " + driver_ + ": " + status.message() +
                           " (retrying; a socket is never taken over)";
  if (text == last_serve_failure_) {
    spdlog::debug("{}", text);
    return;
  }
  spdlog::error("{}", text);
  last_serve_failure_ = text;
}

bool DraServer::SocketLost() const {
  return dra_socket_.SocketLost() || registration_socket_.SocketLost();
}

void DraServer::Stop() {
  // The registration first: kubelet must not be told of an endpoint that is going away.
  registration_socket_.Stop();
  registration_service_.ForgetRegistration();
  dra_socket_.Stop();
}

}  // namespace gfp::plugin::rpc
