// SPEC §8.1 against the real binary: /metrics, /healthz, /readyz and unknown paths on the one
// --metrics-address listener; the families and labels; counters, histograms and gauges moving
// with an Allocate; readiness following FM and registration; a scrape answering while an
// Allocate is stuck in a slow FM call.
#include <sqlite3.h>

#include <atomic>
#include <future>
#include <regex>
#include <set>
#include <thread>

#include "integration/plugin/metrics_http.h"
#include "integration/plugin/reconcile_passes.h"
#include "integration/plugin/serve_fixture.h"

namespace gfp::testing {
namespace {

constexpr const char* kLocalAnyPort = "127.0.0.1:0";

class MetricsTest : public ServeFixture {
 protected:
  // The port serve logged ("metrics endpoint listening on 127.0.0.1:41233"); 0 if it did not.
  int WaitForMetricsPort(const std::string& log_name = "serve") {
    static const std::regex listening(R"(metrics endpoint listening on 127\.0\.0\.1:(\d+))");
    int port = 0;
    WaitUntil(
        [&] {
          std::smatch m;
          const std::string log = ReadFileOrEmpty(dir() / (log_name + ".log"));
          if (std::regex_search(log, m, listening)) port = std::stoi(m[1]);
          return port != 0;
        },
        20s);
    return port;
  }

  // Waits until GET `path` answers `status` (and its body contains `text`); the last reply.
  HttpReply WaitForReply(int port, const std::string& path, int status,
                         const std::string& text = "", std::chrono::milliseconds timeout = 20s) {
    HttpReply reply;
    WaitUntil(
        [&] {
          reply = HttpGet(port, path);
          return reply.status == status && reply.body.find(text) != std::string::npos;
        },
        timeout);
    return reply;
  }

  std::optional<double> Scrape(int port, const std::string& series) {
    return SampleValue(HttpGet(port, "/metrics").body, series);
  }

