// Event and snapshot codecs: round trips, and hostile records reported as corruption.
#include <gtest/gtest.h>

#include <cstdio>
#include <ctime>
#include <random>

#include "common/sm_fixtures.h"
#include "journal_text/event_summary.h"
#include "statemachine/event_codec.h"
#include "statemachine/snapshot.pb.h"
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
  EXPECT_THAT(journal_text::SummarizeEvent(e), HasSubstr("bound to vms/"));
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

// Found by fuzz_snapshot_decode: a snapshot listing one GPU twice (or one module id for two GPUs)
// decoded into a state whose two module maps disagree (module 5 -> a GPU that maps to module 2),
// breaking the one-to-one invariant, and encoding that state lost the stale entry. Such a
// snapshot is refused, so recovery skips it and replays the journal instead.
TEST(SnapshotCodec, RefusesAModuleTableThatIsNotOneToOne) {
  struct Second {
    const char* bdf;
    std::uint32_t module;
    const char* reason;
  };
  for (const Second& second : {Second{"0000:1b:00.0", 9, "GPU 0000:1b:00.0 to two module ids"},
                               Second{"0000:43:00.0", 8, "module id 8 to two GPUs"}}) {
    snapshot::State in;
    in.set_format_version(kSnapshotFormatVersion);
    auto* first = in.add_modules();
    first->set_bdf("0000:1b:00.0");
    first->set_module_id(8);
    auto* again = in.add_modules();
    again->set_bdf(second.bdf);
    again->set_module_id(second.module);
    auto decoded = DecodeSnapshot(in.SerializeAsString());
    if (decoded.ok()) {
      ADD_FAILURE() << "decoded a snapshot mapping " << second.reason;
      continue;
    }
    EXPECT_EQ(decoded.status().code(), ErrorCode::kDataLoss);
    EXPECT_NE(decoded.status().message().find(second.reason), std::string::npos)
        << decoded.status().message();
  }
}

// FormatRfc3339 does its own calendar arithmetic; gmtime_r is the reference.
TEST(Rfc3339, FormatsAsGmtimeDoesOverTenThousandYears) {
  std::mt19937_64 rng(7);  // fixed seed: a failure prints the micros
  for (int round = 0; round < 20000; ++round) {
    // From 1970 minus a bit to year 9999: the range %04d prints in four digits.
    const std::int64_t micros =
        static_cast<std::int64_t>(rng() % 253'402'300'800'000'000ULL) - 86'400'000'000LL;
    std::int64_t seconds = micros / 1'000'000;
    std::int64_t fraction = micros % 1'000'000;
    if (fraction < 0) {
      fraction += 1'000'000;
      seconds -= 1;
    }
    const std::time_t t = static_cast<std::time_t>(seconds);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char want[64];
    std::snprintf(want, sizeof want, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<long long>(fraction));
    ASSERT_EQ(FormatRfc3339(micros), want) << "micros " << micros;
  }
}

}  // namespace
}  // namespace gfp::sm
