// Plugin benchmark (SPEC §7). Prints one table; timing never makes it fail.
//
//   bench_plugin [--quick] [--dir DIR] [--samples N] [--gpa-samples N] [--steady-seconds S]
//                [--cold-events N] [--log-level L] [--no-tmpfs] [--keep]
//
// Everything runs for real: fake sysfs/dev trees (sim/node), the simulated Fabric Manager
// (libnvfm-sim.so, loaded by the plugin through dlopen like libnvfm.so.1), the fake kubelet
// (real gRPC over Unix sockets in a temp dir) and a durable journal in the same temp dir.
//
// 1. Allocate with FM over gRPC on an HGX H100 node, next to one durable single-row SQLite commit
//    (WAL, synchronous=FULL) in the same directory, measured before, interleaved with every
//    Allocate call, and after (target: median <= 2.5x the commit):
//      a. fresh activation: 1-GPU and 2-GPU partitions alternating, each allocation released
//         by a reconciliation pass (not timed) before the next, so each call is
//         intent commit -> FM activate -> outcome commit;
//      b. superseding: a 2-GPU partition and a 1-GPU partition inside it alternating, so each
//         call also releases the previous allocation and deactivates its partition first
//         (3 commits, 2 FM calls).
//    The simulated FM keeps its state on /dev/shm when it exists (see g_fm_state_dir).
//    The same again with everything on /dev/shm (tmpfs: a commit costs no I/O) shows what an
//    Allocate costs besides its fsyncs; the CPU time of the whole process per call is printed too.
// 2. GetPreferredAllocation over gRPC on an HGX A100 16-GPU / 35-partition node, sizes
//    1..16, free and half-used (target p99 <= 1 ms).
// 3. Steady state of the real binary (`gpu-fabric-plugin serve`, default intervals) with one
//    VM pod admitted: RSS (target <= 40 MiB) and CPU % of one core (target <= 0.5 %) sampled
//    from /proc over --steady-seconds (60; --quick: 3); also the time from exec to registered.
// 4. Cold start of the real binary with a journal of --cold-events (1,000,000; --quick: 2,000)
//    events and a snapshot at its end: exec to registered (target <= 200 ms).
#include <signal.h>
#include <sys/resource.h>
#include <sqlite3.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sim/fm/fm_sim_control.h"
#include "engine/engine.h"
#include "plugin/service.h"
#include "process/child_process.h"
#include "sim/kubelet/fake_kubelet.h"
#include "sim/node/fake_node.h"
#include "statemachine/apply.h"
#include "statemachine/decide.h"
#include "statemachine/event_codec.h"
#include "statemachine/state.h"
#include "store/journal.h"
#include "bench/bench_report.h"
#include "bench/common/grow_journal.h"

namespace {

using gfp::bench::Die;
using gfp::bench::Fmt;
using gfp::bench::Header;
using gfp::bench::Percentile;
using gfp::bench::Row;

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;
using gfp::kubelet::FakeKubelet;
using gfp::kubelet::FakeKubeletOptions;

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }
double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// User+system CPU time of this whole process (plugin, fake kubelet and gRPC threads), in us.
double ProcessCpuMicros() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// ---------------------------------------------------------------------------------------------
// One durable single-row commit, the fsync floor, with the journal's pragmas.
class BaselineDb {
 public:
  explicit BaselineDb(const fs::path& p) {
    if (sqlite3_open(p.c_str(), &db_) != SQLITE_OK) Die("cannot open baseline " + p.string());
    const char* setup =
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB NOT NULL);";
    if (sqlite3_exec(db_, setup, nullptr, nullptr, nullptr) != SQLITE_OK) Die(sqlite3_errmsg(db_));
    sqlite3_prepare_v2(db_, "INSERT INTO t(v) VALUES(?1)", -1, &stmt_, nullptr);
  }
  ~BaselineDb() {
    sqlite3_finalize(stmt_);
    sqlite3_close(db_);
  }
  // One commit, timed.
  double One() {
    const std::string payload(96, 'p');
    const auto start = Clock::now();
    sqlite3_bind_blob(stmt_, 1, payload.data(), static_cast<int>(payload.size()), SQLITE_STATIC);
    if (sqlite3_step(stmt_) != SQLITE_DONE) Die(sqlite3_errmsg(db_));
    sqlite3_reset(stmt_);
    return Micros(Clock::now() - start);
  }
  void Measure(int samples, std::vector<double>& out) {
    const std::string payload(96, 'p');
    for (int i = -3; i < samples; ++i) {
      const auto start = Clock::now();
      sqlite3_bind_blob(stmt_, 1, payload.data(), static_cast<int>(payload.size()), SQLITE_STATIC);
      if (sqlite3_step(stmt_) != SQLITE_DONE) Die(sqlite3_errmsg(db_));
      sqlite3_reset(stmt_);
      if (i >= 0) out.push_back(Micros(Clock::now() - start));
    }
  }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// A node: fake trees + simulated FM state + directories for the kubelet and the journal.