  std::string Free(std::size_t size) const {
    return "gpu_fabric_partitions_free{size=\"" + std::to_string(size) + "\"}";
  }
};

TEST_F(MetricsTest, ReadyzSaysWhyUntilFabricManagerIsUsableAndEveryResourceRegistered) {
  Prepare({});
  kubelet_->Stop();  // nothing to register with yet
  ASSERT_TRUE(fm_->SetUnreachable(true).ok());
  serve_ = Spawn(ServeArgs({{"--metrics-address", kLocalAnyPort}}), "serve");
  const int port = WaitForMetricsPort();
  ASSERT_GT(port, 0) << "serve did not log the metrics address";

  auto reply = WaitForReply(port, "/readyz", 503, "Fabric Manager is not usable");
  EXPECT_EQ(reply.status, 503) << reply.body;
  EXPECT_EQ(reply.body.find("not ready: Fabric Manager is not usable ("), 0u) << reply.body;
  EXPECT_EQ(std::count(reply.body.begin(), reply.body.end(), '\n'), 1) << reply.body;
  EXPECT_EQ(Scrape(port, "gpu_fabric_fabric_manager_up"), 0);
  EXPECT_EQ(HttpGet(port, "/healthz").status, 200);
  EXPECT_EQ(HttpGet(port, "/nope").status, 404);

  ASSERT_TRUE(fm_->SetUnreachable(false).ok());
  reply = WaitForReply(port, "/readyz", 503, "not registered with kubelet yet");
  EXPECT_EQ(reply.body, "not ready: not registered with kubelet yet: " + resource_ + "\n");
  EXPECT_TRUE(WaitUntil([&] { return Scrape(port, "gpu_fabric_fabric_manager_up") == 1; }, 10s));

  ASSERT_TRUE(kubelet_->Start().ok());
  reply = WaitForReply(port, "/readyz", 200);
  EXPECT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(reply.body, "ready\n");
  EXPECT_EQ(HttpGet(port, "/healthz").status, 200);
}

TEST_F(MetricsTest, AllocateMovesCountersHistogramsAndFreePartitionsWithExactlyTheSpecLabels) {
  Prepare({});
  StartServe(true, {{"--metrics-address", kLocalAnyPort}});
  const int port = WaitForMetricsPort();
  ASSERT_GT(port, 0);
  ASSERT_EQ(WaitForReply(port, "/readyz", 200).status, 200);

  const std::string granted =
      "gpu_fabric_allocations_total{resource=\"" + resource_ + "\",result=\"granted\"}";
  const std::string rejected =
      "gpu_fabric_allocations_total{resource=\"" + resource_ + "\",result=\"rejected\"}";
  const std::string latency = "gpu_fabric_allocate_seconds_count{resource=\"" + resource_ + "\"}";
  const std::string activated =
      "gpu_fabric_partition_operations_total{fm_code=\"FM_ST_SUCCESS\",operation=\"activate\","
      "result=\"ok\"}";
  ASSERT_TRUE(WaitUntil([&] { return Scrape(port, Free(2)).has_value(); }, 10s));
  const double free_before = *Scrape(port, Free(2));
  const double appends_before = Scrape(port, "gpu_fabric_journal_append_seconds_count").value();
  EXPECT_FALSE(Scrape(port, granted).has_value());
  EXPECT_EQ(Scrape(port, "gpu_fabric_partitions_active"), 0);
  EXPECT_EQ(Scrape(port, "gpu_fabric_devices{health=\"healthy\",resource=\"" + resource_ + "\"}"),
            8);

  const auto partition = PartitionsOfSize(2).front();
  auto allocated = Allocate({PartitionBdfs(partition)});
  ASSERT_TRUE(allocated.status.ok()) << Describe(allocated.status);
  auto refused = Allocate({{"0000:ff:00.0"}});
  ASSERT_FALSE(refused.status.ok());

  EXPECT_TRUE(WaitUntil([&] { return Scrape(port, Free(2)) < free_before; }, 10s))
      << "gpu_fabric_partitions_free{size=\"2\"} stayed at " << free_before;
  const std::string text = HttpGet(port, "/metrics").body;
  EXPECT_EQ(SampleValue(text, granted), 1);
  EXPECT_EQ(SampleValue(text, rejected), 1);
  EXPECT_EQ(SampleValue(text, latency), 2);
  EXPECT_EQ(SampleValue(text, activated), 1);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_partitions_active"), 1);
  EXPECT_GT(SampleValue(text, "gpu_fabric_journal_append_seconds_count"), appends_before);
  EXPECT_GT(SampleValue(text, "gpu_fabric_reconcile_seconds_count"), 0);
  EXPECT_GT(SampleValue(text, "gpu_fabric_journal_last_seq"), 0);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_journal_first_damaged_seq"), 0);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_fabric_manager_up"), 1);

  // Every family of the SPEC, with exactly its labels; the API server request counter has no
  // series, as device-plugin mode makes no API server request.
  const auto exposed = ReadExposition(text);
  EXPECT_EQ(exposed.count("gpu_fabric_api_requests_total"), 0u) << text;
  for (const auto& [name, spec] : SpecFamilies()) {
    if (name == "gpu_fabric_api_requests_total") continue;
    SCOPED_TRACE(name);
    ASSERT_TRUE(exposed.count(name)) << text;
    EXPECT_EQ(exposed.at(name).type, spec.type);
    EXPECT_EQ(exposed.at(name).label_sets, std::set<std::set<std::string>>{spec.labels});
  }
  for (const auto& [name, family] : exposed) {
    EXPECT_TRUE(SpecFamilies().count(name)) << "a family the SPEC does not list: " << name;
  }
}

TEST_F(MetricsTest, FailedPodResourcesListsAreCounted) {
  Prepare({});
  StartServe(true, {{"--metrics-address", kLocalAnyPort}});
  const int port = WaitForMetricsPort();
  ASSERT_GT(port, 0);
  EXPECT_EQ(Scrape(port, "gpu_fabric_pod_resources_errors_total"), 0);
  kubelet_->pod_resources().FailNextList(grpc::StatusCode::UNAVAILABLE, "injected", 3);
  EXPECT_TRUE(
      WaitUntil([&] { return Scrape(port, "gpu_fabric_pod_resources_errors_total") == 3; }, 10s));
}

