// deploy/monitoring against a real Prometheus (Debian's `prometheus` package, issue 21 §5): two
// real `serve` processes (device-plugin mode in the ServeFixture's world, DRA mode in a
// ProcessWorld) do work (allocations granted and refused, a failed FM activation, drift, failed
// PodResources Lists, an unhealthy GPU, a claim refused with 403 and one prepared); their
// /metrics pass `promtool check metrics`; a Prometheus server on 127.0.0.1 scrapes both every
// second with the PrometheusRule's rules loaded, and every rule expression and every expression
// of the Grafana dashboard is queried through its HTTP API: each must parse and return data.
//
// Skipped only when /usr/bin/prometheus or /usr/bin/promtool is absent; scripts/check-prometheus.sh
// (run by CI) installs the package and fails when this test is skipped.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>

#include "integration/plugin/metrics_http.h"
#include "integration/plugin/serve_fixture.h"
#include "sim/world/claim_scheduler.h"
#include "sim/world/process_world.h"

namespace gfp::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const fs::path kPrometheus = "/usr/bin/prometheus";
const fs::path kPromtool = "/usr/bin/promtool";
// The scrape job is named as the Prometheus Operator names a ServiceMonitor's: after the metrics
// Service (deploy/base/service.yaml), which the GpuFabricPluginMetricsDown alert selects.
constexpr const char* kJob = "gpu-fabric-plugin-metrics";
// The `node` label the ServiceMonitor's relabeling gives each serve's series.
constexpr const char* kDevicePluginNode = "node-dp";
constexpr const char* kDraNode = "node-dra";
// Not the plugin's: kube-state-metrics' series, which no serve exports. Their expressions are
// checked to parse only (their labels are checked by the promtool unit tests).
const std::vector<std::string> kOtherExporters = {"kube_pod_status_ready"};

std::string ReadSource(const std::string& relative) {
  return ReadFileOrEmpty(fs::path(GFP_SOURCE_DIR) / relative);
}

// A port on 127.0.0.1 that was free a moment ago.
int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  return port;
}

