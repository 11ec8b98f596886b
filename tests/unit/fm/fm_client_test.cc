// FabricManagerClient against libnvfm-sim.so through the real dlopen path: every SDK call, the
// documented partition semantics, and every injectable fault.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "adapters/fm/fm_return_codes.h"
#include "fm_test_support.h"

namespace gfp::adapters::fm {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;
using testing::FmSimTest;

class FmClient : public FmSimTest {};

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_F(FmClient, ConnectUsesV2WithBothAddressFieldsForUnixSocket) {
  auto client = NewClient();
  ASSERT_TRUE(client);
  EXPECT_EQ(client->connection_state(), ConnectionState::kDisconnected);
  FmStatus status = client->Connect();
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_EQ(status.fm_code(), 0);
  EXPECT_EQ(status.fm_name(), "FM_ST_SUCCESS");
  EXPECT_EQ(client->connection_state(), ConnectionState::kConnected);
  EXPECT_EQ(client->connect_struct_version(), 2);
  auto connects = CallsOf("fmConnect");
  ASSERT_EQ(connects.size(), 1u);
  EXPECT_EQ(connects[0].code, 0);
  EXPECT_TRUE(Contains(connects[0].args, "version=0x02000110")) << connects[0].args;
  EXPECT_TRUE(Contains(connects[0].args, "address=/run/nvidia-fabricmanager/fmpm.sock"));
  EXPECT_TRUE(Contains(connects[0].args, "addressIsUnixSocket=1"));
  EXPECT_TRUE(Contains(connects[0].args, "addressType=2"));
  EXPECT_TRUE(Contains(connects[0].args, "timeoutMs=1000"));
}

TEST_F(FmClient, ConnectOverTcpUsesDefaultPort) {
  FabricManagerConfig config = Config();
  config.address = "127.0.0.1";
  config.connect_timeout = milliseconds(250);
  auto client = NewClient(config);
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Connect().ok());
  auto connects = CallsOf("fmConnect");
  ASSERT_EQ(connects.size(), 1u);
  EXPECT_TRUE(Contains(connects[0].args, "address=127.0.0.1:6666")) << connects[0].args;
  EXPECT_TRUE(Contains(connects[0].args, "addressIsUnixSocket=0"));
  EXPECT_TRUE(Contains(connects[0].args, "addressType=1"));
  EXPECT_TRUE(Contains(connects[0].args, "timeoutMs=250"));
}

TEST_F(FmClient, FallsBackToV1ConnectStructOnVersionMismatch) {
  ASSERT_TRUE(sim().SetOnlyV1Connect(true).ok());
  auto client = NewClient();
  ASSERT_TRUE(client);
  FmStatus status = client->Connect();
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_EQ(client->connect_struct_version(), 1);
  auto connects = CallsOf("fmConnect");
  ASSERT_EQ(connects.size(), 2u);
  EXPECT_EQ(connects[0].code, abi::kVersionMismatch);
  EXPECT_EQ(connects[1].code, 0);
  EXPECT_TRUE(Contains(connects[1].args, "version=0x0100010C")) << connects[1].args;
  EXPECT_TRUE(Contains(connects[1].args, "addressIsUnixSocket=1"));
  ASSERT_TRUE(client->GetSupportedPartitions().ok());
}

TEST_F(FmClient, LibInitAlreadyInitialisedIsFine) {
  auto first = NewClient();
  auto second = NewClient();
  ASSERT_TRUE(first && second);
  ASSERT_TRUE(first->Connect().ok());
  ASSERT_TRUE(second->Connect().ok());
  auto inits = CallsOf("fmLibInit");
  ASSERT_FALSE(inits.empty());
  EXPECT_EQ(inits.back().code, abi::kInUse);
  EXPECT_TRUE(second->GetSupportedPartitions().ok());
}

