// The --metrics-address parser, the probe state and the HTTP listener (over real TCP).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "integration/plugin/metrics_http.h"
#include "plugin/metrics/http_endpoint.h"
#include "plugin/metrics/metrics_address.h"
#include "plugin/metrics/probe_state.h"

namespace gfp::plugin::metrics {
namespace {

using namespace std::chrono_literals;
using gfp::testing::HttpGet;
using Steady = ProbeState::Steady;

TEST(MetricsAddressTest, AcceptsHostPortAndPortAlone) {
  auto any = ParseMetricsAddress(":9402");
  ASSERT_TRUE(any.ok()) << any.status().message();
  EXPECT_EQ(any->host, "");
  EXPECT_EQ(any->port, 9402);
  EXPECT_EQ(any->ListeningPortsOption(), "9402");
  EXPECT_EQ(any->Describe(9402), "0.0.0.0:9402");

  auto local = ParseMetricsAddress("127.0.0.1:0");
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->ListeningPortsOption(), "127.0.0.1:0");
  EXPECT_EQ(local->Describe(41233), "127.0.0.1:41233");

  auto named = ParseMetricsAddress("localhost:65535");
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->host, "127.0.0.1");
  EXPECT_EQ(named->port, 65535);

  auto v6 = ParseMetricsAddress("[::1]:9402");
  if (IpV6Supported()) {
    ASSERT_TRUE(v6.ok());
    EXPECT_EQ(v6->ListeningPortsOption(), "[::1]:9402");
  } else {
    // Debian 12's civetweb: refused at the flag check, not later by the listener.
    ASSERT_FALSE(v6.ok());
    EXPECT_NE(v6.status().message().find("this build's civetweb has none"), std::string::npos);
  }
}

TEST(MetricsAddressTest, RefusesBadValuesSayingWhy) {
  const std::pair<const char*, const char*> cases[] = {
      {"9402", "there is no ':' before the port"},
      {":65536", "port 65536 is above 65535"},
      {":99999999999", "the port is not a number"},
      {":", "the port is missing"},
      {":http", "the port is not a number"},
      {"127.0.0.1:-1", "the port is not a number"},
      {"example.com:9402", "host example.com is not an IPv4 address"},
      {"300.1.1.1:9402", "host 300.1.1.1 is not an IPv4 address"},
      {"[nope]:9402", "[nope] is not an IPv6 address"},
  };
  for (const auto& [value, why] : cases) {
    auto parsed = ParseMetricsAddress(value);
    ASSERT_FALSE(parsed.ok()) << value;
    EXPECT_NE(parsed.status().message().find(std::string("--metrics-address=") + value + ": "),
              std::string::npos)
        << parsed.status().message();
    EXPECT_NE(parsed.status().message().find(why), std::string::npos) << parsed.status().message();
  }
  auto control = ParseMetricsAddress("a\nb:1");
  ASSERT_FALSE(control.ok());
  EXPECT_EQ(control.status().message().find('\n'), std::string::npos);
}

TEST(ProbeStateTest, HealthyWhileTheLoopTurnedWithinThreeIntervals) {
  const auto start = Steady::now();
  ProbeState probes(100ms, start);
  EXPECT_EQ(probes.Healthz(start + 300ms).status, 200);
  const ProbeAnswer stale = probes.Healthz(start + 301ms);
  EXPECT_EQ(stale.status, 503);
  EXPECT_NE(stale.body.find("the serve loop last turned 301 ms ago"), std::string::npos)
      << stale.body;
  probes.LoopTurned(start + 1s);
  EXPECT_EQ(probes.Healthz(start + 1200ms).status, 200);
}

TEST(ProbeStateTest, ReadyOnlyWhenEveryConditionHolds) {
  ProbeState probes(100ms, Steady::now());
  EXPECT_EQ(probes.Readyz().status, 503);  // starting
  ReadinessInputs inputs;
  inputs.fabric_manager_enabled = true;
  inputs.fabric_manager_usable = false;
  inputs.fabric_manager_problem = "cannot connect to /x: FM_ST_CONNECTION_NOT_VALID\n";
  inputs.unregistered_resources = {"nvidia.com/A"};
  EXPECT_EQ(NotReadyReason(inputs),
            "Fabric Manager is not usable (cannot connect to /x: FM_ST_CONNECTION_NOT_VALID\\n)");
  inputs.fabric_manager_usable = true;
  EXPECT_EQ(NotReadyReason(inputs), "not registered with kubelet yet: nvidia.com/A");
  inputs.unregistered_resources.clear();
  EXPECT_EQ(NotReadyReason(inputs), "");
  inputs.first_damaged_seq = 42;
  EXPECT_EQ(NotReadyReason(inputs), "the background verification found journal damage at seq 42");

  probes.SetNotReadyReason(NotReadyReason(inputs));
  EXPECT_EQ(probes.Readyz().status, 503);
  EXPECT_EQ(probes.Readyz().body,
            "not ready: the background verification found journal damage at seq 42\n");
  probes.SetNotReadyReason("");
  EXPECT_EQ(probes.Readyz().status, 200);
}

