#include "cli/journal_command.h"

#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/strings.h"
#include "engine/engine.h"
#include "statemachine/apply.h"
#include "statemachine/event_codec.h"
#include "statemachine/invariants.h"
#include "store/journal.h"

namespace gfp::cli {
namespace {

void PrintError(const Status& status) { std::cerr << "error: " << status.message() << "\n"; }

Result<std::unique_ptr<store::Journal>> OpenReadOnly(const JournalQuery& o) {
  return store::Journal::Open(o.path, store::OpenMode::kReadOnly);
}

// Does the event mention the partition / device the user filters on?
bool MentionsPartition(const events::Event& e, std::uint32_t pid) {
  switch (e.body_case()) {
    case events::Event::kAllocationGranted:
      return e.allocation_granted().has_partition() && e.allocation_granted().partition_id() == pid;
    case events::Event::kPartitionActivationRequested:
      return e.partition_activation_requested().partition_id() == pid;
    case events::Event::kPartitionActivated:
      return e.partition_activated().partition_id() == pid;
    case events::Event::kPartitionActivationFailed:
      return e.partition_activation_failed().partition_id() == pid;
    case events::Event::kPartitionDeactivationRequested:
      return e.partition_deactivation_requested().partition_id() == pid;
    case events::Event::kPartitionDeactivated:
      return e.partition_deactivated().partition_id() == pid;
    case events::Event::kPartitionDeactivationFailed:
      return e.partition_deactivation_failed().partition_id() == pid;
    case events::Event::kDriftDetected:
      return e.drift_detected().partition_id() == pid;
    case events::Event::kFabricManagerResynced:
      for (auto id : e.fabric_manager_resynced().partition_ids()) {
        if (id == pid) return true;
      }
      return false;
    default:
      return false;
  }
}

bool MentionsDevice(const events::Event& e, const std::string& bdf) {
  // Every event that names devices carries them in its fields; the JSON form finds them all.
  return sm::EventFieldsJson(e).find("\"" + bdf + "\"") != std::string::npos;
}

nlohmann::json EventJson(std::uint64_t seq, const events::Event& e) {
  nlohmann::json fields = nlohmann::json::parse(sm::EventFieldsJson(e), nullptr, false);
  nlohmann::json out = {{"seq", seq},
                        {"time", sm::FormatRfc3339(e.time_unix_micros())},
                        {"type", sm::EventTypeName(e)}};
  if (fields.is_object()) {
    for (auto& [key, value] : fields.items()) {
      if (!out.contains(key)) out[key] = value;
    }
  }
  return out;
}

// Streams decoded events through `emit`, applying the history filters.
}  // namespace

int PrintHistory(const JournalQuery& o, bool filtered) {
  auto journal = OpenReadOnly(o);
  if (!journal.ok()) {
    PrintError(journal.status());
    return 2;
  }
  std::int64_t since = std::numeric_limits<std::int64_t>::min();
  if (filtered && !o.since.empty()) {
    auto parsed = sm::ParseRfc3339(o.since);
    if (!parsed.ok()) {
      PrintError(parsed.status().WithContext("--since"));
      return 2;
    }
    since = *parsed;
  }
  const bool json = o.format == "json";
  Status status = (*journal)->ForEach(1, 0, [&](const store::StoredEvent& stored) -> Status {
    auto decoded = sm::DecodeEvent(stored.type, stored.time_unix_micros, stored.payload);
    if (!decoded.ok()) {
      return decoded.status().WithContext("journal seq " + std::to_string(stored.seq));
    }
    const events::Event& e = *decoded;
    if (filtered) {
      if (e.time_unix_micros() < since) return Status::Ok();
      if (o.partition && !MentionsPartition(e, *o.partition)) return Status::Ok();
      if (!o.device.empty() && !MentionsDevice(e, o.device)) return Status::Ok();
    }
    if (json) {
      std::cout << EventJson(stored.seq, e).dump() << "\n";
    } else {
      std::cout << stored.seq << "  " << sm::FormatRfc3339(e.time_unix_micros()) << "  "
                << sm::EventTypeName(e) << "  " << sm::SummarizeEvent(e) << "\n";
    }
    return Status::Ok();
  });
  std::cout.flush();
  if (!status.ok()) {
    PrintError(status);
    return 1;
  }
  return 0;
}

namespace {

nlohmann::json StateJson(const sm::State& s) {
  nlohmann::json partitions = nlohmann::json::array();
  for (const auto& [pid, active] : s.active) {
    nlohmann::json devices = nlohmann::json::array();
    if (auto p = s.partitions.find(pid); p != s.partitions.end()) {
      for (const auto& bdf : sm::DevicesOfPartition(s, p->second).bdfs) devices.push_back(bdf);
    }
    nlohmann::json pod = nullptr;
    std::string allocation = active.owner;
    if (auto a = s.allocations.find(active.owner);
        a != s.allocations.end() && !a->second.pod_name.empty()) {
      pod = a->second.pod_namespace + "/" + a->second.pod_name;
    }
    partitions.push_back({{"partition_id", pid},
                          {"devices", devices},
                          {"allocation_id", allocation},
                          {"pod", pod},
                          {"adopted", active.adopted},
                          {"since", sm::FormatRfc3339(active.since)}});
  }
  nlohmann::json allocations = nlohmann::json::array();
  for (const auto& [id, a] : s.allocations) {
    nlohmann::json pod = nullptr;
    if (!a.pod_name.empty()) pod = a.pod_namespace + "/" + a.pod_name;
    nlohmann::json entry = {{"allocation_id", id},
                            {"resource", a.resource},
                            {"devices", a.devices},
                            {"status", sm::AllocationStatusName(a.status)},
                            {"pod", pod}};
    entry["partition_id"] = a.partition ? nlohmann::json(*a.partition) : nlohmann::json(nullptr);
    allocations.push_back(entry);
  }
  nlohmann::json intents = nlohmann::json::array();
  for (const auto& [pid, i] : s.intents) {
    intents.push_back({{"partition_id", pid},
                       {"kind", sm::IntentKindName(i.kind)},
                       {"allocation_id", i.allocation_id},
                       {"requested_seq", i.requested_seq}});
  }
  nlohmann::json unhealthy = nlohmann::json::array();
  for (const auto& [bdf, d] : s.devices) {
    if (!d.healthy) unhealthy.push_back({{"bdf", bdf}, {"reason", d.unhealthy_reason}});
  }
  return {{"last_seq", s.last_seq},
          {"time",
           s.last_time ? nlohmann::json(sm::FormatRfc3339(s.last_time)) : nlohmann::json(nullptr)},
          {"fabric_manager_enabled", s.fm_enabled},
          {"fabric_manager_connected", s.fm_connected},
          {"devices", s.devices.size()},
          {"unhealthy_devices", unhealthy},
          {"partitions_known", s.partitions.size()},
          {"active_partitions", partitions},
          {"live_allocations", allocations},
          {"pending_intents", intents},
          {"anomalies", s.anomaly_count}};
}

void PrintStateText(const sm::State& s) {
  std::cout << "journal state at seq " << s.last_seq;
  if (s.last_time) std::cout << " (" << sm::FormatRfc3339(s.last_time) << ")";
  std::cout << "\n  Fabric Manager: " << (s.fm_enabled ? "enabled" : "disabled")
            << (s.fm_enabled ? (s.fm_connected ? ", connected" : ", not connected") : "")
            << "\n  devices: " << s.devices.size() << ", partitions known: " << s.partitions.size()
            << "\n  active partitions:";
  if (s.active.empty()) std::cout << " none";
  std::cout << "\n";
  for (const auto& [pid, active] : s.active) {
    std::string devices;
    if (auto p = s.partitions.find(pid); p != s.partitions.end()) {
      devices = Join(sm::DevicesOfPartition(s, p->second).bdfs);
    }
    std::cout << "    partition " << pid << " [" << devices << "] ";
    if (active.adopted) {
      std::cout << "adopted (found active in Fabric Manager)";
    } else if (active.owner.empty()) {
      std::cout << "ownerless (release pending)";
    } else {
      std::cout << active.owner;
      auto a = s.allocations.find(active.owner);
      if (a != s.allocations.end() && !a->second.pod_name.empty()) {
        std::cout << " pod " << a->second.pod_namespace << "/" << a->second.pod_name;
      } else {
        std::cout << " (no pod seen yet)";
      }
    }
    std::cout << "\n";
  }
  std::cout << "  live allocations: " << s.allocations.size() << "\n";
  for (const auto& [id, a] : s.allocations) {
    std::cout << "    " << id << " " << sm::AllocationStatusName(a.status) << " ["
              << Join(a.devices) << "]"
              << (a.partition ? " partition " + std::to_string(*a.partition) : "") << "\n";
  }
  for (const auto& [pid, i] : s.intents) {
    std::cout << "  pending: " << sm::IntentKindName(i.kind) << " partition " << pid << " (seq "
              << i.requested_seq << ")\n";
  }
  if (s.anomaly_count) std::cout << "  anomalies: " << s.anomaly_count << "\n";
}

}  // namespace

int PrintState(const JournalQuery& o) {
  auto journal = OpenReadOnly(o);
  if (!journal.ok()) {
    PrintError(journal.status());
    return 2;
  }
  if (o.at > (*journal)->LastSeq()) {
    PrintError(InvalidArgument("--at " + std::to_string(o.at) +
                               " is beyond the journal's last seq " +
                               std::to_string((*journal)->LastSeq())));
    return 2;
  }
  auto state = engine::Replay(**journal, o.at, /*use_snapshots=*/true, /*check_invariants=*/false);
  if (!state.ok()) {
    PrintError(state.status());
    return 1;
  }
  if (o.format == "json") {
    std::cout << StateJson(*state).dump(2) << "\n";
  } else {
    PrintStateText(*state);
  }
  return 0;
}

int VerifyJournal(const JournalQuery& o) {
  auto journal = OpenReadOnly(o);
  if (!journal.ok()) {
    PrintError(journal.status());
    return 2;
  }
  sm::State state;
  std::uint64_t anomalies_seen = 0;
  store::VerifyReport report = (*journal)->Verify([&](const store::StoredEvent& stored) -> Status {
    GFP_ASSIGN_OR_RETURN(events::Event e,
                         sm::DecodeEvent(stored.type, stored.time_unix_micros, stored.payload));
    sm::Apply(state, stored.seq, e);
    if (state.anomaly_count != anomalies_seen) {
      anomalies_seen = state.anomaly_count;
      return DataLoss("event makes no sense here: " + state.recent_anomalies.back().description);
    }
    return sm::CheckInvariants(state).WithContext("invariant broken");
  });
  const bool json = o.format == "json";
  if (json) {
    std::cout << nlohmann::json{{"ok", report.ok},
                                {"events_checked", report.events_checked},
                                {"snapshots_checked", report.snapshots_checked},
                                {"first_bad_seq", report.first_bad_seq},
                                {"reason", report.reason},
                                {"last_seq", state.last_seq},
                                {"active_partitions", state.active.size()},
                                {"live_allocations", state.allocations.size()}}
                     .dump()
              << "\n";
  } else if (report.ok) {
    std::cout << "journal " << o.path << " is intact: " << report.events_checked
              << " events (hash chain, decoding, replay with invariants), "
              << report.snapshots_checked << " snapshots; state at seq " << state.last_seq << ": "
              << state.active.size() << " active partitions, " << state.allocations.size()
              << " live allocations\n";
  } else {
    std::cout << "journal " << o.path << " is damaged";
    if (report.first_bad_seq) std::cout << " at seq " << report.first_bad_seq;
    std::cout << ": " << report.reason << "\n";
  }
  return report.ok ? 0 : 1;
}

void AddJournalCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<JournalQuery>();
  CLI::App* journal = app.add_subcommand("journal", "Read the journal (safe while serve runs)");
  journal->require_subcommand(1);