struct Node {
  fs::path dir;
  gfp::sim::FakeNode tree;
  std::string fm_state;
  fs::path device_plugin_dir;
  fs::path pod_resources_socket;
  fs::path journal;
};

// Where the simulated FM keeps its state. The simulator rewrites its state file (temp file +
// rename) and appends to its call log on every SDK call; on ext4 a rename over a file flushes
// its data (auto_da_alloc), which makes one simulated FM call cost about as much as a durable
// commit. On tmpfs it costs ~25 us, closer to "FM with zero latency", so it goes there when
// /dev/shm exists (set by main).
fs::path g_fm_state_dir;

Node MakeNode(const fs::path& dir, gfp::sim::NodePreset preset, const std::string& table) {
  Node n;
  n.dir = dir;
  fs::create_directories(dir);
  const fs::path fm_dir = g_fm_state_dir.empty() ? dir : g_fm_state_dir / dir.filename();
  fs::create_directories(fm_dir);
  auto tree = gfp::sim::BuildFakeNode(dir / "node", gfp::sim::FakeNodeSpec{preset});
  if (!tree.ok()) Die(tree.status().message());
  n.tree = std::move(tree).value();
  n.fm_state = (fm_dir / ("fm-state-" + table + ".json")).string();
  auto fm = gfp::fmsim::FmSimControl::Create(n.fm_state, table);
  if (!fm.ok()) Die(fm.status().message());
  n.device_plugin_dir = dir / "dp";
  n.pod_resources_socket = dir / "pr" / "kubelet.sock";
  n.journal = dir / "journal" / "journal.db";
  return n;
}

gfp::plugin::ServeConfig ConfigFor(const Node& n) {
  gfp::plugin::ServeConfig c;
  c.fabric_manager = true;
  c.fm_library = GFP_BENCH_NVFM_SIM;
  c.pci_module_mapping = n.tree.module_mapping_file;
  c.sysfs_root = n.tree.sysfs_root;
  c.dev_root = n.tree.dev_root;
  c.device_plugin_dir = n.device_plugin_dir;
  c.pod_resources_socket = n.pod_resources_socket;
  c.journal = n.journal;
  c.pci_ids = n.tree.pci_ids_file;
  // The service loop's own reconciliation stays out of the way; the benchmark calls Reconcile
  // itself, between timed calls. With a 1 ms grace, two passes 2 ms apart release an unused
  // allocation (a zero grace is journaled as "use the default").
  c.reconcile_interval = std::chrono::hours(1);
  c.release_grace = std::chrono::milliseconds(1);
  c.node_name = "bench-node";
  return c;
}

FakeKubeletOptions KubeletOptionsFor(const Node& n) {
  FakeKubeletOptions o;
  o.device_plugin_dir = n.device_plugin_dir;
  o.pod_resources_socket = n.pod_resources_socket;
  return o;
}

bool AllHealthy(const std::vector<v1beta1::Device>& devices, std::size_t count) {
  return devices.size() == count &&
         std::all_of(devices.begin(), devices.end(),
                     [](const v1beta1::Device& d) { return d.health() == "Healthy"; });
}

