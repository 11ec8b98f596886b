// Soak benchmark (issue 22 §3): the real `gpu-fabric-plugin serve` through many allocation-and-
// release cycles, with Fabric Manager faults and restarts of serve along the way, judged on
// whether it stays flat. Prints a table per decile of the run and the verdicts; timing never
// makes it fail, a crash of serve, an unexpected refusal or a journal that does not verify does
// (exit 1, with the cycle and the flags that reproduce it).
//
//   bench_soak [--quick] [--cycles N] [--restart-every N] [--fault-every N] [--release-every N]
//              [--seed N] [--reconcile-interval MS] [--json PATH] [--dir DIR] [--keep]
//
// The world is sim/world's ProcessWorld: an HGX H100 node (fake sysfs/dev trees), the fake kubelet
// over real gRPC, a durable journal in the work dir and the simulated FM with no injected latency,
// its state file on /dev/shm. It runs in its shared-file mode, not the zero-latency private mode
// bench_plugin uses, because only the shared file lets this process inject faults (a call costs
// about 25 us more; sim/fm/README.md).
//
// A cycle: Allocate of a partition picked at random (seeded) by the fake kubelet, timed. The
// allocation ends in one of the two ways a real one does, neither timed: after every
// --release-every'th cycle the benchmark waits, following the journal as bench_plugin does,
// until serve's reconciliation (1 ms release grace; no pod in PodResources holds the devices) has
// released every allocation and deactivated its partition; otherwise the next Allocate of
// overlapping devices supersedes it (Decide ends it and deactivates its partition first). Not
// every cycle waits for reconciliation because serve's loop turns every 100 ms whatever
// --reconcile-interval says, so a release takes about 200 ms: 100,000 such cycles would take
// 6 hours (--release-every 1 does it). Every --fault-every cycles, halfway through,
// alternately an FM activation fails (FM_ST_GENERIC_ERROR once: that Allocate must be refused) or
// FM restarts in resiliency mode before the cycle (timed until serve has resynced it); those
// cycles stay out of the latency figures. Every --restart-every cycles, once its allocations are
// released, serve gets SIGTERM and is started again on the same journal, timed from exec to
// registered.
//
// At each decile of the run: Allocate latency (median, p90, p99 of the decile's cycles), and of
// the serve process RSS, open file descriptors (/proc/<pid>/fd) and threads, and the journal's
// size (db + -wal). Verdicts (soak_record.h): the last decile against the first, RSS within
// +10 %, FDs equal and threads within 2 (the fewest of a few samples at rest), Allocate median
// within 10 %. Journal bytes per cycle: its growth until serve's clean exit (the -wal
// checkpointed) / cycles. At the end `journal verify` of the real binary on the final journal,
// timed.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_report.h"
#include "bench/common/journal_follower.h"
#include "bench/common/proc_sample.h"
#include "bench/common/serve_log.h"
#include "bench/common/work_dirs.h"
#include "bench/soak/soak_record.h"
#include "common/strings.h"
#include "process/child_process.h"
#include "sim/world/process_world.h"
#include "statemachine/state.h"