TEST_F(FmClient, LibInitFailureIsReportedWithItsName) {
  // fmLibInit is process-global: start from an uninitialised library so the fault is reached.
  auto library = FabricManagerLibrary::Load(testing::kSimLibrary);
  ASSERT_TRUE(library.ok());
  (*library)->fn().fmLibShutdown();
  ASSERT_TRUE(sim().InjectFailure("fmLibInit", abi::kGenericError, fmsim::kAlways).ok());
  auto client = NewClient();
  ASSERT_TRUE(client);
  FmStatus status = client->Connect();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.fm_name(), "FM_ST_GENERIC_ERROR");
  EXPECT_TRUE(Contains(status.error().message, "fmLibInit: FM_ST_GENERIC_ERROR"))
      << status.error().message;
  EXPECT_EQ(client->connection_state(), ConnectionState::kDisconnected);
  ASSERT_TRUE(sim().ClearFailures().ok());
  EXPECT_TRUE(client->Connect().ok());
}

TEST_F(FmClient, ListsTheH100Table) {
  auto client = NewClient();
  ASSERT_TRUE(client);
  auto partitions = client->GetSupportedPartitions();  // connects lazily
  ASSERT_TRUE(partitions.ok()) << partitions.error().message;
  ASSERT_EQ(partitions->size(), 15u);
  const PartitionInfo& all = partitions->front();
  EXPECT_EQ(all.id, 0u);
  EXPECT_EQ(all.physical_ids, (std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_FALSE(all.active);
  EXPECT_EQ(all.max_nvlinks, 18u);
  EXPECT_EQ(all.nvlinks_available, 18u);
  EXPECT_EQ(all.nvlink_line_rate_mbps, 26562u);
  EXPECT_EQ((*partitions)[3].physical_ids, (std::vector<std::uint32_t>{1, 3}));
  const PartitionInfo& single = partitions->back();
  EXPECT_EQ(single.id, 14u);
  EXPECT_EQ(single.physical_ids, (std::vector<std::uint32_t>{8}));
  EXPECT_EQ(single.max_nvlinks, 0u);
  EXPECT_FALSE(single.degraded());
}

TEST_F(FmClient, ListsEveryEmbeddedTable) {
  struct Expected {
    const char* table;
    std::size_t count;
    std::uint32_t first_id;
    std::size_t first_gpus;
  };
  for (const Expected& e : {Expected{"b200", 15, 1, 8}, Expected{"a100", 35, 0, 16},
                            Expected{"hgx2", 33, 0, 16}, Expected{"h100", 15, 0, 8}}) {
    UseTable(e.table);
    auto client = NewClient();
    ASSERT_TRUE(client);
    auto partitions = client->GetSupportedPartitions();
    ASSERT_TRUE(partitions.ok()) << e.table << ": " << partitions.error().message;
    ASSERT_EQ(partitions->size(), e.count) << e.table;
    EXPECT_EQ(partitions->front().id, e.first_id) << e.table;
    EXPECT_EQ(partitions->front().physical_ids.size(), e.first_gpus) << e.table;
  }
}

TEST_F(FmClient, ActivateAndDeactivateFollowFmSemantics) {
  auto client = NewClient();
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Activate(1).ok());
  EXPECT_EQ(Active(), (std::vector<std::uint32_t>{1}));

  FmStatus again = client->Activate(1);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.fm_code(), abi::kInUse);
  EXPECT_EQ(again.fm_name(), "FM_ST_IN_USE");
  EXPECT_EQ(again.error().message,
            "fmActivateFabricPartition(1): FM_ST_IN_USE (partition active or its GPUs in another "
            "active partition)");
  EXPECT_TRUE(again.error().from_library);
  EXPECT_EQ(again.status().code(), ErrorCode::kFailedPrecondition);

  FmStatus overlapping = client->Activate(3);  // GPUs 1,3 are in active partition 1
  EXPECT_EQ(overlapping.fm_code(), abi::kInUse);
  ASSERT_TRUE(client->Activate(2).ok());  // 5..8: disjoint
  EXPECT_EQ(client->Activate(0).fm_code(), abi::kInUse);

  auto partitions = client->GetSupportedPartitions();
  ASSERT_TRUE(partitions.ok());
  for (const PartitionInfo& p : *partitions) EXPECT_EQ(p.active, p.id == 1 || p.id == 2) << p.id;

  ASSERT_TRUE(client->Deactivate(1).ok());
  FmStatus inactive = client->Deactivate(1);
  EXPECT_EQ(inactive.fm_code(), abi::kUninitialized);
  EXPECT_TRUE(Contains(inactive.error().message, "FM_ST_UNINITIALIZED"))
      << inactive.error().message;
  EXPECT_TRUE(Contains(inactive.error().message, "partition not active"));

  FmStatus unknown = client->Activate(99);
  EXPECT_EQ(unknown.fm_code(), abi::kBadParam);
  EXPECT_EQ(unknown.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(client->Deactivate(99).fm_code(), abi::kBadParam);
  EXPECT_EQ(Active(), (std::vector<std::uint32_t>{2}));
}

TEST_F(FmClient, EveryInjectedCodeComesBackWithItsName) {
  auto client = NewClient();
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Connect().ok());
  std::vector<int> codes;
  for (int code = -1; code >= abi::kLowestKnownReturn; --code) {
    if (code != abi::kConnectionNotValid) codes.push_back(code);  // that one reconnects
  }
  codes.push_back(-42);
  for (int code : codes) {
    ASSERT_TRUE(sim().InjectFailure("fmActivateFabricPartition", code, 1).ok());
    FmStatus status = client->Activate(4);
    ASSERT_FALSE(status.ok()) << code;
    EXPECT_EQ(status.fm_code(), code);
    EXPECT_EQ(status.fm_name(), FmReturnName(code));
    EXPECT_TRUE(status.error().from_library);
    EXPECT_TRUE(
        Contains(status.error().message, "fmActivateFabricPartition(4): " + FmReturnName(code)))
        << status.error().message;
    EXPECT_EQ(status.status().code(), FmReturnCategory(code));
  }
  EXPECT_EQ(FmReturnName(-42), "FM_ST_UNKNOWN(-42)");
  EXPECT_TRUE(Active().empty());
  // The fault was consumed: the next call goes through.
  EXPECT_TRUE(client->Activate(4).ok());
}

