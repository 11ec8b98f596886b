// I/O-error sweep (issue 11 §1). For each seeded workload: count its xWrite, xSync, xOpen and
// xTruncate calls in a run without faults, then replay it with the nth call of one kind failing
// (SQLITE_IOERR_* or SQLITE_FULL, alternating; every fifth one sticky until the step ends). After
// the step in which the fault fired, check:
//   - a request that failed because of it names the journal, and a full disk is
//     ResourceExhausted (kubelet and the log must say what to fix);
//   - reads keep working: the state, Journal::ForEach, the kubelet's device list (ListAndWatch)
//     and GetPreferredAllocation (which fails closed, naming the journal, while the last FM sync
//     could not be journaled, and must work again after the next reconcile);
//   - once the fault has cleared, the next append succeeds (a journaled kubelet restart);
// and at the end of the workload, RebootAndCheck: nothing acknowledged is lost, the journal
// verifies and replays, recovery converges.
//
// Reproduce a failure with the line it prints (GFP_POWERCUT_SEED, GFP_IOFAULT_OP,
// GFP_POWERCUT_CUT).
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <map>

#include "common/fault_vfs.h"
#include "fault/powercut/recovery_check.h"
#include "fault/powercut/sweep_options.h"
#include "fault/powercut/workload.h"

namespace gfp::faulttest {
namespace {

namespace fault = gfp::testing::fault;

// CI size: every fault point of 2 workloads (326 fault points; 1 workload in sanitizer builds).
constexpr std::uint64_t kCiIoErrorSeeds = kSanitizerBuild ? 1 : 2;
constexpr std::uint64_t kCiPointsPerOp = 1000;

constexpr fault::IoOp kOps[] = {fault::IoOp::kWrite, fault::IoOp::kSync, fault::IoOp::kOpen,
                                fault::IoOp::kTruncate};

int IoErrorFor(fault::IoOp op) {
  switch (op) {
    case fault::IoOp::kWrite:
      return SQLITE_IOERR_WRITE;
    case fault::IoOp::kSync:
      return SQLITE_IOERR_FSYNC;
    case fault::IoOp::kOpen:
      return SQLITE_CANTOPEN;
    case fault::IoOp::kTruncate:
      return SQLITE_IOERR_TRUNCATE;
  }
  return SQLITE_IOERR;
}

class IoErrorSweep : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::getenv("GFP_POWERCUT_LOG") == nullptr) spdlog::set_level(spdlog::level::off);
    ASSERT_EQ(fault::InstallFaultVfs(), "");
  }
};

fault::IoCounters CountCalls(std::uint64_t seed) {
  RunDir dir;
  fault::ResetFaultVfs();
  Workload w(seed, dir.path(), WorkloadSteps());
  Status ran = w.Run();
  EXPECT_TRUE(ran.ok()) << ran.message();
  const fault::IoCounters counters = fault::Counters();
  EXPECT_EQ(RebootAndCheck(w, Reboot{}).failure, "") << "seed " << seed << " without a fault";
  return counters;
}

struct Tally {
  std::uint64_t runs = 0, fired = 0, failed_requests = 0, decisions = 0, lost = 0, failures = 0;
  std::map<std::string, std::uint64_t> by_kind;
};

// The checks right after the step in which the fault fired; "" when they hold.
std::string CheckAfterFault(Workload& w, const std::vector<CallResult>& calls, int code,
                            Tally* tally) {
  const std::string journal = w.world().config().journal.string();
  for (const CallResult& c : calls) {
    if (!c.fault_fired || c.status.ok()) continue;
    ++tally->failed_requests;
    if (c.status.message().find(journal) == std::string::npos) {
      return c.call + " failed without naming the journal " + journal + ": " + c.status.message();
    }
    if (code == SQLITE_FULL && c.status.code() != ErrorCode::kResourceExhausted) {
      return c.call + " failed on a full disk with kind " +
             std::string(ErrorCodeName(c.status.code())) +
             " instead of ResourceExhausted: " + c.status.message();
    }
  }
  if (!w.world().plugin_up()) return "";  // a failed start: the next step starts it again
  auto& core = w.world().core();
  auto& journal_ref = core.engine().journal();
  std::uint64_t read = 0;
  Status scanned = journal_ref.ForEach(1, 0, [&](const store::StoredEvent&) {
    ++read;
    return Status::Ok();
  });
  if (!scanned.ok()) return "reading the journal after the fault: " + scanned.message();
  if (read != journal_ref.LastSeq()) {
    return "the journal reads " + std::to_string(read) +
           " events after the fault, its last seq is " + std::to_string(journal_ref.LastSeq());
  }
  const auto devices = core.Devices(w.world().resource());
  if (devices.empty()) return "no devices listed for kubelet after the fault";
  std::vector<std::string> ids;
  for (const auto& d : devices) ids.push_back(d.id);
  // GPA needs FM's partition table as journaled: when a sync could not journal it, the plugin
  // fails closed (FM "not usable", naming the journal) until the next reconcile syncs again.
  if (auto preferred = core.Preferred(w.world().resource(), ids, {}, 1); !preferred.ok()) {
    const std::string why = preferred.status().message();
    if (why.find(journal) == std::string::npos) {
      return "GetPreferredAllocation after the fault failed without naming the journal: " + why;
    }
    w.world().Advance(1'000'000);
    core.Reconcile(w.PodResources());
    if (auto again = core.Preferred(w.world().resource(), ids, {}, 1); !again.ok()) {
      return "GetPreferredAllocation still fails after the fault cleared and a reconcile: " +
             again.status().message();
    }
  }
  const std::uint64_t before = journal_ref.LastSeq();
  core.ObserveKubeletRestart("probe after an I/O error");
  if (journal_ref.LastSeq() <= before) return "the first append after the fault cleared failed";
  return "";
}