// Something other than kubelet (anyone who can reach the socket) asks for the GPUs of a running
// VM: granted, as kubelet's view may be ahead of ours, but logged at warn naming the pod, and
// counted. An Allocate of GPUs no pod holds is neither.
TEST_F(MetricsTest, AnAllocateOfALivePodsGpusIsLoggedAtWarnAndCounted) {
  ServeSetup setup;
  setup.release_grace = "10m";
  Prepare(setup);
  StartServe(true, {{"--metrics-address", kLocalAnyPort}});
  const int port = WaitForMetricsPort();
  ASSERT_GT(port, 0);
  const std::string taken = "gpu_fabric_devices_taken_from_live_pods_total";
  auto admitted = kubelet_->AdmitPod("vms", "vm-a", {{"compute", 2}}, resource_);
  ASSERT_TRUE(admitted.ok()) << Describe(admitted.status);
  const auto held = admitted.response.containers[0].device_ids;
  ASSERT_TRUE(WaitForReconcilePasses(*kubelet_, 2));  // a listing that shows vm-a
  ASSERT_TRUE(WaitForEvent(
      "AllocationBound", [](const auto& e) { return e.dump().find("vm-a") != std::string::npos; },
      10s));

  // Free GPUs, through the socket as a forger would: nothing to warn about.
  const std::set<std::string> held_set(held.begin(), held.end());
  std::vector<std::string> free_pair;
  for (std::uint32_t pid : PartitionsOfSize(2)) {
    const auto bdfs = PartitionBdfs(pid);
    if (std::none_of(bdfs.begin(), bdfs.end(), [&](const auto& b) { return held_set.count(b); })) {
      free_pair = bdfs;
      break;
    }
  }
  ASSERT_EQ(free_pair.size(), 2u);
  ASSERT_TRUE(Allocate({free_pair}).status.ok());
  EXPECT_EQ(Scrape(port, taken), 0);

  auto forged = Allocate({held});
  ASSERT_TRUE(forged.status.ok()) << Describe(forged.status);
  EXPECT_EQ(Scrape(port, taken), 1);
  const std::string log = ReadFileOrEmpty(dir() / "serve.log");
  const std::regex warned("warn.*took \\[" + held[0] + "," + held[1] +
                          "\\] from pod vms/vm-a, which held them in kubelet's last "
                          "PodResources listing");
  EXPECT_TRUE(std::regex_search(log, warned)) << log;
}

TEST_F(MetricsTest, DriftAgainstFabricManagerIsCountedByKind) {
  Prepare({});
  StartServe(true, {{"--metrics-address", kLocalAnyPort}});
  const int port = WaitForMetricsPort();
  ASSERT_GT(port, 0);
  const std::string elsewhere = "gpu_fabric_drift_total{kind=\"activated_elsewhere\"}";
  const std::string lost = "gpu_fabric_drift_total{kind=\"lost\"}";
  EXPECT_EQ(Scrape(port, elsewhere), 0);
  EXPECT_EQ(Scrape(port, lost), 0);

  const auto sizes = PartitionsOfSize(2);
  ASSERT_GE(sizes.size(), 2u);
  ASSERT_TRUE(fm_->ActivateDirectly(sizes[0]).ok());  // behind the plugin's back
  EXPECT_TRUE(WaitUntil([&] { return Scrape(port, elsewhere) == 1; }, 10s));

  auto allocated = Allocate({PartitionBdfs(sizes[1])});
  ASSERT_TRUE(allocated.status.ok()) << Describe(allocated.status);
  ASSERT_TRUE(fm_->DeactivateDirectly(sizes[1]).ok());  // FM "loses" the plugin's partition
  EXPECT_TRUE(WaitUntil([&] { return Scrape(port, lost) >= 1; }, 10s));
}