TEST_F(FmClient, InjectedFailuresOnEveryCall) {
  auto client = NewClient();
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Connect().ok());
  ASSERT_TRUE(sim().InjectFailure("fmGetSupportedFabricPartitions", abi::kGenericError).ok());
  EXPECT_EQ(client->GetSupportedPartitions().fm_name(), "FM_ST_GENERIC_ERROR");
  ASSERT_TRUE(sim().InjectFailure("fmGetUnsupportedFabricPartitions", abi::kNotSupported).ok());
  EXPECT_EQ(client->GetUnsupportedPartitions().fm_name(), "FM_ST_NOT_SUPPORTED");
  ASSERT_TRUE(sim().InjectFailure("fmGetNvlinkFailedDevices", abi::kVersionMismatch).ok());
  EXPECT_EQ(client->GetNvlinkFailedDevices().fm_name(), "FM_ST_VERSION_MISMATCH");
  ASSERT_TRUE(sim().InjectFailure("fmDeactivateFabricPartition", abi::kNvlinkError).ok());
  EXPECT_EQ(client->Deactivate(1).fm_name(), "FM_ST_NVLINK_ERROR");
  ASSERT_TRUE(sim().InjectFailure("fmSetActivatedFabricPartitions", abi::kTimeout).ok());
  const std::uint32_t ids[] = {1};
  FmStatus set = client->SetActivatedPartitions(ids);
  EXPECT_EQ(set.fm_name(), "FM_ST_TIMEOUT");
  EXPECT_TRUE(set.error().from_library);
  EXPECT_TRUE(Contains(set.error().message, "fmSetActivatedFabricPartitions([1])"));
  // Always-failing: both calls fail, then clearing restores service.
  ASSERT_TRUE(
      sim().InjectFailure("fmActivateFabricPartition", abi::kNotReady, fmsim::kAlways).ok());
  EXPECT_EQ(client->Activate(1).fm_name(), "FM_ST_NOT_READY");
  EXPECT_EQ(client->Activate(1).fm_name(), "FM_ST_NOT_READY");
  ASSERT_TRUE(sim().ClearFailures().ok());
  EXPECT_TRUE(client->Activate(1).ok());
}