TEST(ProbeStateTest, DraModeIsReadyOnceRegisteredAndTheSliceWasPublished) {
  ReadinessInputs inputs;
  inputs.dra_mode = true;
  inputs.unregistered_resources = {"nvidia.com/A"};  // device-plugin mode's rule does not apply
  EXPECT_EQ(NotReadyReason(inputs), "the DRA plugin is not registered with kubelet yet");
  inputs.slice_published = true;
  EXPECT_EQ(NotReadyReason(inputs), "the DRA plugin is not registered with kubelet yet");
  inputs.dra_registered = true;
  inputs.slice_published = false;
  EXPECT_EQ(NotReadyReason(inputs), "the ResourceSlice was not published yet");
  inputs.slice_published = true;
  EXPECT_EQ(NotReadyReason(inputs), "");
  // FM and the journal's verification rule as in device-plugin mode, and first.
  inputs.fabric_manager_enabled = true;
  inputs.fabric_manager_problem = "gone";
  EXPECT_EQ(NotReadyReason(inputs), "Fabric Manager is not usable (gone)");
  inputs.first_damaged_seq = 7;
  EXPECT_EQ(NotReadyReason(inputs), "the background verification found journal damage at seq 7");
}

class HttpEndpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto address = ParseMetricsAddress("127.0.0.1:0");
    ASSERT_TRUE(address.ok());
    auto endpoint = HttpEndpoint::Start(*address, "127.0.0.1:0", registry_, probes_);
    ASSERT_TRUE(endpoint.ok()) << endpoint.status().message();
    endpoint_ = std::move(endpoint).value();
    ASSERT_GT(endpoint_->port(), 0);
  }
  MetricsRegistry registry_{"9.9.9"};
  ProbeState probes_{1h, Steady::now()};
  std::unique_ptr<HttpEndpoint> endpoint_;
};

TEST_F(HttpEndpointTest, ServesMetricsAndBothProbesOnOnePortAndNotFoundElsewhere) {
  const auto metrics = HttpGet(endpoint_->port(), "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("gpu_fabric_build_info{version=\"9.9.9\"} 1"), std::string::npos)
      << metrics.body;
  EXPECT_EQ(HttpGet(endpoint_->port(), "/healthz").status, 200);
  const auto not_ready = HttpGet(endpoint_->port(), "/readyz");
  EXPECT_EQ(not_ready.status, 503);
  EXPECT_EQ(not_ready.body, "not ready: the plugin is starting\n");
  probes_.SetNotReadyReason("");
  EXPECT_EQ(HttpGet(endpoint_->port(), "/readyz").status, 200);
  for (const char* path : {"/", "/metrics/x", "/healthzz", "/nope", "/metricsfoo"}) {
    EXPECT_EQ(HttpGet(endpoint_->port(), path).status, 404) << path;
  }
  EXPECT_EQ(HttpGet(endpoint_->port(), "/metrics?x=1").status, 200);
  EXPECT_EQ(HttpGet(endpoint_->port(), "/metrics", 5s, "POST").status, 405);
}

TEST_F(HttpEndpointTest, AnAddressInUseIsAnErrorThatSaysSo) {
  const std::string value = "127.0.0.1:" + std::to_string(endpoint_->port());
  auto address = ParseMetricsAddress(value);
  ASSERT_TRUE(address.ok());
  auto second = HttpEndpoint::Start(*address, value, registry_, probes_);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("--metrics-address=" + value + ": cannot listen"),
            std::string::npos)
      << second.status().message();
  EXPECT_NE(second.status().message().find("in use"), std::string::npos)
      << second.status().message();
}

TEST_F(HttpEndpointTest, AnOversizedRequestIsRefusedAndTheEndpointKeepsServing) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(endpoint_->port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string huge = "GET /metrics HTTP/1.1\r\nX: " + std::string(64 * 1024, 'a');
  ::send(fd, huge.data(), huge.size(), MSG_NOSIGNAL);
  ::close(fd);
  EXPECT_EQ(HttpGet(endpoint_->port(), "/healthz").status, 200);
}

}  // namespace
}  // namespace gfp::plugin::metrics
