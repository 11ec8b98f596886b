#include "sim/world/in_memory_port.h"

#include "adapters/fm/fm_abi.h"
#include "adapters/fm/fm_pci_device.h"
#include "adapters/fm/fm_types.h"
#include "common/strings.h"
#include "plugin/core/fm_library_port.h"

namespace gfp::simworld {
namespace {

namespace abi = gfp::adapters::fm::abi;

constexpr int kReconnectAttempts = 3;  // FabricManagerConfig's default

adapters::fm::PartitionInfo ToPartitionInfo(const fmsim::ListedPartition& listed) {
  adapters::fm::PartitionInfo info;
  info.id = listed.partition->id;
  info.active = listed.active;
  info.physical_ids = listed.partition->physical_ids;
  info.nvlinks_available = listed.links_available;
  info.max_nvlinks = listed.partition->max_nvlinks;
  return info;
}

}  // namespace

InMemoryFabricPort::InMemoryFabricPort(InMemoryFm& fm, std::string address,
                                       std::chrono::milliseconds deadline, int process)
    : fm_(fm), address_(std::move(address)), deadline_(deadline), process_(process) {}

bool InMemoryFabricPort::waiting_for_late_call() const {
  return late_call_ && fm_.IsLate(*late_call_);
}

events::FmResult InMemoryFabricPort::Connect() { return plugin::core::ToEventResult(ConnectNow()); }

adapters::fm::FmStatus InMemoryFabricPort::ConnectNow() {
  connected_ = false;
  if (waiting_for_late_call()) return adapters::fm::BusyError("fmConnect");
  adapters::fm::FmStatus status = ConnectWithStruct(2);
  if (!status.ok() && status.error().from_library && status.fm_code() == abi::kVersionMismatch) {
    status = ConnectWithStruct(1);
  }
  connected_ = status.ok();
  return status;
}

adapters::fm::FmStatus InMemoryFabricPort::ConnectWithStruct(int struct_version) {
  // Shared with the call: a late call runs after this function has returned.
  auto generation = std::make_shared<std::uint64_t>(0);
  FmCall call;
  call.function = "fmConnect";
  call.args = "version=" + std::to_string(struct_version) + " address=" + address_;
  call.body = [generation, struct_version](fmsim::FabricCall& c) {
    if (struct_version == 2 && c.state.only_v1_connect) {
      return static_cast<int>(abi::kVersionMismatch);
    }
    *generation = c.state.generation;
    return fmsim::ModelConnect(c);
  };
  const std::string what = "fmConnect(" + address_ + ", v" + std::to_string(struct_version) + ")";
  adapters::fm::FmStatus status = RunCall(what, std::move(call), adapters::fm::ConnectHint);
  if (!status.ok()) return status;
  generation_ = *generation;
  struct_version_ = struct_version;
  return status;
}

adapters::fm::FmStatus InMemoryFabricPort::RunCall(const std::string& what, FmCall call,
                                                   const adapters::fm::Hint& hint) {
  if (waiting_for_late_call()) {
    connected_ = false;
    return adapters::fm::BusyError(what);
  }
  const FmCallOutcome outcome = fm_.Serve(call, process_);
  if (outcome.late_id) {
    late_call_ = outcome.late_id;
    connected_ = false;
    return adapters::fm::DeadlineError(what, deadline_);
  }
  if (outcome.code == abi::kSuccess) return adapters::fm::FmStatus();
  if (outcome.code == abi::kConnectionNotValid) connected_ = false;
  return adapters::fm::LibraryError(what, outcome.code, hint);
}

adapters::fm::FmStatus InMemoryFabricPort::CallWithReconnect(const std::string& what,
                                                             const FmCall& call,
                                                             const adapters::fm::Hint& hint) {
  for (int attempt = 0;; ++attempt) {
    adapters::fm::FmStatus status;
    if (!connected_) {
      status = ConnectNow();
      if (!status.ok()) {
        adapters::fm::FmError error = status.error();
        error.message = what + ": cannot connect to Fabric Manager: " + error.message;
        status = adapters::fm::FmStatus(std::move(error));
      }
    }
    if (status.ok()) {
      FmCall on_this_connection = call;
      on_this_connection.handle_generation = generation_;
      status = RunCall(what, std::move(on_this_connection), hint);
    }
    const bool retryable =
        status.error().from_library && status.fm_code() == abi::kConnectionNotValid;
    if (status.ok() || !retryable || attempt >= kReconnectAttempts) return status;
  }
}

Result<std::vector<events::Partition>> InMemoryFabricPort::FabricState(events::FmResult* failure) {
  // Shared with the calls: a late call runs after this function has returned.
  auto supported = std::make_shared<std::vector<adapters::fm::PartitionInfo>>();
  auto degraded = std::make_shared<std::vector<std::uint32_t>>();
  FmCall list;
  list.function = "fmGetSupportedFabricPartitions";
  list.body = [supported](fmsim::FabricCall& c) {
    std::vector<fmsim::ListedPartition> listed;
    const int code = fmsim::ModelSupportedPartitions(c, &listed);
    supported->clear();
    for (const auto& p : listed) supported->push_back(ToPartitionInfo(p));
    return code;
  };
  adapters::fm::FmStatus status = CallWithReconnect(list.function, list, adapters::fm::QueryHint);
  if (status.ok()) {
    FmCall unsupported;
    unsupported.function = "fmGetUnsupportedFabricPartitions";
    unsupported.body = [degraded](fmsim::FabricCall& c) {
      std::vector<const fmsim::SimPartition*> found;
      const int code = fmsim::ModelUnsupportedPartitions(c, &found);
      degraded->clear();
      for (const auto* p : found) degraded->push_back(p->id);
      return code;
    };
    status = CallWithReconnect(unsupported.function, unsupported, adapters::fm::QueryHint);
  }
  if (!status.ok()) {
    if (failure) *failure = plugin::core::ToEventResult(status);
    return status.status();
  }
  return plugin::core::ToEventPartitions(*supported, *degraded);
}

events::FmResult InMemoryFabricPort::Carry(const sm::Effect& effect) {
  return plugin::core::CarryOn(*this, effect);
}

adapters::fm::FmStatus InMemoryFabricPort::Activate(std::uint32_t id) {
  FmCall call;
  call.function = "fmActivateFabricPartition";
  call.args = std::to_string(id);
  call.body = [id](fmsim::FabricCall& c) { return fmsim::ModelActivate(c, id); };
  return CallWithReconnect("fmActivateFabricPartition(" + call.args + ")", call,
                           adapters::fm::ActivationHint);
}

adapters::fm::FmStatus InMemoryFabricPort::ActivatePartitionWithVfs(
    std::uint32_t id, const std::vector<std::string>& vf_bdfs) {
  auto prepared = adapters::fm::PrepareVfActivation(id, vf_bdfs);
  if (!prepared.ok()) return prepared.fm_status();
  FmCall call;
  call.function = "fmActivateFabricPartitionWithVFs";
  for (const auto& vf : prepared->vfs) call.vfs.push_back(adapters::fm::PciDeviceName(vf));
  call.args = std::to_string(id) + " numVfs=" + std::to_string(call.vfs.size()) + " vfs=[" +
              Join(call.vfs, ",") + "]";
  call.body = [id, vfs = call.vfs](fmsim::FabricCall& c) {
    return fmsim::ModelActivateWithVfs(c, id, vfs);
  };
  return CallWithReconnect(prepared->what, call, adapters::fm::VfActivationHint);
}

adapters::fm::FmStatus InMemoryFabricPort::Deactivate(std::uint32_t id) {
  FmCall call;
  call.function = "fmDeactivateFabricPartition";
  call.args = std::to_string(id);
  call.body = [id](fmsim::FabricCall& c) { return fmsim::ModelDeactivate(c, id); };
  return CallWithReconnect("fmDeactivateFabricPartition(" + call.args + ")", call,
                           adapters::fm::DeactivationHint);
}

adapters::fm::FmStatus InMemoryFabricPort::SetActivatedPartitions(
    const std::vector<std::uint32_t>& ids) {
  const std::string what = adapters::fm::SetActivatedCallText(ids);
  if (auto too_long = adapters::fm::ActivatedListTooLong(ids)) return *too_long;
  FmCall call;
  call.function = "fmSetActivatedFabricPartitions";
  call.args = "[" + Join(ids, ",") + "]";
  call.body = [ids](fmsim::FabricCall& c) { return fmsim::ModelSetActivated(c, ids); };
  return CallWithReconnect(what, call, adapters::fm::QueryHint);
}

}  // namespace gfp::simworld
