// The plugin's connection to Fabric Manager: connect (v2 struct, v1 fallback), partition queries
// and (de)activation (whole GPUs in shared NVSwitch mode, SR-IOV VFs in vGPU mode), each call
// bounded in time, serialised, and reconnected with backoff when FM says the connection is gone.
// Every failure carries the FM code and name (FmError).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "adapters/fm/fabric_manager_library.h"
#include "adapters/fm/fm_address.h"
#include "adapters/fm/fm_call_runner.h"
#include "adapters/fm/fm_error.h"
#include "adapters/fm/fm_types.h"

namespace gfp::adapters::fm {

struct FabricManagerConfig {
  std::string library_path = "libnvfm.so.1";
  std::string address = "/run/nvidia-fabricmanager/fmpm.sock";
  // fmConnectParams.timeoutMs: FM's own connect timeout. Must be non-zero (FM rejects 0).
  std::chrono::milliseconds connect_timeout{1000};
  // Upper bound on every single SDK call, enforced by us on a worker thread.
  std::chrono::milliseconds call_deadline{5000};
  // Reconnects tried within one operation after FM_ST_CONNECTION_NOT_VALID.
  int reconnect_attempts = 3;
  std::chrono::milliseconds reconnect_backoff_initial{100};
  std::chrono::milliseconds reconnect_backoff_max{2000};
};

class FabricManagerClient {
 public:
  // Loads the library and validates the configuration; does not connect yet.
  static Result<std::unique_ptr<FabricManagerClient>> Create(FabricManagerConfig config);
  // Same, over an already loaded library (several clients may share one).
  static Result<std::unique_ptr<FabricManagerClient>> Create(
      FabricManagerConfig config, std::shared_ptr<const FabricManagerLibrary> library);

  // Disconnects (bounded). Does not call fmLibShutdown: it is process-global and would close
  // the connections of any other client in this process.
  ~FabricManagerClient();
  FabricManagerClient(const FabricManagerClient&) = delete;
  FabricManagerClient& operator=(const FabricManagerClient&) = delete;

  // fmLibInit (IN_USE = already initialised is fine), then fmConnect with the v2 struct, falling
  // back to v1 on FM_ST_VERSION_MISMATCH. Reconnects if already connected.
  FmStatus Connect();
  // True while a call that passed its deadline has not returned on the worker yet (calls until
  // then are not attempted). For tests that wait for a late call to finish.
  bool HasHungCall() const;
  void Disconnect();

  FmResult<std::vector<PartitionInfo>> GetSupportedPartitions();
  FmResult<std::vector<std::uint32_t>> GetUnsupportedPartitions();
  FmStatus Activate(std::uint32_t partition_id);
  // vGPU mode (FABRIC_MODE=2): fmActivateFabricPartitionWithVFs. `vf_bdfs[i]` is a VF of the
  // partition's i-th GPU (one VF per GPU, FM's GPU order, the same list on every re-activation).
  // An empty list, more than 16 VFs or a malformed BDF is refused with FM_ST_BADPARAM before
  // anything is sent (from_library false).
  FmStatus ActivatePartitionWithVfs(std::uint32_t partition_id,
                                    std::span<const std::string> vf_bdfs);
  FmStatus Deactivate(std::uint32_t partition_id);
  // Tells FM, after its own restart in resiliency mode, which partitions are still active.
  FmStatus SetActivatedPartitions(std::span<const std::uint32_t> partition_ids);
  FmResult<NvlinkFailedDevices> GetNvlinkFailedDevices();

  // For health reporting: devices managed through FM are unhealthy unless kConnected.
  ConnectionState connection_state() const { return state_.load(); }
  // Which connect struct the last successful fmConnect used (1 or 2; 0 before any).
  int connect_struct_version() const { return connect_struct_version_.load(); }
  const FabricManagerConfig& config() const { return config_; }

 private:
  // Builds the SDK call for the current handle; it runs on the worker thread.
  using CallFactory = std::function<std::function<int()>(abi::fmHandle_t handle)>;

  FabricManagerClient(FabricManagerConfig config, FmAddress address,
                      std::shared_ptr<const FabricManagerLibrary> library);

  // Runs one SDK call with the deadline; `what` names it in messages, `hint` explains a
  // call-specific meaning of the code (e.g. IN_USE on activation).
  FmStatus RunCall(const std::string& what, std::function<int()> call,
                   const std::function<std::string(int)>& hint);
  // Runs a handle-based call, (re)connecting first and after CONNECTION_NOT_VALID with backoff.
  FmStatus CallWithReconnect(const std::string& what, const CallFactory& factory,
                             const std::function<std::string(int)>& hint = nullptr);
  FmStatus ConnectLocked();
  FmStatus ConnectWithStruct(int struct_version);
  void DisconnectLocked();

  FabricManagerConfig config_;
  FmAddress address_;
  std::shared_ptr<const FabricManagerLibrary> library_;
  std::unique_ptr<FmCallRunner> runner_;

  std::mutex call_mutex_;  // one SDK operation at a time
  abi::fmHandle_t handle_ = nullptr;
  bool library_initialised_ = false;
  std::atomic<ConnectionState> state_{ConnectionState::kDisconnected};
  std::atomic<int> connect_struct_version_{0};
};

}  // namespace gfp::adapters::fm