TEST_F(MetricsTest, ScrapesAnswerWhileAnAllocateIsStuckInASlowFabricManagerCall) {
  Prepare({});
  StartServe(true, {{"--metrics-address", kLocalAnyPort}});
  const int port = WaitForMetricsPort();
  ASSERT_GT(port, 0);
  ASSERT_TRUE(fm_->SetLatency("fmActivateFabricPartition", 2500).ok());
  const auto partition = PartitionsOfSize(2).front();
  auto allocation =
      std::async(std::launch::async, [&] { return Allocate({PartitionBdfs(partition)}); });
  // The activation has started (its intent is journaled) and FM is sleeping on it.
  ASSERT_TRUE(WaitForEvent(
      "PartitionActivationRequested", [](const nlohmann::json&) { return true; }, 10s));
  for (const char* path : {"/metrics", "/readyz", "/healthz"}) {
    const auto started = std::chrono::steady_clock::now();
    const auto reply = HttpGet(port, path, 2s);
    const auto took = std::chrono::steady_clock::now() - started;
    EXPECT_NE(reply.status, 0) << path << " did not answer while Allocate waits for FM";
    EXPECT_LT(took, 1s) << path;
    EXPECT_EQ(allocation.wait_for(0s), std::future_status::timeout)
        << "the Allocate was not stuck in FM any more when " << path << " answered";
  }
  // The serve loop waits for the same FM call (its reconciliation needs the operation lock):
  // /healthz says so once 3 reconcile intervals (300 ms here) passed, and recovers after.
  const auto stuck = WaitForReply(port, "/healthz", 503, "the serve loop last turned", 2s);
  EXPECT_EQ(stuck.status, 503) << stuck.body;
  const auto done = allocation.get();
  EXPECT_TRUE(done.status.ok()) << Describe(done.status);
  EXPECT_EQ(WaitForReply(port, "/healthz", 200).status, 200);
}

