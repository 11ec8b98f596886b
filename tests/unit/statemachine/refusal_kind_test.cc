// Every refusal of a request carries a kind, and RefusalErrorCode maps each kind to the error
// code kubelet gets (issue 9 item 4): the caller's mistake, a state that does not allow it,
// Fabric Manager not usable, Fabric Manager's own refusal (by its code), an interrupted request.
#include <gtest/gtest.h>

#include "common/sm_fixtures.h"
#include "fm_codes/fm_codes.h"
#include "statemachine/recovery.h"

namespace gfp::sm {
namespace {

using gfp::testing::Driver;
using gfp::testing::FmError;
using gfp::testing::FmOk;
using gfp::testing::H100Node;
using gfp::testing::Modules;

class RefusalKindTest : public ::testing::Test {
 protected:
  void SetUp() override { d.Boot(node); }

  // Runs `command` and every effect it leads to with `outcome`; the last refusing decision.
  Decision LastRefusal(
      const Command& command, const std::function<events::FmResult(const Effect&)>& outcome =
                                  [](const Effect&) { return FmOk(); }) {
    Decision refused = d.Run(command);
    std::vector<Effect> effects = refused.effects;
    while (!effects.empty()) {
      const Effect effect = effects.front();
      effects.erase(effects.begin());
      Decision next = d.Run(OutcomeOf(effect, ++d.now, outcome(effect)));
      effects.insert(effects.end(), next.effects.begin(), next.effects.end());
      if (!next.refusal.empty()) refused = std::move(next);
    }
    return refused;
  }

  void ExpectKind(const Decision& decision, RefusalKind kind, ErrorCode code,
                  const std::string& what) {
    SCOPED_TRACE(what);
    EXPECT_FALSE(decision.refusal.empty()) << "not refused";
    EXPECT_EQ(decision.refusal_kind, kind) << decision.refusal;
    EXPECT_EQ(RefusalErrorCode(decision), code) << decision.refusal;
  }

