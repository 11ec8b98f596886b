// Plugin benchmark (SPEC §7). Prints one table of measurements, then the SPEC §7 figures it
// measured (value, target, ratio, verdict); timing never makes it fail.
//
//   bench_plugin [--quick] [--json PATH] [--dir DIR] [--samples N] [--gpa-samples N]
//                [--steady-seconds S] [--cold-events N] [--log-level L] [--release-interval D]
//                [--no-tmpfs] [--keep] [--only allocate|gpa|steady|cold]
//
// Everything runs for real: fake sysfs/dev trees (sim/node), the simulated Fabric Manager
// (libnvfm-sim.so, loaded through dlopen like libnvfm.so.1), the fake kubelet (real gRPC over
// Unix sockets in a temp dir) and a durable journal in the same temp dir.
//
// 1. Allocate with FM over gRPC against the real binary (`gpu-fabric-plugin serve`) on an HGX
//    H100 node, the simulated FM in its zero-latency mode (NVFM_SIM_PRIVATE=1: its state in the
//    plugin's memory, no state file written), next to one durable single-row SQLite commit (WAL,
//    synchronous=FULL) in the same directory, measured before and interleaved with every call
//    (target: median <= the floor + 150 us, the floor being the commits, an empty round trip and
//    the FM call measured in the same run; also reported as a ratio to one commit):
//      a. fresh activation: 1-GPU and 2-GPU partitions alternating; serve runs with
//         --reconcile-interval=10ms (--release-interval) --release-grace=1ms and the benchmark
//         waits (not timed), following the journal, until the plugin released and deactivated the
//         allocation, so each call is intent commit -> FM activate -> outcome commit;
//      b. superseding (another serve process, 24 h grace): a 2-GPU partition and a 1-GPU
//         partition inside it alternating, so each call also releases the previous allocation
//         and deactivates its partition first (3 commits, 2 FM calls).
//    CPU per Allocate is the serve process's alone (its process CPU clock, the utime+stime of
//    /proc/<pid>/stat in ns) around each call, minus its idle CPU over the same wall time; the
//    CPU its commits cost is commits per call (distinct event times the call journaled) x the
//    CPU of one baseline commit (CLOCK_THREAD_CPUTIME_ID); target: <= 300 us beyond them.
//    A breakdown of one fresh Allocate: commits x commit latency, one empty gRPC round trip
//    (GetDevicePluginOptions), the FM call alone (the zero-latency sim called in this process),
//    and the rest. Three parts of the rest are measured on their own: serve's intent commit (2
//    events with index rows, store::Journal) against the 1-row commit, alternating; an empty
//    round trip after 2 ms of idle against a back-to-back one; and the FM call through the
//    plugin's FM client (its worker thread) against the call alone, each after 1 ms of idle.
//    The same again with everything on /dev/shm (tmpfs: a commit costs no I/O).
// 2. GetPreferredAllocation (in-process plugin, durable journal in the work dir) on an HGX A100
//    16-GPU / 35-partition node, sizes 1..16, free and half-used: over gRPC (target p99 <= 1 ms)
//    and through the plugin core without gRPC (PluginCore::Preferred, target p99 <= 20 us), each
//    idle and then while another thread makes Allocate calls back to back (superseding: 2-GPU
//    partition, 1 GPU of it, ...; each commits). Reads never wait on the disk, so the targets
//    hold under commits too. A row under commits lasts until the writer completed at least 10
//    Allocates (--quick: 2) during it; one whose writer makes no progress ends the benchmark.
//    Each core row counts the calls in which the measuring thread blocked (a voluntary context
//    switch: a lock or the disk), was preempted, or faulted a page in. Under commits the core
//    rows run twice: with the measuring thread SCHED_FIFO (the target's figure: the core's own
//    cost, which the writer's threads cannot preempt on this machine's few CPUs, while a wait on
//    the writer would still show) and at normal priority (context: the scheduler's share).
// 3. Steady state of the real binary (default intervals) with one VM pod admitted: RSS (target
//    <= 40 MiB) and CPU % of one core (target <= 0.5 %) sampled from /proc over
//    --steady-seconds (60; --quick: 3); also the time from exec to registered.
// 4. Cold start of the real binary with a journal of --cold-events (1,000,000; --quick: 2,000)
//    events and a snapshot at its end: exec to registered (target <= 200 ms).
#include <grpcpp/client_context.h>
#include <linux/magic.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "adapters/kubelet/unix_channel.h"
#include "bench/bench_report.h"
#include "bench/common/baseline_db.h"
#include "bench/common/fm_call_cost.h"
#include "bench/common/grow_journal.h"
#include "bench/common/journal_commit.h"
#include "bench/common/journal_follower.h"
#include "bench/common/proc_sample.h"
#include "bench/common/process_clock.h"
#include "bench/common/serve_log.h"
#include "bench/common/thread_sched.h"
#include "bench/common/work_dirs.h"
#include "engine/engine.h"
#include "plugin/service.h"
#include "process/child_process.h"
#include "sim/fm/fm_sim_control.h"
#include "sim/kubelet/fake_kubelet.h"
#include "sim/node/fake_node.h"
#include "sim/world/serve_setup.h"
#include "sim/world/world_parts.h"
#include "statemachine/state.h"

