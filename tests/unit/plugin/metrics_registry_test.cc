#include "plugin/metrics/metrics_registry.h"

#include <gtest/gtest.h>

#include "integration/plugin/metrics_http.h"

namespace gfp::plugin::metrics {
namespace {

using gfp::testing::ReadExposition;
using gfp::testing::SampleValue;
using gfp::testing::SpecFamilies;

constexpr const char* kH100 = "nvidia.com/GH100_H100_SXM5_80GB";

// A registry where every family has at least one sample.
void RecordEverything(MetricsRegistry& m) {
  m.RecordAllocate(kH100, 2, true, 0.004);
  m.RecordAllocate(kH100, 1, false, 0.0005);
  m.RecordPartitionOperation(PartitionOperation::kActivate, true, "FM_ST_SUCCESS");
  m.RecordPartitionOperation(PartitionOperation::kDeactivate, false, "FM_ST_UNINITIALIZED");
  m.RecordPartitionOperation(PartitionOperation::kResync, true, "FM_ST_SUCCESS");
  m.RecordDrift(DriftKind::kLost);
  m.RecordJournalAppend(0.002);
  m.RecordReconcile(0.03);
  m.RecordPodResourcesError();
  GaugeValues g;
  g.devices = {{kH100, 7, 1}};
  g.partitions_active = 2;
  g.partitions_free = {{1, 5}, {2, 2}, {4, 0}, {8, 0}};
  g.fabric_manager_up = true;
  g.journal_last_seq = 1234;
  g.journal_first_damaged_seq = 17;
  m.Publish(g);
}

TEST(MetricsRegistryTest, ExposesExactlyTheSpecFamiliesWithExactlyTheirLabels) {
  MetricsRegistry m("1.2.3");
  RecordEverything(m);
  const auto exposed = ReadExposition(m.Serialize());
  std::set<std::string> names;
  for (const auto& [name, family] : exposed) names.insert(name);
  std::set<std::string> expected;
  for (const auto& [name, spec] : SpecFamilies()) expected.insert(name);
  EXPECT_EQ(names, expected);
  for (const auto& [name, spec] : SpecFamilies()) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(exposed.count(name));
    EXPECT_EQ(exposed.at(name).type, spec.type);
    EXPECT_EQ(exposed.at(name).label_sets, std::set<std::set<std::string>>{spec.labels});
  }
}

TEST(MetricsRegistryTest, CountersAndHistogramsCountWhatWasRecorded) {
  MetricsRegistry m("1.2.3");
  RecordEverything(m);
  const std::string text = m.Serialize();
  const std::string h100 = std::string("resource=\"") + kH100 + "\"";
  EXPECT_EQ(SampleValue(text, "gpu_fabric_build_info{version=\"1.2.3\"}"), 1);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_allocations_total{" + h100 + ",result=\"granted\"}"), 2);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_allocations_total{" + h100 + ",result=\"rejected\"}"), 1);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_allocate_seconds_count{" + h100 + "}"), 2);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_allocate_seconds_bucket{" + h100 + ",le=\"0.001\"}"), 1);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_allocate_seconds_bucket{" + h100 + ",le=\"0.005\"}"), 2);
  EXPECT_EQ(SampleValue(text,
                        "gpu_fabric_partition_operations_total{fm_code=\"FM_ST_SUCCESS\","
                        "operation=\"activate\",result=\"ok\"}"),
            1);
  EXPECT_EQ(SampleValue(text,
                        "gpu_fabric_partition_operations_total{fm_code=\"FM_ST_UNINITIALIZED\","
                        "operation=\"deactivate\",result=\"failed\"}"),
            1);
  EXPECT_EQ(SampleValue(text,
                        "gpu_fabric_partition_operations_total{fm_code=\"FM_ST_SUCCESS\","
                        "operation=\"resync\",result=\"ok\"}"),
            1);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_drift_total{kind=\"lost\"}"), 1);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_drift_total{kind=\"activated_elsewhere\"}"), 0);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_journal_append_seconds_count"), 1);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_reconcile_seconds_count"), 1);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_pod_resources_errors_total"), 1);
}

TEST(MetricsRegistryTest, GaugesShowWhatWasPublished) {
  MetricsRegistry m("1.2.3");
  RecordEverything(m);
  std::string text = m.Serialize();
  const std::string h100 = std::string("resource=\"") + kH100 + "\"";
  EXPECT_EQ(SampleValue(text, "gpu_fabric_devices{health=\"healthy\"," + h100 + "}"), 7);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_devices{health=\"unhealthy\"," + h100 + "}"), 1);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_partitions_active"), 2);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_partitions_free{size=\"1\"}"), 5);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_partitions_free{size=\"2\"}"), 2);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_partitions_free{size=\"8\"}"), 0);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_fabric_manager_up"), 1);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_journal_last_seq"), 1234);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_journal_first_damaged_seq"), 17);

  // A later publish replaces the values; a size no longer listed reads 0, not its old count.
  GaugeValues later;
  later.devices = {{kH100, 8, 0}};
  later.partitions_free = {{2, 1}};
  m.Publish(later);
  text = m.Serialize();
  EXPECT_EQ(SampleValue(text, "gpu_fabric_devices{health=\"unhealthy\"," + h100 + "}"), 0);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_partitions_free{size=\"1\"}"), 0);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_partitions_free{size=\"2\"}"), 1);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_fabric_manager_up"), 0);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_journal_first_damaged_seq"), 0);
}

}  // namespace
}  // namespace gfp::plugin::metrics