// The plugin's Service running in this process, registered with a fake kubelet.
class InProcessPlugin {
 public:
  explicit InProcessPlugin(const Node& node)
      : node_(node), kubelet_(std::make_unique<FakeKubelet>(KubeletOptionsFor(node))) {
    ::setenv("NVFM_SIM_STATE", node.fm_state.c_str(), 1);
    auto started = kubelet_->Start();
    if (!started.ok()) Die(started.message());
    auto service = gfp::plugin::Service::Create(ConfigFor(node), "bench");
    if (!service.ok()) Die("Service::Create: " + service.status().message());
    service_ = std::move(service).value();
    if (service_->core().inventory().resources.size() != 1) Die("expected one resource");
    resource_ = service_->core().inventory().resources[0].naming.resource_name;
    thread_ = std::thread([this] {
      auto s = service_->Run(stop_);
      if (!s.ok()) std::fprintf(stderr, "Service::Run: %s\n", s.message().c_str());
    });
    const std::size_t gpus = node.tree.gpus.size();
    if (!kubelet_->WaitForDevices(
            resource_, [&](const auto& devices) { return AllHealthy(devices, gpus); },
            std::chrono::seconds(30))) {
      Die("the plugin did not register " + std::to_string(gpus) + " healthy devices");
    }
  }
  ~InProcessPlugin() {
    kubelet_->Stop();  // ends the ListAndWatch streams first, so the servers stop at once
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    service_.reset();
  }

  FakeKubelet& kubelet() { return *kubelet_; }
  gfp::plugin::PluginCore& core() { return service_->core(); }
  const std::string& resource() const { return resource_; }

  // Partitions of the journal's FM table as (id, GPUs).
  std::vector<std::pair<std::uint32_t, std::vector<std::string>>> Partitions() {
    return core().engine().Read([](const gfp::sm::State& s) {
      std::vector<std::pair<std::uint32_t, std::vector<std::string>>> out;
      for (const auto& [pid, p] : s.partitions) {
        auto devices = gfp::sm::DevicesOfPartition(s, p);
        if (devices.missing_reason.empty()) out.emplace_back(pid, devices.bdfs);
      }
      return out;
    });
  }

 private:
  const Node& node_;
  std::unique_ptr<FakeKubelet> kubelet_;
  std::unique_ptr<gfp::plugin::Service> service_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::string resource_;
};

v1beta1::AllocateRequest AllocateOf(const std::vector<std::string>& ids) {
  v1beta1::AllocateRequest r;
  auto* c = r.add_container_requests();
  for (const auto& id : ids) c->add_devices_ids(id);
  return r;
}

struct FmCounts {
  std::size_t activations = 0;
  std::size_t deactivations = 0;
};

FmCounts CountFmCalls(const std::string& state_path) {
  FmCounts c;
  auto fm = gfp::fmsim::FmSimControl::Open(state_path);
  if (!fm.ok()) return c;
  auto log = fm->CallLog();
  if (!log.ok()) return c;
  for (const auto& call : *log) {
    if (call.function == "fmActivateFabricPartition") ++c.activations;
    if (call.function == "fmDeactivateFabricPartition") ++c.deactivations;
  }
  return c;
}

void ClearFmLog(const std::string& state_path) {
  auto fm = gfp::fmsim::FmSimControl::Open(state_path);
  if (fm.ok()) fm->ClearCallLog().IgnoreError();
}

// ---------------------------------------------------------------------------------------------
// 1. Allocate with FM over gRPC.

