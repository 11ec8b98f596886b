#include "adapters/fm/fabric_manager_client.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <thread>

#include "adapters/fm/fm_call_error.h"
#include "adapters/fm/fm_decode.h"
#include "adapters/fm/fm_pci_device.h"
#include "adapters/fm/fm_return_codes.h"

namespace gfp::adapters::fm {
namespace {

// --log-level=debug: one line per SDK call, "Fabric Manager call fmActivateFabricPartition(3)
// -> FM_ST_IN_USE in 0.4 ms".
void LogCall(const std::string& what, const FmCallRunner::RunResult& result,
             std::chrono::steady_clock::duration took) {
  if (!spdlog::should_log(spdlog::level::debug)) return;
  const double ms = std::chrono::duration<double, std::milli>(took).count();
  switch (result.outcome) {
    case FmCallRunner::Outcome::kCompleted:
      spdlog::debug("Fabric Manager call {} -> {} in {:.1f} ms", what, FmReturnName(result.code),
                    ms);
      return;
    case FmCallRunner::Outcome::kTimedOut:
      spdlog::debug("Fabric Manager call {} did not return in {:.1f} ms", what, ms);
      return;
    case FmCallRunner::Outcome::kBusy:
      spdlog::debug("Fabric Manager call {} not attempted: an earlier call has not returned", what);
      return;
  }
}

}  // namespace

const char* ConnectionStateName(ConnectionState state) {
  switch (state) {
    case ConnectionState::kDisconnected:
      return "disconnected";
    case ConnectionState::kConnected:
      return "connected";
    case ConnectionState::kBroken:
      return "broken";
  }
  return "unknown";
}

Result<std::unique_ptr<FabricManagerClient>> FabricManagerClient::Create(
    FabricManagerConfig config) {
  GFP_ASSIGN_OR_RETURN(auto library, FabricManagerLibrary::Load(config.library_path));
  return Create(std::move(config), std::move(library));
}

Result<std::unique_ptr<FabricManagerClient>> FabricManagerClient::Create(
    FabricManagerConfig config, std::shared_ptr<const FabricManagerLibrary> library) {
  if (library == nullptr) return InvalidArgument("Fabric Manager library is not loaded");
  GFP_ASSIGN_OR_RETURN(FmAddress address, ParseFmAddress(config.address));
  if (config.connect_timeout.count() <= 0 || config.connect_timeout.count() > UINT_MAX) {
    return InvalidArgument("Fabric Manager connect timeout must be between 1 ms and " +
                           std::to_string(UINT_MAX) + " ms, got " +
                           std::to_string(config.connect_timeout.count()) + " ms");
  }
  if (config.call_deadline.count() <= 0) {
    return InvalidArgument("Fabric Manager call deadline must be positive, got " +
                           std::to_string(config.call_deadline.count()) + " ms");
  }
  if (config.reconnect_attempts < 0) {
    return InvalidArgument("Fabric Manager reconnect attempts must not be negative");
  }
  return std::unique_ptr<FabricManagerClient>(
      new FabricManagerClient(std::move(config), std::move(address), std::move(library)));
}

FabricManagerClient::FabricManagerClient(FabricManagerConfig config, FmAddress address,
                                         std::shared_ptr<const FabricManagerLibrary> library)
    : config_(std::move(config)),
      address_(std::move(address)),
      library_(std::move(library)),
      runner_(std::make_unique<FmCallRunner>(config_.call_deadline)) {}

FabricManagerClient::~FabricManagerClient() { Disconnect(); }

FmStatus FabricManagerClient::RunCall(const std::string& what, std::function<int()> call,
                                      const Hint& hint) {
  const auto started = std::chrono::steady_clock::now();
  FmCallRunner::RunResult result = runner_->Run(std::move(call), config_.call_deadline);
  LogCall(what, result, std::chrono::steady_clock::now() - started);
  switch (result.outcome) {
    case FmCallRunner::Outcome::kBusy:
      state_ = ConnectionState::kBroken;
      return BusyError(what);
    case FmCallRunner::Outcome::kTimedOut:
      spdlog::warn("Fabric Manager call {} did not return within {} ms; connection marked broken",
                   what, config_.call_deadline.count());
      state_ = ConnectionState::kBroken;
      return DeadlineError(what, config_.call_deadline);
    case FmCallRunner::Outcome::kCompleted:
      break;
  }
  if (result.code == abi::kSuccess) return FmStatus();
  if (result.code == abi::kConnectionNotValid) state_ = ConnectionState::kBroken;
  return LibraryError(what, result.code, hint);
}

FmStatus FabricManagerClient::ConnectWithStruct(int struct_version) {
  auto library = library_;
  auto handle = std::make_shared<abi::fmHandle_t>(nullptr);
  const std::string info = address_.AddressInfo();  // length checked by ParseFmAddress
  const auto timeout = static_cast<unsigned>(config_.connect_timeout.count());
  const unsigned unix_flag = address_.is_unix_socket ? 1U : 0U;
  std::function<int()> call;
  if (struct_version == 2) {
    auto params = std::make_shared<abi::ConnectParamsV2>();
    params->version = abi::kConnectParamsV2Version;
    std::memcpy(params->addressInfo, info.c_str(), info.size() + 1);
    params->timeoutMs = timeout;
    params->addressIsUnixSocket = unix_flag;
    params->addressType = address_.is_unix_socket ? abi::kAddrUnix : abi::kAddrInet;
    call = [library, params, handle] {
      return library->fn().fmConnect(params.get(), handle.get());
    };
  } else {
    auto params = std::make_shared<abi::ConnectParamsV1>();
    params->version = abi::kConnectParamsV1Version;
    std::memcpy(params->addressInfo, info.c_str(), info.size() + 1);
    params->timeoutMs = timeout;
    params->addressIsUnixSocket = unix_flag;
    call = [library, params, handle] {
      return library->fn().fmConnect(params.get(), handle.get());
    };
  }
  const std::string what = "fmConnect(" + info + ", v" + std::to_string(struct_version) + ")";
  FmStatus status = RunCall(what, std::move(call), ConnectHint);
  if (!status.ok()) return status;
  if (*handle == nullptr) {
    return MakeError(what, abi::kGenericError, "returned FM_ST_SUCCESS but no handle", false);
  }
  handle_ = *handle;
  connect_struct_version_ = struct_version;
  return FmStatus();
}

void FabricManagerClient::DisconnectLocked() {
  if (handle_ == nullptr) return;
  auto library = library_;
  abi::fmHandle_t handle = handle_;
  handle_ = nullptr;
  // Best effort: the handle may already be invalid, which is why we are reconnecting.
  RunCall(
      "fmDisconnect", [library, handle] { return library->fn().fmDisconnect(handle); }, nullptr)
      .status()
      .IgnoreError();
}

FmStatus FabricManagerClient::ConnectLocked() {
  const ConnectionState before = state_.load();
  auto fail = [&](FmStatus status) {
    state_ = before == ConnectionState::kDisconnected ? ConnectionState::kDisconnected
                                                      : ConnectionState::kBroken;
    return status;
  };
  if (runner_->HasHungCall()) {
    return fail(BusyError("fmConnect"));
  }
  DisconnectLocked();
  if (!library_initialised_) {
    auto library = library_;
    FmStatus init = RunCall(
        "fmLibInit", [library] { return library->fn().fmLibInit(); }, nullptr);
    // IN_USE: the process-global library was already initialised (e.g. by another client).
    if (!init.ok() && init.fm_code() != abi::kInUse) return fail(init);
    library_initialised_ = true;
  }
  FmStatus status = ConnectWithStruct(2);
  if (!status.ok() && status.error().from_library && status.fm_code() == abi::kVersionMismatch) {
    spdlog::info("Fabric Manager rejected the v2 connect struct; retrying with v1");
    status = ConnectWithStruct(1);
  }
  if (!status.ok()) return fail(status);
  state_ = ConnectionState::kConnected;
  return status;
}

bool FabricManagerClient::HasHungCall() const { return runner_->HasHungCall(); }

FmStatus FabricManagerClient::Connect() {
  std::lock_guard lock(call_mutex_);
  return ConnectLocked();
}

void FabricManagerClient::Disconnect() {
  std::lock_guard lock(call_mutex_);
  if (!runner_->HasHungCall()) DisconnectLocked();
  handle_ = nullptr;
  state_ = ConnectionState::kDisconnected;
}

FmStatus FabricManagerClient::CallWithReconnect(const std::string& what, const CallFactory& factory,
                                                const Hint& hint) {
  std::lock_guard lock(call_mutex_);
  auto backoff = config_.reconnect_backoff_initial;
  auto retryable = [](const FmStatus& s) {
    return s.error().from_library && s.fm_code() == abi::kConnectionNotValid;
  };
  for (int attempt = 0;; ++attempt) {
    const bool may_retry = attempt < config_.reconnect_attempts;
    FmStatus status;
    if (state_.load() != ConnectionState::kConnected || handle_ == nullptr) {
      status = ConnectLocked();
      if (!status.ok()) {
        FmError error = status.error();
        error.message = what + ": cannot connect to Fabric Manager: " + error.message;
        status = FmStatus(std::move(error));
      }
    }
    if (status.ok()) status = RunCall(what, factory(handle_), hint);
    if (status.ok() || !retryable(status) || !may_retry) return status;
    spdlog::warn("{}; reconnecting in {} ms (attempt {} of {})", status.error().message,
                 backoff.count(), attempt + 1, config_.reconnect_attempts);
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, config_.reconnect_backoff_max);
  }
}

