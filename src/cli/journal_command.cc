// `gpu-fabric-plugin journal history|verify|export` and the registration of all the verbs
// (`state` is in journal_state.cc, `copy` in journal_copy.cc, shared helpers in
// journal_output.cc).
#include "cli/journal_command.h"

#include <algorithm>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/journal_anchor.h"
#include "cli/journal_claim.h"
#include "cli/journal_index_check.h"
#include "cli/journal_output.h"
#include "common/strings.h"
#include "common/text_escape.h"
#include "engine/engine.h"
#include "journal_text/event_summary.h"
#include "statemachine/apply.h"
#include "statemachine/event_codec.h"
#include "statemachine/event_subjects.h"
#include "statemachine/invariants.h"
#include "store/hash_chain.h"
#include "store/journal.h"
#include "store/read_ahead.h"
#include "store/scan_prefetch.h"

namespace gfp::cli {
namespace {

Result<std::unique_ptr<store::Journal>> OpenReadOnly(const JournalQuery& o) {
  return store::Journal::Open(o.path, store::OpenMode::kReadOnly);
}

// JSON for one line; bytes that are not UTF-8 (IDs are untrusted) become U+FFFD instead of
// throwing.
std::string Dump(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Does the event match every filter given? The same tags the journal's index holds
// (sm::EventSubjects), so events found through the index and events scanned agree.
bool MatchesFilters(const JournalQuery& o, std::int64_t since, const events::Event& e) {
  if (e.time_unix_micros() < since) return false;
  if (!o.partition && o.device.empty()) return true;
  const std::vector<std::string> subjects = sm::EventSubjects(e);
  const auto has = [&subjects](const std::string& tag) {
    return std::binary_search(subjects.begin(), subjects.end(), tag);
  };
  if (o.partition && !has(sm::PartitionSubject(*o.partition))) return false;
  return o.device.empty() || has(sm::DeviceSubject(o.device));
}

// The index lookup for the filters: one subject (the partition when both are given).
store::EventFilter IndexFilter(const JournalQuery& o, std::int64_t since) {
  store::EventFilter filter;
  filter.since_time_us = since;
  if (o.partition) {
    filter.subject = sm::PartitionSubject(*o.partition);
  } else if (!o.device.empty()) {
    filter.subject = sm::DeviceSubject(o.device);
  }
  return filter;
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

}  // namespace

Status PrintEventJsonLine(const store::StoredEvent& stored) {
  auto decoded = sm::DecodeEvent(stored.type, stored.time_unix_micros, stored.payload);
  if (!decoded.ok())
    return decoded.status().WithContext("journal seq " + std::to_string(stored.seq));
  std::cout << Dump(EventJson(stored.seq, *decoded)) << "\n";
  if (OutputFailed()) return Unavailable("stdout");  // reported by FinishOutput
  return Status::Ok();
}

namespace {

// --since as microseconds (the smallest value when not given).
Result<std::int64_t> SinceMicros(const JournalQuery& o, bool filtered) {
  if (!filtered || o.since.empty()) return std::numeric_limits<std::int64_t>::min();
  Status in_range = CheckRfc3339Ranges(o.since);
  auto parsed = in_range.ok() ? sm::ParseRfc3339(o.since) : Result<std::int64_t>(in_range);
  if (!parsed.ok()) return parsed.status().WithContext("--since");
  return parsed;
}

// The events the index gives for `filter`, each checked against its predecessor, to fn. Its
// events lie all over the file: their pages are asked for ahead of the reading (ScanPrefetch).
Status ListIndexed(const store::Journal& journal, const store::EventFilter& filter,
                   const store::EventSink& fn) {
  const std::unique_ptr<store::ScanPrefetch> prefetch =
      store::ScanPrefetch::Start(journal.path(), journal.LastSeq());
  return store::ReadAheadChecked(
      [&](const store::Journal::LinkedEventSink& sink) {
        if (!prefetch) return journal.ForEachMatchingUnchecked(filter, sink);
        return journal.ForEachMatchingUnchecked(
            filter, [&](const store::StoredEvent& stored, const store::Hash& predecessor) {
              prefetch->Reached(stored.seq);
              return sink(stored, predecessor);
            });
      },
      journal.path().string(), fn);
}

void PrintHistoryLine(const store::StoredEvent& stored, const events::Event& e, bool json) {
  if (json) {
    std::cout << Dump(EventJson(stored.seq, e)) << "\n";
    return;
  }
  // Every field escaped: an ID with a newline must not forge a line. Built whole and written
  // once: an audit of a busy year prints hundreds of thousands of lines.
  std::string line = std::to_string(stored.seq);
  line += "  ";
  line += sm::FormatRfc3339(e.time_unix_micros());
  line += "  ";
  line += EscapeControl(sm::EventTypeName(e));
  line += "  ";
  line += EscapeControl(journal_text::SummarizeEvent(e));
  line += '\n';
  std::cout.write(line.data(), static_cast<std::streamsize>(line.size()));
}

}  // namespace

int PrintHistory(const JournalQuery& o, bool filtered) {
  auto since = SinceMicros(o, filtered);
  if (!since.ok()) {
    PrintError(since.status());
    return kExitUnusable;
  }
  auto journal = OpenReadOnly(o);
  if (!journal.ok()) {
    PrintError(journal.status());
    return kExitUnusable;
  }
  const bool json = o.format == "json";
  const bool by_claim = filtered && !o.claim.empty();
  const bool any_filter = filtered && (o.partition || !o.device.empty() || !o.since.empty());
  ClaimSelection claim;
  if (by_claim) {
    auto selected = SelectClaim(**journal, o.claim);
    if (!selected.ok()) {
      PrintError(selected.status());
      return kExitDamaged;
    }
    claim = std::move(*selected);
    if (claim.uids.empty()) {
      // Nothing to list is not an error, but an operator should not mistake it for a claim
      // without events: say which claim was not found.
      std::cerr << "journal " << EscapeAndTruncate(o.path, 300) << " holds no DRA claim "
                << EscapeAndTruncate(o.claim, 300) << "\n";
    }
  }
  const auto print = [&](const store::StoredEvent& stored) -> Status {
    auto decoded = sm::DecodeEvent(stored.type, stored.time_unix_micros, stored.payload);
    if (!decoded.ok()) {
      return decoded.status().WithContext("journal seq " + std::to_string(stored.seq));
    }
    if (any_filter && !MatchesFilters(o, *since, *decoded)) return Status::Ok();
    if (by_claim && !claim.Holds(*decoded)) return Status::Ok();
    PrintHistoryLine(stored, *decoded, json);
    if (OutputFailed()) return Unavailable("stdout");  // reported by FinishOutput
    return Status::Ok();
  };
  // Checked as read: a missing seq or a broken chain stops the listing at that seq (exit 1).
  // Filtered: through the journal's index, each listed event checked against its predecessor
  // (on the printing thread: the reading one is the busier). A claim's saga events are tagged by
  // allocation, not by claim: its listing reads them all.
  // Read a batch ahead of the printing, on a second core: an audit of a busy year lists
  // hundreds of thousands of events.
  Status status = Status::Ok();
  if (any_filter && !by_claim) {
    status = ListIndexed(**journal, IndexFilter(o, *since), print);
  } else {
    status = store::ReadAhead(
        [&](const store::EventSink& sink) { return (*journal)->ForEachVerified(1, 0, sink); },
        print);
  }
  if (!status.ok() && !OutputFailed()) {
    std::cout.flush();
    PrintError(status);
    return FinishOutput(kExitDamaged);
  }
  return FinishOutput(kExitOk);
}

namespace {

// What verify learned beyond the store's report: the chain head and the anchor's check.
struct VerifyOutcome {
  std::uint64_t head_seq = 0;
  store::Hash head_hash = store::kZeroHash;
  std::optional<JournalAnchor> anchor;
  std::string anchor_problem;  // empty: no anchor, or it matches
};

void PrintVerifyText(const JournalQuery& o, const store::VerifyReport& report,
                     const sm::State& state, const VerifyOutcome& v) {
  if (!report.ok) {
    std::cout << "journal " << EscapeControl(o.path) << " is damaged";
    if (report.first_bad_seq) std::cout << " at seq " << report.first_bad_seq;
    std::cout << ": " << EscapeControl(report.reason) << "\n";
    return;
  }
  std::cout << "journal " << EscapeControl(o.path) << " is intact: " << report.events_checked
            << " events (hash chain, decoding, replay with invariants), "
            << report.snapshots_checked << " snapshots; state at seq " << state.last_seq << ": "
            << state.active.size() << " active partitions, " << state.allocations.size()
            << " live allocations\n";
  if (v.anchor) {
    if (v.anchor_problem.empty()) {
      std::cout << "anchor seq " << v.anchor->seq << " matches\n";
    } else {
      std::cout << "anchor check failed: " << v.anchor_problem << "\n";
    }
  }
  // Last, so `tail -n1` gives the next anchor.
  std::cout << "head " << v.head_seq << " " << store::HashToHex(v.head_hash) << "\n";
}

void PrintVerifyJson(const store::VerifyReport& report, const sm::State& state,
                     const VerifyOutcome& v) {
  nlohmann::json out{{"ok", report.ok && v.anchor_problem.empty()},
                     {"events_checked", report.events_checked},
                     {"snapshots_checked", report.snapshots_checked},
                     {"first_bad_seq", report.first_bad_seq},
                     {"reason", report.reason},
                     {"last_seq", state.last_seq},
                     {"active_partitions", state.active.size()},
                     {"live_allocations", state.allocations.size()}};
  if (report.ok) {
    out["head_seq"] = v.head_seq;
    out["head_hash"] = store::HashToHex(v.head_hash);
  }
  if (v.anchor && report.ok) {
    out["anchor"] = {
        {"seq", v.anchor->seq}, {"ok", v.anchor_problem.empty()}, {"reason", v.anchor_problem}};
  }
  std::cout << Dump(out) << "\n";
}

// The index is derived data: a row that disagrees with its event is reported like damage.
void CheckIndex(const store::Journal& journal, const IndexCheck& index,
                store::VerifyReport& report) {
  std::uint64_t bad_seq = 0;
  auto problem = index.Compare(journal, &bad_seq);
  if (problem.ok() && problem->empty()) return;
  report.ok = false;
  report.first_bad_seq = bad_seq;
  report.reason = problem.ok() ? *problem : problem.status().message();
}

}  // namespace

int VerifyJournal(const JournalQuery& o) {
  VerifyOutcome v;
  if (!o.anchor.empty()) {
    auto anchor = ParseAnchor(o.anchor);
    if (!anchor.ok()) {
      PrintError(anchor.status().WithContext("--anchor"));
      return kExitUnusable;
    }
    v.anchor = *anchor;
  }
  auto journal = OpenReadOnly(o);
  if (!journal.ok()) {
    PrintError(journal.status());
    return kExitUnusable;
  }
  auto subjects_from = (*journal)->SubjectsFrom();
  if (!subjects_from.ok()) {
    PrintError(subjects_from.status());
    return kExitUnusable;
  }
  IndexCheck index(*subjects_from);
  sm::State state;
  std::uint64_t anomalies_seen = 0;
  // The hash at the anchor's seq is taken in the same pass as the check (seq 0: the zero hash).
  std::optional<store::Hash> at_anchor;
  if (v.anchor && v.anchor->seq == 0) at_anchor = store::kZeroHash;
  store::VerifyReport report = (*journal)->Verify([&](const store::StoredEvent& stored) -> Status {
    v.head_seq = stored.seq;
    v.head_hash = stored.hash;
    if (v.anchor && stored.seq == v.anchor->seq) at_anchor = stored.hash;
    GFP_ASSIGN_OR_RETURN(events::Event e,
                         sm::DecodeEvent(stored.type, stored.time_unix_micros, stored.payload));
    sm::Apply(state, stored.seq, e);
    index.Add(stored.seq, e);
    if (state.anomaly_count != anomalies_seen) {
      anomalies_seen = state.anomaly_count;
      return DataLoss("event makes no sense here: " + state.recent_anomalies.back().description);
    }
    return sm::CheckInvariants(state).WithContext("invariant broken");
  });
  if (report.ok) CheckIndex(**journal, index, report);
  if (v.anchor && report.ok) v.anchor_problem = AnchorMismatch(*v.anchor, at_anchor, v.head_seq);
  if (o.format == "json") {
    PrintVerifyJson(report, state, v);
  } else {
    PrintVerifyText(o, report, state, v);
  }
  return FinishOutput(report.ok && v.anchor_problem.empty() ? kExitOk : kExitDamaged);
}

void AddJournalCommand(CLI::App& app, int* exit_code) {
  CLI::App* journal = app.add_subcommand("journal", "Read the journal (safe while serve runs)");
  journal->require_subcommand(1);

  // Each verb has its own options: CLI11 applies GPU_FABRIC_JOURNAL to every subcommand's
  // option, chosen or not, so a shared variable would let the environment override --journal.
  const auto common = [](CLI::App* verb, const std::shared_ptr<JournalQuery>& options,
                         const char* formats_help, std::vector<std::string> formats) {
    verb->add_option("--journal", options->path, "the SQLite journal")
        ->required()
        ->envname("GPU_FABRIC_JOURNAL");
    verb->add_option("--format", options->format, formats_help)
        ->check(CLI::IsMember(std::move(formats)));
  };

  auto history_options = std::make_shared<JournalQuery>();
  CLI::App* history = journal->add_subcommand("history", "One event per line, oldest first");
  common(history, history_options, "text or json", {"text", "json"});
  history->add_option("--partition", history_options->partition,
                      "only events about this partition");
  history->add_option("--device", history_options->device, "only events naming this device (BDF)");
  history->add_option("--claim", history_options->claim,
                      "only the events of this DRA claim (UID or NAMESPACE/NAME) and of the "
                      "allocation that prepared it");
  history->add_option("--since", history_options->since,
                      "only events at or after this RFC 3339 time");
  history->callback(
      [history_options, exit_code] { *exit_code = PrintHistory(*history_options, true); });

  auto state_options = std::make_shared<JournalQuery>();
  CLI::App* state = journal->add_subcommand("state", "Partition ownership rebuilt by replay");
  common(state, state_options, "text or json", {"text", "json"});
  state
      ->add_option("--at", state_options->at,
                   "replay up to this seq (0: before any event; default: all)")
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            if (!value.empty() && value.find_first_not_of("0123456789") == std::string::npos) {
              return {};
            }
            return "must be a seq: a whole number >= 0 (0: the state before any event), not " +
                   value;
          },
          "SEQ"));
  state->callback([state_options, exit_code] { *exit_code = PrintState(*state_options); });

