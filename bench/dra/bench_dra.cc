// DRA-mode benchmark (SPEC §7, §11 "Performance"). Prints one table of measurements, then the
// SPEC §7 figures it measured; timing never makes it fail, a broken call does (exit 2).
//
//   bench_dra [--quick] [--json PATH] [--dir DIR] [--samples N] [--republish-samples N]
//             [--steady-seconds S] [--keep] [--binary PATH]
//
// --binary runs another build's gpu-fabric-plugin in the same benchmark (an A/B of two builds
// without the benchmark's own changes in between).
//
// Everything runs for real, in the one simulated world (sim/world ProcessWorld, dra = true):
// `gpu-fabric-plugin serve --mode=dra` as a child process on an HGX H100 node, the fake API server
// over HTTPS, the fake kubelet's DRA side over gRPC on Unix sockets, the stand-in scheduler, the
// simulated FM with no injected latency (its state file on /dev/shm when it exists, so a call
// costs no I/O) and a durable journal in the work dir (the disk measured).
//
// 1. NodePrepareResources of a 4-GPU claim as kubelet sees it (the fake DRA kubelet's call), a
//    first Prepare (one claim GET, the FM activation, journal, CDI and metadata files), then its
//    Unprepare; the two 4-GPU partitions of the table in turn, new claims every round, each
//    Prepare after 20 ms of idle (SPEC §7: an isolated call, the machine idle before it, as
//    kubelet's first Prepare of a VM's claim comes; the plugin's stager makes the next claim's
//    inodes in such idle time, dra::InodeReserve). The floor,
//    as bench_plugin's for Allocate: durable commits per Prepare (distinct times of the events it
//    journaled, ClaimPrepared's aside: it is not fsynced) x a durable single-row SQLite commit
//    on the same disk (interleaved with the calls) + one empty DRA round trip (NodePrepareResources
//    of no claim) + one claim GET over HTTPS (this process's own ApiClient, the product's) + one FM
//    activation (the simulated FM called in this process). Target: median <= floor + 150 us (SPEC
//    §7); also reported as a ratio to one commit. The breakdown shows the time from the grant's
//    event to ClaimPrepared's in the journal (the outcome commit, then the claim's files put in
//    place: staged while the saga ran, or written then), the call cut at its events' times, and
//    times the empty round trip and the claim GET after the same idle as each Prepare (20 ms): the
//    wake-ups an isolated call pays beyond the floor's back-to-back ones. The floor with those
//    isolated parts (the commit baseline is already taken right after the idle) is reported
//    beside the target's: on a machine where an idle CPU is slow to wake, it tells the plugin's
//    own cost from what any call after that idle pays.
// 2. API calls per Prepare (target 1: the claim GET) and per Unprepare (target 0): every request
//    the fake API server logged during the call; serve runs with --reconcile-interval=1h so
//    reconciliation's periodic GETs stay out of the windows.
// 3. Slice republish latency: a GPU's /dev/vfio/<group> node removed, then recreated (health
//    changes), each timed until the fake API server holds a slice of a higher pool generation.
// 4. Steady state of serve in DRA mode (default intervals, one 4-GPU claim prepared): RSS and CPU
//    % of one core from /proc, as bench_plugin measures device-plugin mode.
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "adapters/apiserver/api_client.h"
#include "adapters/apiserver/kubeconfig.h"
#include "adapters/host/atomic_file.h"
#include "bench/bench_report.h"
#include "bench/common/baseline_db.h"
#include "bench/common/fm_call_cost.h"
#include "bench/common/proc_sample.h"
#include "bench/common/process_clock.h"
#include "bench/common/work_dirs.h"
#include "sim/world/claim_scheduler.h"
#include "sim/world/process_world.h"
#include "store/journal.h"

