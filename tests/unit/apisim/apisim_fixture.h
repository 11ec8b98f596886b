// A fake API server with a fresh test PKI per test, and the client calls the tests make.
#pragma once

#include <curl/curl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "sim/apiserver/fake_api_server.h"
#include "sim/apiserver/test_pki.h"
#include "unit/apisim/curl_client.h"

namespace gfp::apisim::testing {

inline const std::string kToken = "test-token-1";
inline const std::string kSlices = "/apis/resource.k8s.io/v1/resourceslices";

inline nlohmann::json SliceBody(const std::string& name, const std::string& node,
                                const std::string& driver = "gpu.fabric.example.com") {
  nlohmann::json meta =
      name.back() == '-' ? nlohmann::json{{"generateName", name}} : nlohmann::json{{"name", name}};
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", meta},
          {"spec",
           {{"driver", driver},
            {"nodeName", node},
            {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"devices", nlohmann::json::array()}}}};
}

class ApiSimTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { curl_global_init(CURL_GLOBAL_DEFAULT); }

  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("apisim-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    auto pki = MakeTestPki(dir_);
    ASSERT_TRUE(pki.ok()) << pki.status().message();
    pki_ = *pki;
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  void StartServer(FakeApiServer::Options options) {
    options.pki = pki_;
    auto server = FakeApiServer::Start(std::move(options));
    ASSERT_TRUE(server.ok()) << server.status().message();
    server_ = std::move(server).value();
  }
  void StartServer() {
    FakeApiServer::Options options;
    options.token = kToken;
    StartServer(std::move(options));
  }

  CurlOptions Client() const {
    CurlOptions options;
    options.ca_file = pki_.ca_file.string();
    options.token = kToken;
    return options;
  }
  HttpReply Get(const std::string& path) {
    return Call("GET", server_->url() + path, "", Client());
  }
  HttpReply Send(const std::string& method, const std::string& path, const nlohmann::json& body) {
    return Call(method, server_->url() + path, body.dump(), Client());
  }
  // Creates a slice through the API and returns the stored object.
  nlohmann::json Create(const std::string& name, const std::string& node) {
    HttpReply reply = Send("POST", kSlices, SliceBody(name, node));
    EXPECT_EQ(reply.code, 201) << reply.body;
    return reply.Json();
  }

  std::filesystem::path dir_;
  TestPki pki_;
  std::unique_ptr<FakeApiServer> server_;
};

}  // namespace gfp::apisim::testing