  auto verify_options = std::make_shared<JournalQuery>();
  CLI::App* verify =
      journal->add_subcommand("verify", "Check the hash chain, decode and replay every event");
  common(verify, verify_options, "text or json", {"text", "json"});
  verify
      ->add_option("--anchor", verify_options->anchor,
                   "also check that the event at SEQ still has the chain hash HASH (SEQ:HASH, "
                   "as a previous run printed `head SEQ HASH`)")
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            auto anchor = ParseAnchor(value);
            return anchor.ok() ? std::string() : anchor.status().message();
          },
          "SEQ:HASH"));
  verify->callback([verify_options, exit_code] { *exit_code = VerifyJournal(*verify_options); });

  auto export_options = std::make_shared<JournalQuery>();
  CLI::App* exported = journal->add_subcommand("export", "The whole journal as JSON lines");
  common(exported, export_options, "json (the only export format)", {"json"});
  exported->add_flag("--follow", export_options->follow,
                     "then keep printing new events as they are appended, until SIGTERM/SIGINT");
  exported->callback([export_options, exit_code] {
    export_options->format = "json";
    *exit_code = ExportJournal(*export_options);
  });

  auto copy_options = std::make_shared<JournalQuery>();
  CLI::App* copy = journal->add_subcommand(
      "copy", "A consistent SQLite copy of the journal (one read transaction, -wal included)");
  copy->add_option("--journal", copy_options->path, "the SQLite journal")
      ->required()
      ->envname("GPU_FABRIC_JOURNAL");
  copy->add_option("--to", copy_options->to,
                   "a new file (refused if anything is at that path), or - for stdout")
      ->required();
  copy->callback([copy_options, exit_code] { *exit_code = CopyJournal(*copy_options); });
}

}  // namespace gfp::cli