std::string UrlEncode(const std::string& text) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// GET over HTTP/1.0: Go's server then sends the body as it is (to an HTTP/1.1 request a large
// answer comes chunked).
HttpReply Get10(int port, const std::string& target) {
  HttpReply reply;
  const int fd = ConnectTcp("127.0.0.1", port);
  if (fd < 0) return reply;
  const std::string request = "GET " + target + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  std::string raw;
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
      static_cast<ssize_t>(request.size())) {
    char buffer[8192];
    for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) {
      raw.append(buffer, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  const auto body = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.", 0) != 0 || raw.size() < 12 || body == std::string::npos) return reply;
  reply.status = std::stoi(raw.substr(9, 3));
  reply.body = raw.substr(body + 4);
  return reply;
}

// The rules file Prometheus loads: the PrometheusRule's `spec` (its last top-level key) with its
// indentation removed, which is a plain rules file (`groups: ...`).
std::string RulesFileOf(const std::string& prometheus_rule) {
  std::istringstream in(prometheus_rule);
  std::string line, out;
  bool in_spec = false;
  while (std::getline(in, line)) {
    if (line == "spec:") {
      in_spec = true;
    } else if (in_spec && line.rfind("  ", 0) == 0) {
      out += line.substr(2) + "\n";
    } else if (in_spec && !line.empty()) {
      in_spec = false;
    }
  }
  return out;
}

// Every targets[].expr of the dashboard's panels (rows' panels included).
void CollectExprs(const Json& panels, std::vector<std::string>& out) {
  for (const auto& panel : panels) {
    for (const auto& target : panel.value("targets", Json::array())) {
      if (target.contains("expr")) out.push_back(target["expr"]);
    }
    CollectExprs(panel.value("panels", Json::array()), out);
  }
}

// The expression as Grafana sends it with both nodes selected (a multi-value variable in a regex
// matcher becomes `(a|b)`) and a concrete rate interval.
std::string SubstituteDashboardVariables(std::string expr) {
  const std::string nodes = std::string("(") + kDevicePluginNode + "|" + kDraNode + ")";
  for (const auto& [variable, value] :
       std::vector<std::pair<std::string, std::string>>{{"${node}", nodes},
                                                        {"$node", nodes},
                                                        {"$__rate_interval", "1m"},
                                                        {"$__interval", "1m"},
                                                        {"$__range", "5m"}}) {
    for (auto at = expr.find(variable); at != std::string::npos; at = expr.find(variable)) {
      expr.replace(at, variable.size(), value);
    }
  }
  return expr;
}

// An alert's expression without its final comparison with a number (`X > 0` -> `X`): while the
// simulated world is healthy in that respect the alert's condition filters every series out, and
// what is checked then is that the series it compares exist with the labels it aggregates by.
std::optional<std::string> WithoutThreshold(const std::string& expr) {
  static const std::regex threshold(R"(^([\s\S]*\S)\s*(==|!=|>=|<=|>|<)\s*-?[0-9.]+\s*$)");
  std::smatch m;
  if (!std::regex_match(expr, m, threshold)) return std::nullopt;
  return m[1].str();
}

struct QueryAnswer {
  bool parsed = false;
  std::string error;  // Prometheus's error, or what went wrong on the way
  std::size_t series = 0;
};

QueryAnswer Query(int port, const std::string& expr) {
  QueryAnswer answer;
  const auto reply = Get10(port, "/api/v1/query?query=" + UrlEncode(expr));
  const auto json = Json::parse(reply.body, nullptr, false);
  if (json.is_discarded() || !json.is_object()) {
    answer.error = "HTTP " + std::to_string(reply.status) + ": " + reply.body;
    return answer;
  }
  if (json.value("status", "") != "success") {
    answer.error = json.value("errorType", "") + ": " + json.value("error", "");
    return answer;
  }
  answer.parsed = true;
  const auto& result = json["data"]["result"];
  answer.series = result.is_array() ? result.size() : 1;  // scalar or string: one value
  return answer;
}

class PrometheusTest : public ServeFixture {
 protected:
  void TearDown() override {
    if (HasFailure() && prometheus_) {
      std::cerr << "---- prometheus log:\n" << prometheus_->Log() << "\n";
    }
    prometheus_.reset();
    dra_world_.reset();
    ServeFixture::TearDown();
  }

  // The port a serve logged ("metrics endpoint listening on 127.0.0.1:41233"); 0 if it did not.
  static int WaitForMetricsPort(const fs::path& log) {
    static const std::regex listening(R"(metrics endpoint listening on 127\.0\.0\.1:(\d+))");
    int port = 0;
    WaitUntil(
        [&] {
          std::smatch m;
          const std::string text = ReadFileOrEmpty(log);
          if (std::regex_search(text, m, listening)) port = std::stoi(m[1]);
          return port != 0;
        },
        20s);
    return port;
  }

  void StartDevicePluginServe();
  void DoDevicePluginWork();
  void StartDraServe();
  void DoDraWork();
  void CheckMetricsWithPromtool(int port, const std::string& name);
  void StartPrometheus();
  std::vector<Json> LoadedRules();
  void ExpectData(const std::string& what, const std::string& expr, bool is_alert);

  int dp_port_ = 0;
  int dra_port_ = 0;
  int prometheus_port_ = 0;
  std::unique_ptr<simworld::ProcessWorld> dra_world_;
  std::unique_ptr<PluginProcess> prometheus_;
  std::vector<std::string> via_inner_;  // expressions that returned data only without threshold
};

void PrometheusTest::StartDevicePluginServe() {
  Prepare({});
  StartServe(true, {{"--metrics-address", "127.0.0.1:0"}});
  dp_port_ = WaitForMetricsPort(dir() / "serve.log");
  ASSERT_GT(dp_port_, 0) << "serve did not log its metrics address";
}

// Allocations granted and refused, an activation FM refuses, drift, failed PodResources Lists
// and an unhealthy GPU: every counter and histogram of device-plugin mode gets its series.
void PrometheusTest::DoDevicePluginWork() {
  const auto partitions = PartitionsOfSize(2);
  ASSERT_GE(partitions.size(), 4u);
  auto granted = Allocate({PartitionBdfs(partitions[0])});
  ASSERT_TRUE(granted.status.ok()) << Describe(granted.status);
  EXPECT_FALSE(Allocate({{"0000:ff:00.0"}}).status.ok());
  ASSERT_TRUE(fm_->InjectFailure("fmActivateFabricPartition", -2 /* FM_ST_GENERIC_ERROR */).ok());
  EXPECT_FALSE(Allocate({PartitionBdfs(partitions[1])}).status.ok());
  ASSERT_TRUE(fm_->ActivateDirectly(partitions[2]).ok());  // drift: activated elsewhere
  kubelet_->pod_resources().FailNextList(grpc::StatusCode::UNAVAILABLE, "injected", 2);
  const std::string victim = PartitionBdfs(partitions[3]).front();
  ASSERT_TRUE(node_.RemoveVfioGroupNode(GroupOf(victim)).ok());
  EXPECT_TRUE(WaitForDevices([&](const auto& d) { return HealthOf(d, victim) == "Unhealthy"; }));
}

// serve --mode=dra; the metrics address through its environment variable, as ProcessWorld makes
// the command line (GPU_FABRIC_METRICS_ADDRESS, SPEC §8.1).
void PrometheusTest::StartDraServe() {
  simworld::ProcessWorldOptions options;
  options.dir = dir() / "dra";
  fs::create_directories(options.dir);
  options.fm_library = FmSimLibrary();
  options.plugin_binary = PluginBinary();
  options.reconcile_interval = 200ms;
  options.release_grace = 600ms;
  options.node_name = "node-a";
  options.dra = true;
  auto created = simworld::ProcessWorld::Create(options);
  ASSERT_TRUE(created.ok()) << created.status().message();
  dra_world_ = std::move(created).value();
  ::setenv("GPU_FABRIC_METRICS_ADDRESS", "127.0.0.1:0", 1);
  const Status started = dra_world_->StartPlugin();
  ::unsetenv("GPU_FABRIC_METRICS_ADDRESS");
  ASSERT_TRUE(started.ok()) << started.message();
  const Status ready = dra_world_->WaitDraRegisteredAndPublished();
  ASSERT_TRUE(ready.ok()) << ready.message() << "\n" << ReadFileOrEmpty(dra_world_->log_path());
  dra_port_ = WaitForMetricsPort(dra_world_->log_path());
  ASSERT_GT(dra_port_, 0) << ReadFileOrEmpty(dra_world_->log_path());
}

// One claim refused (the API server answers its GET with 403), one prepared.
void PrometheusTest::DoDraWork() {
  simworld::ClaimScheduler scheduler("gpu-fabric-plugin.io", "node-a");
  std::vector<kubelet::DraClaim> claims;
  for (const std::string name : {"vm-refused", "vm-prepared"}) {
    simworld::ClaimRequest request;
    request.name = name;
    request.gpus = 2;
    request.pod = "virt-launcher-" + name;
    auto claim = scheduler.Allocate(request, dra_world_->api().Slices());
    ASSERT_TRUE(claim.ok()) << claim.status().message();
    auto stored = dra_world_->api().PutClaim(*claim);
    ASSERT_TRUE(stored.ok()) << stored.status().message();
    claims.push_back({(*stored)["metadata"]["uid"], (*stored)["metadata"]["namespace"],
                      (*stored)["metadata"]["name"]});
  }
  dra_world_->api().AddFault({"get", "resourceclaims", apisim::FaultKind::kStatus, 403, 0ms, 1});
  auto refused = dra_world_->dra_kubelet().Prepare({claims[0]});
  ASSERT_TRUE(refused.ok()) << refused.status.error_message();
  EXPECT_NE(refused.response.at(claims[0].uid).error, "");
  auto prepared = dra_world_->dra_kubelet().Prepare({claims[1]});
  ASSERT_TRUE(prepared.ok()) << prepared.status.error_message();
  EXPECT_EQ(prepared.response.at(claims[1].uid).error, "")
      << ReadFileOrEmpty(dra_world_->log_path());
}

// `promtool check metrics` on a live scrape (it reads the exposition on stdin).
void PrometheusTest::CheckMetricsWithPromtool(int port, const std::string& name) {
  const auto reply = HttpGet(port, "/metrics");
  ASSERT_EQ(reply.status, 200);
  const fs::path scrape = dir() / (name + ".metrics");
  std::ofstream(scrape) << reply.body;
  ProcessOptions options;
  options.binary = kPromtool;
  options.args = {"check", "metrics"};
  options.stdin_path = scrape;
  options.log_path = dir() / ("promtool-" + name + ".log");
  auto result = RunCommand(options, 30s);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_TRUE(result->status.success()) << "promtool check metrics on " << name
                                        << "'s /metrics: " << result->status.ToString() << "\n"
                                        << result->output;
}

// Prometheus on a free loopback port: both serves scraped every second, the PrometheusRule's
// rules loaded and evaluated every second, its TSDB in the test's folder.
void PrometheusTest::StartPrometheus() {
  const fs::path home = dir() / "prometheus";
  fs::create_directories(home / "data");
  std::ofstream(home / "rules.yaml")
      << RulesFileOf(ReadSource("deploy/monitoring/prometheusrule.yaml"));
  std::ofstream(home / "prometheus.yml")
      << "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
      << "rule_files: [" << (home / "rules.yaml").string() << "]\n"
      << "scrape_configs:\n  - job_name: " << kJob << "\n    static_configs:\n"
      << "      - {targets: ['127.0.0.1:" << dp_port_ << "'], labels: {node: " << kDevicePluginNode
      << "}}\n"
      << "      - {targets: ['127.0.0.1:" << dra_port_ << "'], labels: {node: " << kDraNode
      << "}}\n";
  for (int attempt = 0; attempt < 3; ++attempt) {  // the free port may be taken meanwhile
    prometheus_port_ = FreePort();
    ProcessOptions options;
    options.binary = kPrometheus;
    options.args = {"--config.file=" + (home / "prometheus.yml").string(),
                    "--storage.tsdb.path=" + (home / "data").string(),
                    "--web.listen-address=127.0.0.1:" + std::to_string(prometheus_port_)};
    options.log_path = home / ("prometheus-" + std::to_string(attempt) + ".log");
    auto started = PluginProcess::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().message();
    prometheus_ = std::move(started).value();
    if (WaitUntil(
            [&] {
              return !prometheus_->Running() || Get10(prometheus_port_, "/-/ready").status == 200;
            },
            30s, 100ms) &&
        prometheus_->Running()) {
      return;
    }
  }
  FAIL() << "Prometheus did not start:\n" << prometheus_->Log();
}

// The rules as Prometheus loaded them (/api/v1/rules), once each has been evaluated.
std::vector<Json> PrometheusTest::LoadedRules() {
  std::vector<Json> rules;
  WaitUntil(
      [&] {
        rules.clear();
        const auto json =
            Json::parse(Get10(prometheus_port_, "/api/v1/rules").body, nullptr, false);
        if (json.is_discarded() || !json.contains("data")) return false;
        bool evaluated = true;
        for (const auto& group : json["data"]["groups"]) {
          for (const auto& rule : group["rules"]) {
            rules.push_back(rule);
            evaluated = evaluated && rule.value("health", "") != "unknown";
          }
        }
        return evaluated && !rules.empty();
      },
      20s, 200ms);
  return rules;
}

// `expr` parses and, within the time left, returns data (an alert: or without its threshold).
void PrometheusTest::ExpectData(const std::string& what, const std::string& expr, bool is_alert) {
  SCOPED_TRACE(what + ": " + expr);
  const auto first = Query(prometheus_port_, expr);
  ASSERT_TRUE(first.parsed) << first.error;
  for (const auto& name : kOtherExporters) {
    if (expr.find(name) != std::string::npos) return;  // parsed is all we can ask
  }
  const auto inner = is_alert ? WithoutThreshold(expr) : std::nullopt;
  bool used_inner = false;
  const bool data = WaitUntil(
      [&] {
        if (Query(prometheus_port_, expr).series > 0) return true;
        used_inner = inner && Query(prometheus_port_, *inner).series > 0;
        return used_inner;
      },
      30s, 250ms);
  EXPECT_TRUE(data) << "no data" << (inner ? " (nor from " + *inner + ")" : "");
  if (used_inner) via_inner_.push_back(what + ": " + *inner);
}

TEST_F(PrometheusTest, EveryRuleAndDashboardExpressionReturnsDataFromARealScrape) {
  if (!fs::exists(kPrometheus) || !fs::exists(kPromtool)) {
    GTEST_SKIP() << kPrometheus << " or " << kPromtool << " is absent (Debian's prometheus "
                 << "package); scripts/check-prometheus.sh installs it, runs this test and fails "
                 << "if it is skipped";
  }
  ASSERT_NO_FATAL_FAILURE(StartDevicePluginServe());
  ASSERT_NO_FATAL_FAILURE(StartDraServe());
  // Prometheus scrapes before the work too, so that counters already exposed (drift, PodResources
  // errors) are seen increasing and their alerts' whole expressions return data.
  ASSERT_NO_FATAL_FAILURE(StartPrometheus());
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Query(prometheus_port_, std::string("up{job=\"") + kJob + "\"} == 1").series == 2;
      },
      20s, 200ms))
      << "Prometheus did not scrape both serves";
  ASSERT_NO_FATAL_FAILURE(DoDevicePluginWork());
  ASSERT_NO_FATAL_FAILURE(DoDraWork());
  CheckMetricsWithPromtool(dp_port_, "device-plugin-serve");
  CheckMetricsWithPromtool(dra_port_, "dra-serve");

  // Every rule of the PrometheusRule loaded (Prometheus parsed them) and evaluated without error,
  // and each returns data. Whole expressions do where this world meets the condition
  // (GpuFabricNoFreePartition: no free 8-GPU partition; GpuFabricDevicesUnhealthy: the GPU whose
  // /dev/vfio group is gone; GpuFabricPodResourcesErrors and GpuFabricDriftFound: counters seen
  // rising). The others are checked without their threshold (WithoutThreshold), because:
  // GpuFabricFabricManagerDown, GpuFabricJournalDamaged, GpuFabricPluginMetricsDown: FM is up,
  // the journals intact and both targets scraped; GpuFabricPartitionActivationFailing,
  // GpuFabricApiServerForbidden: their series (fm_code="FM_ST_GENERIC_ERROR", code="403") are
  // born at their first failure, and increase()/rate() see no rise from a series' first sample.
  // GpuFabricPluginNotReady (kube-state-metrics) is only checked to parse (kOtherExporters).
  const std::string rule_yaml = ReadSource("deploy/monitoring/prometheusrule.yaml");
  const auto rules = LoadedRules();
  static const std::regex rule_line(R"(\n\s*- (alert|record): )");
  EXPECT_EQ(rules.size(), static_cast<std::size_t>(std::distance(
                              std::sregex_iterator(rule_yaml.begin(), rule_yaml.end(), rule_line),
                              std::sregex_iterator())));
  for (const auto& rule : rules) {
    const std::string name = rule.value("name", "");
    EXPECT_EQ(rule.value("health", ""), "ok") << name << ": " << rule.value("lastError", "");
    ExpectData("rule " + name, rule.value("query", ""), rule.value("type", "") == "alerting");
  }

  // Every expression of the dashboard, and its node variable's values.
  const auto dashboard = Json::parse(ReadSource("deploy/monitoring/dashboard.json"));
  std::vector<std::string> exprs;
  CollectExprs(dashboard["panels"], exprs);
  EXPECT_GE(exprs.size(), 10u);
  for (const auto& raw : exprs) {
    const std::string expr = SubstituteDashboardVariables(raw);
    EXPECT_EQ(expr.find('$'), std::string::npos) << "a variable left in " << expr;
    ExpectData("dashboard", expr, false);
  }
  const auto nodes = Json::parse(
      Get10(prometheus_port_, "/api/v1/label/node/values?match[]=gpu_fabric_build_info").body);
  EXPECT_EQ(nodes["data"], Json::array({kDevicePluginNode, kDraNode})) << nodes.dump();

  for (const auto& line : via_inner_)
    std::cout << "checked without its threshold: " << line << "\n";
}

}  // namespace
}  // namespace gfp::testing
