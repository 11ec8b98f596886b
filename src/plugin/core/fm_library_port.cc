#include "plugin/core/fm_library_port.h"

#include <algorithm>
#include <set>

namespace gfp::plugin::core {

events::FmResult ToEventResult(const adapters::fm::FmStatus& status) {
  events::FmResult out;
  out.set_code(status.fm_code());
  out.set_name(status.fm_name());
  if (!status.ok()) out.set_message(status.error().message);
  return out;
}

std::vector<events::Partition> ToEventPartitions(
    const std::vector<adapters::fm::PartitionInfo>& supported,
    const std::vector<std::uint32_t>& degraded) {
  const std::set<std::uint32_t> unsupported(degraded.begin(), degraded.end());
  std::vector<events::Partition> out;
  for (const auto& p : supported) {
    events::Partition e;
    e.set_id(p.id);
    for (auto id : p.physical_ids) e.add_physical_ids(id);
    e.set_nvlinks_available(p.nvlinks_available);
    e.set_max_nvlinks(p.max_nvlinks);
    e.set_active(p.active);
    e.set_unsupported(unsupported.count(p.id) > 0);
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id() < b.id(); });
  return out;
}

FmLibraryPort::FmLibraryPort(std::unique_ptr<adapters::fm::FabricManagerClient> client)
    : client_(std::move(client)) {}

events::FmResult FmLibraryPort::Connect() { return ToEventResult(client_->Connect()); }

bool FmLibraryPort::connected() const {
  return client_->connection_state() == adapters::fm::ConnectionState::kConnected;
}

int FmLibraryPort::connect_struct_version() const { return client_->connect_struct_version(); }

const std::string& FmLibraryPort::address() const { return client_->config().address; }

Result<std::vector<events::Partition>> FmLibraryPort::FabricState(events::FmResult* failure) {
  auto supported = client_->GetSupportedPartitions();
  if (!supported.ok()) {
    if (failure) *failure = ToEventResult(supported.fm_status());
    return supported.status();
  }
  auto unsupported = client_->GetUnsupportedPartitions();
  if (!unsupported.ok()) {
    if (failure) *failure = ToEventResult(unsupported.fm_status());
    return unsupported.status();
  }
  return ToEventPartitions(*supported, *unsupported);
}

events::FmResult FmLibraryPort::Carry(const sm::Effect& effect) {
  return CarryOn(*client_, effect);
}

}  // namespace gfp::plugin::core