  gfp::testing::NodeFixture node = H100Node();
  Driver d;
};

TEST(RefusalErrorCode, EachKindHasItsCode) {
  EXPECT_EQ(RefusalErrorCode(RefusalKind::kNone), ErrorCode::kOk);
  EXPECT_EQ(RefusalErrorCode(RefusalKind::kInvalidRequest), ErrorCode::kInvalidArgument);
  EXPECT_EQ(RefusalErrorCode(RefusalKind::kNotServable), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(RefusalErrorCode(RefusalKind::kFabricManagerUnusable), ErrorCode::kUnavailable);
  EXPECT_EQ(RefusalErrorCode(RefusalKind::kInterrupted), ErrorCode::kUnavailable);
}

TEST(RefusalErrorCode, FabricManagersRefusalHasItsCodesCategory) {
  const auto refused = [](int code) {
    return RefusalErrorCode(RefusalKind::kFabricManagerRefused, code);
  };
  EXPECT_EQ(refused(fm_codes::kInUse), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(refused(fm_codes::kGenericError), ErrorCode::kInternal);
  EXPECT_EQ(refused(fm_codes::kNotConfigured), ErrorCode::kUnavailable);
  EXPECT_EQ(refused(fm_codes::kConnectionNotValid), ErrorCode::kUnavailable);
  EXPECT_EQ(refused(fm_codes::kTimeout), ErrorCode::kDeadlineExceeded);
  EXPECT_EQ(refused(fm_codes::kResourceExhausted), ErrorCode::kResourceExhausted);
  EXPECT_EQ(refused(fm_codes::kBadParam), ErrorCode::kInvalidArgument);
  // A code FM does not document, or "success" on a refusal, is still a failure.
  EXPECT_EQ(refused(-42), ErrorCode::kInternal);
  EXPECT_EQ(refused(fm_codes::kSuccess), ErrorCode::kInternal);
}

TEST_F(RefusalKindTest, TheCallersMistakeIsAnInvalidRequest) {
  const std::string a = Modules(node, {1})[0];
  ExpectKind(d.Run(d.Request(node.resource, {a, "0000:ee:00.0"})), RefusalKind::kInvalidRequest,
             ErrorCode::kInvalidArgument, "unknown id");
  ExpectKind(d.Run(d.Request(node.resource, {a, a})), RefusalKind::kInvalidRequest,
             ErrorCode::kInvalidArgument, "repeated id");
  ExpectKind(d.Run(d.Request(node.resource, {"../x"})), RefusalKind::kInvalidRequest,
             ErrorCode::kInvalidArgument, "malformed id");
  ExpectKind(d.Run(d.Request(node.resource, {})), RefusalKind::kInvalidRequest,
             ErrorCode::kInvalidArgument, "no id");
  ExpectKind(d.Run(d.Request("nvidia.com/OTHER", {a})), RefusalKind::kInvalidRequest,
             ErrorCode::kInvalidArgument, "another resource");
}

TEST_F(RefusalKindTest, GpusThatCannotBeServedNowAreNotServable) {
  ExpectKind(d.Run(d.Request(node.resource, Modules(node, {1, 2, 3}))), RefusalKind::kNotServable,
             ErrorCode::kFailedPrecondition, "no partition of that size");
  ExpectKind(d.Run(d.Request(node.resource, Modules(node, {1, 2}))), RefusalKind::kNotServable,
             ErrorCode::kFailedPrecondition, "GPUs of two partitions");
  d.Run(ObserveDeviceHealth{d.now, Modules(node, {2})[0], false, "/dev/vfio/11 removed"});
  ExpectKind(d.Run(d.Request(node.resource, Modules(node, {2}))), RefusalKind::kNotServable,
             ErrorCode::kFailedPrecondition, "unhealthy GPU");

  auto partitions = gfp::testing::PartitionsOf(node);
  partitions[3].set_nvlinks_available(12);  // partition 3 (modules 1,3)
  ObserveFabricState table;
  table.now = ++d.now;
  table.partitions = partitions;
  d.Run(table);
  ExpectKind(d.Run(d.Request(node.resource, Modules(node, {1, 3}))), RefusalKind::kNotServable,
             ErrorCode::kFailedPrecondition, "degraded partition");
}

TEST_F(RefusalKindTest, BusyPartitionIsNotServable) {
  // An activation of partition 7 (module 1) is in flight: a request of the same GPU must wait.
  ASSERT_EQ(d.Run(d.Request(node.resource, Modules(node, {1}))).effects.size(), 1u);
  ExpectKind(d.Run(d.Request(node.resource, Modules(node, {1}))), RefusalKind::kNotServable,
             ErrorCode::kFailedPrecondition, "pending transition");
}

TEST_F(RefusalKindTest, FabricManagerNotConnectedIsUnusable) {
  ObserveFabricManagerConnection down;
  down.now = ++d.now;
  down.connected = false;
  down.reason = "connection lost";
  d.Run(down);
  ExpectKind(d.Run(d.Request(node.resource, Modules(node, {1}))),
             RefusalKind::kFabricManagerUnusable, ErrorCode::kUnavailable, "FM down");
}

TEST_F(RefusalKindTest, FabricManagersRefusalCarriesItsCode) {
  const Decision refused = LastRefusal(
      d.Request(node.resource, Modules(node, {1, 3})),
      [](const Effect&) { return FmError(fm_codes::kGenericError, "FM_ST_GENERIC_ERROR"); });
  ExpectKind(refused, RefusalKind::kFabricManagerRefused, ErrorCode::kInternal, "GENERIC_ERROR");
  EXPECT_EQ(refused.refusal_fm_code, fm_codes::kGenericError);
  const Decision not_ready =
      LastRefusal(d.Request(node.resource, Modules(node, {1, 3})),
                  [](const Effect&) { return FmError(fm_codes::kNotReady, "FM_ST_NOT_READY"); });
  ExpectKind(not_ready, RefusalKind::kFabricManagerRefused, ErrorCode::kUnavailable, "NOT_READY");
}

TEST_F(RefusalKindTest, InterruptedRequestsAreInterrupted) {
  ASSERT_EQ(d.Run(d.Request(node.resource, Modules(node, {1, 3}))).effects.size(), 1u);
  // Recovered as not applied: no FM code, the request is interrupted.
  const auto outcomes = ResolvePendingIntents(d.state, {}, ++d.now);
  ASSERT_EQ(outcomes.size(), 1u);
  ExpectKind(d.Run(outcomes[0]), RefusalKind::kInterrupted, ErrorCode::kUnavailable,
             "recovered as not applied");

  // A request left without a transition.
  events::Event e;
  e.set_time_unix_micros(++d.now);
  e.mutable_allocation_requested()->set_allocation_id("alloc-77");
  e.mutable_allocation_requested()->set_resource(node.resource);
  d.Commit({e});
  ExpectKind(d.Run(AbandonInterruptedRequests{++d.now}), RefusalKind::kInterrupted,
             ErrorCode::kUnavailable, "abandoned");
}

TEST_F(RefusalKindTest, PreStartOfDevicesNoAllocationHoldsIsNotServable) {
  ExpectKind(d.Run(EnsurePartitionActive{++d.now, Modules(node, {1, 3})}),
             RefusalKind::kNotServable, ErrorCode::kFailedPrecondition, "no allocation");
}

TEST(FmCodeTable, NamesCategoriesAndUnknownCodes) {
  EXPECT_EQ(fm_codes::Name(fm_codes::kInUse), "FM_ST_IN_USE");
  EXPECT_EQ(fm_codes::Name(fm_codes::kPartitionRouteProgrammingError),
            "FM_ST_PARTITION_ROUTE_PROGRAMMING_ERROR");
  EXPECT_EQ(fm_codes::Name(-30), "FM_ST_UNKNOWN(-30)");
  EXPECT_EQ(fm_codes::Name(1), "FM_ST_UNKNOWN(1)");
  EXPECT_EQ(fm_codes::Find(-30), nullptr);
  EXPECT_EQ(fm_codes::Category(fm_codes::kSuccess), ErrorCode::kOk);
  EXPECT_EQ(fm_codes::Category(-30), ErrorCode::kInternal);
  for (int code = 0; code >= fm_codes::kLowestKnown; --code) {
    ASSERT_NE(fm_codes::Find(code), nullptr) << code;
    EXPECT_EQ(fm_codes::Find(code)->name.substr(0, 6), "FM_ST_") << code;
  }
}

}  // namespace
}  // namespace gfp::sm