FmResult<std::vector<PartitionInfo>> FabricManagerClient::GetSupportedPartitions() {
  static const std::string kWhat = "fmGetSupportedFabricPartitions";
  auto library = library_;
  auto list = std::make_shared<abi::FabricPartitionList>();  // 131852 bytes: heap only
  FmStatus status = CallWithReconnect(
      kWhat,
      [&](abi::fmHandle_t handle) {
        return [library, list, handle] {
          std::memset(list.get(), 0, sizeof(*list));
          list->version = abi::kFabricPartitionListVersion;
          return library->fn().fmGetSupportedFabricPartitions(handle, list.get());
        };
      },
      QueryHint);
  if (!status.ok()) return status;
  auto decoded = DecodePartitionList(*list);
  if (!decoded.ok()) return MalformedReply(kWhat, decoded.status());
  return std::move(decoded).value();
}

FmResult<std::vector<std::uint32_t>> FabricManagerClient::GetUnsupportedPartitions() {
  static const std::string kWhat = "fmGetUnsupportedFabricPartitions";
  auto library = library_;
  auto list = std::make_shared<abi::UnsupportedFabricPartitionList>();
  FmStatus status = CallWithReconnect(
      kWhat,
      [&](abi::fmHandle_t handle) {
        return [library, list, handle] {
          std::memset(list.get(), 0, sizeof(*list));
          list->version = abi::kUnsupportedFabricPartitionListVersion;
          return library->fn().fmGetUnsupportedFabricPartitions(handle, list.get());
        };
      },
      QueryHint);
  if (!status.ok()) return status;
  auto decoded = DecodeUnsupportedPartitions(*list);
  if (!decoded.ok()) return MalformedReply(kWhat, decoded.status());
  return std::move(decoded).value();
}