namespace {

using gfp::bench::BaselineDb;
using gfp::bench::CpuMicrosOf;
using gfp::bench::Die;
using gfp::bench::Figure;
using gfp::bench::Fmt;
using gfp::bench::Goal;
using gfp::bench::MeasureFmCalls;
using gfp::bench::Percentile;
using gfp::bench::Row;
using gfp::bench::SampleProc;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* kDriver = "gpu-fabric-plugin.io";
constexpr const char* kNodeName = "bench-node";
// The one event of a Prepare committed without fsync (store::Durability::kSurvivesProcessCrash,
// as the files it records): not a durable commit of the floor; its cost is in the rest.
constexpr const char* kRelaxedEvent = "ClaimPrepared";
// Before each timed Prepare: the idle before an isolated call (kubelet's first Prepares of VMs'
// claims come seconds apart, not right after another claim's Unprepare).
constexpr std::chrono::milliseconds kIdleBeforePrepare{20};

std::string IdleText() {
  return "after " + std::to_string(kIdleBeforePrepare.count()) + " ms idle";
}

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }
double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::int64_t NowUnixMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The event times serve journaled since the last call (read-only: never blocks the writer).
class JournalTimes {
 public:
  explicit JournalTimes(const fs::path& path) {
    auto journal = gfp::store::Journal::Open(path, gfp::store::OpenMode::kReadOnly);
    if (!journal.ok()) Die(journal.status().message());
    journal_ = std::move(journal).value();
    (void)Poll();
  }
  // The time and type of each event journaled since the last Poll.
  std::vector<std::pair<std::int64_t, std::string>> Poll() {
    std::vector<std::pair<std::int64_t, std::string>> times;
    auto read = journal_->ForEach(last_seq_ + 1, 0, [&](const gfp::store::StoredEvent& e) {
      last_seq_ = e.seq;
      times.emplace_back(e.time_unix_micros, e.type);
      return gfp::Status::Ok();
    });
    if (!read.ok()) Die("reading the journal: " + read.message());
    return times;
  }

 private:
  std::unique_ptr<gfp::store::Journal> journal_;
  std::uint64_t last_seq_ = 0;
};

// ---------------------------------------------------------------------------------------------
// The world: serve --mode=dra and its fakes.

// The serve binary measured: this build's, or --binary (an older build, for a same-bench A/B).
std::string& PluginBinary() {
  static std::string binary = GFP_BENCH_PLUGIN_BINARY;
  return binary;
}

std::unique_ptr<gfp::simworld::ProcessWorld> StartWorld(const fs::path& dir, const fs::path& fm_dir,
                                                        std::chrono::milliseconds reconcile) {
  gfp::simworld::ProcessWorldOptions options;
  options.dir = dir;
  options.fm_library = GFP_BENCH_NVFM_SIM;
  options.plugin_binary = PluginBinary();
  options.reconcile_interval = reconcile;
  options.release_grace = std::chrono::seconds(30);  // serve's default
  options.node_name = kNodeName;
  options.dra = true;
  if (!fm_dir.empty()) options.fm_state_file = fm_dir / (dir.filename().string() + "-fm.state");
  fs::create_directories(dir);
  auto world = gfp::simworld::ProcessWorld::Create(options);
  if (!world.ok()) Die("world: " + world.status().message());
  if (auto s = (*world)->StartPlugin(); !s.ok()) Die("serve: " + s.message());
  if (auto s = (*world)->WaitDraRegisteredAndPublished(); !s.ok()) {
    Die("serve --mode=dra did not register and publish: " + s.message() + " (see " +
        (*world)->log_path().string() + ")");
  }
  return std::move(world).value();
}

gfp::kubelet::DraClaim Ref(const Json& claim) {
  return {claim["metadata"]["uid"].get<std::string>(),
          claim["metadata"]["namespace"].get<std::string>(),
          claim["metadata"]["name"].get<std::string>()};
}

// The stand-in scheduler allocates an fm-4gpu claim; the API server stores it.
Json ScheduleClaim(gfp::simworld::ProcessWorld& world, gfp::simworld::ClaimScheduler& scheduler,
                   const std::string& name) {
  gfp::simworld::ClaimRequest request;
  request.name = name;
  request.gpus = 4;
  request.pod = "virt-launcher-" + name;
  auto claim = scheduler.Allocate(request, world.api().Slices());
  if (!claim.ok()) Die("the stand-in scheduler: " + claim.status().message());
  auto stored = world.api().PutClaim(*claim);
  if (!stored.ok()) Die("PutClaim: " + stored.status().message());
  return *stored;
}

// Prepare (or Unprepare) of one claim; dies on any error, as a broken call.
void CallOrDie(gfp::simworld::ProcessWorld& world, const Json& claim, bool prepare) {
  const auto ref = Ref(claim);
  auto out = prepare ? world.dra_kubelet().Prepare({ref}) : world.dra_kubelet().Unprepare({ref});
  const char* what = prepare ? "NodePrepareResources" : "NodeUnprepareResources";
  if (!out.ok()) Die(std::string(what) + ": " + out.status.error_message());
  const auto it = out.response.find(ref.uid);
  if (it == out.response.end()) Die(std::string(what) + ": no answer for claim " + ref.uid);
  if (!it->second.error.empty())
    Die(std::string(what) + " of " + ref.name + ": " + it->second.error);
  if (prepare && it->second.devices.size() != 4) {
    Die("NodePrepareResources of " + ref.name + " answered " +
        std::to_string(it->second.devices.size()) + " devices, not 4");
  }
}

// ---------------------------------------------------------------------------------------------
// 1 and 2. Prepare and Unprepare, their API calls, and the floor's parts.