namespace {

using gfp::bench::BaselineDb;
using gfp::bench::CpuMicrosOf;
using gfp::bench::CurrentThreadCounters;
using gfp::bench::Die;
using gfp::bench::Figure;
using gfp::bench::FmCallCost;
using gfp::bench::Fmt;
using gfp::bench::Goal;
using gfp::bench::Header;
using gfp::bench::JournalCommit;
using gfp::bench::JournalFollower;
using gfp::bench::MeasureFmCalls;
using gfp::bench::Percentile;
using gfp::bench::ProcSample;
using gfp::bench::RealtimeForScope;
using gfp::bench::RecoveryLine;
using gfp::bench::Row;
using gfp::bench::SampleProc;
using gfp::bench::ThreadCounters;

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;
using gfp::kubelet::FakeKubelet;
using gfp::kubelet::FakeKubeletOptions;

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }
double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// ---------------------------------------------------------------------------------------------
// A node: fake trees + simulated FM state + directories for the kubelet and the journal.
struct Node {
  fs::path dir;
  gfp::sim::FakeNode tree;
  gfp::simworld::ServeSetup setup;  // the layout and the serve command line (sim/world)
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

Node MakeNode(const fs::path& dir, gfp::sim::NodePreset preset) {
  Node n;
  n.dir = dir;
  fs::create_directories(dir);
  const fs::path fm_dir = g_fm_state_dir.empty() ? dir : g_fm_state_dir / dir.filename();
  fs::create_directories(fm_dir);
  gfp::simworld::NodeKind kind;
  kind.preset = preset;
  auto tree = gfp::simworld::BuildNode(dir, kind);
  if (!tree.ok()) Die(tree.status().message());
  n.tree = std::move(tree).value();
  n.setup.dir = dir;
  n.setup.fm_library = GFP_BENCH_NVFM_SIM;
  const char* table = gfp::simworld::FmTableFor(preset);
  n.setup.fm_state_file = fm_dir / ("fm-state-" + std::string(table) + ".json");
  n.fm_state = n.setup.fm_state().string();
  auto fm = gfp::fmsim::FmSimControl::Create(n.fm_state, table);
  if (!fm.ok()) Die(fm.status().message());
  if (auto configured = gfp::simworld::ConfigureFabric(*fm, n.tree); !configured.ok()) {
    Die(configured.message());
  }
  n.device_plugin_dir = n.setup.device_plugin_dir();
  n.pod_resources_socket = n.setup.pod_resources_socket();
  n.journal = n.setup.journal();
  fs::create_directories(n.pod_resources_socket.parent_path());
  return n;
}

gfp::plugin::ServeConfig ConfigFor(const Node& n) {
  // The service loop's own reconciliation stays out of the way; the benchmark calls Reconcile
  // itself, between timed calls. With a 1 ms grace, two passes 2 ms apart release an unused
  // allocation (a zero grace is journaled as "use the default").
  auto config = gfp::simworld::ServeConfigFor(
      n.setup, n.tree, {{"--reconcile-interval", "1h"}, {"--release-grace", "1ms"}});
  if (!config.ok()) Die(config.status().message());
  config->node_name = "bench-node";
  return *config;
}

FakeKubeletOptions KubeletOptionsFor(const Node& n) {
  return gfp::simworld::KubeletOptionsFor(n.setup);
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
      : kubelet_(std::make_unique<FakeKubelet>(KubeletOptionsFor(node))) {
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
  gfp::plugin::core::PluginCore& core() { return service_->core(); }
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

// ---------------------------------------------------------------------------------------------
// 2. GetPreferredAllocation on the A100 table: over gRPC and through the plugin core, idle and
//    while Allocates commit back to back (reads never wait on the disk).

// Allocate calls back to back on their own thread, over gRPC as kubelet makes them, against the
// plugin the GPA rows read: a 2-GPU partition, then one GPU of it, and so on. Each call
// supersedes the one before (that allocation released, its partition deactivated, the new one
// activated: durable commits on the journal), so the writer is nearly always inside an fsync
// and every call publishes a new state to the readers. Its GPUs are among the GPA rows'
// `available`: the plugin's answer is a function of that list and the partition table, not of
// which allocations are live (kubelet would list fewer GPUs; the plugin trusts its list), so the
// rows keep the idle rows' requests and answers, and TimeRow checks every answer against them.
class AllocateLoop {
 public:
  AllocateLoop(InProcessPlugin& plugin, std::vector<std::string> pair)
      : thread_([this, &plugin, gpus = std::move(pair)] { Run(plugin, gpus); }) {}
  ~AllocateLoop() {
    stop_ = true;
    thread_.join();
  }
  AllocateLoop(const AllocateLoop&) = delete;
  AllocateLoop& operator=(const AllocateLoop&) = delete;

  // Allocates answered OK so far.
  std::uint64_t done() const { return done_.load(std::memory_order_relaxed); }
  // Why the loop stopped (an Allocate failed); empty while it runs.
  std::string failure() const {
    std::lock_guard lock(mu_);
    return failure_;
  }

 private:
  void Run(InProcessPlugin& plugin, const std::vector<std::string>& pair) {
    const std::vector<std::string> single = {pair.front()};
    for (std::uint64_t i = 0; !stop_; ++i) {
      auto out = plugin.kubelet().Allocate(plugin.resource(), AllocateOf(i % 2 ? single : pair));
      if (!out.ok()) {
        std::lock_guard lock(mu_);
        failure_ = out.status.error_message();
        return;
      }
      done_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> done_{0};
  mutable std::mutex mu_;
  std::string failure_;
  std::thread thread_;  // last: it starts once the members above exist
};

// One row's request, and the answer the plugin gives it idle (empty: an error, no fit).
struct GpaRequest {
  std::string state;  // "free", "half-used"
  std::vector<std::string> available;
  int size = 0;
  std::vector<std::string> expected;

  std::string Label() const {
    return state + Fmt(" (%.0f avail)", static_cast<double>(available.size())) +
           Fmt(", size %.0f", size);
  }
};

// One set of rows: one path (gRPC or the core), idle or under commits; its worst row.
struct GpaSet {
  GpaSet(std::string set_name, double target) : name(std::move(set_name)), target_us(target) {}

  std::string name;  // "GPA gRPC", "GPA core under commits", ...
  double target_us = 0;
  const AllocateLoop* writer = nullptr;  // null: idle
  double worst_p99 = 0;
  std::string worst_row;
  std::uint64_t fewest_allocates = UINT64_MAX;  // per row, under commits
  bool realtime = false;         // core rows: the calling thread SCHED_FIFO (RealtimeForScope)
  std::uint64_t blocked = 0;     // core rows: calls that blocked, over all rows
  std::uint64_t preempted = 0;   // core rows: calls preempted, over all rows
  std::uint64_t faulted = 0;     // core rows: calls that faulted a page in, over all rows
  std::string realtime_refused;  // why SCHED_FIFO was not had in some row, if it was not
};

struct RowTimes {
  std::vector<double> latency_us;
  std::uint64_t allocates = 0;   // Allocates that completed during the timed calls
  std::uint64_t blocked = 0;     // calls in which this thread blocked (a voluntary switch)
  std::uint64_t preempted = 0;   // calls in which the scheduler preempted it
  std::uint64_t faulted = 0;     // calls in which it faulted a page in
  std::string realtime_refused;  // why SCHED_FIFO was not had, when it was asked for
};

// Times `call` (it returns the GPUs answered, empty for an error) after a warm-up: `samples`
// calls, and under commits as many more as it takes for the writer to complete
// `min_allocates` Allocates meanwhile: a row no commit overlapped would prove nothing. Dies
// when the writer makes no progress, or when an answer differs from the idle one.
template <typename Call>
RowTimes TimeRow(const GpaRequest& r, const AllocateLoop* writer, int samples,
                 std::uint64_t min_allocates, Call&& call) {
  for (int i = 0; i <= samples / 10; ++i) call();
  RowTimes t;
  t.latency_us.reserve(static_cast<std::size_t>(samples));
  const std::uint64_t before = writer == nullptr ? 0 : writer->done();
  auto allocates = [&] { return writer == nullptr ? std::uint64_t{0} : writer->done() - before; };
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (t.latency_us.size() < static_cast<std::size_t>(samples) ||
         (writer != nullptr && allocates() < min_allocates)) {
    const ThreadCounters counters_before = CurrentThreadCounters();
    const auto start = Clock::now();
    const std::vector<std::string> answer = call();
    const auto end = Clock::now();
    const ThreadCounters counters_after = CurrentThreadCounters();
    t.latency_us.push_back(Micros(end - start));
    if (counters_after.voluntary != counters_before.voluntary) ++t.blocked;
    if (counters_after.involuntary != counters_before.involuntary) ++t.preempted;
    if (counters_after.faults != counters_before.faults) ++t.faulted;
    if (answer != r.expected) Die("GPA " + r.Label() + ": the answer changed under commits");
    if (writer != nullptr && end > deadline) {
      Die("GPA " + r.Label() +
          Fmt(": the Allocate loop completed %.0f Allocates in 10 s; ",
              static_cast<double>(allocates())) +
          writer->failure());
    }
  }
  t.allocates = allocates();
  return t;
}

// Prints one row and keeps the set's worst. `switches`: the row says how many calls blocked,
// were preempted or faulted (the core's; a gRPC call always blocks on its answer).
void RecordRow(GpaSet& set, const GpaRequest& r, const RowTimes& t, bool switches) {
  const double p99 = Percentile(t.latency_us, 0.99);
  if (p99 > set.worst_p99) {
    set.worst_p99 = p99;
    set.worst_row = r.Label();
  }
  std::string note =
      Fmt("p99 <= %.0f us: ", set.target_us) + (p99 <= set.target_us ? "met" : "MISSED");
  if (set.writer != nullptr) {
    set.fewest_allocates = std::min(set.fewest_allocates, t.allocates);
    note += Fmt("; %.0f Allocates", static_cast<double>(t.allocates)) +
            Fmt(" / %.0f calls", static_cast<double>(t.latency_us.size()));
  }
  if (switches) {
    set.blocked += t.blocked;
    set.preempted += t.preempted;
    set.faulted += t.faulted;
    note += Fmt("; blocked %.0f", static_cast<double>(t.blocked)) +
            Fmt(", preempted %.0f", static_cast<double>(t.preempted)) +
            Fmt(", faulted %.0f", static_cast<double>(t.faulted));
  }
  if (!t.realtime_refused.empty()) {
    note += "; " + t.realtime_refused;
    set.realtime_refused = t.realtime_refused;
  }
  if (r.expected.empty()) note += "; no fit (error path)";
  Row(set.name + ", " + r.Label(),
      Fmt("%.1f", Percentile(t.latency_us, 0.5)) + "/" + Fmt("%.1f us", p99), note);
}

// Over gRPC, through the fake kubelet; the GPUs answered (empty for an error status).
void GrpcRow(InProcessPlugin& plugin, const GpaRequest& r, GpaSet& set, int samples,
             std::uint64_t min_allocates) {
  v1beta1::PreferredAllocationRequest request;
  auto* c = request.add_container_requests();
  for (const auto& id : r.available) c->add_available_deviceids(id);
  c->set_allocation_size(r.size);
  RecordRow(set, r,
            TimeRow(r, set.writer, samples, min_allocates,
                    [&] {
                      auto out =
                          plugin.kubelet().GetPreferredAllocation(plugin.resource(), request);
                      std::vector<std::string> ids;
                      if (out.ok() && out.response.container_responses_size() == 1) {
                        const auto& got = out.response.container_responses(0).deviceids();
                        ids.assign(got.begin(), got.end());
                      }
                      return ids;
                    }),
            /*switches=*/false);
}

// PluginCore::Preferred called directly: what the gRPC handler runs, without gRPC.
void CoreRow(InProcessPlugin& plugin, const GpaRequest& r, GpaSet& set, int samples,
             std::uint64_t min_allocates) {
  std::optional<RealtimeForScope> realtime;
  if (set.realtime) realtime.emplace();
  RowTimes t = TimeRow(r, set.writer, samples, min_allocates, [&] {
    auto out = plugin.core().Preferred(plugin.resource(), r.available, {},
                                       static_cast<std::size_t>(r.size));
    return out.ok() ? std::move(out).value() : std::vector<std::string>{};
  });
  if (realtime && !realtime->raised()) t.realtime_refused = realtime->why();
  realtime.reset();
  RecordRow(set, r, t, /*switches=*/true);
}

// The four row sets, the option that sizes them, and what the writer works on.
struct GpaBench {
  int samples = 2000;                // timed calls per row (at least)
  std::uint64_t min_allocates = 10;  // Allocates completed during each row under commits
  std::vector<std::string> pair;     // the writer's 2-GPU partition
  GpaSet grpc{"GPA gRPC", 1000};
  GpaSet core{"GPA core", 20};
  GpaSet grpc_writing{"GPA gRPC under commits", 1000};
  // The core's own cost under commits: the measuring thread SCHED_FIFO, so the writer's threads
  // (gRPC, the FM worker, the commit's wake-ups) cannot preempt it on this machine's few CPUs;
  // a call that waits on the writer's lock still shows, as a blocked call and in its time.
  GpaSet core_writing{"GPA core under commits", 20};
  // The same at normal priority: what the scheduler adds (context, not the target).
  GpaSet core_writing_normal{"GPA core under commits, normal priority", 20};
  GpaBench() { core_writing.realtime = true; }
};

// Rows for sizes 1..16 of one node state: idle over gRPC then the core, then both again while
// the writer runs.
void MeasureState(InProcessPlugin& plugin, const std::string& state,
                  const std::vector<std::string>& available, GpaBench& b) {
  std::vector<GpaRequest> requests;
  for (int size : {1, 2, 4, 8, 16}) {
    auto answer =
        plugin.core().Preferred(plugin.resource(), available, {}, static_cast<std::size_t>(size));
    requests.push_back(
        {state, available, size, answer.ok() ? *answer : std::vector<std::string>{}});
  }
  for (const GpaRequest& r : requests) GrpcRow(plugin, r, b.grpc, b.samples, 0);
  for (const GpaRequest& r : requests) CoreRow(plugin, r, b.core, b.samples, 0);
  AllocateLoop writer(plugin, b.pair);
  for (GpaSet* set : {&b.grpc_writing, &b.core_writing, &b.core_writing_normal}) {
    set->writer = &writer;
  }
  for (const GpaRequest& r : requests) {
    GrpcRow(plugin, r, b.grpc_writing, b.samples, b.min_allocates);
  }
  for (const GpaRequest& r : requests) {
    CoreRow(plugin, r, b.core_writing, b.samples, b.min_allocates);
  }
  for (const GpaRequest& r : requests) {
    CoreRow(plugin, r, b.core_writing_normal, b.samples, b.min_allocates);
  }
  for (GpaSet* set : {&b.grpc_writing, &b.core_writing, &b.core_writing_normal}) {
    set->writer = nullptr;
  }
  if (!writer.failure().empty()) Die("an Allocate under the GPA rows failed: " + writer.failure());
}

bool SharesAGpu(const std::vector<std::string>& gpus, const std::vector<std::string>& used) {
  return std::any_of(gpus.begin(), gpus.end(), [&](const std::string& g) {
    return std::find(used.begin(), used.end(), g) != used.end();
  });
}

// Half-used: two 4-GPU partitions, on different baseboards.
std::vector<std::vector<std::string>> HalfUsedPartitions(InProcessPlugin& plugin) {
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> used;
  for (const auto& [pid, gpus] : plugin.Partitions()) {
    if (gpus.size() != 4 || out.size() == 2) continue;
    if (SharesAGpu(gpus, used)) continue;
    if (out.size() == 1 && pid % 2 == 0) continue;  // spread over both halves
    used.insert(used.end(), gpus.begin(), gpus.end());
    out.push_back(gpus);
  }
  if (out.size() != 2) Die("the A100 table has no two disjoint 4-GPU partitions");
  return out;
}

// The writer's 2-GPU partition: outside `used`, so it never supersedes the half-used
// allocations (which would change the node state the half-used rows are named after).
std::vector<std::string> WriterPair(InProcessPlugin& plugin, const std::vector<std::string>& used) {
  for (const auto& [pid, gpus] : plugin.Partitions()) {
    if (gpus.size() == 2 && !SharesAGpu(gpus, used)) return gpus;
  }
  Die("the A100 table has no 2-GPU partition outside the half-used GPUs");
}

// Where the journal is: a commit on tmpfs costs no I/O, and the rows under commits would
// measure nothing of the disk.
std::string JournalMedium(const fs::path& journal) {
  struct statfs s {};
  if (::statfs(journal.parent_path().c_str(), &s) != 0) Die("statfs " + journal.string());
  if (s.f_type == TMPFS_MAGIC) return "tmpfs (commits cost no I/O)";
  char text[64];
  std::snprintf(text, sizeof text, "not tmpfs (f_type 0x%lx)",
                static_cast<unsigned long>(s.f_type));
  return text;
}

// Prints the context the rows need: the node, the journal's medium, the writer's GPUs.
void PrintGpaContext(InProcessPlugin& plugin, std::size_t gpus, const GpaBench& b) {
  const fs::path journal = plugin.core().engine().journal().path();
  std::printf("  (A100 node: %zu GPUs, %zu partitions in the journal's table)\n", gpus,
              plugin.Partitions().size());
  std::printf("  (journal %s: %s; SQLite WAL, synchronous=FULL)\n", journal.c_str(),
              JournalMedium(journal).c_str());
  std::printf(
      "  (under commits: another thread's Allocates over gRPC, back to back: %s+%s, then "
      "%s alone, ...; each row lasts until %llu of them completed)\n",
      b.pair[0].c_str(), b.pair[1].c_str(), b.pair[0].c_str(),
      static_cast<unsigned long long>(b.min_allocates));
}

void AddGpaFigures(const GpaBench& b) {
  // Idle rows make `samples` calls; rows under commits more, until enough Allocates completed.
  const std::string calls = Fmt(", %.0f calls/row", b.samples);
  const std::string more = Fmt(", >= %.0f calls/row", b.samples);
  const std::string under =
      Fmt("; >= %.0f Allocates/row", static_cast<double>(b.min_allocates)) +
      Fmt(" (fewest %.0f)", static_cast<double>(std::min(b.grpc_writing.fewest_allocates,
                                                         b.core_writing.fewest_allocates)));
  auto add = [](const char* id, const GpaSet& set, const std::string& note) {
    gfp::bench::Figures().Add(gfp::bench::Spec7Figure(
        id, set.worst_p99, "A100 16 GPUs, 10 rows; worst: " + set.worst_row + note));
  };
  add("gpa_grpc_p99_worst", b.grpc, calls);
  add("gpa_grpc_p99_under_commits_worst", b.grpc_writing, more + under);
  add("gpa_inprocess_core_p99_worst", b.core, calls);
  const auto switches = [](const GpaSet& set) {
    return Fmt("; calls that blocked %.0f", static_cast<double>(set.blocked)) +
           Fmt(", preempted %.0f", static_cast<double>(set.preempted)) +
           Fmt(", faulted %.0f", static_cast<double>(set.faulted));
  };
  add("gpa_inprocess_p99_under_commits_worst", b.core_writing,
      more + under + switches(b.core_writing) +
          (b.core_writing.realtime_refused.empty()
               ? "; measuring thread SCHED_FIFO"
               : "; normal priority (" + b.core_writing.realtime_refused + ")"));
  gfp::bench::Figures().Add(
      Figure{"gpa_inprocess_p99_under_commits_normal_worst",
             "GetPreferredAllocation, core, under commits, normal priority: p99",
             b.core_writing_normal.worst_p99, "us", Goal::kReport, 0,
             "worst: " + b.core_writing_normal.worst_row + switches(b.core_writing_normal) +
                 "; the scheduler's preemptions included",
             ""});
}

void BenchPreferred(const fs::path& work, GpaBench& b) {
  const Node node = MakeNode(work / "a100", gfp::sim::NodePreset::kHgxA100x16);
  InProcessPlugin plugin(node);
  std::vector<std::string> all;
  const auto snapshot = plugin.kubelet().Resource(plugin.resource());
  if (!snapshot) Die("resource not known to the fake kubelet");
  for (const auto& d : snapshot->devices) all.push_back(d.id());
  std::sort(all.begin(), all.end());
  const std::vector<std::vector<std::string>> half = HalfUsedPartitions(plugin);
  std::vector<std::string> used;
  for (const auto& gpus : half) used.insert(used.end(), gpus.begin(), gpus.end());
  b.pair = WriterPair(plugin, used);
  PrintGpaContext(plugin, all.size(), b);

  MeasureState(plugin, "free", all, b);
  for (const auto& gpus : half) {
    auto out = plugin.kubelet().Allocate(plugin.resource(), AllocateOf(gpus));
    if (!out.ok()) Die("Allocate failed: " + out.status.error_message());
  }
  std::vector<std::string> free_left;
  for (const auto& id : all) {
    if (std::find(used.begin(), used.end(), id) == used.end()) free_left.push_back(id);
  }
  MeasureState(plugin, "half-used", free_left, b);
  std::printf("  (value = p50/p99 over the row's calls; core = PluginCore::Preferred, no gRPC)\n");
  AddGpaFigures(b);
}

// ---------------------------------------------------------------------------------------------
// The real binary: /proc samples, start, stop (for 1, 3 and 4).

// The real binary, started against `node` and registered with `kubelet`.
struct Spawned {
  std::unique_ptr<gfp::process::ChildProcess> process;
  std::string resource;
  double registered_ms = 0;  // exec to every device reported Healthy
  std::string log;
};

// The simulated FM runs in its zero-latency mode (NVFM_SIM_PRIVATE=1, sim/fm/README.md): its
// state lives in the serve process's memory, so the process measured is the plugin plus an FM
// call that costs next to nothing.
Spawned SpawnServe(const Node& node, FakeKubelet& kubelet,
                   const std::map<std::string, std::string>& overrides = {}) {
  gfp::process::ProcessOptions o;
  o.binary = GFP_BENCH_PLUGIN_BINARY;
  o.args = gfp::simworld::ServeArgs(node.setup, node.tree, overrides);
  o.env = {{"NVFM_SIM_STATE", node.fm_state}, {"NVFM_SIM_PRIVATE", "1"}};
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
  if (out.resource.empty() || !kubelet.WaitForDevices(
                                  out.resource, [&](const auto& d) { return AllHealthy(d, gpus); },
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

// ---------------------------------------------------------------------------------------------
// 1. Allocate with FM over gRPC, against the real binary.

std::int64_t NowUnixMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The serve process's CPU per second of wall time while nothing is asked of it.
double IdleCpuMicrosPerSecond(pid_t pid, double seconds) {
  const double cpu0 = CpuMicrosOf(pid);
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const double cpu1 = CpuMicrosOf(pid);
  return (cpu1 - cpu0) / Seconds(Clock::now() - t0);
}

// Timed Allocate calls against one serve process.
struct AllocateRun {
  std::vector<double> latency_us;
  double cpu_us = 0;             // the serve process's CPU over the calls' windows
  double window_seconds = 0;     // wall time of those windows
  std::size_t transactions = 0;  // distinct event times journaled inside the windows
  std::size_t events = 0;
  double idle_cpu_per_second = 0;  // the serve process's idle CPU rate, before and after

  double Calls() const { return static_cast<double>(latency_us.size()); }
  // CPU per call with the idle CPU of the same wall time taken out.
  double CpuPerCall() const { return (cpu_us - idle_cpu_per_second * window_seconds) / Calls(); }
  double CommitsPerCall() const { return static_cast<double>(transactions) / Calls(); }
};

// One Allocate of `ids`; its latency, the serve process's CPU around it and the transactions it
// journaled (events of one decision share their time) go into `run` when `record`.
void TimedAllocate(FakeKubelet& kubelet, const Spawned& serve, JournalFollower& journal,
                   const std::vector<std::string>& ids, bool record, AllocateRun& run) {
  const pid_t pid = serve.process->pid();
  const std::int64_t unix0 = NowUnixMicros();
  const auto window0 = Clock::now();
  const double cpu0 = CpuMicrosOf(pid);
  const auto start = Clock::now();
  auto out = kubelet.Allocate(serve.resource, AllocateOf(ids));
  const double took = Micros(Clock::now() - start);
  const double cpu1 = CpuMicrosOf(pid);
  const double window = Seconds(Clock::now() - window0);
  const std::int64_t unix1 = NowUnixMicros();
  if (!out.ok()) Die("Allocate failed: " + out.status.error_message());
  std::set<std::int64_t> times;
  std::size_t events = 0;
  for (std::int64_t t : journal.Poll()) {
    if (t < unix0 || t > unix1) continue;  // a reconciliation pass's, not this call's
    times.insert(t);
    ++events;
  }
  if (!record) return;
  run.latency_us.push_back(took);
  run.cpu_us += cpu1 - cpu0;
  run.window_seconds += window;
  run.transactions += times.size();
  run.events += events;
}

// One empty gRPC call (GetDevicePluginOptions) to the serve process: median latency and the
// serve process's CPU per call.
struct RoundTrip {
  double latency_us = 0;
  double cpu_us = 0;
  double isolated_latency_us = 0;  // after 2 ms of idle, as kubelet's isolated Allocate
  double isolated_cpu_us = 0;
};

RoundTrip EmptyRoundTrip(const Node& node, FakeKubelet& kubelet, const Spawned& serve,
                         int samples) {
  const auto resource = kubelet.Resource(serve.resource);
  if (!resource) Die("resource not known to the fake kubelet");
  auto channel = gfp::adapters::kubelet::MakeUnixSocketChannel(
      (node.device_plugin_dir / resource->endpoint).string());
  auto stub = v1beta1::DevicePlugin::NewStub(channel);
  // Back to back (the floor's round trip), then each after 2 ms of idle as an isolated Allocate.
  auto time_calls = [&](std::chrono::milliseconds idle, double* cpu_per_call) {
    std::vector<double> latency;
    double cpu = 0;
    for (int i = -5; i < samples; ++i) {
      if (idle.count() > 0) std::this_thread::sleep_for(idle);
      grpc::ClientContext context;
      v1beta1::Empty request;
      v1beta1::DevicePluginOptions response;
      const double cpu0 = CpuMicrosOf(serve.process->pid());
      const auto start = Clock::now();
      const grpc::Status status = stub->GetDevicePluginOptions(&context, request, &response);
      const double took = Micros(Clock::now() - start);
      const double cpu1 = CpuMicrosOf(serve.process->pid());
      if (!status.ok()) Die("GetDevicePluginOptions: " + status.error_message());
      if (i < 0) continue;
      latency.push_back(took);
      cpu += cpu1 - cpu0;
    }
    *cpu_per_call = cpu / samples;
    return Percentile(latency, 0.5);
  };
  RoundTrip out;
  out.latency_us = time_calls(std::chrono::milliseconds(0), &out.cpu_us);
  out.isolated_latency_us = time_calls(std::chrono::milliseconds(2), &out.isolated_cpu_us);
  return out;
}

// A durable single-row commit in the medium's directory, measured before and interleaved with
// every timed Allocate.
struct CommitBaseline {
  std::vector<double> wall_us;
  std::vector<double> cpu_us;
  void Add(const BaselineDb::Commit& c) {
    wall_us.push_back(c.wall_us);
    cpu_us.push_back(c.cpu_us);
  }
  double Median() const { return Percentile(wall_us, 0.5); }
  double CpuMedian() const { return Percentile(cpu_us, 0.5); }
};

// The serve process on a fresh node of its own, with `args`, its fake kubelet and a journal
// follower; stopped when it goes away.
class ServeUnderTest {
 public:
  ServeUnderTest(const fs::path& dir, const std::map<std::string, std::string>& args)
      : node_(MakeNode(dir, gfp::sim::NodePreset::kHgxH100)), kubelet_(KubeletOptionsFor(node_)) {
    if (auto s = kubelet_.Start(); !s.ok()) Die(s.message());
    serve_ = SpawnServe(node_, kubelet_, args);
    journal_ = std::make_unique<JournalFollower>(node_.journal);
  }
  ~ServeUnderTest() {
    double stop_ms = 0;
    if (!StopServe(*serve_.process, &stop_ms)) {
      std::fprintf(stderr, "serve did not exit cleanly; see %s\n", serve_.log.c_str());
    }
    kubelet_.Stop();
  }
  const Node& node() const { return node_; }
  FakeKubelet& kubelet() { return kubelet_; }
  const Spawned& serve() const { return serve_; }
  pid_t pid() const { return serve_.process->pid(); }
  JournalFollower& journal() { return *journal_; }

 private:
  Node node_;
  FakeKubelet kubelet_;
  Spawned serve_;
  std::unique_ptr<JournalFollower> journal_;
};

struct AllocateOptions {
  std::string label;  // "disk" or "tmpfs"
  int samples = 300;
  double idle_seconds = 1;
  std::string release_interval = "10ms";  // serve's --reconcile-interval for fresh activation
  FmCallCost fm;
};

// a. Fresh activation: 1- and 2-GPU partitions alternating; after each call the plugin's own
// reconciliation (10 ms interval, 1 ms grace) releases and deactivates it (not timed), so each
// call is intent commit -> FM activate -> outcome commit.
AllocateRun RunFresh(const fs::path& dir, const AllocateOptions& o, BaselineDb& baseline,
                     CommitBaseline& commits, RoundTrip* round_trip, double* stat_vs_clock) {
  ServeUnderTest t(dir, {{"--reconcile-interval", o.release_interval}, {"--release-grace", "1ms"}});
  std::vector<std::vector<std::string>> ones;
  std::vector<std::vector<std::string>> twos;
  t.journal().PartitionsBySize(ones, twos);
  AllocateRun run;
  const double idle_before = IdleCpuMicrosPerSecond(t.pid(), o.idle_seconds);
  const ProcSample stat0 = SampleProc(t.pid());
  const double clock0 = CpuMicrosOf(t.pid());
  for (int i = -3; i < o.samples; ++i) {
    const std::size_t k = static_cast<std::size_t>(i + 3) / 2;
    const auto& ids = (i & 1) ? twos[k % twos.size()] : ones[k % ones.size()];
    const BaselineDb::Commit commit = baseline.One();  // interleaved: same disk conditions
    if (i >= 0) commits.Add(commit);
    TimedAllocate(t.kubelet(), t.serve(), t.journal(), ids, i >= 0, run);
    if (!t.journal().WaitUntilReleased(std::chrono::seconds(10))) {
      Die("the plugin did not release its allocation within 10 s");
    }
    // The release's last work (logging after its outcome commit) stays out of the next window.
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  // The process CPU clock and /proc/<pid>/stat's utime+stime count the same thing.
  const ProcSample stat1 = SampleProc(t.pid());
  const double clock_us = CpuMicrosOf(t.pid()) - clock0;
  *stat_vs_clock = clock_us > 0 ? (stat1.cpu_seconds - stat0.cpu_seconds) * 1e6 / clock_us : 0;
  run.idle_cpu_per_second = (idle_before + IdleCpuMicrosPerSecond(t.pid(), o.idle_seconds)) / 2;
  *round_trip = EmptyRoundTrip(t.node(), t.kubelet(), t.serve(), std::max(o.samples, 50));
  return run;
}

// b. Superseding: a 2-GPU partition and a 1-GPU partition inside it alternating, so each call
// also releases the previous allocation and deactivates its partition first (3 commits, 2 FM
// calls). No release between calls (24 h grace).
AllocateRun RunSuperseding(const fs::path& dir, const AllocateOptions& o, BaselineDb& baseline,
                           CommitBaseline& commits) {
  ServeUnderTest t(dir, {{"--release-grace", "24h"}});
  std::vector<std::vector<std::string>> ones;
  std::vector<std::vector<std::string>> twos;
  t.journal().PartitionsBySize(ones, twos);
  const std::vector<std::string> pair = twos.front();
  const std::vector<std::string> single = {pair.front()};
  AllocateRun run;
  const double idle_before = IdleCpuMicrosPerSecond(t.pid(), o.idle_seconds);
  for (int i = -3; i < o.samples; ++i) {
    const BaselineDb::Commit commit = baseline.One();
    if (i >= 0) commits.Add(commit);
    TimedAllocate(t.kubelet(), t.serve(), t.journal(), (i & 1) ? single : pair, i >= 0, run);
  }
  run.idle_cpu_per_second = (idle_before + IdleCpuMicrosPerSecond(t.pid(), o.idle_seconds)) / 2;
  return run;
}

// serve's own journal commit (an Allocate's intent, with its index rows) against the floor's
// single-row commit, medians of the same alternating run.
struct IntentCommit {
  double journal_us = 0;
  double single_row_us = 0;
};

// What one medium's runs come to.
struct AllocateSummary {
  std::string label;
  double commit = 0;      // median latency of one baseline commit
  double commit_cpu = 0;  // median CPU of one baseline commit
  double fresh_med = 0;
  double sup_med = 0;
  double fresh_beyond = 0;  // serve CPU per fresh Allocate beyond its commits
  double sup_beyond = 0;
  double in_commits = 0;  // commits per fresh Allocate x commit latency
  double rest = 0;        // fresh median minus commits, an empty round trip and the FM call
  double floor = 0;       // what the fresh median would be without the rest, in commits
  // Parts of the rest measured on their own: serve's commits beyond 1-row ones (from the intent
  // commit, the larger of the two), an isolated round trip beyond a back-to-back one, and the
  // FM client's hand-off to its worker.
  double commits_extra = 0;
  double isolated_rtt_extra = 0;
  double fm_handoff = 0;

  AllocateSummary(const AllocateOptions& o, const CommitBaseline& commits, const AllocateRun& fresh,
                  const AllocateRun& supersede, const RoundTrip& rtt, const IntentCommit& intent)
      : label(o.label),
        commit(commits.Median()),
        commit_cpu(commits.CpuMedian()),
        fresh_med(Percentile(fresh.latency_us, 0.5)),
        sup_med(Percentile(supersede.latency_us, 0.5)),
        fresh_beyond(fresh.CpuPerCall() - fresh.CommitsPerCall() * commit_cpu),
        sup_beyond(supersede.CpuPerCall() - supersede.CommitsPerCall() * commit_cpu),
        in_commits(fresh.CommitsPerCall() * commit),
        rest(fresh_med - in_commits - rtt.latency_us - o.fm.activate_us),
        floor((in_commits + rtt.latency_us + o.fm.activate_us) / commit),
        commits_extra(fresh.CommitsPerCall() * (intent.journal_us - intent.single_row_us)),
        isolated_rtt_extra(rtt.isolated_latency_us - rtt.latency_us),
        fm_handoff(o.fm.client_activate_us - o.fm.activate_us) {}
};

void PrintAllocateRows(const AllocateSummary& m, const AllocateOptions& o,
                       const CommitBaseline& commits, const AllocateRun& fresh,
                       const AllocateRun& supersede, const RoundTrip& rtt, double stat_vs_clock,
                       const IntentCommit& intent) {
  const std::string tag = "[" + m.label + "] ";
  auto per_call = [](const AllocateRun& r) {
    return Fmt("%.2f", r.CommitsPerCall()) + "/" +
           Fmt("%.2f", static_cast<double>(r.events) / r.Calls());
  };
  Row(tag + "durable 1-row SQLite commit, median / p99",
      Fmt("%.1f", m.commit) + "/" + Fmt("%.1f us", Percentile(commits.wall_us, 0.99)),
      Fmt("baseline, WAL+FULL, same dir; CPU %.1f us/commit", m.commit_cpu));
  Row(tag + "Allocate+FM gRPC (binary), fresh, median / p99",
      Fmt("%.1f", m.fresh_med) + "/" + Fmt("%.1f us", Percentile(fresh.latency_us, 0.99)),
      Fmt("%.2fx commit", m.fresh_med / m.commit) + (m.label != "disk" ? " (no-I/O overhead)"
                                                     : m.rest <= 150   ? "; floor + 150 us: met"
                                                                     : "; floor + 150 us: MISSED"));
  Row(tag + "Allocate+FM gRPC (binary), superseding, median / p99",
      Fmt("%.1f", m.sup_med) + "/" + Fmt("%.1f us", Percentile(supersede.latency_us, 0.99)),
      Fmt("%.2fx commit", m.sup_med / m.commit) + " (release + deact + act)");
  Row(tag + "  commits / events per Allocate (fresh; superseding)",
      per_call(fresh) + "; " + per_call(supersede), "from the journal: distinct event times");
  Row(tag + "serve CPU per Allocate, fresh (idle taken out)", Fmt("%.0f us", fresh.CpuPerCall()),
      Fmt("idle %.0f us/s; ", fresh.idle_cpu_per_second) +
          Fmt("stat/clock %.2f over the run", stat_vs_clock));
  Row(tag + "serve CPU per Allocate beyond commits, fresh", Fmt("%.0f us", m.fresh_beyond),
      std::string("<= 300 us: ") + (m.fresh_beyond <= 300 ? "met" : "MISSED"));
  Row(tag + "serve CPU per Allocate beyond commits, superseding", Fmt("%.0f us", m.sup_beyond),
      Fmt("idle %.0f us/s", supersede.idle_cpu_per_second));
  Row(tag + "breakdown: commits x commit latency", Fmt("%.0f us", m.in_commits),
      Fmt("%.2f commits", fresh.CommitsPerCall()) + Fmt(" x %.0f us", m.commit));
  Row(tag + "breakdown: one empty gRPC round trip", Fmt("%.0f us", rtt.latency_us),
      Fmt("GetDevicePluginOptions; serve CPU %.0f us", rtt.cpu_us));
  Row(tag + "breakdown: the FM call (zero-latency sim)", Fmt("%.1f us", o.fm.activate_us),
      Fmt("fmActivateFabricPartition alone; deact %.1f us", o.fm.deactivate_us));
  Row(tag + "  of the rest: serve's commits beyond 1-row ones", Fmt("%.0f us", m.commits_extra),
      Fmt("intent commit %.0f us", intent.journal_us) +
          Fmt(" vs 1-row %.0f us, alternating", intent.single_row_us));
  Row(tag + "  of the rest: an isolated round trip's wake-ups",
      Fmt("%.0f us", m.isolated_rtt_extra),
      Fmt("empty call after 2 ms idle %.0f us", rtt.isolated_latency_us) +
          Fmt(", serve CPU %.0f us", rtt.isolated_cpu_us));
  Row(tag + "  of the rest: the FM client's worker hand-off", Fmt("%.0f us", m.fm_handoff),
      Fmt("isolated call through it %.0f us", o.fm.client_activate_us) +
          Fmt(", CPU %.0f us per call", o.fm.client_cpu_us));
  Row(tag + "breakdown: the rest (the plugin's own work)", Fmt("%.0f us", m.rest),
      Fmt("floor without it: %.2fx commit", m.floor) +
          (m.rest < 0 ? "; < 0: the disk's commits varied (noise)" : ""));
}

void AllocateFigure(const std::string& id, const std::string& name, double value,
                    const std::string& unit, const std::string& note) {
  gfp::bench::Figures().Add(Figure{id, name, value, unit, Goal::kReport, 0, note, ""});
}

// On disk the SPEC §7 figures; on both media the context (ids allocate_<medium>_...).
void AddAllocateFigures(const AllocateSummary& m, const AllocateOptions& o,
                        const AllocateRun& fresh, const AllocateRun& supersede,
                        const RoundTrip& rtt, const IntentCommit& intent) {
  const std::string p = "allocate_" + m.label + "_";
  const std::string tag = "[" + m.label + "] ";
  if (m.label == "disk") {
    gfp::bench::Figures().Add(gfp::bench::Spec7Figure(
        "allocate_beyond_floor_us", m.rest,
        Fmt("fresh activation, median %.0f us", m.fresh_med) +
            Fmt(" - floor %.0f us (", m.fresh_med - m.rest) +
            Fmt("%.2f commits", fresh.CommitsPerCall()) + Fmt(" x %.0f us", m.commit) +
            Fmt(" + rtt %.0f", rtt.latency_us) + Fmt(" + FM %.1f us)", o.fm.activate_us)));
    gfp::bench::Figures().Add(gfp::bench::Spec7Figure(
        "allocate_disk_vs_commit", m.fresh_med / m.commit,
        Fmt("fresh activation, median %.0f us", m.fresh_med) + Fmt(" / commit %.0f us", m.commit) +
            Fmt(", %.0f calls", fresh.Calls())));
    gfp::bench::Figures().Add(gfp::bench::Spec7Figure(
        "allocate_cpu_beyond_commits_us", m.fresh_beyond,
        Fmt("disk, fresh: serve CPU %.0f us", fresh.CpuPerCall()) +
            Fmt(" - %.2f commits", fresh.CommitsPerCall()) + Fmt(" x %.1f us CPU", m.commit_cpu)));
  } else {
    AllocateFigure(p + "cpu_beyond_commits_us", tag + "CPU per Allocate beyond commits",
                   m.fresh_beyond, "us", Fmt("fresh; serve CPU %.0f us", fresh.CpuPerCall()));
  }
  AllocateFigure("commit_" + m.label + "_us", tag + "durable 1-row commit, median", m.commit, "us",
                 Fmt("CPU %.1f us/commit", m.commit_cpu));
  AllocateFigure(p + "fresh_median_us", tag + "Allocate (binary), fresh, median", m.fresh_med, "us",
                 Fmt("%.2fx commit", m.fresh_med / m.commit));
  AllocateFigure(p + "supersede_vs_commit", tag + "Allocate (binary), superseding",
                 m.sup_med / m.commit, "x commit", Fmt("median %.0f us", m.sup_med));
  AllocateFigure(p + "commits_per_call", tag + "commits per fresh Allocate", fresh.CommitsPerCall(),
                 "commits", "distinct event times in the journal");
  AllocateFigure(p + "supersede_cpu_beyond_commits_us",
                 tag + "CPU per superseding Allocate beyond commits", m.sup_beyond, "us",
                 Fmt("%.2f commits", supersede.CommitsPerCall()));
  AllocateFigure(p + "breakdown_commits_us", tag + "breakdown: commits x commit", m.in_commits,
                 "us", "");
  AllocateFigure(p + "breakdown_grpc_us", tag + "breakdown: empty gRPC round trip", rtt.latency_us,
                 "us", Fmt("serve CPU %.0f us per call", rtt.cpu_us));
  AllocateFigure(p + "breakdown_fm_us", tag + "breakdown: FM call (zero-latency sim)",
                 o.fm.activate_us, "us", "");
  AllocateFigure(p + "breakdown_rest_us", tag + "breakdown: the rest", m.rest, "us",
                 Fmt("floor without it %.2fx commit", m.floor));
  AllocateFigure(p + "journal_commits_extra_us", tag + "of the rest: serve's commits beyond 1-row",
                 m.commits_extra, "us",
                 Fmt("intent commit %.0f us", intent.journal_us) +
                     Fmt(" vs 1-row %.0f us, alternating", intent.single_row_us));
  AllocateFigure(p + "isolated_rtt_extra_us", tag + "of the rest: isolated round trip's wake-ups",
                 m.isolated_rtt_extra, "us",
                 Fmt("empty call after 2 ms idle %.0f us", rtt.isolated_latency_us) +
                     Fmt(", serve CPU %.0f us", rtt.isolated_cpu_us));
  AllocateFigure(p + "fm_handoff_us", tag + "of the rest: FM client's worker hand-off",
                 m.fm_handoff, "us",
                 Fmt("isolated, this process; CPU %.0f us per call", o.fm.client_cpu_us));
}

void BenchAllocate(const fs::path& work, const AllocateOptions& o) {
  const fs::path dir = work / ("allocate-" + o.label);
  fs::create_directories(dir);
  std::printf("  (Allocate on %s: %s)\n", o.label.c_str(), dir.c_str());
  BaselineDb baseline(dir / "baseline.db");  // same directory (disk) as the journals
  CommitBaseline commits;
  // serve's own intent commit, alternating with the floor's single-row one.
  JournalCommit journal_commit(dir / "intent-commit.db");
  std::vector<double> intent_us;
  for (int i = 0; i < std::min(std::max(o.samples, 20), 50); ++i) {
    const BaselineDb::Commit c = baseline.One();
    const double intent = journal_commit.One();
    if (i < 3) continue;
    commits.Add(c);
    intent_us.push_back(intent);
  }
  IntentCommit intent{Percentile(intent_us, 0.5), Percentile(commits.wall_us, 0.5)};
  RoundTrip rtt;
  double stat_vs_clock = 0;
  const AllocateRun fresh = RunFresh(dir / "fresh", o, baseline, commits, &rtt, &stat_vs_clock);
  const AllocateRun supersede = RunSuperseding(dir / "supersede", o, baseline, commits);
  const AllocateSummary summary(o, commits, fresh, supersede, rtt, intent);
  PrintAllocateRows(summary, o, commits, fresh, supersede, rtt, stat_vs_clock, intent);
  AddAllocateFigures(summary, o, fresh, supersede, rtt, intent);
  std::printf(
      "  (%d timed calls per case; CPU of the serve process alone (process CPU clock = "
      "/proc/<pid>/stat utime+stime) minus its idle CPU over the same wall time; commit CPU "
      "from CLOCK_THREAD_CPUTIME_ID)\n",
      o.samples);
}

// ---------------------------------------------------------------------------------------------
// 3. Steady state of the real binary.

void BenchSteadyState(const fs::path& work, double seconds, double settle) {
  const Node node = MakeNode(work / "steady", gfp::sim::NodePreset::kHgxH100);
  FakeKubelet kubelet(KubeletOptionsFor(node));
  if (auto s = kubelet.Start(); !s.ok()) Die(s.message());
  const Spawned serve = SpawnServe(node, kubelet);
  const pid_t pid = serve.process->pid();

  // One VM pod with 2 GPUs (GPA, Allocate with FM, PreStart), seen by reconciliation.
  auto pod = kubelet.AdmitPod("default", "vm-bench", {{"compute", 2}}, serve.resource);
  const bool pod_ok = pod.ok();

  std::this_thread::sleep_for(std::chrono::duration<double>(settle));
  const ProcSample first = SampleProc(pid);
  const double cpu0 = CpuMicrosOf(pid);  // /proc/<pid>/stat counts in 10 ms ticks
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
  const double cpu_us = CpuMicrosOf(pid) - cpu0;
  const double wall = Seconds(Clock::now() - t0);
  const double cpu_pct = cpu_us / 1e6 / wall * 100.0;

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
  gfp::bench::Figures().Add(gfp::bench::Spec7Figure(
      "steady_rss_mib", rss_max, Fmt("last %.1f MiB", rss_last) + Fmt(", over %.1f s", wall)));
  gfp::bench::Figures().Add(gfp::bench::Spec7Figure(
      "steady_idle_cpu_percent", cpu_pct, Fmt("over %.1f s, one VM pod, default intervals", wall)));
  Row("  pod admitted / clean exit on SIGTERM",
      std::string(pod_ok ? "yes" : "NO") + " / " + (clean_exit ? "yes" : "NO"),
      (pod_ok ? "" : pod.status.error_message() + "; ") + Fmt("SIGTERM to exit %.0f ms", stop_ms));
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
  const Node node = MakeNode(work / "cold", gfp::sim::NodePreset::kHgxH100);
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
  gfp::bench::Figures().Add(gfp::bench::Spec7Figure(
      "cold_start_registered_ms", serve.registered_ms,
      Fmt("%.0f-event journal, snapshot at its end", static_cast<double>(n))));
}

// 1. on the disk, then on tmpfs, where a commit costs no I/O: what Allocate costs besides the
// fsyncs.
void BenchAllocateOnBoth(const fs::path& work, AllocateOptions allocate, bool no_tmpfs, bool keep) {
  allocate.fm = MeasureFmCalls(GFP_BENCH_NVFM_SIM, work / "fm-private.json", /*zero_latency=*/true,
                               std::max(allocate.samples, 100), /*through_client=*/true);
  allocate.label = "disk";
  BenchAllocate(work, allocate);
  if (no_tmpfs || !fs::is_directory("/dev/shm")) return;
  std::string shm = "/dev/shm/bench-plugin-XXXXXX";
  if (::mkdtemp(shm.data()) == nullptr) return;
  allocate.label = "tmpfs";
  BenchAllocate(shm, allocate);
  std::error_code ec;
  if (!keep) fs::remove_all(shm, ec);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpu-fabric-plugin plugin benchmark (real binary, gRPC, simulated FM)"};
  std::string dir_flag;
  std::string json_path;
  int samples = 300;
  int gpa_samples = 2000;
  double steady_seconds = 60;
  std::string log_level = "error";
  bool quick = false;
  bool keep = false;
  bool no_tmpfs = false;
  std::uint64_t cold_events = 1'000'000;
  std::string only;
  AllocateOptions allocate;
  app.add_option("--dir", dir_flag, "directory on the disk to measure (default: a temp dir)");
  app.add_option("--json", json_path, "also write the figures to this file as JSON");
  app.add_option("--samples", samples, "timed Allocate calls per case")->check(CLI::PositiveNumber);
  app.add_option("--gpa-samples", gpa_samples,
                 "GetPreferredAllocation calls per row (under commits: at least)")
      ->check(CLI::PositiveNumber);
  app.add_option("--steady-seconds", steady_seconds, "steady-state sampling window");
  app.add_option("--log-level", log_level, "log level of the in-process plugin")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
  app.add_flag("--quick", quick,
               "tiny run (smoke test): few samples, no tmpfs run, 3 s steady state");
  app.add_flag("--keep", keep, "keep the benchmark files");
  app.add_option("--cold-events", cold_events, "events in the cold-start journal")
      ->check(CLI::PositiveNumber);
  app.add_option("--release-interval", allocate.release_interval,
                 "serve's --reconcile-interval in the fresh-activation run (releases)");
  app.add_flag("--no-tmpfs", no_tmpfs, "skip the Allocate run on /dev/shm (overhead without I/O)");
  app.add_option("--only", only, "run one part only: allocate, gpa, steady or cold")
      ->check(CLI::IsMember({"allocate", "gpa", "steady", "cold"}));
  CLI11_PARSE(app, argc, argv);
  auto wanted = [&](const char* part) { return only.empty() || only == part; };
  GpaBench gpa;
  double settle = 3;
  double idle_seconds = 1;
  if (quick) {
    samples = std::min(samples, 6);
    gpa_samples = std::min(gpa_samples, 30);
    gpa.min_allocates = 2;
    steady_seconds = std::min(steady_seconds, 3.0);
    settle = 0.2;
    idle_seconds = 0.2;
    no_tmpfs = true;
    cold_events = std::min<std::uint64_t>(cold_events, 2'000);
  }
  spdlog::set_level(spdlog::level::from_str(log_level));
  ::signal(SIGPIPE, SIG_IGN);

  const gfp::bench::WorkDirs dirs = gfp::bench::MakeWorkDirs(dir_flag, "bench-plugin");
  const fs::path& work = dirs.work;
  g_fm_state_dir = dirs.fm_state;
  std::printf("plugin benchmark in %s%s\n\n", work.c_str(), quick ? " [--quick]" : "");
  Header();
  std::printf("  (simulated FM state files in %s)\n",
              g_fm_state_dir.empty() ? "the work dir" : g_fm_state_dir.c_str());
  allocate.samples = samples;
  allocate.idle_seconds = idle_seconds;
  if (wanted("allocate")) BenchAllocateOnBoth(work, allocate, no_tmpfs, keep);
  gpa.samples = gpa_samples;
  if (wanted("gpa")) BenchPreferred(work, gpa);
  if (wanted("steady")) BenchSteadyState(work, steady_seconds, settle);
  if (wanted("cold")) BenchColdStart(work, cold_events);

  gfp::bench::Figures().Print();
  if (!json_path.empty()) gfp::bench::Figures().WriteJson(json_path, quick);
  if (!keep) dirs.Remove();
  return 0;
}
