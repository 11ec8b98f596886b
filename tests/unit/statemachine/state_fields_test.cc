// One definition per fact (issue 19): every field of State is in snapshot.proto, survives the
// snapshot codec, is seen by operator== and named by StateDiff. A field added to State and
// forgotten in the snapshot fails EveryFieldHasAChange (no change for it in
// tests/common/state_fields.h) and, once it has one, EveryFieldSurvivesTheSnapshot.
#include "common/state_fields.h"

#include <gmock/gmock.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "statemachine/snapshot_codec.h"
#include "statemachine/state_diff.h"

namespace gfp::sm {
namespace {

using gfp::testing::FieldChanges;
using gfp::testing::FieldCount;
using gfp::testing::StateWithEveryPart;
using ::testing::HasSubstr;

bool SameSnapshot(const State& a, const State& b) {
  return google::protobuf::util::MessageDifferencer::Equals(SnapshotOf(a), SnapshotOf(b));
}

TEST(StateFields, EveryFieldHasAChange) {
  std::map<std::string, std::size_t> changes;
  for (const auto& c : FieldChanges()) ++changes[c.field.substr(0, c.field.find('.'))];
  const std::map<std::string, std::size_t> fields = {
      {"State", FieldCount<State>()},
      {"DeviceState", FieldCount<DeviceState>()},
      {"PartitionState", FieldCount<PartitionState>()},
      {"Allocation", FieldCount<Allocation>()},
      {"PendingIntent", FieldCount<PendingIntent>()},
      {"ActivePartition", FieldCount<ActivePartition>()},
      {"Anomaly", FieldCount<Anomaly>()},
      {"Claim", FieldCount<Claim>()},
      {"UnpreparingClaim", FieldCount<UnpreparingClaim>()},
      {"ResourceSliceState", FieldCount<ResourceSliceState>()}};
  EXPECT_EQ(changes, fields)
      << "a struct of state.h has a field without a change in tests/common/state_fields.h: add "
         "the field to snapshot.proto and snapshot_codec.cc, bump kSnapshotFormatVersion, then "
         "give it a change there";
}

TEST(StateFields, TheBaseStateRoundTrips) {
  const State base = StateWithEveryPart();
  auto decoded = DecodeSnapshot(EncodeSnapshot(base));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_TRUE(*decoded == base) << StateDiff(base, *decoded);
}

// Each field alone: operator== sees it, the snapshot holds it (so the proto comparison agrees
// with operator==), the codec round-trips it, and StateDiff names it.
TEST(StateFields, EveryFieldSurvivesTheSnapshot) {
  const State base = StateWithEveryPart();
  for (const auto& c : FieldChanges()) {
    SCOPED_TRACE(c.field);
    State changed = base;
    c.change(changed);
    EXPECT_FALSE(changed == base) << "operator== does not see " << c.field;
    if (!c.in_snapshot) {
      EXPECT_TRUE(SameSnapshot(changed, base));
      continue;
    }
    EXPECT_FALSE(SameSnapshot(changed, base)) << "snapshot.proto does not hold " << c.field;
    auto decoded = DecodeSnapshot(EncodeSnapshot(changed));
    ASSERT_TRUE(decoded.ok()) << decoded.status().message();
    EXPECT_TRUE(*decoded == changed) << "lost in the snapshot: " << StateDiff(changed, *decoded);
    EXPECT_THAT(StateDiff(base, changed), HasSubstr("differs in "));
  }
}

// Every message of snapshot.proto as "Message{number:name:type,...}": what decides whether an
// older snapshot still decodes to the same state.
std::string SnapshotSchema() {
  std::string out;
  const auto* file = snapshot::State::descriptor()->file();
  for (int m = 0; m < file->message_type_count(); ++m) {
    const auto* message = file->message_type(m);
    out += message->name() + "{";
    for (int f = 0; f < message->field_count(); ++f) {
      const auto* field = message->field(f);
      out += std::to_string(field->number()) + ":" + field->name() + ":" + field->type_name() +
             (field->is_repeated() ? "*" : "") + ",";
    }
    out += "}";
  }
  return out;
}

// FNV-1a, 64 bits: a short fingerprint that is the same on every build.
std::string Fingerprint(const std::string& text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(hash));
  return out;
}

// A snapshot is trusted only when its format_version is this binary's: a changed snapshot.proto
// with the old version would restore states that lack (or misread) the changed fields.
TEST(StateFields, SnapshotFormatVersionFollowsSnapshotProto) {
  EXPECT_EQ(std::make_pair(kSnapshotFormatVersion, Fingerprint(SnapshotSchema())),
            std::make_pair(4u, std::string("6e3bd2c14aab3f57")))
      << "snapshot.proto changed: bump kSnapshotFormatVersion (snapshot_codec.h), then put the "
         "new version and fingerprint here";
}

TEST(StateDiff, NamesThePathAndBothValues) {
  const State base = StateWithEveryPart();
  EXPECT_EQ(StateDiff(base, base), "");
  State changed = base;
  changed.allocations["alloc-1"].status = AllocationStatus::kReleased;
  changed.devices.mutable_value()["0000:1b:00.4"].healthy = true;
  // Sorts before partition 3: matched by key, 3 is unchanged and 2 is new.
  changed.partitions.mutable_value()[2] = {2, {2}, 18, 18, false};
  EXPECT_EQ(StateDiff(base, changed),
            "differs in devices[\"0000:1b:00.4\"].healthy: false -> true; "
            "partitions[2]: only in actual; allocations[\"alloc-1\"].status: 2 -> 3 "
            "(at seq 12 vs 12)");
}

TEST(StateDiff, NamesAFieldOutsideTheSnapshot) {
  const State base = StateWithEveryPart();
  State changed = base;
  changed.bdf_of_module.mutable_value()[9] = "x";
  EXPECT_THAT(StateDiff(base, changed), HasSubstr("bdf_of_module"));
}

}  // namespace
}  // namespace gfp::sm
