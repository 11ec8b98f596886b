// Event and snapshot codecs: round trips, and hostile records reported as corruption.
#include <gtest/gtest.h>

#include "common/sm_fixtures.h"
#include "statemachine/event_codec.h"
#include "statemachine/snapshot_codec.h"

namespace gfp::sm {
namespace {

using ::testing::HasSubstr;

TEST(EventCodec, TypeNameIsTheOneofCaseInCamelCase) {
  events::Event e;
  e.mutable_partition_deactivation_requested()->set_partition_id(3);
  EXPECT_EQ(EventTypeName(e), "PartitionDeactivationRequested");
  EXPECT_EQ(EventTypeName(events::Event()), "");
}

TEST(EventCodec, RoundTripChecksColumnsAgainstPayload) {
  events::Event e;
  e.set_time_unix_micros(42);
  e.mutable_allocation_granted()->set_allocation_id("alloc-1");
  const std::string bytes = EncodeEvent(e);
  auto ok = DecodeEvent("AllocationGranted", 42, bytes);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->allocation_granted().allocation_id(), "alloc-1");
  EXPECT_THAT(DecodeEvent("AllocationRejected", 42, bytes).status().message(),
              HasSubstr("journal says type AllocationRejected"));
  EXPECT_THAT(DecodeEvent("AllocationGranted", 43, bytes).status().message(),
              HasSubstr("differs from the event's time"));
  EXPECT_THAT(DecodeEvent("AllocationGranted", 42, "\xff\xff\xff").status().message(),
              HasSubstr("does not decode"));
  // A body this binary does not know (a future event type) decodes to no body.
  events::Event future;
  future.set_time_unix_micros(42);
  std::string unknown = EncodeEvent(future) + std::string("\xfa\x3e\x00", 3);  // field 999, len 0
  EXPECT_THAT(DecodeEvent("FutureEvent", 42, unknown).status().message(),
              HasSubstr("no body this binary knows"));
}

TEST(EventCodec, JsonUsesProtoFieldNames) {
  events::Event e;
  e.mutable_allocation_bound()->set_pod_namespace("vms");
  EXPECT_THAT(EventFieldsJson(e), HasSubstr("\"pod_namespace\":\"vms\""));
  EXPECT_THAT(SummarizeEvent(e), HasSubstr("bound to vms/"));
}

TEST(EventCodec, Rfc3339RoundTrip) {
  EXPECT_EQ(FormatRfc3339(0), "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(FormatRfc3339(1'796'000'000'123'456), "2026-11-30T00:53:20.123456Z");
  auto t = ParseRfc3339("2026-11-30T00:53:20.123456Z");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, 1'796'000'000'123'456);
  auto offset = ParseRfc3339("2026-11-30T02:53:20+02:00");
  ASSERT_TRUE(offset.ok());
  EXPECT_EQ(*offset, 1'796'000'000'000'000);
  EXPECT_FALSE(ParseRfc3339("yesterday").ok());
  EXPECT_FALSE(ParseRfc3339("2026-11-30T00:53:20").ok());
}

TEST(SnapshotCodec, RoundTripOfABusyState) {
  gfp::testing::Driver d;
  auto node = gfp::testing::H100Node();
  d.Boot(node);
  ASSERT_EQ(d.RunToCompletion(d.Request(node.resource, gfp::testing::Modules(node, {1, 3}))), "");
  d.Run(d.Request(node.resource, gfp::testing::Modules(node, {5, 6, 7, 8})));  // left pending
  d.Run(ObserveDeviceHealth{d.now, node.bdfs_by_module[1], false, "gone"});
  auto decoded = DecodeSnapshot(EncodeSnapshot(d.state));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(*decoded, d.state);
  EXPECT_EQ(EncodeSnapshot(*decoded), EncodeSnapshot(d.state));
  EXPECT_FALSE(DecodeSnapshot("garbage\xff").ok());
}

}  // namespace
}  // namespace gfp::sm