struct PrepareRun {
  std::vector<double> prepare_us, unprepare_us, commit_us;
  // From the grant's event time to ClaimPrepared's: the outcome commit and the claim's files.
  std::vector<double> grant_to_files_us;
  // The call cut at its events' times: call start -> ClaimPrepareRequested (the GET, the
  // lock) -> AllocationGranted (intent commit, FM) -> ClaimPrepared (above) -> the answer.
  std::vector<double> to_requested_us, requested_to_grant_us, files_to_answer_us;
  double files = 0;    // regular files a Prepare left (CDI specs, device metadata)
  double commits = 0;  // durable commits inside the Prepare windows (distinct event times)
  double relaxed_commits =
      0;  // commits not fsynced (ClaimPrepared: Durability::kSurvivesProcessCrash)
  double prepare_requests = 0, prepare_claim_gets = 0, prepare_slice_writes = 0;
  double unprepare_requests = 0;
  double Calls() const { return static_cast<double>(prepare_us.size()); }
};

int SliceWrites(const gfp::apisim::FakeApiServer& api) {
  return api.CallCount("create", "resourceslices") + api.CallCount("update", "resourceslices") +
         api.CallCount("patch", "resourceslices");
}

// Regular files under the CDI directory and the driver's plugin directory (its sockets and the
// files' staging directories aside): what the prepared claims left.
std::size_t ClaimFileCount(const gfp::simworld::ProcessWorld& world) {
  std::size_t n = 0;
  for (const fs::path& root :
       {world.setup().cdi_dir(), world.setup().kubelet_plugins_dir() / kDriver}) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (it->is_regular_file() && name.find(".tmp") == std::string::npos) ++n;
    }
  }
  return n;
}

// One new file written in `dir` as the claim files are (the product's WriteFileAtomically, no
// fsync: Durability::kAtomicOnly): median.
double AtomicFileWriteMicros(const fs::path& dir, int samples) {
  fs::create_directories(dir);
  const std::string body(1024, 'j');
  std::vector<double> took;
  for (int i = -3; i < samples; ++i) {
    // A new name each time, as each claim's files are (their Unprepare removes them).
    const fs::path target = dir / ("file-" + std::to_string(i + 3) + ".json");
    const auto start = Clock::now();
    const gfp::Status written = gfp::adapters::host::WriteFileAtomically(
        target, body, gfp::adapters::host::Durability::kAtomicOnly);
    if (!written.ok()) Die("atomic write in " + dir.string() + " failed: " + written.message());
    if (i >= 0) took.push_back(Micros(Clock::now() - start));
  }
  return Percentile(took, 0.5);
}

// One timed Prepare then Unprepare of `claim`, recorded into `run` when `record`.
void PrepareAndUnprepare(gfp::simworld::ProcessWorld& world, BaselineDb& baseline,
                         JournalTimes& journal, const Json& claim, bool record, PrepareRun& run) {
  auto& api = world.api();
  std::this_thread::sleep_for(kIdleBeforePrepare);
  const double commit = baseline.One().wall_us;  // interleaved: same disk conditions
  api.ClearRequests();
  const std::int64_t unix0 = NowUnixMicros();
  auto start = Clock::now();
  CallOrDie(world, claim, true);
  const double prepared = Micros(Clock::now() - start);
  const std::int64_t unix1 = NowUnixMicros();
  const double requests = static_cast<double>(api.Requests().size());
  const double gets = api.CallCount("get", "resourceclaims");
  const double slice_writes = SliceWrites(api);
  if (!record) run.files = static_cast<double>(ClaimFileCount(world));
  std::set<std::int64_t> durable, relaxed;
  std::int64_t requested = 0, granted = 0, files_recorded = 0;
  for (const auto& [t, type] : journal.Poll()) {
    if (t < unix0 || t > unix1) continue;
    (type == kRelaxedEvent ? relaxed : durable).insert(t);
    if (type == "ClaimPrepareRequested") requested = t;
    if (type == "AllocationGranted") granted = t;
    if (type == kRelaxedEvent) files_recorded = t;
  }
  api.ClearRequests();
  start = Clock::now();
  CallOrDie(world, claim, false);
  const double unprepared = Micros(Clock::now() - start);
  const double unprepare_requests = static_cast<double>(api.Requests().size());
  (void)journal.Poll();
  if (!record) return;
  run.commit_us.push_back(commit);
  run.prepare_us.push_back(prepared);
  run.unprepare_us.push_back(unprepared);
  if (requested > 0 && granted >= requested && files_recorded >= granted) {
    run.to_requested_us.push_back(static_cast<double>(requested - unix0));
    run.requested_to_grant_us.push_back(static_cast<double>(granted - requested));
    run.grant_to_files_us.push_back(static_cast<double>(files_recorded - granted));
    run.files_to_answer_us.push_back(static_cast<double>(unix1 - files_recorded));
  }
  run.commits += static_cast<double>(durable.size());
  run.relaxed_commits += static_cast<double>(relaxed.size());
  run.prepare_requests += requests;
  run.prepare_claim_gets += gets;
  run.prepare_slice_writes += slice_writes;
  run.unprepare_requests += unprepare_requests;
}

