#include "fm_test_support.h"

#include <stdlib.h>

#include <cstring>
#include <filesystem>

namespace gfp::adapters::fm::testing {

abi::ConnectParamsV2 UnixParams() {
  abi::ConnectParamsV2 params{};
  params.version = abi::kConnectParamsV2Version;
  std::strcpy(params.addressInfo, "/run/fm.sock");
  params.timeoutMs = 1000;
  params.addressIsUnixSocket = 1;
  params.addressType = abi::kAddrUnix;
  return params;
}

void FmSimTest::UseTable(std::string_view table) {
  if (dir_.empty()) {
    std::string pattern = (std::filesystem::temp_directory_path() / "fm-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    state_path_ = dir_ + "/fm-sim.json";
    ASSERT_EQ(setenv("NVFM_SIM_STATE", state_path_.c_str(), 1), 0);
  }
  auto created = fmsim::FmSimControl::Create(state_path_, table);
  ASSERT_TRUE(created.ok()) << created.status().message();
  sim_ = std::make_unique<fmsim::FmSimControl>(std::move(created).value());
}

void FmSimTest::TearDown() {
  std::error_code ignored;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
}

FabricManagerConfig FmSimTest::Config() const {
  FabricManagerConfig config;
  config.library_path = kSimLibrary;
  config.address = "/run/nvidia-fabricmanager/fmpm.sock";
  config.connect_timeout = std::chrono::milliseconds(1000);
  config.call_deadline = std::chrono::milliseconds(3000);  // generous: ASan builds are slow
  config.reconnect_attempts = 3;
  config.reconnect_backoff_initial = std::chrono::milliseconds(5);
  config.reconnect_backoff_max = std::chrono::milliseconds(20);
  return config;
}

std::unique_ptr<FabricManagerClient> FmSimTest::NewClient(FabricManagerConfig config) {
  auto client = FabricManagerClient::Create(std::move(config));
  EXPECT_TRUE(client.ok()) << client.status().message();
  if (!client.ok()) return nullptr;
  return std::move(client).value();
}

std::vector<fmsim::CallRecord> FmSimTest::CallsOf(std::string_view function) {
  auto log = sim_->CallLog();
  EXPECT_TRUE(log.ok()) << log.status().message();
  std::vector<fmsim::CallRecord> calls;
  if (!log.ok()) return calls;
  for (const auto& record : *log) {
    if (record.function == function) calls.push_back(record);
  }
  return calls;
}

std::vector<std::uint32_t> FmSimTest::Active() {
  auto active = sim_->ActivePartitions();
  EXPECT_TRUE(active.ok()) << active.status().message();
  return active.ok() ? *active : std::vector<std::uint32_t>{};
}

void FmSimRawTest::SetUp() {
  FmSimTest::SetUp();
  auto library = FabricManagerLibrary::Load(kSimLibrary);
  ASSERT_TRUE(library.ok()) << library.status().message();
  library_ = *library;
  fn().fmLibShutdown();
}

void FmSimRawTest::TearDown() {
  if (library_) fn().fmLibShutdown();
  FmSimTest::TearDown();
}

}  // namespace gfp::adapters::fm::testing