void RunOne(std::uint64_t seed, fault::IoOp op, std::uint64_t nth, Tally* tally) {
  RunDir dir;
  fault::ResetFaultVfs();
  const int code = nth % 2 == 1 ? IoErrorFor(op) : SQLITE_FULL;
  const bool sticky = nth % 5 == 0;
  fault::ArmFault(op, nth, code, sticky);
  Workload w(seed, dir.path(), WorkloadSteps());
  std::string failure, where;
  bool checked = false;
  Status ran = w.Run([&](const std::vector<CallResult>& calls) {
    if (checked || fault::FaultsFired() == 0) return;
    checked = true;
    where = w.Where();
    fault::ClearFaults();  // a sticky fault lasts one step
    failure = CheckAfterFault(w, calls, code, tally);
  });
  ++tally->runs;
  if (ran.ok() && !checked) failure = "the fault never fired (the workload is not deterministic)";
  if (!ran.ok()) failure = ran.message();
  if (failure.empty()) {
    ++tally->fired;
    ++tally->by_kind[fault::IoOpName(op)];
    const RecoveryOutcome out = RebootAndCheck(w, Reboot{});
    tally->decisions += out.decisions;
    tally->lost += out.lost;
    failure = out.failure;
  }
  if (failure.empty()) return;
  ++tally->failures;
  ADD_FAILURE() << fault::IoOpName(op) << " #" << nth << " failing with SQLite code " << code
                << (sticky ? " (sticky for the step)" : "") << " during " << where << ": "
                << failure << "\n  reproduce: GFP_POWERCUT_SEED=" << seed
                << " GFP_POWERCUT_SEEDS=1 GFP_IOFAULT_OP=" << fault::IoOpName(op)
                << " GFP_POWERCUT_CUT=" << nth
                << " ./fault_powercut_test --gtest_filter=IoErrorSweep.*";
}

TEST_F(IoErrorSweep, FailedIoFailsTheRequestCleanlyAndTheNextAppendSucceeds) {
  const SweepOptions options = SweepOptions::FromEnv(kCiIoErrorSeeds, kCiPointsPerOp);
  const char* only_op = std::getenv("GFP_IOFAULT_OP");
  TimeBox box;
  Tally tally;
  for (std::uint64_t seed = options.first_seed; seed < options.first_seed + options.seeds; ++seed) {
    const fault::IoCounters counts = CountCalls(seed);
    for (const fault::IoOp op : kOps) {
      if (only_op != nullptr && std::string(only_op) != fault::IoOpName(op)) continue;
      for (const std::uint64_t nth : options.Pick(counts.of(op), seed)) {
        if (box.Spent()) break;
        RunOne(seed, op, nth, &tally);
        if (tally.failures >= 5) FAIL() << "stopping after 5 failures";
      }
    }
  }
  const long long ms = box.elapsed_ms();
  std::string kinds;
  for (const auto& [k, v] : tally.by_kind)
    kinds += (kinds.empty() ? "" : ", ") + k + " " + std::to_string(v);
  std::printf(
      "I/O-error sweep: %llu fault points (%s) in %llu seeds, %llu failed requests "
      "checked, %llu acknowledged decisions checked, %llu acknowledged decisions lost, "
      "%lld ms\n",
      static_cast<unsigned long long>(tally.fired), kinds.c_str(),
      static_cast<unsigned long long>(options.seeds),
      static_cast<unsigned long long>(tally.failed_requests),
      static_cast<unsigned long long>(tally.decisions), static_cast<unsigned long long>(tally.lost),
      static_cast<long long>(ms));
  EXPECT_EQ(tally.lost, 0u);
}

}  // namespace
}  // namespace gfp::faulttest