PrepareRun RunPrepares(gfp::simworld::ProcessWorld& world, BaselineDb& baseline, int samples) {
  JournalTimes journal(world.journal_path());
  gfp::simworld::ClaimScheduler scheduler(kDriver, kNodeName);
  PrepareRun run;
  for (int round = -1; static_cast<int>(run.Calls()) < samples; ++round) {
    // Both 4-GPU partitions of the table, each with a new claim, so every Prepare is a first one.
    const std::string tag = std::to_string(round + 1);
    const Json a = ScheduleClaim(world, scheduler, "vm-a" + tag);
    const Json b = ScheduleClaim(world, scheduler, "vm-b" + tag);
    for (const Json* claim : {&a, &b}) {
      PrepareAndUnprepare(world, baseline, journal, *claim, round >= 0, run);
      scheduler.Release(*claim);
      world.api().DeleteClaim((*claim)["metadata"]["namespace"].get<std::string>(),
                              (*claim)["metadata"]["name"].get<std::string>());
    }
  }
  if (auto s = world.FabricMatchesJournal(); !s.ok()) Die("after the Prepares: " + s.message());
  return run;
}

// NodePrepareResources of no claim: the DRA gRPC round trip alone, median; back to back (the
// floor's), or each after `idle` as kubelet's isolated Prepare comes (both processes asleep).
double EmptyDraRoundTrip(gfp::simworld::ProcessWorld& world, int samples,
                         std::chrono::milliseconds idle = std::chrono::milliseconds(0)) {
  std::vector<double> latency;
  for (int i = -5; i < samples; ++i) {
    if (idle.count() > 0) std::this_thread::sleep_for(idle);
    const auto start = Clock::now();
    auto out = world.dra_kubelet().Prepare({});
    const double took = Micros(Clock::now() - start);
    if (!out.ok()) Die("empty NodePrepareResources: " + out.status.error_message());
    if (i >= 0) latency.push_back(took);
  }
  return Percentile(latency, 0.5);
}

// One GET of a stored claim over HTTPS with the product's ApiClient and serve's kubeconfig
// (one connection, kept alive), median; and with a new connection per GET.
double ClaimGetRoundTrip(gfp::simworld::ProcessWorld& world, int samples, double* new_connection_us,
                         double* isolated_us) {
  gfp::simworld::ClaimScheduler scheduler(kDriver, kNodeName);
  const Json claim = ScheduleClaim(world, scheduler, "vm-get");
  auto config = gfp::adapters::apiserver::LoadKubeconfig(world.setup().kubeconfig);
  if (!config.ok()) Die(config.status().message());
  auto client = gfp::adapters::apiserver::ApiClient::Create(*config);
  if (!client.ok()) Die(client.status().message());
  gfp::adapters::apiserver::ApiCall get;
  get.resource = "resourceclaims";
  get.path = "/apis/resource.k8s.io/v1/namespaces/" +
             claim["metadata"]["namespace"].get<std::string>() + "/resourceclaims/" +
             claim["metadata"]["name"].get<std::string>();
  std::vector<double> latency;
  for (int i = -5; i < samples; ++i) {
    const auto start = Clock::now();
    auto answer = (*client)->Call(get);
    const double took = Micros(Clock::now() - start);
    if (!answer.ok() || answer->code != 200) Die("GET " + get.path + " failed");
    if (i >= 0) latency.push_back(took);
  }
  // The same after the idle before each timed Prepare, as a Prepare's GET comes (both sides
  // asleep).
  std::vector<double> isolated;
  for (int i = -2; i < samples; ++i) {
    std::this_thread::sleep_for(kIdleBeforePrepare);
    const auto start = Clock::now();
    auto answer = (*client)->Call(get);
    const double took = Micros(Clock::now() - start);
    if (!answer.ok() || answer->code != 200) Die("GET " + get.path + " failed");
    if (i >= 0) isolated.push_back(took);
  }
  *isolated_us = Percentile(isolated, 0.5);
  // The same with a new client (a new connection and TLS handshake) per GET.
  std::vector<double> fresh;
  for (int i = -2; i < std::min(samples, 30); ++i) {
    const auto start = Clock::now();
    auto one = gfp::adapters::apiserver::ApiClient::Create(*config);
    if (!one.ok()) Die(one.status().message());
    auto answer = (*one)->Call(get);
    const double took = Micros(Clock::now() - start);
    if (!answer.ok() || answer->code != 200) Die("GET " + get.path + " failed");
    if (i >= 0) fresh.push_back(took);
  }
  *new_connection_us = Percentile(fresh, 0.5);
  world.api().DeleteClaim(claim["metadata"]["namespace"].get<std::string>(),
                          claim["metadata"]["name"].get<std::string>());
  return Percentile(latency, 0.5);
}