TEST_F(MetricsTest, JournalDamageFoundInTheBackgroundMakesReadyzFailAndShowsItsSeq) {
  Prepare({});
  StartServe(true, {{"--metrics-address", kLocalAnyPort}});
  ASSERT_TRUE(serve_->Terminate().success());  // leaves a shutdown snapshot after seq 2
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(journal_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE events SET time_us = time_us + 1 WHERE seq = 2", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);

  serve_ = Spawn(ServeArgs({{"--metrics-address", kLocalAnyPort}}), "serve-again");
  const int port = WaitForMetricsPort("serve-again");
  ASSERT_GT(port, 0);
  const auto reply =
      WaitForReply(port, "/readyz", 503, "journal damage at seq 2", std::chrono::seconds(20));
  EXPECT_EQ(reply.body, "not ready: the background verification found journal damage at seq 2\n");
  EXPECT_EQ(Scrape(port, "gpu_fabric_journal_first_damaged_seq"), 2);
  EXPECT_EQ(HttpGet(port, "/healthz").status, 200) << "damage in old history stops nothing";
}

// SPEC §8.1/§8.2: partitions free AND healthy. While FM is unreachable every GPU is Unhealthy to
// kubelet, so the gauge and the labels say 0 (they counted the partitions as free before).
TEST_F(MetricsTest, NoPartitionIsFreeWhileFabricManagerIsDown) {
  Prepare({});
  const auto labels = dir() / "features.d" / "gpu-fabric";
  std::filesystem::create_directories(labels.parent_path());
  StartServe(true, {{"--metrics-address", kLocalAnyPort}, {"--node-labels-file", labels.string()}});
  const int port = WaitForMetricsPort();
  ASSERT_GT(port, 0);
  ASSERT_TRUE(WaitUntil([&] { return Scrape(port, Free(2)) > 0; }, 10s));
  const double free_two = *Scrape(port, Free(2));
  const std::string free_label = "gpu-fabric.free-partitions.2=" + std::to_string(int(free_two));
  ASSERT_TRUE(
      WaitUntil([&] { return ReadFileOrEmpty(labels).find(free_label) != std::string::npos; }, 10s))
      << ReadFileOrEmpty(labels);

  ASSERT_TRUE(fm_->SetUnreachable(true).ok());
  EXPECT_TRUE(WaitUntil([&] { return Scrape(port, Free(2)) == 0; }, 20s))
      << "partitions counted free while Fabric Manager is down: " << *Scrape(port, Free(2));
  EXPECT_TRUE(WaitUntil(
      [&] {
        return ReadFileOrEmpty(labels).find("gpu-fabric.largest-free-partition=0\n") !=
               std::string::npos;
      },
      10s))
      << ReadFileOrEmpty(labels);

  ASSERT_TRUE(fm_->SetUnreachable(false).ok());
  EXPECT_TRUE(WaitUntil([&] { return Scrape(port, Free(2)) == free_two; }, 20s));
  EXPECT_TRUE(
      WaitUntil([&] { return ReadFileOrEmpty(labels).find(free_label) != std::string::npos; }, 10s))
      << ReadFileOrEmpty(labels);
}

// Issue 21, bug 4: a journal deleted under a running serve went unnoticed (Allocate kept
// succeeding into the unlinked file, /readyz stayed 200, the next start made a new journal).
TEST_F(MetricsTest, AJournalDeletedUnderServeFailsReadyzAndAllocate) {
  Prepare({});
  StartServe(true, {{"--metrics-address", kLocalAnyPort}});
  const int port = WaitForMetricsPort();
  ASSERT_GT(port, 0);
  ASSERT_EQ(WaitForReply(port, "/readyz", 200).status, 200);
  const auto partitions = PartitionsOfSize(2);
  ASSERT_GE(partitions.size(), 2u);
  ASSERT_TRUE(Allocate({PartitionBdfs(partitions[0])}).status.ok());
  ASSERT_TRUE(WaitUntil([&] { return Scrape(port, "gpu_fabric_partitions_active") == 1; }, 10s));
  const double last_seq = Scrape(port, "gpu_fabric_journal_last_seq").value();

  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::error_code ignored;
    std::filesystem::remove(journal_.string() + suffix, ignored);
  }
  const auto reply = WaitForReply(port, "/readyz", 503, "was deleted");
  EXPECT_EQ(reply.body.rfind("not ready: journal " + journal_.string() +
                                 " was deleted while this process had it open",
                             0),
            0u)
      << reply.body;
  const auto refused = Allocate({PartitionBdfs(partitions[1])});
  EXPECT_FALSE(refused.status.ok()) << "granted with the journal deleted";
  EXPECT_TRUE(serve_->WaitForLog("no more allocations are granted", 10s)) << serve_->Log();
  EXPECT_EQ(HttpGet(port, "/healthz").status, 200) << "the loop turns: a restart would not help";

  // The recovery docs/operations.md describes: the file serve still holds, copied, has every
  // event (its -wal was checkpointed into it when the deletion was noticed).
  std::smatch held;
  const std::string body = reply.body;
  ASSERT_TRUE(std::regex_search(body, held, std::regex(R"((/proc/\d+/fd/\d+))"))) << body;
  const auto copy = dir() / "recovered.db";
  std::filesystem::copy_file(held[1].str(), copy);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(copy.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* max_seq = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT max(seq) FROM events", -1, &max_seq, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(max_seq), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(max_seq, 0), static_cast<std::int64_t>(last_seq));
  sqlite3_finalize(max_seq);
  sqlite3_close(db);
}

TEST_F(MetricsTest, BadAddressesAndAnAddressInUseAreStartUpErrors) {
  Prepare({});
  for (const auto& [value, why] : std::vector<std::pair<std::string, std::string>>{
           {":65536", "port 65536 is above 65535"},
           {"nonsense", "there is no ':' before the port"},
           {"example.com:80", "host example.com is not an IPv4 address"}}) {
    auto result = RunCommand(ServeOptions(ServeArgs({{"--metrics-address", value}}), "bad"), 30s);
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(result->status.code, 2) << value;
    EXPECT_NE(result->output.find("error: --metrics-address=" + value + ": " + why),
              std::string::npos)
        << result->output;
  }
  EXPECT_FALSE(std::filesystem::exists(journal_)) << "a refused start created the journal";

  StartServe(true, {{"--metrics-address", kLocalAnyPort}});
  const int port = WaitForMetricsPort();
  ASSERT_GT(port, 0);
  const std::string busy = "127.0.0.1:" + std::to_string(port);
  auto args =
      ServeArgs({{"--metrics-address", busy}, {"--journal", (dir() / "other.db").string()}});
  auto result = RunCommand(ServeOptions(args, "busy"), 30s);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->status.code, 1);
  EXPECT_NE(result->output.find("--metrics-address=" + busy + ": cannot listen"), std::string::npos)
      << result->output;
  EXPECT_NE(result->output.find("in use"), std::string::npos) << result->output;
  EXPECT_FALSE(std::filesystem::exists(dir() / "other.db"))
      << "a refused start created the journal";
}

}  // namespace
}  // namespace gfp::testing