FmStatus FabricManagerClient::Activate(std::uint32_t partition_id) {
  auto library = library_;
  return CallWithReconnect(
      "fmActivateFabricPartition(" + std::to_string(partition_id) + ")",
      [&](abi::fmHandle_t handle) {
        return [library, handle, partition_id] {
          return library->fn().fmActivateFabricPartition(handle, partition_id);
        };
      },
      ActivationHint);
}

FmStatus FabricManagerClient::ActivatePartitionWithVfs(std::uint32_t partition_id,
                                                       std::span<const std::string> vf_bdfs) {
  auto prepared = PrepareVfActivation(partition_id, vf_bdfs);
  if (!prepared.ok()) return prepared.fm_status();
  // Shared with the worker thread, which may outlive this call if FM does not answer in time.
  auto vfs = std::make_shared<std::vector<abi::PciDevice>>(std::move(prepared->vfs));
  const std::string what = std::move(prepared->what);
  auto library = library_;
  return CallWithReconnect(
      what,
      [&](abi::fmHandle_t handle) {
        return [library, handle, partition_id, vfs] {
          return library->fn().fmActivateFabricPartitionWithVFs(handle, partition_id, vfs->data(),
                                                                static_cast<unsigned>(vfs->size()));
        };
      },
      VfActivationHint);
}

FmStatus FabricManagerClient::Deactivate(std::uint32_t partition_id) {
  auto library = library_;
  return CallWithReconnect(
      "fmDeactivateFabricPartition(" + std::to_string(partition_id) + ")",
      [&](abi::fmHandle_t handle) {
        return [library, handle, partition_id] {
          return library->fn().fmDeactivateFabricPartition(handle, partition_id);
        };
      },
      DeactivationHint);
}

FmStatus FabricManagerClient::SetActivatedPartitions(std::span<const std::uint32_t> partition_ids) {
  const std::string what = SetActivatedCallText(partition_ids);
  if (auto too_long = ActivatedListTooLong(partition_ids)) return *too_long;
  auto library = library_;
  auto list = std::make_shared<abi::ActivatedFabricPartitionList>();
  list->version = abi::kActivatedFabricPartitionListVersion;
  list->numPartitions = static_cast<unsigned>(partition_ids.size());
  std::copy(partition_ids.begin(), partition_ids.end(), list->partitionIds);
  return CallWithReconnect(
      what,
      [&](abi::fmHandle_t handle) {
        return [library, list, handle] {
          return library->fn().fmSetActivatedFabricPartitions(handle, list.get());
        };
      },
      QueryHint);
}

FmResult<NvlinkFailedDevices> FabricManagerClient::GetNvlinkFailedDevices() {
  static const std::string kWhat = "fmGetNvlinkFailedDevices";
  auto library = library_;
  auto devices = std::make_shared<abi::NvlinkFailedDevices>();
  FmStatus status = CallWithReconnect(
      kWhat,
      [&](abi::fmHandle_t handle) {
        return [library, devices, handle] {
          std::memset(devices.get(), 0, sizeof(*devices));
          devices->version = abi::kNvlinkFailedDevicesVersion;
          return library->fn().fmGetNvlinkFailedDevices(handle, devices.get());
        };
      },
      QueryHint);
  if (!status.ok()) return status;
  auto decoded = DecodeNvlinkFailedDevices(*devices);
  if (!decoded.ok()) return MalformedReply(kWhat, decoded.status());
  return std::move(decoded).value();
}

}  // namespace gfp::adapters::fm