// The floor's parts and the breakdown's, measured after the Prepares in the same run.
struct FloorParts {
  double rtt = 0;           // empty NodePrepareResources round trip
  double rtt_isolated = 0;  // the same after kIdleBeforePrepare
  double get = 0;           // one claim GET, kept-alive connection
  double get_new = 0;       // one claim GET with a new connection (TLS handshake)
  double get_isolated = 0;  // one claim GET after kIdleBeforePrepare, kept-alive connection
  double fm = 0;            // one FM activation
  double file_write = 0;    // one atomic file write (no fsync)
};

// What one run comes to.
struct PrepareSummary {
  // files_us: the files as a repeated Prepare writes them in place (9 atomic writes, a model);
  // after_grant_us: measured, the time a first Prepare spends on its files after the grant's
  // commit (grant to ClaimPrepared in the journal, less one commit): what is beyond the floor.
  // isolated_floor: the floor with its round trip and GET timed after the same idle as the
  // Prepares (the commits already are: each baseline commit follows that idle).
  double commit, per_call, floor, isolated_floor, p50, p99, unprepare_p50, files_us, after_grant_us;
  PrepareSummary(const PrepareRun& run, const FloorParts& f)
      : commit(Percentile(run.commit_us, 0.5)),
        per_call(run.commits / run.Calls()),
        floor(per_call * commit + f.rtt + f.get + f.fm),
        isolated_floor(per_call * commit + f.rtt_isolated + f.get_isolated + f.fm),
        p50(Percentile(run.prepare_us, 0.5)),
        p99(Percentile(run.prepare_us, 0.99)),
        unprepare_p50(Percentile(run.unprepare_us, 0.5)),
        files_us(run.files * f.file_write),
        after_grant_us(std::max(0.0, Percentile(run.grant_to_files_us, 0.5) - commit)) {}
};

void PrintPrepareRows(const PrepareRun& run, const FloorParts& f, const PrepareSummary& m) {
  Row("durable 1-row SQLite commit, median", Fmt("%.1f us", m.commit),
      "baseline, WAL+FULL, same dir");
  Row("NodePrepareResources 4 GPUs, p50 / p99", Fmt("%.0f", m.p50) + "/" + Fmt("%.0f us", m.p99),
      Fmt("%.2fx commit", m.p50 / m.commit) + Fmt("; floor + %.0f us", m.p50 - m.floor) +
          (m.p50 <= m.floor + 150 ? " (<= 150: met)" : " (<= 150: MISSED)"));
  Row("  floor: commits x commit + DRA rtt + GET + FM", Fmt("%.0f us", m.floor),
      Fmt("%.2f", m.per_call) + Fmt(" x %.0f", m.commit) + Fmt(" + %.0f", f.rtt) +
          Fmt(" + %.0f", f.get) + Fmt(" + %.1f us", f.fm) +
          Fmt(" (and %.2f commits not fsynced)", run.relaxed_commits / run.Calls()));
  Row("  beyond the floor: the files after the grant", Fmt("%.0f us", m.after_grant_us),
      Fmt("grant to ClaimPrepared (journal times) %.0f us",
          Percentile(run.grant_to_files_us, 0.5)) +
          " less 1 commit: staged while the saga ran, then published");
  Row("  the call by its events' times, p50s",
      Fmt("%.0f", Percentile(run.to_requested_us, 0.5)) +
          Fmt(" + %.0f", Percentile(run.requested_to_grant_us, 0.5)) +
          Fmt(" + %.0f", Percentile(run.grant_to_files_us, 0.5)) +
          Fmt(" + %.0f us", Percentile(run.files_to_answer_us, 0.5)),
      "start -> requested (GET, lock) -> granted (intent commit, FM) -> ClaimPrepared (outcome "
      "commit, files) -> answer");
  Row("  the files written in place (a repeated Prepare)", Fmt("%.0f us", m.files_us),
      Fmt("%.0f files", run.files) +
          Fmt(" x %.0f us (a new file linked whole; no fsync)", f.file_write));
  Row("  beyond the floor: GET on a new connection", Fmt("+%.0f us", f.get_new - f.get),
      Fmt("%.0f us with a TLS handshake", f.get_new) + Fmt(" vs %.0f kept alive", f.get));
  Row("  beyond the floor: the rest", Fmt("%.0f us", m.p50 - m.floor - m.after_grant_us),
      "the plugin's own work (and a new connection, if any)");
  Row("    of the rest: an isolated GET's wake-ups", Fmt("%.0f us", f.get_isolated - f.get),
      "GET " + IdleText() + Fmt(" %.0f us", f.get_isolated) + Fmt(" vs %.0f", f.get));
  Row("    of the rest: isolated round trip's wake-ups", Fmt("%.0f us", f.rtt_isolated - f.rtt),
      "empty call " + IdleText() + Fmt(" %.0f us", f.rtt_isolated) + Fmt(" vs %.0f", f.rtt));
  Row("  beyond the floor of isolated parts", Fmt("%.0f us", m.p50 - m.isolated_floor),
      Fmt("floor %.0f us", m.isolated_floor) + " with the round trip and GET " + IdleText());
  Row("NodeUnprepareResources, p50 / p99",
      Fmt("%.0f", m.unprepare_p50) + "/" + Fmt("%.0f us", Percentile(run.unprepare_us, 0.99)),
      "deactivation, journal, files removed");
  Row("API requests per Prepare (claim GETs; slice writes)",
      Fmt("%.2f", run.prepare_requests / run.Calls()) +
          Fmt(" (%.2f;", run.prepare_claim_gets / run.Calls()) +
          Fmt(" %.2f)", run.prepare_slice_writes / run.Calls()),
      "target 1 (the claim GET), no slice write");
  Row("API requests per Unprepare", Fmt("%.2f", run.unprepare_requests / run.Calls()), "target 0");
}