TEST_F(FmClient, ReconnectsAfterConnectionLoss) {
  auto client = NewClient();
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Connect().ok());
  ASSERT_TRUE(sim().DropConnections().ok());
  auto partitions = client->GetSupportedPartitions();
  ASSERT_TRUE(partitions.ok()) << partitions.error().message;
  EXPECT_EQ(client->connection_state(), ConnectionState::kConnected);
  auto lists = CallsOf("fmGetSupportedFabricPartitions");
  ASSERT_EQ(lists.size(), 2u);
  EXPECT_EQ(lists[0].code, abi::kConnectionNotValid);
  EXPECT_EQ(lists[1].code, 0);
  EXPECT_EQ(CallsOf("fmConnect").size(), 2u);
}

TEST_F(FmClient, ReconnectAttemptsAreBounded) {
  auto client = NewClient();
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Connect().ok());
  ASSERT_TRUE(
      sim()
          .InjectFailure("fmActivateFabricPartition", abi::kConnectionNotValid, fmsim::kAlways)
          .ok());
  FmStatus status = client->Activate(1);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.fm_name(), "FM_ST_CONNECTION_NOT_VALID");
  EXPECT_EQ(status.status().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(CallsOf("fmActivateFabricPartition").size(), 4u);  // 1 + 3 reconnect attempts
  EXPECT_EQ(client->connection_state(), ConnectionState::kBroken);
  ASSERT_TRUE(sim().ClearFailures().ok());
  EXPECT_TRUE(client->Activate(1).ok());
  EXPECT_EQ(client->connection_state(), ConnectionState::kConnected);
}

TEST_F(FmClient, UnreachableFabricManager) {
  ASSERT_TRUE(sim().SetUnreachable(true).ok());
  auto client = NewClient();
  ASSERT_TRUE(client);
  FmStatus connect = client->Connect();
  ASSERT_FALSE(connect.ok());
  EXPECT_EQ(connect.fm_name(), "FM_ST_CONNECTION_NOT_VALID");
  EXPECT_TRUE(Contains(connect.error().message, "unreachable")) << connect.error().message;
  EXPECT_NE(client->connection_state(), ConnectionState::kConnected);

  auto partitions = client->GetSupportedPartitions();
  ASSERT_FALSE(partitions.ok());
  EXPECT_TRUE(Contains(partitions.error().message, "cannot connect")) << partitions.error().message;
  EXPECT_EQ(CallsOf("fmConnect").size(), 1u + 4u);

  ASSERT_TRUE(sim().SetUnreachable(false).ok());
  EXPECT_TRUE(client->GetSupportedPartitions().ok());
  EXPECT_EQ(client->connection_state(), ConnectionState::kConnected);
}

TEST_F(FmClient, ConnectedClientLosesFmThenRecovers) {
  auto client = NewClient();
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Activate(1).ok());
  ASSERT_TRUE(sim().SetUnreachable(true).ok());
  EXPECT_EQ(client->Activate(2).fm_name(), "FM_ST_CONNECTION_NOT_VALID");
  EXPECT_EQ(client->connection_state(), ConnectionState::kBroken);
  ASSERT_TRUE(sim().SetUnreachable(false).ok());
  EXPECT_TRUE(client->Activate(2).ok());
  EXPECT_EQ(Active(), (std::vector<std::uint32_t>{1, 2}));
}

