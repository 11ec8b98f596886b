// Shared fixture: a fresh simulator state file per test, found by the library via
// $NVFM_SIM_STATE, and a client configured with short deadlines.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/fm/fabric_manager_client.h"
#include "adapters/fm/fabric_manager_library.h"
#include "adapters/fm/fm_abi.h"
#include "sim/fm/fm_sim_control.h"

namespace gfp::adapters::fm::testing {

inline constexpr const char* kSimLibrary = GFP_FM_SIM_LIBRARY;

// v2 connect parameters for the simulator's Unix socket, as the raw-ABI tests pass them.
abi::ConnectParamsV2 UnixParams();

class FmSimTest : public ::testing::Test {
 protected:
  void SetUp() override { UseTable("h100"); }
  void TearDown() override;

  // Recreates the state file with another table.
  void UseTable(std::string_view table);
  fmsim::FmSimControl& sim() { return *sim_; }
  const std::string& state_path() const { return state_path_; }

  FabricManagerConfig Config() const;
  std::unique_ptr<FabricManagerClient> NewClient(FabricManagerConfig config);
  std::unique_ptr<FabricManagerClient> NewClient() { return NewClient(Config()); }

  // Calls of `function` in the simulator's log, in order.
  std::vector<fmsim::CallRecord> CallsOf(std::string_view function);
  std::vector<std::uint32_t> Active();

 private:
  std::string dir_;
  std::string state_path_;
  std::unique_ptr<fmsim::FmSimControl> sim_;
};

// The simulator called through its raw C ABI (no client): the library loaded and shut down, since
// it is process-global and an earlier test may have left it initialised; shut down again after.
class FmSimRawTest : public FmSimTest {
 protected:
  void SetUp() override;
  void TearDown() override;
  const FmFunctions& fn() { return library_->fn(); }

 private:
  std::shared_ptr<const FabricManagerLibrary> library_;
};

}  // namespace gfp::adapters::fm::testing