void BenchAllocate(const fs::path& work, const std::string& label, int samples) {
  const Node node = MakeNode(work / "h100", gfp::sim::NodePreset::kHgxH100, "h100");
  std::printf("  (Allocate on %s: %s)\n", label.c_str(), node.dir.c_str());
  BaselineDb baseline(node.dir / "baseline.db");  // same directory (disk) as the journal
  std::vector<double> base;
  baseline.Measure(std::min(std::max(samples, 20), 50), base);

  InProcessPlugin plugin(node);
  auto parts = plugin.Partitions();
  std::vector<std::vector<std::string>> ones;
  std::vector<std::vector<std::string>> twos;
  for (const auto& [pid, gpus] : parts) {
    if (gpus.size() == 1) ones.push_back(gpus);
    if (gpus.size() == 2) twos.push_back(gpus);
  }
  if (ones.empty() || twos.empty()) Die("the H100 table has no 1- or 2-GPU partitions");

  auto seq = [&] { return plugin.core().engine().Read([](const auto& s) { return s.last_seq; }); };

  // a. Fresh activation, the allocation released (not timed) before the next call.
  ClearFmLog(node.fm_state);
  std::vector<double> fresh;
  std::uint64_t events = 0;
  double cpu_us = 0;
  for (int i = -3; i < samples; ++i) {
    const auto& ids = (i & 1) ? twos[static_cast<std::size_t>(i + 3) / 2 % twos.size()]
                              : ones[static_cast<std::size_t>(i + 3) / 2 % ones.size()];
    const double commit = baseline.One();  // interleaved: same disk conditions
    const std::uint64_t before = seq();
    const double cpu0 = ProcessCpuMicros();
    const auto start = Clock::now();
    auto out = plugin.kubelet().Allocate(plugin.resource(), AllocateOf(ids));
    const double took = Micros(Clock::now() - start);
    if (i >= 0) cpu_us += ProcessCpuMicros() - cpu0;
    if (!out.ok()) Die("Allocate failed: " + out.status.error_message());
    if (i >= 0) {
      base.push_back(commit);
      fresh.push_back(took);
      events += seq() - before;
    }
    // Release it (not timed): absent from every pod for the grace, deactivated through FM.
    plugin.core().Reconcile({});
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    plugin.core().Reconcile({});
  }
  const bool clean = plugin.core().engine().Read(
      [](const gfp::sm::State& s) { return s.allocations.empty() && s.active.empty(); });
  const FmCounts fresh_calls = CountFmCalls(node.fm_state);

  // b. Superseding: partition {a,b} and {a} alternating.
  std::vector<std::string> pair = twos.front();
  std::vector<std::string> single = {pair.front()};
  ClearFmLog(node.fm_state);
  std::vector<double> supersede;
  std::uint64_t events_b = 0;
  for (int i = -3; i < samples; ++i) {
    const auto& ids = (i & 1) ? single : pair;
    const double commit = baseline.One();
    const std::uint64_t before = seq();
    const auto start = Clock::now();
    auto out = plugin.kubelet().Allocate(plugin.resource(), AllocateOf(ids));
    const double took = Micros(Clock::now() - start);
    if (!out.ok()) Die("Allocate failed: " + out.status.error_message());
    if (i >= 0) {
      base.push_back(commit);
      supersede.push_back(took);
      events_b += seq() - before;
    }
  }
  const FmCounts super_calls = CountFmCalls(node.fm_state);
  // What one simulated-FM state change costs by itself (lock, read, write + rename of the state
  // file, call log), through the control API, on a partition the plugin does not use any more.
  std::vector<double> sim_change;
  {
    auto fm = gfp::fmsim::FmSimControl::Open(node.fm_state);
    std::uint32_t spare = 0;
    for (const auto& [pid, gpus] : parts) {
      if (gpus.size() == 1 && gpus.front() != pair.front() && gpus.front() != pair.back()) {
        spare = pid;
      }
    }
    for (int i = 0; fm.ok() && spare != 0 && i < std::max(samples, 20); ++i) {
      auto t0 = Clock::now();
      auto a = fm->ActivateDirectly(spare);
      sim_change.push_back(Micros(Clock::now() - t0));
      t0 = Clock::now();
      auto d = fm->DeactivateDirectly(spare);
      sim_change.push_back(Micros(Clock::now() - t0));
      if (!a.ok() || !d.ok()) break;
    }
  }
  baseline.Measure(std::min(std::max(samples, 20), 50), base);

  const double base_med = Percentile(base, 0.5);
  Row("[" + label + "] raw SQLite 1-row INSERT commit, median", Fmt("%.1f us", base_med),
      Fmt("baseline, WAL+FULL, same dir; p99 %.1f us", Percentile(base, 0.99)));
  const double n = static_cast<double>(samples);
  const double fresh_med = Percentile(fresh, 0.5);
  Row("[" + label + "] Allocate+FM gRPC, fresh activation, median", Fmt("%.1f us", fresh_med),
      label != "disk" ? Fmt("%.2fx; no-I/O overhead, not the SPEC ratio", fresh_med / base_med)
                      : Fmt("ratio %.2fx (<= 2.5x: ", fresh_med / base_med) +
                            (fresh_med / base_med <= 2.5 ? "met)" : "MISSED)"));
  Row("[" + label + "] Allocate+FM gRPC, fresh activation, p99",
      Fmt("%.1f us", Percentile(fresh, 0.99)),
      Fmt("%.1f events/call; ", static_cast<double>(events) / n) +
          Fmt("FM activations %.0f", static_cast<double>(fresh_calls.activations)) +
          (clean ? "" : " (release left state!)"));
  const double sup_med = Percentile(supersede, 0.5);
  Row("[" + label + "] Allocate+FM, superseding (deact+act), median", Fmt("%.1f us", sup_med),
      Fmt("ratio %.2fx (3 commits, 2 FM calls)", sup_med / base_med));
  Row("[" + label + "] Allocate+FM gRPC, superseding, p99", Fmt("%.1f us", Percentile(supersede, 0.99)),
      Fmt("%.1f events/call; ", static_cast<double>(events_b) / n) +
          Fmt("FM act %.0f", static_cast<double>(super_calls.activations)) +
          Fmt(" / deact %.0f", static_cast<double>(super_calls.deactivations)));
  Row("[" + label + "] sim FM state change alone, median", Fmt("%.1f us", Percentile(sim_change, 0.5)),
      "FmSimControl Activate/DeactivateDirectly");
  Row("[" + label + "] CPU per fresh Allocate (whole process)", Fmt("%.0f us", cpu_us / n),
      "plugin + fake kubelet + gRPC, user+sys");
  std::printf("  (%d timed Allocate calls per case; baseline: %zu commits, before, interleaved "
              "with every Allocate, and after)\n",
              samples, base.size());
}

