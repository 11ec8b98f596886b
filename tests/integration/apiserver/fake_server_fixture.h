// A fake API server over HTTPS with a fresh test PKI, and clients for it whose backoff waits
// are recorded instead of slept (so retry tests are fast and their schedule checkable).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "adapters/apiserver/api_client.h"
#include "common/temp_dir.h"
#include "sim/apiserver/fake_api_server.h"
#include "sim/apiserver/test_pki.h"

namespace gfp::adapters::apiserver::testing {

// Records what the client counts (gpu_fabric_api_requests_total's labels).
class RecordingObserver : public ApiCallObserver {
 public:
  void OnApiCall(Verb verb, const std::string& resource, int code) override {
    std::lock_guard lock(mu_);
    calls_.emplace_back(VerbName(verb), resource, code);
  }
  std::vector<int> Codes() const {
    std::lock_guard lock(mu_);
    std::vector<int> codes;
    for (const auto& call : calls_) codes.push_back(std::get<2>(call));
    return codes;
  }
  std::vector<std::tuple<std::string, std::string, int>> Calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::tuple<std::string, std::string, int>> calls_;
};

inline nlohmann::json Slice(const std::string& name, const std::string& node = "node-1") {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", {{"name", name}}},
          {"spec",
           {{"driver", "gpu.fabric.example"},
            {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"nodeName", node},
            {"devices", nlohmann::json::array()}}}};
}

inline const std::string kSlices = "/apis/resource.k8s.io/v1/resourceslices";

class FakeServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pki = apisim::MakeTestPki(dir_.path() / "pki");
    ASSERT_TRUE(pki.ok()) << pki.status().message();
    pki_ = *pki;
    token_file_ = dir_.path() / "token";
    WriteToken("token-1");
    apisim::FakeApiServer::Options options;
    options.pki = pki_;
    options.token = "token-1";
    options.accept_client_cert = true;
    auto server = apisim::FakeApiServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status().message();
    server_ = std::move(*server);
  }

  void WriteToken(const std::string& token) {
    std::ofstream(token_file_, std::ios::trunc) << token << "\n";
  }

  ApiServerConfig Config() const {
    ApiServerConfig config;
    config.server = server_->url();
    config.ca_pem = pki_.ca_pem;
    config.auth = AuthKind::kTokenFile;
    config.token_file = token_file_;
    config.source = "test config";
    return config;
  }

  // Backoff waits recorded, jitter at the top of its range.
  ApiClientOptions FastOptions() {
    ApiClientOptions options;
    options.sleep = [this](std::chrono::milliseconds delay) {
      std::lock_guard lock(sleeps_mu_);
      sleeps_.push_back(delay.count());
    };
    options.unit_random = [] { return 0.999999; };
    return options;
  }

  std::unique_ptr<ApiClient> Client(ApiServerConfig config, ApiClientOptions options) {
    auto client = ApiClient::Create(std::move(config), std::move(options));
    EXPECT_TRUE(client.ok()) << client.status().message();
    if (!client.ok()) return nullptr;
    (*client)->SetObserver(&observer_);
    return std::move(*client);
  }
  std::unique_ptr<ApiClient> Client() { return Client(Config(), FastOptions()); }

  std::vector<long long> Sleeps() {
    std::lock_guard lock(sleeps_mu_);
    return sleeps_;
  }

  gfp::testing::TempDir dir_;
  apisim::TestPki pki_;
  std::filesystem::path token_file_;
  std::unique_ptr<apisim::FakeApiServer> server_;
  RecordingObserver observer_;
  std::mutex sleeps_mu_;
  std::vector<long long> sleeps_;
};

}  // namespace gfp::adapters::apiserver::testing
