// The core's FabricPort over the in-memory Fabric Manager (in_memory_fm.h), for the
// deterministic simulation. It behaves as the SDK client behind FmLibraryPort does, call by call,
// without its worker thread and deadline clock: the same connect (v2, then v1 on
// VERSION_MISMATCH), the same reconnect-and-retry on CONNECTION_NOT_VALID (3 attempts, no
// backoff sleep), the same failure texts (adapters/fm/fm_call_error.h), FM_ST_TIMEOUT when FM
// does not answer in time and "not attempted" until that late call completes. Not modelled:
// hostile replies (the decoders are tested against the C ABI simulator and fuzzed).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "adapters/fm/fm_call_error.h"
#include "plugin/core/fabric_port.h"
#include "sim/world/in_memory_fm.h"

namespace gfp::simworld {

class InMemoryFabricPort final : public plugin::core::FabricPort {
 public:
  // `process` numbers the plugin process this port belongs to (FM's call log names it).
  InMemoryFabricPort(InMemoryFm& fm, std::string address, std::chrono::milliseconds deadline,
                     int process);

  events::FmResult Connect() override;
  bool connected() const override { return connected_; }
  int connect_struct_version() const override { return struct_version_; }
  const std::string& address() const override { return address_; }
  Result<std::vector<events::Partition>> FabricState(events::FmResult* failure) override;
  events::FmResult Carry(const sm::Effect& effect) override;

  // The SDK client's partition calls, named as FabricManagerClient names them (Carry maps an
  // effect onto them with plugin::core::CarryOn, as FmLibraryPort does).
  adapters::fm::FmStatus Activate(std::uint32_t id);
  adapters::fm::FmStatus ActivatePartitionWithVfs(std::uint32_t id,
                                                  const std::vector<std::string>& vf_bdfs);
  adapters::fm::FmStatus Deactivate(std::uint32_t id);
  adapters::fm::FmStatus SetActivatedPartitions(const std::vector<std::uint32_t>& ids);

 private:
  adapters::fm::FmStatus ConnectNow();
  adapters::fm::FmStatus ConnectWithStruct(int struct_version);
  // One call on the current connection: late, "not attempted", or FM's code.
  adapters::fm::FmStatus RunCall(const std::string& what, FmCall call,
                                 const adapters::fm::Hint& hint);
  // (Re)connects first when needed, and again after CONNECTION_NOT_VALID, up to 3 times.
  adapters::fm::FmStatus CallWithReconnect(const std::string& what, const FmCall& call,
                                           const adapters::fm::Hint& hint);
  bool waiting_for_late_call() const;

  InMemoryFm& fm_;
  const std::string address_;
  const std::chrono::milliseconds deadline_;
  const int process_;
  bool connected_ = false;
  std::uint64_t generation_ = 0;
  int struct_version_ = 0;
  std::optional<std::uint64_t> late_call_;
};

}  // namespace gfp::simworld