// ---------------------------------------------------------------------------------------------
// 2. GetPreferredAllocation over gRPC on the A100 table.

void BenchPreferred(const fs::path& work, int samples) {
  const Node node = MakeNode(work / "a100", gfp::sim::NodePreset::kHgxA100x16, "a100");
  InProcessPlugin plugin(node);
  std::vector<std::string> all;
  const auto snapshot = plugin.kubelet().Resource(plugin.resource());
  if (!snapshot) Die("resource not known to the fake kubelet");
  for (const auto& d : snapshot->devices) all.push_back(d.id());
  std::sort(all.begin(), all.end());
  std::printf("  (A100 node: %zu GPUs, %zu partitions in the journal's table)\n", all.size(),
              plugin.Partitions().size());

  auto run = [&](const std::string& label, const std::vector<std::string>& available) {
    for (int size : {1, 2, 4, 8, 16}) {
      v1beta1::PreferredAllocationRequest request;
      auto* c = request.add_container_requests();
      for (const auto& id : available) c->add_available_deviceids(id);
      c->set_allocation_size(size);
      std::vector<double> lat;
      bool ok = true;
      for (int i = -samples / 10 - 1; i < samples; ++i) {
        const auto start = Clock::now();
        auto out = plugin.kubelet().GetPreferredAllocation(plugin.resource(), request);
        const double took = Micros(Clock::now() - start);
        ok = out.ok();
        if (i >= 0) lat.push_back(took);
      }
      const double p99 = Percentile(lat, 0.99);
      Row("GPA gRPC, " + label + Fmt(" (%.0f avail)", static_cast<double>(available.size())) +
              Fmt(", size %.0f", size),
          Fmt("%.0f", Percentile(lat, 0.5)) + "/" + Fmt("%.0f us", p99),
          std::string("p99 <= 1 ms: ") + (p99 <= 1000 ? "met" : "MISSED") +
              (ok ? "" : "; no fit (gRPC error path)"));
    }
  };
  run("free", all);
  // Half-used: two 4-GPU partitions on different baseboards allocated.
  std::vector<std::string> used;
  int taken = 0;
  for (const auto& [pid, gpus] : plugin.Partitions()) {
    if (gpus.size() != 4 || taken == 2) continue;
    if (std::any_of(gpus.begin(), gpus.end(), [&](const std::string& g) {
          return std::find(used.begin(), used.end(), g) != used.end();
        })) {
      continue;
    }
    if (taken == 1 && pid % 2 == 0) continue;  // spread over both halves
    auto out = plugin.kubelet().Allocate(plugin.resource(), AllocateOf(gpus));
    if (!out.ok()) Die("Allocate failed: " + out.status.error_message());
    used.insert(used.end(), gpus.begin(), gpus.end());
    ++taken;
  }
  std::vector<std::string> free_left;
  for (const auto& id : all) {
    if (std::find(used.begin(), used.end(), id) == used.end()) free_left.push_back(id);
  }
  run("half-used", free_left);
  std::printf("  (value = p50/p99 over %d calls per row)\n", samples);
}