void Report(const std::string& id, const std::string& name, double value, const std::string& unit,
            const std::string& note) {
  gfp::bench::Figures().Add(Figure{id, name, value, unit, Goal::kReport, 0, note, ""});
}

void AddPrepareFigures(const PrepareRun& run, const FloorParts& f, const PrepareSummary& m) {
  auto& figures = gfp::bench::Figures();
  const std::string basis = Fmt("%.0f first Prepares of new 4-GPU claims", run.Calls());
  figures.Add(
      gfp::bench::Spec7Figure("prepare_beyond_floor_us", m.p50 - m.floor,
                              Fmt("median %.0f us", m.p50) + Fmt(" - floor %.0f us (", m.floor) +
                                  Fmt("%.2f commits", m.per_call) + Fmt(" x %.0f us", m.commit) +
                                  Fmt(" + DRA rtt %.0f", f.rtt) + Fmt(" + claim GET %.0f", f.get) +
                                  Fmt(" + FM %.1f us); ", f.fm) + basis));
  figures.Add(gfp::bench::Spec7Figure("prepare_disk_vs_commit", m.p50 / m.commit,
                                      Fmt("median %.0f us", m.p50) + Fmt(", p99 %.0f us", m.p99) +
                                          Fmt(" / commit %.0f us", m.commit)));
  figures.Add(gfp::bench::Spec7Figure(
      "api_calls_per_prepare", run.prepare_requests / run.Calls(),
      "every request the fake API server logged in the call; --reconcile-interval=1h; " + basis));
  figures.Add(gfp::bench::Spec7Figure("api_calls_per_unprepare",
                                      run.unprepare_requests / run.Calls(),
                                      "every request logged in the call; --reconcile-interval=1h"));
  Report("prepare_p99_us", "NodePrepareResources 4 GPUs, p99", m.p99, "us", basis);
  Report("prepare_floor_us", "NodePrepareResources floor", m.floor, "us",
         "commits x commit + DRA rtt + claim GET (kept alive) + FM activation");
  Report("prepare_breakdown_files_us", "NodePrepareResources breakdown: claim files", m.files_us,
         "us", Fmt("%.0f files", run.files) + Fmt(" x %.0f us atomic write", f.file_write));
  Report("prepare_breakdown_files_after_grant_us",
         "NodePrepareResources breakdown: files after the grant", m.after_grant_us, "us",
         Fmt("grant to ClaimPrepared %.0f us less one commit; the files staged while the saga ran",
             Percentile(run.grant_to_files_us, 0.5)));
  Report("prepare_breakdown_get_new_connection_us", "claim GET on a new connection", f.get_new,
         "us", Fmt("kept alive: %.0f us", f.get));
  Report("prepare_breakdown_isolated_get_us", "of the rest: an isolated GET's wake-ups",
         f.get_isolated - f.get, "us",
         "claim GET " + IdleText() + Fmt(" %.0f us", f.get_isolated) +
             Fmt(" vs %.0f back to back", f.get));
  Report("prepare_breakdown_isolated_rtt_us", "of the rest: isolated round trip's wake-ups",
         f.rtt_isolated - f.rtt, "us",
         "empty NodePrepareResources " + IdleText() + Fmt(" %.0f us", f.rtt_isolated) +
             Fmt(" vs %.0f back to back", f.rtt));
  Report("prepare_beyond_isolated_floor_us",
         "NodePrepareResources: median - floor of isolated parts", m.p50 - m.isolated_floor, "us",
         Fmt("floor %.0f us: ", m.isolated_floor) + Fmt("%.2f commits", m.per_call) +
             Fmt(" x %.0f us", m.commit) + Fmt(" + DRA rtt %.0f", f.rtt_isolated) +
             Fmt(" + claim GET %.0f", f.get_isolated) + Fmt(" + FM %.1f us", f.fm) +
             "; round trip and GET each " + IdleText() + ", as each Prepare");
  Report("unprepare_median_us", "NodeUnprepareResources, median", m.unprepare_p50, "us", "");
}