TEST_F(FmClient, HungCallTimesOutThenFailsFastUntilItReturns) {
  FabricManagerConfig config = Config();
  config.call_deadline = milliseconds(200);
  auto client = NewClient(config);
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Connect().ok());
  ASSERT_TRUE(sim().SetLatency("fmGetSupportedFabricPartitions", 1500).ok());

  auto start = steady_clock::now();
  auto hung = client->GetSupportedPartitions();
  auto elapsed = steady_clock::now() - start;
  ASSERT_FALSE(hung.ok());
  EXPECT_EQ(hung.fm_name(), "FM_ST_TIMEOUT");
  EXPECT_EQ(hung.status().code(), ErrorCode::kDeadlineExceeded);
  EXPECT_FALSE(hung.error().from_library);
  EXPECT_TRUE(Contains(hung.error().message, "no reply within 200 ms")) << hung.error().message;
  EXPECT_LT(elapsed, milliseconds(1200));
  EXPECT_EQ(client->connection_state(), ConnectionState::kBroken);

  ASSERT_TRUE(sim().SetLatency("fmGetSupportedFabricPartitions", 0).ok());
  start = steady_clock::now();
  FmStatus fast = client->Activate(1);
  EXPECT_LT(steady_clock::now() - start, milliseconds(500));
  ASSERT_FALSE(fast.ok());
  EXPECT_EQ(fast.status().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(fast.fm_name(), "FM_ST_CONNECTION_NOT_VALID");
  EXPECT_FALSE(fast.error().from_library);
  EXPECT_TRUE(Active().empty());  // never reached FM

  // Once the hung call returns, the next call reconnects and works.
  auto deadline = steady_clock::now() + milliseconds(10000);
  FmStatus recovered = client->Activate(1);
  while (!recovered.ok() && steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(50));
    recovered = client->Activate(1);
  }
  ASSERT_TRUE(recovered.ok()) << recovered.error().message;
  EXPECT_EQ(client->connection_state(), ConnectionState::kConnected);
  EXPECT_EQ(Active(), (std::vector<std::uint32_t>{1}));
}

TEST_F(FmClient, DestroyingAClientWithAHungCallIsBounded) {
  FabricManagerConfig config = Config();
  config.call_deadline = milliseconds(100);
  auto client = NewClient(config);
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Connect().ok());
  ASSERT_TRUE(sim().SetLatency("*", 700).ok());
  EXPECT_EQ(client->Activate(1).fm_name(), "FM_ST_TIMEOUT");
  auto start = steady_clock::now();
  client.reset();
  EXPECT_LT(steady_clock::now() - start, milliseconds(600));
  ASSERT_TRUE(sim().SetLatency("*", 0).ok());
  // FM did it, late: the abandoned call finishes inside the library (state and call log are
  // written together, the last thing it does) before the state file goes away.
  const std::vector<std::uint32_t> late = {1};
  const auto deadline = steady_clock::now() + milliseconds(10000);
  while (Active() != late && steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(Active(), late);
}

TEST_F(FmClient, StartingFabricManagerIsNotConfigured) {
  ASSERT_TRUE(sim().SetMode(fmsim::Mode::kStarting).ok());
  auto client = NewClient();
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Connect().ok());
  auto partitions = client->GetSupportedPartitions();
  EXPECT_EQ(partitions.fm_name(), "FM_ST_NOT_CONFIGURED");
  EXPECT_EQ(partitions.status().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(client->Activate(1).fm_name(), "FM_ST_NOT_CONFIGURED");
  EXPECT_EQ(client->Deactivate(1).fm_name(), "FM_ST_NOT_CONFIGURED");
  EXPECT_EQ(client->GetUnsupportedPartitions().fm_name(), "FM_ST_NOT_CONFIGURED");
  ASSERT_TRUE(sim().SetMode(fmsim::Mode::kRunning).ok());
  EXPECT_TRUE(client->GetSupportedPartitions().ok());
}