namespace {

using gfp::bench::Die;
using gfp::bench::Fmt;
using gfp::bench::JournalFollower;
using gfp::bench::soak::DecileSample;
using gfp::bench::soak::RestartSample;
using gfp::bench::soak::SoakRecord;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

constexpr int kGenericError = -2;  // FM_ST_GENERIC_ERROR: refused, never retried by the plugin
constexpr const char* kActivate = "fmActivateFabricPartition";

double Millis(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

struct SoakOptions {
  std::uint64_t cycles = 100'000;
  std::uint64_t restart_every = 10'000;  // 0: serve is never restarted
  std::uint64_t fault_every = 1'000;     // 0: no FM faults
  std::uint64_t release_every = 50;      // wait for reconciliation's release after every Nth
  std::uint64_t seed = 1;
  int reconcile_ms = 10;  // below serve's 100 ms loop turn it means every turn

  std::string ReproduceFlags() const {
    return "--cycles " + std::to_string(cycles) + " --restart-every " +
           std::to_string(restart_every) + " --fault-every " + std::to_string(fault_every) +
           " --release-every " + std::to_string(release_every) + " --seed " + std::to_string(seed) +
           " --reconcile-interval " + std::to_string(reconcile_ms);
  }
};

enum class Fault { kNone, kActivationFails, kFmRestarts };

// Halfway through each --fault-every interval, so a fault never falls on a restart of serve
// (when --restart-every is a multiple of --fault-every).
Fault FaultOf(const SoakOptions& o, std::uint64_t cycle) {
  if (o.fault_every == 0 || cycle % o.fault_every != o.fault_every / 2) return Fault::kNone;
  return (cycle / o.fault_every) % 2 == 0 ? Fault::kActivationFails : Fault::kFmRestarts;
}

v1beta1::AllocateRequest AllocateOf(const std::vector<std::string>& ids) {
  v1beta1::AllocateRequest request;
  auto* container = request.add_container_requests();
  for (const auto& id : ids) container->add_devices_ids(id);
  return request;
}

std::uintmax_t JournalBytes(const fs::path& journal) {
  std::error_code ec;
  std::uintmax_t bytes = fs::file_size(journal, ec);
  if (ec) return 0;
  const std::uintmax_t wal = fs::file_size(journal.string() + "-wal", ec);
  return ec ? bytes : bytes + wal;
}

class Soak {
 public:
  Soak(const SoakOptions& options, const fs::path& work, const fs::path& fm_dir);
  SoakRecord Run();

 private:
  void Start();
  void Restart(std::uint64_t cycle);
  void RestartFabricManager(std::uint64_t cycle);
  void WaitReleased(std::uint64_t cycle);
  void RunCycle(std::uint64_t cycle, std::size_t decile);
  void SampleDecile(std::uint64_t cycles_done);
  void VerifyJournal();
  bool Registered(const gfp::kubelet::ResourceSnapshot& snapshot, int registrations) const;
  [[noreturn]] void Fail(std::uint64_t cycle, const std::string& what);

  SoakOptions o_;
  fs::path work_;
  std::unique_ptr<gfp::simworld::ProcessWorld> world_;
  std::unique_ptr<JournalFollower> journal_;
  std::vector<std::vector<std::string>> partitions_;  // device ids of each usable partition
  std::mt19937_64 rng_;
  std::uint64_t process_cycles_ = 0;  // cycles the running serve process has served
  SoakRecord record_;
};

Soak::Soak(const SoakOptions& options, const fs::path& work, const fs::path& fm_dir)
    : o_(options), work_(work), rng_(options.seed) {
  gfp::simworld::ProcessWorldOptions w;
  w.dir = work / "node";
  w.fm_library = GFP_BENCH_NVFM_SIM;
  w.plugin_binary = GFP_BENCH_PLUGIN_BINARY;
  w.reconcile_interval = std::chrono::milliseconds(o_.reconcile_ms);
  w.release_grace = std::chrono::milliseconds(1);  // a zero grace would mean "the default"
  w.node_name = "soak-node";
  if (!fm_dir.empty()) w.fm_state_file = fm_dir / "fm.state";
  fs::create_directories(w.dir);
  auto world = gfp::simworld::ProcessWorld::Create(w);
  if (!world.ok()) Die("world: " + world.status().message());
  world_ = std::move(world).value();
  record_.cycles = o_.cycles;
}

void Soak::Fail(std::uint64_t cycle, const std::string& what) {
  std::fprintf(stderr, "bench_soak: cycle %llu of %llu: %s\n",
               static_cast<unsigned long long>(cycle), static_cast<unsigned long long>(o_.cycles),
               what.c_str());
  if (auto code = world_->PluginExited()) {
    std::fprintf(stderr, "  serve has exited with code %d\n", *code);
  }
  std::fprintf(stderr, "  serve's log: %s\n  reproduce: bench_soak %s\n  (files kept in %s)\n",
               world_->log_path().c_str(), o_.ReproduceFlags().c_str(), work_.c_str());
  std::exit(1);
}

bool Soak::Registered(const gfp::kubelet::ResourceSnapshot& snapshot, int registrations) const {
  if (snapshot.registrations < registrations || !snapshot.connected) return false;
  if (snapshot.devices.size() != world_->node().gpus.size()) return false;
  for (const auto& device : snapshot.devices) {
    if (device.health() != "Healthy") return false;
  }
  return true;
}

void Soak::Start() {
  if (auto s = world_->StartPlugin(); !s.ok()) Fail(0, "serve: " + s.message());
  if (auto s = world_->WaitRegisteredAndHealthy(1); !s.ok()) Fail(0, s.message());
  journal_ = std::make_unique<JournalFollower>(world_->journal_path());
  const gfp::sm::State& state = journal_->state();
  for (const auto& [id, partition] : state.partitions) {
    auto devices = gfp::sm::DevicesOfPartition(state, partition);
    if (devices.missing_reason.empty()) partitions_.push_back(devices.bdfs);
  }
  if (partitions_.empty()) Fail(0, "the journal knows no usable partition");
}

// SIGTERM (a clean exit required), then serve again on the same journal: exec to registered.
void Soak::Restart(std::uint64_t cycle) {
  std::error_code ec;
  const std::uintmax_t log_offset = fs::file_size(world_->log_path(), ec);
  auto stopped = world_->StopPlugin();
  if (!stopped.ok() || *stopped != 0) {
    Fail(cycle,
         "serve did not exit cleanly on SIGTERM: " +
             (stopped.ok() ? "code " + std::to_string(*stopped) : stopped.status().message()));
  }
  journal_->Poll();
  RestartSample sample;
  sample.cycle = cycle;
  sample.journal_events = journal_->state().last_seq;
  const auto before = world_->kubelet().Resource(world_->resource());
  const int registrations = before ? before->registrations + 1 : 1;
  const auto exec = Clock::now();
  if (auto s = world_->StartPlugin(); !s.ok()) Fail(cycle, "serve: " + s.message());
  const bool registered = world_->kubelet().WaitForResource(
      world_->resource(), [&](const auto& snapshot) { return Registered(snapshot, registrations); },
      std::chrono::seconds(60));
  if (!registered) Fail(cycle, "serve did not register healthy devices within 60 s of a restart");
  sample.registered_ms = Millis(Clock::now() - exec);
  sample.recovered_ms =
      gfp::bench::RecoveryMillis(gfp::bench::RecoveryLine(world_->log_path(), ec ? 0 : log_offset));
  record_.restarts.push_back(sample);
  process_cycles_ = 0;
}

// FM restarts in resiliency mode, keeping what is active: timed until serve has handed it its
// active set (FM runs again) and every device is Healthy again.
void Soak::RestartFabricManager(std::uint64_t cycle) {
  const auto start = Clock::now();
  if (auto s = world_->fabric().Restart(/*resiliency=*/true); !s.ok()) {
    Fail(cycle, "FM restart: " + s.message());
  }
  const bool resynced = gfp::process::WaitUntil(
      [&] {
        auto mode = world_->fabric().GetMode();
        return mode.ok() && *mode == gfp::fmsim::Mode::kRunning;
      },
      std::chrono::seconds(30), std::chrono::milliseconds(1));
  if (!resynced) Fail(cycle, "serve did not resync the restarted FM within 30 s");
  const auto snapshot = world_->kubelet().Resource(world_->resource());
  const bool healthy = world_->kubelet().WaitForResource(
      world_->resource(),
      [&](const auto& s) { return Registered(s, snapshot ? snapshot->registrations : 1); },
      std::chrono::seconds(30));
  if (!healthy) Fail(cycle, "devices not Healthy within 30 s of FM's restart");
  record_.fm_resync_ms.push_back(Millis(Clock::now() - start));
}

void Soak::WaitReleased(std::uint64_t cycle) {
  if (!journal_->WaitUntilReleased(std::chrono::seconds(30))) {
    Fail(cycle, "serve did not release its allocations within 30 s of their last use");
  }
}

void Soak::RunCycle(std::uint64_t cycle, std::size_t decile) {
  if (o_.restart_every > 0 && cycle > 0 && cycle % o_.restart_every == 0) {
    WaitReleased(cycle);  // the restart is timed alone, not with releases it would make
    Restart(cycle);
  }
  const Fault fault = FaultOf(o_, cycle);
  if (fault == Fault::kFmRestarts) RestartFabricManager(cycle);
  if (fault == Fault::kActivationFails) {
    WaitReleased(cycle);  // nothing active: this Allocate must call FM to activate
    if (auto s = world_->fabric().InjectFailure(kActivate, kGenericError); !s.ok()) {
      Fail(cycle, "injecting an FM failure: " + s.message());
    }
    ++record_.activation_faults;
  }
  const std::vector<std::string>& ids = partitions_[rng_() % partitions_.size()];
  const auto start = Clock::now();
  const auto out = world_->kubelet().Allocate(world_->resource(), AllocateOf(ids));
  const double us = Millis(Clock::now() - start) * 1000;
  if (fault == Fault::kActivationFails) {
    if (!out.ok()) ++record_.activation_faults_refused;
    (void)world_->fabric().InjectFailure(kActivate, 0);  // not consumed if not called
  } else if (!out.ok()) {
    Fail(cycle, "Allocate of " + gfp::Join(ids) + " refused: " + out.status.error_message());
  }
  if (fault == Fault::kNone) record_.latency_us_by_decile[decile].push_back(us);
  if ((cycle + 1) % o_.release_every == 0) WaitReleased(cycle);
  ++process_cycles_;
}

// The serve process at rest: the fewest FDs and threads of a few samples 20 ms apart, so a
// connection or a gRPC worker thread of the moment is not taken for a leak.
gfp::bench::ProcSample SampleAtRest(pid_t pid) {
  gfp::bench::ProcSample rest = gfp::bench::SampleProc(pid);
  for (int i = 0; i < 4 && rest.ok; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const gfp::bench::ProcSample s = gfp::bench::SampleProc(pid);
    rest.ok = s.ok;
    rest.rss_mib = s.rss_mib;
    rest.rss_anon_mib = s.rss_anon_mib;
    rest.open_fds = std::min(rest.open_fds, s.open_fds);
    rest.threads = std::min(rest.threads, s.threads);
  }
  return rest;
}

void Soak::SampleDecile(std::uint64_t cycles_done) {
  journal_->Poll();
  DecileSample s;
  s.cycles_done = cycles_done;
  s.process_cycles = process_cycles_;
  s.proc = SampleAtRest(world_->serve()->pid());
  if (!s.proc.ok) Fail(cycles_done, "cannot read /proc of serve");
  s.journal_bytes = JournalBytes(world_->journal_path());
  s.journal_events = journal_->state().last_seq;
  record_.samples.push_back(s);
}

// Stops serve (a clean exit required) and runs `journal verify` of the real binary, timed.
void Soak::VerifyJournal() {
  journal_.reset();
  auto stopped = world_->StopPlugin();
  if (!stopped.ok() || *stopped != 0) Fail(o_.cycles, "serve did not exit cleanly at the end");
  record_.final_journal_bytes = JournalBytes(world_->journal_path());  // -wal checkpointed
  gfp::process::ProcessOptions verify;
  verify.binary = GFP_BENCH_PLUGIN_BINARY;
  verify.args = {"journal", "verify", "--journal=" + world_->journal_path().string()};
  verify.log_path = work_ / "verify.log";
  const auto start = Clock::now();
  auto ran = gfp::process::RunCommand(verify, std::chrono::minutes(30));
  record_.verify_seconds = Millis(Clock::now() - start) / 1000;
  if (!ran.ok()) Fail(o_.cycles, "journal verify: " + ran.status().message());
  if (!ran->status.success()) Fail(o_.cycles, "journal verify failed: " + ran->output);
}

SoakRecord Soak::Run() {
  Start();
  SampleDecile(0);
  const auto start = Clock::now();
  std::size_t decile = 0;
  for (std::uint64_t cycle = 0; cycle < o_.cycles; ++cycle) {
    RunCycle(cycle, decile);
    if (cycle + 1 < o_.cycles * (decile + 1) / 10) continue;
    SampleDecile(cycle + 1);
    const auto& latency = record_.latency_us_by_decile[decile];
    std::printf(
        "  decile %2zu: %s cycles, %.0f s, Allocate median %.0f us, RSS %.1f MiB "
        "(anonymous %.1f), %d fds, %d threads\n",
        decile + 1, std::to_string(cycle + 1).c_str(), Millis(Clock::now() - start) / 1000,
        gfp::bench::Percentile(latency, 0.5), record_.samples.back().proc.rss_mib,
        record_.samples.back().proc.rss_anon_mib, record_.samples.back().proc.open_fds,
        record_.samples.back().proc.threads);
    std::fflush(stdout);
    ++decile;
  }
  record_.wall_seconds = Millis(Clock::now() - start) / 1000;
  VerifyJournal();
  return record_;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpu-fabric-plugin soak benchmark (real binary, many allocation cycles)"};
  SoakOptions o;
  std::string dir_flag;
  std::string json_path;
  bool quick = false;
  bool keep = false;
  app.add_option("--cycles", o.cycles, "allocation-and-release cycles")
      ->check(CLI::Range(10, 1 << 30));
  app.add_option("--restart-every", o.restart_every, "restart serve every N cycles (0: never)");
  app.add_option("--fault-every", o.fault_every, "an FM fault every N cycles (0: none)");
  app.add_option("--release-every", o.release_every,
                 "wait until serve's reconciliation released the allocations after every Nth "
                 "cycle (1: every cycle; about 200 ms each); the others are superseded by the "
                 "next Allocate of overlapping devices")
      ->check(CLI::PositiveNumber);
  app.add_option("--seed", o.seed, "seed of the partition picked each cycle");
  app.add_option("--reconcile-interval", o.reconcile_ms, "serve's --reconcile-interval, in ms")
      ->check(CLI::PositiveNumber);
  app.add_option("--dir", dir_flag, "directory of the journal (default: a temp dir)");
  app.add_option("--json", json_path, "also write the figures to this file as JSON");
  app.add_flag("--quick", quick, "smoke run: 300 cycles, a restart every 100, a fault every 50");
  app.add_flag("--keep", keep, "keep the benchmark files");
  CLI11_PARSE(app, argc, argv);
  if (quick) {
    if (app.count("--cycles") == 0) o.cycles = 300;
    if (app.count("--restart-every") == 0) o.restart_every = 100;
    if (app.count("--fault-every") == 0) o.fault_every = 50;
  }
  ::signal(SIGPIPE, SIG_IGN);

  const gfp::bench::WorkDirs dirs = gfp::bench::MakeWorkDirs(dir_flag, "bench-soak");
  std::printf("soak benchmark in %s%s: %s (simulated FM state in %s)\n\n", dirs.work.c_str(),
              quick ? " [--quick]" : "", o.ReproduceFlags().c_str(), dirs.FmStateOrWork().c_str());
  const SoakRecord record = Soak(o, dirs.work, dirs.fm_state).Run();
  gfp::bench::soak::ReportSoak(record);

  gfp::bench::Figures().Print();
  if (!json_path.empty()) gfp::bench::Figures().WriteJson(json_path, quick);
  if (!keep) dirs.Remove();
  return 0;
}