// ---------------------------------------------------------------------------------------------
// 3. Steady state of the real binary.

struct ProcSample {
  double rss_mib = 0;
  double cpu_seconds = 0;
  bool ok = false;
};

ProcSample SampleProc(pid_t pid) {
  ProcSample s;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      std::istringstream in(line.substr(6));
      double kib = 0;
      in >> kib;
      s.rss_mib = kib / 1024.0;
    }
  }
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = all.rfind(')');
  if (close == std::string::npos) return s;
  std::istringstream fields(all.substr(close + 2));
  std::vector<std::string> f;
  std::string tok;
  while (fields >> tok) f.push_back(tok);
  if (f.size() < 13) return s;
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  s.cpu_seconds = (std::stod(f[11]) + std::stod(f[12])) / ticks;  // utime, stime
  s.ok = true;
  return s;
}

// The real binary, started against `node` and registered with `kubelet`.
struct Spawned {
  std::unique_ptr<gfp::process::ChildProcess> process;
  std::string resource;
  double registered_ms = 0;  // exec to every device reported Healthy
  std::string log;
};

Spawned SpawnServe(const Node& node, FakeKubelet& kubelet) {
  gfp::process::ProcessOptions o;
  o.binary = GFP_BENCH_PLUGIN_BINARY;
  o.args = {"serve",
            "--fabric-manager",
            "--fm-library=" + std::string(GFP_BENCH_NVFM_SIM),
            "--sysfs-root=" + node.tree.sysfs_root.string(),
            "--dev-root=" + node.tree.dev_root.string(),
            "--pci-module-mapping=" + node.tree.module_mapping_file.string(),
            "--pci-ids=" + node.tree.pci_ids_file.string(),
            "--device-plugin-dir=" + node.device_plugin_dir.string(),
            "--pod-resources-socket=" + node.pod_resources_socket.string(),
            "--journal=" + node.journal.string()};
  o.env = {{"NVFM_SIM_STATE", node.fm_state}};
  o.log_path = node.dir / "serve.log";
  std::error_code ignored;
  fs::remove(o.log_path, ignored);  // the log of this run only
  Spawned out;
  out.log = o.log_path.string();
  const auto spawned = Clock::now();
  auto started = gfp::process::ChildProcess::Start(std::move(o));
  if (!started.ok()) Die(started.status().message());
  out.process = std::move(started).value();

  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (out.resource.empty() && Clock::now() < deadline) {
    for (const auto& attempt : kubelet.RegistrationLog()) {
      if (attempt.status.ok()) out.resource = attempt.request.resource_name();
    }
    if (out.resource.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const std::size_t gpus = node.tree.gpus.size();
  if (out.resource.empty() ||
      !kubelet.WaitForDevices(out.resource, [&](const auto& d) { return AllHealthy(d, gpus); },
                              std::chrono::seconds(30))) {
    out.process->Kill();
    Die("the binary did not register healthy devices; see " + out.log);
  }
  out.registered_ms = Seconds(Clock::now() - spawned) * 1000;
  return out;
}

// SIGTERM, then wait (SIGKILL after 15 s). Returns whether it exited 0, and the time taken.
bool StopServe(gfp::process::ChildProcess& serve, double* stop_ms) {
  const auto term_sent = Clock::now();
  const gfp::process::ExitStatus status = serve.Terminate(std::chrono::seconds(15));
  *stop_ms = Seconds(Clock::now() - term_sent) * 1000;
  return status.success();
}

// The line the plugin logs after recovering its journal ("journal ... recovered in ...").
std::string RecoveryLine(const std::string& log) {
  std::ifstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    const auto at = line.find("recovered in");
    if (at != std::string::npos) return line.substr(at);
  }
  return "(no recovery line in the log)";
}

void BenchSteadyState(const fs::path& work, double seconds, double settle) {
  const Node node = MakeNode(work / "steady", gfp::sim::NodePreset::kHgxH100, "h100");
  FakeKubelet kubelet(KubeletOptionsFor(node));
  if (auto s = kubelet.Start(); !s.ok()) Die(s.message());
  const Spawned serve = SpawnServe(node, kubelet);
  const pid_t pid = serve.process->pid();

  // One VM pod with 2 GPUs (GPA, Allocate with FM, PreStart), seen by reconciliation.
  auto pod = kubelet.AdmitPod("default", "vm-bench", {{"compute", 2}}, serve.resource);
  const bool pod_ok = pod.ok();

  std::this_thread::sleep_for(std::chrono::duration<double>(settle));
  const ProcSample first = SampleProc(pid);
  const auto t0 = Clock::now();
  double rss_max = first.rss_mib;
  double rss_last = first.rss_mib;
  while (Seconds(Clock::now() - t0) < seconds) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    const ProcSample s = SampleProc(pid);
    if (!s.ok) break;
    rss_max = std::max(rss_max, s.rss_mib);
    rss_last = s.rss_mib;
  }
  const ProcSample last = SampleProc(pid);
  const double wall = Seconds(Clock::now() - t0);
  const double cpu_pct = (last.cpu_seconds - first.cpu_seconds) / wall * 100.0;

  double stop_ms = 0;
  const bool clean_exit = StopServe(*serve.process, &stop_ms);
  kubelet.Stop();

  Row("binary: exec to registered (all devices Healthy)", Fmt("%.0f ms", serve.registered_ms),
      "fresh journal, sim FM, fake kubelet");
  Row("binary: steady RSS (last / max)", Fmt("%.1f", rss_last) + "/" + Fmt("%.1f MiB", rss_max),
      std::string("<= 40 MiB: ") + (rss_max <= 40 ? "met" : "MISSED"));
  Row("binary: CPU, % of one core", Fmt("%.3f %%", cpu_pct),
      std::string("<= 0.5 %: ") + (cpu_pct <= 0.5 ? "met" : "MISSED") +
          Fmt(" (over %.1f s)", wall));
  Row("  pod admitted / clean exit on SIGTERM",
      std::string(pod_ok ? "yes" : "NO") + " / " + (clean_exit ? "yes" : "NO"),
      (pod_ok ? "" : pod.status.error_message() + "; ") +
          Fmt("SIGTERM to exit %.0f ms", stop_ms));
}