TEST_F(FmClient, ResiliencyRestartWaitsForResync) {
  auto client = NewClient();
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Activate(1).ok());
  ASSERT_TRUE(client->Activate(5).ok());
  ASSERT_TRUE(sim().Restart(/*resiliency=*/true).ok());

  auto partitions = client->GetSupportedPartitions();  // reconnects, then refused
  EXPECT_EQ(partitions.fm_name(), "FM_ST_NOT_CONFIGURED");
  EXPECT_EQ(client->connection_state(), ConnectionState::kConnected);
  EXPECT_EQ(client->Activate(2).fm_name(), "FM_ST_NOT_CONFIGURED");
  EXPECT_EQ(client->Deactivate(1).fm_name(), "FM_ST_NOT_CONFIGURED");
  EXPECT_EQ(client->GetNvlinkFailedDevices().fm_name(), "FM_ST_NOT_SUPPORTED");

  const std::uint32_t still_active[] = {1};
  FmStatus resync = client->SetActivatedPartitions(still_active);
  ASSERT_TRUE(resync.ok()) << resync.error().message;
  EXPECT_EQ(Active(), (std::vector<std::uint32_t>{1}));
  auto mode = sim().GetMode();
  ASSERT_TRUE(mode.ok());
  EXPECT_EQ(*mode, fmsim::Mode::kRunning);
  partitions = client->GetSupportedPartitions();
  ASSERT_TRUE(partitions.ok());
  EXPECT_TRUE((*partitions)[1].active);
  EXPECT_FALSE((*partitions)[5].active);
  // A resync list is not accepted when FM is not waiting for one.
  EXPECT_EQ(client->SetActivatedPartitions(still_active).fm_name(), "FM_ST_NOT_SUPPORTED");
}

TEST_F(FmClient, ResyncWithEmptyListAndBadLists) {
  auto client = NewClient();
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Activate(1).ok());
  ASSERT_TRUE(sim().Restart(true).ok());
  const std::uint32_t overlapping[] = {0, 1};
  EXPECT_EQ(client->SetActivatedPartitions(overlapping).fm_name(), "FM_ST_BADPARAM");
  const std::uint32_t unknown[] = {77};
  EXPECT_EQ(client->SetActivatedPartitions(unknown).fm_name(), "FM_ST_BADPARAM");
  std::vector<std::uint32_t> too_many(65, 7);
  ASSERT_TRUE(sim().ClearCallLog().ok());
  FmStatus refused = client->SetActivatedPartitions(too_many);
  EXPECT_EQ(refused.fm_name(), "FM_ST_BADPARAM");
  EXPECT_FALSE(refused.error().from_library);
  EXPECT_TRUE(CallsOf("fmSetActivatedFabricPartitions").empty());  // never sent
  ASSERT_TRUE(client->SetActivatedPartitions({}).ok());
  EXPECT_TRUE(Active().empty());
}

TEST_F(FmClient, PlainRestartDeactivatesEverything) {
  auto client = NewClient();
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Activate(1).ok());
  ASSERT_TRUE(sim().Restart(/*resiliency=*/false).ok());
  auto partitions = client->GetSupportedPartitions();
  ASSERT_TRUE(partitions.ok()) << partitions.error().message;
  for (const PartitionInfo& p : *partitions) EXPECT_FALSE(p.active) << p.id;
  EXPECT_TRUE(client->Activate(1).ok());
}

