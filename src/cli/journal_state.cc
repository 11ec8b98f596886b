// `journal state`: partition ownership rebuilt by replay, as text or JSON (cli/state_json.h).
#include <iostream>
#include <string>
#include <vector>

#include "cli/journal_command.h"
#include "cli/journal_output.h"
#include "cli/state_json.h"
#include "common/strings.h"
#include "common/text_escape.h"
#include "engine/engine.h"
#include "statemachine/apply.h"
#include "statemachine/event_codec.h"
#include "store/journal.h"

namespace gfp::cli {
namespace {

// " vfs=[a,b]" when the list is non-empty, escaped.
std::string VfsText(const std::vector<sm::Bdf>& list) {
  return list.empty() ? "" : " vfs=[" + EscapeControl(Join(list)) + "]";
}

// One line per device: its kind and, for an mdev or a VF, the GPU it lives on.
void PrintDevicesText(const sm::State& s) {
  for (const auto& [id, d] : s.devices) {
    std::cout << "    " << EscapeControl(id) << " " << sm::DeviceKindName(d.kind);
    if (!d.parent_bdf.empty()) std::cout << " on " << EscapeControl(d.parent_bdf);
    std::cout << " " << EscapeControl(d.resource) << (d.healthy ? "" : " unhealthy") << "\n";
  }
}

void PrintStateText(const sm::State& s) {
  std::cout << "journal state at seq " << s.last_seq;
  if (s.last_time) std::cout << " (" << sm::FormatRfc3339(s.last_time) << ")";
  std::cout << "\n  Fabric Manager: " << (s.fm_enabled ? "enabled" : "disabled")
            << (s.fm_enabled ? (s.fm_connected ? ", connected" : ", not connected") : "")
            << "\n  devices: " << s.devices.size() << ", partitions known: " << s.partitions.size()
            << "\n";
  PrintDevicesText(s);
  std::cout << "  active partitions:";
  if (s.active.empty()) std::cout << " none";
  std::cout << "\n";
  for (const auto& [pid, active] : s.active) {
    std::string devices;
    if (auto p = s.partitions.find(pid); p != s.partitions.end()) {
      devices = EscapeControl(Join(sm::DevicesOfPartition(s, p->second).bdfs));
    }
    std::cout << "    partition " << pid << " [" << devices << "]" << VfsText(active.vf_bdfs)
              << " ";
    if (active.adopted) {
      std::cout << "adopted (found active in Fabric Manager)";
    } else if (active.owner.empty()) {
      std::cout << "ownerless (release pending)";
    } else {
      std::cout << EscapeControl(active.owner);
      auto a = s.allocations.find(active.owner);
      if (a != s.allocations.end() && !a->second.pod_name.empty()) {
        std::cout << " pod " << EscapeControl(a->second.pod_namespace + "/" + a->second.pod_name);
      } else {
        std::cout << " (no pod seen yet)";
      }
    }
    std::cout << "\n";
  }
  std::cout << "  live allocations: " << s.allocations.size() << "\n";
  for (const auto& [id, a] : s.allocations) {
    std::cout << "    " << EscapeControl(id) << " " << sm::AllocationStatusName(a.status) << " ["
              << EscapeControl(Join(a.devices)) << "]"
              << (a.partition ? " partition " + std::to_string(*a.partition) : "")
              << VfsText(a.fabric_vfs) << "\n";
  }
  for (const auto& [pid, i] : s.intents) {
    std::cout << "  pending: " << sm::IntentKindName(i.kind) << " partition " << pid << " (seq "
              << i.requested_seq << ")" << VfsText(i.vf_bdfs) << "\n";
  }
  if (s.anomaly_count) std::cout << "  anomalies: " << s.anomaly_count << "\n";
}

}  // namespace

int PrintState(const JournalQuery& o) {
  auto journal = store::Journal::Open(o.path, store::OpenMode::kReadOnly);
  if (!journal.ok()) {
    PrintError(journal.status());
    return kExitUnusable;
  }
  const std::uint64_t last = (*journal)->LastSeq();
  if (o.at && *o.at > last) {
    PrintError(InvalidArgument("--at " + std::to_string(*o.at) +
                               " is beyond the journal's last seq " + std::to_string(last)));
    return kExitUnusable;
  }
  // --at 0 is the state before any event; no --at is the state after the last one.
  Result<sm::State> state = sm::State{};
  if (!o.at || *o.at > 0) {
    state = engine::Replay(**journal, o.at.value_or(0), /*use_snapshots=*/true,
                           /*check_invariants=*/false, nullptr, /*check_chain=*/true);
  }
  if (!state.ok()) {
    PrintError(state.status());
    return FinishOutput(kExitDamaged);
  }
  if (o.format == "json") {
    std::cout << StateJson(*state).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  } else {
    PrintStateText(*state);
  }
  return FinishOutput(kExitOk);
}

}  // namespace gfp::cli