  auto common = [options](CLI::App* verb) {
    verb->add_option("--journal", options->path, "the SQLite journal")
        ->required()
        ->envname("GPU_FABRIC_JOURNAL");
    verb->add_option("--format", options->format, "text or json")
        ->check(CLI::IsMember({"text", "json"}));
  };

  CLI::App* history = journal->add_subcommand("history", "One event per line, oldest first");
  common(history);
  history->add_option("--partition", options->partition, "only events about this partition");
  history->add_option("--device", options->device, "only events naming this device (BDF)");
  history->add_option("--since", options->since, "only events at or after this RFC 3339 time");
  history->callback([options, exit_code] { *exit_code = PrintHistory(*options, true); });

  CLI::App* state = journal->add_subcommand("state", "Partition ownership rebuilt by replay");
  common(state);
  state->add_option("--at", options->at, "replay up to this seq (default: all)");
  state->callback([options, exit_code] { *exit_code = PrintState(*options); });

  CLI::App* verify =
      journal->add_subcommand("verify", "Check the hash chain, decode and replay every event");
  common(verify);
  verify->callback([options, exit_code] { *exit_code = VerifyJournal(*options); });

  CLI::App* exported = journal->add_subcommand("export", "The whole journal as JSON lines");
  exported->add_option("--journal", options->path, "the SQLite journal")
      ->required()
      ->envname("GPU_FABRIC_JOURNAL");
  exported->add_option("--format", options->format, "json (the only export format)")
      ->check(CLI::IsMember({"json"}));
  exported->callback([options, exit_code] {
    options->format = "json";
    *exit_code = PrintHistory(*options, false);
  });
}

}  // namespace gfp::cli