// ---------------------------------------------------------------------------------------------
// 4. Cold start of the real binary with a long journal.

// Grows the node's journal to about `events` events: the in-process plugin boots once (so the
// journal describes this node and FM agrees with it), then bench/common's GrowJournal appends
// allocation cycles. Ends with nothing active, like FM.
std::uint64_t GrowJournal(const Node& node, std::uint64_t events) {
  { InProcessPlugin boot(node); }
  return gfp::bench::GrowJournal(node.journal, events).last_seq;
}

void BenchColdStart(const fs::path& work, std::uint64_t events) {
  const Node node = MakeNode(work / "cold", gfp::sim::NodePreset::kHgxH100, "h100");
  const std::uint64_t n = GrowJournal(node, events);
  FakeKubelet kubelet(KubeletOptionsFor(node));
  if (auto s = kubelet.Start(); !s.ok()) Die(s.message());
  const Spawned serve = SpawnServe(node, kubelet);
  double stop_ms = 0;
  const bool clean_exit = StopServe(*serve.process, &stop_ms);
  kubelet.Stop();
  Row(Fmt("binary: exec to registered, %.0f-event journal", static_cast<double>(n)),
      Fmt("%.0f ms", serve.registered_ms),
      std::string("<= 200 ms (snapshots): ") + (serve.registered_ms <= 200 ? "met" : "MISSED") +
          (clean_exit ? "" : "; unclean exit"));
  std::printf("  (its log: %s)\n", RecoveryLine(serve.log).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpu-fabric-plugin plugin benchmark (gRPC, simulated FM, real binary)"};
  std::string dir_flag;
  int samples = 300;
  int gpa_samples = 2000;
  double steady_seconds = 60;
  std::string log_level = "error";
  bool quick = false;
  bool keep = false;
  bool no_tmpfs = false;
  std::uint64_t cold_events = 1'000'000;
  app.add_option("--dir", dir_flag, "directory on the disk to measure (default: a temp dir)");
  app.add_option("--samples", samples, "timed Allocate calls per case")->check(CLI::PositiveNumber);
  app.add_option("--gpa-samples", gpa_samples, "GetPreferredAllocation calls per row")
      ->check(CLI::PositiveNumber);
  app.add_option("--steady-seconds", steady_seconds, "steady-state sampling window");
  app.add_option("--log-level", log_level, "log level of the in-process plugin")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
  app.add_flag("--quick", quick,
               "tiny run (smoke test): few samples, no tmpfs run, 3 s steady state");
  app.add_flag("--keep", keep, "keep the benchmark files");
  app.add_option("--cold-events", cold_events, "events in the cold-start journal")
      ->check(CLI::PositiveNumber);
  app.add_flag("--no-tmpfs", no_tmpfs, "skip the Allocate run on /dev/shm (overhead without I/O)");
  CLI11_PARSE(app, argc, argv);
  double settle = 3;
  if (quick) {
    samples = std::min(samples, 6);
    gpa_samples = std::min(gpa_samples, 30);
    steady_seconds = std::min(steady_seconds, 3.0);
    settle = 0.2;
    no_tmpfs = true;
    cold_events = std::min<std::uint64_t>(cold_events, 2'000);
  }
  spdlog::set_level(spdlog::level::from_str(log_level));
  ::signal(SIGPIPE, SIG_IGN);

  const fs::path base = dir_flag.empty() ? fs::temp_directory_path() : fs::path(dir_flag);
  std::string tmpl = (base / "bench-plugin-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) Die("cannot create a directory under " + base.string());
  const fs::path work = tmpl;
  std::printf("plugin benchmark in %s%s\n\n", work.c_str(), quick ? " [--quick]" : "");
  Header();
  std::string fm_tmpl = "/dev/shm/bench-plugin-fm-XXXXXX";
  if (fs::is_directory("/dev/shm") && ::mkdtemp(fm_tmpl.data()) != nullptr) {
    g_fm_state_dir = fm_tmpl;
  }
  std::printf("  (simulated FM state in %s)\n",
              g_fm_state_dir.empty() ? "the work dir" : g_fm_state_dir.c_str());
  BenchAllocate(work, "disk", samples);
  // The same on tmpfs, where a commit costs no I/O: what Allocate costs besides the fsyncs.
  if (!no_tmpfs && fs::is_directory("/dev/shm")) {
    std::string shm = "/dev/shm/bench-plugin-XXXXXX";
    if (::mkdtemp(shm.data()) != nullptr) {
      BenchAllocate(shm, "tmpfs", samples);
      std::error_code ec;
      if (!keep) fs::remove_all(shm, ec);
    }
  }
  BenchPreferred(work, gpa_samples);
  BenchSteadyState(work, steady_seconds, settle);
  BenchColdStart(work, cold_events);

  if (!keep) {
    std::error_code ec;
    fs::remove_all(work, ec);
    if (!g_fm_state_dir.empty()) fs::remove_all(g_fm_state_dir, ec);
  }
  return 0;
}