TEST_F(FmClient, DegradedPartitionsAreReported) {
  auto client = NewClient();
  ASSERT_TRUE(client);
  auto unsupported = client->GetUnsupportedPartitions();
  ASSERT_TRUE(unsupported.ok());
  EXPECT_TRUE(unsupported->empty());
  auto failed = client->GetNvlinkFailedDevices();
  ASSERT_TRUE(failed.ok());
  EXPECT_TRUE(failed->gpus.empty());

  ASSERT_TRUE(sim().Degrade(3, 12).ok());
  auto partitions = client->GetSupportedPartitions();
  ASSERT_TRUE(partitions.ok());
  EXPECT_TRUE((*partitions)[3].degraded());
  EXPECT_EQ((*partitions)[3].nvlinks_available, 12u);
  EXPECT_EQ((*partitions)[3].max_nvlinks, 18u);
  EXPECT_FALSE((*partitions)[4].degraded());
  unsupported = client->GetUnsupportedPartitions();
  ASSERT_TRUE(unsupported.ok());
  EXPECT_EQ(*unsupported, (std::vector<std::uint32_t>{3}));
  failed = client->GetNvlinkFailedDevices();
  ASSERT_TRUE(failed.ok());
  ASSERT_EQ(failed->gpus.size(), 2u);  // GPUs 1 and 3
  EXPECT_EQ(failed->gpus[0].ports.size(), 6u);
  EXPECT_EQ(failed->gpus[0].pci_bus_id, "00000000:00:00.0");
  FmStatus activate = client->Activate(3);
  EXPECT_EQ(activate.fm_name(), "FM_ST_NVLINK_ERROR");
  EXPECT_TRUE(Contains(activate.error().message, "NVLink")) << activate.error().message;

  EXPECT_FALSE(sim().Degrade(3, 19).ok());
  ASSERT_TRUE(sim().Degrade(3, 18).ok());  // repaired
  EXPECT_TRUE(client->Activate(3).ok());
}

TEST_F(FmClient, DriftMadeBehindTheClientIsVisible) {
  auto client = NewClient();
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Activate(1).ok());
  ASSERT_TRUE(sim().DeactivateDirectly(1).ok());
  ASSERT_TRUE(sim().ActivateDirectly(6).ok());
  auto partitions = client->GetSupportedPartitions();
  ASSERT_TRUE(partitions.ok());
  EXPECT_FALSE((*partitions)[1].active);
  EXPECT_TRUE((*partitions)[6].active);
  EXPECT_FALSE(sim().ActivateDirectly(40).ok());
}

TEST_F(FmClient, StatePersistsAcrossClientsAndProcesses) {
  {
    auto first = NewClient();
    ASSERT_TRUE(first);
    ASSERT_TRUE(first->Activate(1).ok());
  }
  auto second = NewClient();
  ASSERT_TRUE(second);
  auto partitions = second->GetSupportedPartitions();
  ASSERT_TRUE(partitions.ok());
  EXPECT_TRUE((*partitions)[1].active);

  // A child process is another FM client: it sees and changes the same daemon state.
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto client = FabricManagerClient::Create(Config());
    bool ok = client.ok() && (*client)->Activate(2).ok() &&
              (*client)->Activate(1).fm_code() == abi::kInUse;
    _exit(ok ? 0 : 1);
  }
  int wait_status = 0;
  ASSERT_EQ(waitpid(child, &wait_status, 0), child);
  ASSERT_TRUE(WIFEXITED(wait_status));
  EXPECT_EQ(WEXITSTATUS(wait_status), 0);
  EXPECT_EQ(Active(), (std::vector<std::uint32_t>{1, 2}));
  partitions = second->GetSupportedPartitions();  // the parent's handle is still valid
  ASSERT_TRUE(partitions.ok());
  EXPECT_TRUE((*partitions)[2].active);
  bool child_logged = false;
  for (const auto& call : CallsOf("fmActivateFabricPartition")) child_logged |= call.pid == child;
  EXPECT_TRUE(child_logged);
}

TEST_F(FmClient, ConcurrentCallersAreSerialised) {
  auto client = NewClient();
  ASSERT_TRUE(client);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        if (!client->GetSupportedPartitions().ok()) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(CallsOf("fmGetSupportedFabricPartitions").size(), 20u);
}

TEST_F(FmClient, DisconnectClosesTheHandle) {
  auto client = NewClient();
  ASSERT_TRUE(client);
  ASSERT_TRUE(client->Connect().ok());
  client->Disconnect();
  EXPECT_EQ(client->connection_state(), ConnectionState::kDisconnected);
  auto disconnects = CallsOf("fmDisconnect");
  ASSERT_EQ(disconnects.size(), 1u);
  EXPECT_EQ(disconnects[0].code, 0);
  EXPECT_TRUE(client->GetSupportedPartitions().ok());  // connects again
}

}  // namespace
}  // namespace gfp::adapters::fm