// ---------------------------------------------------------------------------------------------
// 3. Slice republish latency.

std::int64_t SliceGeneration(const gfp::apisim::FakeApiServer& api) {
  const auto slices = api.Slices();
  if (slices.size() != 1) return -1;
  return slices[0]["spec"]["pool"]["generation"].get<std::int64_t>();
}

// Alternately removes and recreates a GPU's vfio group node; each change is timed until the
// API server holds a higher generation. Dies when one is not republished within 10 s.
void BenchRepublish(gfp::simworld::ProcessWorld& world, int samples) {
  const auto& gpus = world.node().gpus;
  std::vector<double> ms;
  for (int i = 0; i < samples * 2; ++i) {
    const auto& gpu = gpus[static_cast<std::size_t>(i / 2) % gpus.size()];
    const bool remove = i % 2 == 0;
    const std::int64_t before = SliceGeneration(world.api());
    const auto start = Clock::now();
    const gfp::Status changed = remove ? world.node().RemoveVfioGroupNode(gpu.iommu_group)
                                       : world.node().RecreateVfioGroupNode(gpu.iommu_group);
    if (!changed.ok()) Die(changed.message());
    while (SliceGeneration(world.api()) <= before) {
      if (Clock::now() - start > std::chrono::seconds(10)) {
        Die(std::string("the slice was not republished within 10 s of ") +
            (remove ? "removing" : "recreating") + " /dev/vfio/" + gpu.iommu_group);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    ms.push_back(Seconds(Clock::now() - start) * 1000);
  }
  const double p50 = Percentile(ms, 0.5);
  const double worst = *std::max_element(ms.begin(), ms.end());
  Row("slice republish after a health change, p50 / max",
      Fmt("%.1f", p50) + "/" + Fmt("%.1f ms", worst),
      std::string("<= 1 s: ") + (worst <= 1000 ? "met" : "MISSED") +
          Fmt(" (%.0f changes)", static_cast<double>(ms.size())));
  const std::string note = Fmt("%.0f changes", static_cast<double>(ms.size())) +
                           ": a GPU's /dev/vfio/<group> removed or recreated, until the API "
                           "server holds the next pool generation (polled every 0.5 ms)";
  gfp::bench::Figures().Add(gfp::bench::Spec7Figure("slice_republish_max_ms", worst, note));
  gfp::bench::Figures().Add(Figure{"slice_republish_p50_ms", "Slice republish after a change, p50",
                                   p50, "ms", Goal::kReport, 0, note, ""});
}

// ---------------------------------------------------------------------------------------------
// 4. Steady state of serve in DRA mode.

void BenchSteadyState(const fs::path& dir, const fs::path& fm_dir, double seconds, double settle) {
  // serve's default --reconcile-interval (5 s).
  auto world = StartWorld(dir, fm_dir, std::chrono::milliseconds(5000));
  gfp::simworld::ClaimScheduler scheduler(kDriver, kNodeName);
  CallOrDie(*world, ScheduleClaim(*world, scheduler, "vm-steady"), true);
  const pid_t pid = world->serve()->pid();
  std::this_thread::sleep_for(std::chrono::duration<double>(settle));
  const double cpu0 = CpuMicrosOf(pid);
  const auto t0 = Clock::now();
  double rss_max = SampleProc(pid).rss_mib;
  double rss_last = rss_max;
  while (Seconds(Clock::now() - t0) < seconds) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    rss_last = SampleProc(pid).rss_mib;
    rss_max = std::max(rss_max, rss_last);
  }
  const double wall = Seconds(Clock::now() - t0);
  const double cpu_pct = (CpuMicrosOf(pid) - cpu0) / 1e6 / wall * 100.0;
  auto stopped = world->StopPlugin();
  const bool clean = stopped.ok() && *stopped == 0;
  Row("serve --mode=dra: steady RSS (last / max)",
      Fmt("%.1f", rss_last) + "/" + Fmt("%.1f MiB", rss_max),
      std::string("<= 40 MiB: ") + (rss_max <= 40 ? "met" : "MISSED"));
  Row("serve --mode=dra: CPU, % of one core", Fmt("%.3f %%", cpu_pct),
      std::string("<= 0.5 %: ") + (cpu_pct <= 0.5 ? "met" : "MISSED") +
          Fmt(" (over %.1f s)", wall) + (clean ? "" : "; unclean exit on SIGTERM"));
  const std::string note = Fmt("over %.1f s, one 4-GPU claim prepared, default intervals", wall);
  gfp::bench::Figures().Add(gfp::bench::Spec7Figure("dra_steady_rss_mib", rss_max, note));
  gfp::bench::Figures().Add(gfp::bench::Spec7Figure("dra_steady_idle_cpu_percent", cpu_pct, note));
  if (!clean)
    Die("serve --mode=dra did not exit 0 on SIGTERM (see " + world->log_path().string() + ")");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpu-fabric-plugin DRA-mode benchmark (real binary, fake API server and kubelet)"};
  std::string dir_flag;
  std::string json_path;
  int samples = 200;
  int republish_samples = 10;
  double steady_seconds = 60;
  bool quick = false;
  bool keep = false;
  app.add_option("--dir", dir_flag, "directory on the disk to measure (default: a temp dir)");
  app.add_option("--json", json_path, "also write the figures to this file as JSON");
  app.add_option("--samples", samples, "timed Prepare/Unprepare pairs")->check(CLI::PositiveNumber);
  app.add_option("--republish-samples", republish_samples,
                 "GPUs made unhealthy and healthy again (two changes each)")
      ->check(CLI::PositiveNumber);
  app.add_option("--steady-seconds", steady_seconds, "steady-state sampling window");
  app.add_flag("--quick", quick, "tiny run (smoke test): few samples, 3 s steady state");
  app.add_flag("--keep", keep, "keep the benchmark files");
  app.add_option("--binary", PluginBinary(),
                 "the gpu-fabric-plugin binary to run (default: this build's)")
      ->check(CLI::ExistingFile);
  CLI11_PARSE(app, argc, argv);
  double settle = 3;
  if (quick) {
    samples = std::min(samples, 6);
    republish_samples = std::min(republish_samples, 2);
    steady_seconds = std::min(steady_seconds, 3.0);
    settle = 0.2;
  }
  ::signal(SIGPIPE, SIG_IGN);

  const gfp::bench::WorkDirs dirs = gfp::bench::MakeWorkDirs(dir_flag, "bench-dra");
  const fs::path& work = dirs.work;
  const fs::path& fm_dir = dirs.fm_state;
  std::printf("DRA benchmark in %s%s (simulated FM state in %s)\n\n", work.c_str(),
              quick ? " [--quick]" : "", fm_dir.empty() ? "the work dir" : fm_dir.c_str());
  gfp::bench::Header();
  {
    auto world = StartWorld(work / "prepare", fm_dir, std::chrono::hours(1));
    BaselineDb baseline(work / "prepare" / "baseline.db");
    const PrepareRun run = RunPrepares(*world, baseline, samples);
    const int floor_samples = std::max(samples, 50);
    FloorParts floor;
    floor.rtt = EmptyDraRoundTrip(*world, floor_samples);
    floor.rtt_isolated = EmptyDraRoundTrip(*world, floor_samples, kIdleBeforePrepare);
    floor.get = ClaimGetRoundTrip(*world, floor_samples, &floor.get_new, &floor.get_isolated);
    floor.fm = MeasureFmCalls(GFP_BENCH_NVFM_SIM, dirs.FmStateOrWork() / "fm-floor.state",
                              /*zero_latency=*/false, floor_samples)
                   .activate_us;
    floor.file_write = AtomicFileWriteMicros(work / "prepare" / "file-floor", floor_samples);
    const PrepareSummary summary(run, floor);
    PrintPrepareRows(run, floor, summary);
    AddPrepareFigures(run, floor, summary);
    BenchRepublish(*world, republish_samples);
  }
  BenchSteadyState(work / "steady", fm_dir, steady_seconds, settle);

  gfp::bench::Figures().Print();
  if (!json_path.empty()) gfp::bench::Figures().WriteJson(json_path, quick);
  if (!keep) dirs.Remove();
  return 0;
}
