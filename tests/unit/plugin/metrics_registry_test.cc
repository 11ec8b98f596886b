#include "plugin/metrics/metrics_registry.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

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
  m.RecordDraPrepare(0.003);
  m.RecordApiRequest("create", "resourceslices", 201);
  m.RecordApiRequest("get", "resourceclaims", 200);
  m.RecordApiRequest("get", "resourceclaims", 200);
  m.RecordApiRequest("watch", "resourceslices", 0);
  GaugeValues g;
  g.devices = {{kH100, 7, 1}};
  g.partitions_active = 2;
  g.partitions_free = {{1, 5}, {2, 2}, {4, 0}, {8, 0}};
  g.fabric_manager_up = true;
  g.journal_last_seq = 1234;
  g.journal_first_damaged_seq = 17;
  g.dra_claims_prepared = 3;
  g.resource_slice_generation = 12;
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
  EXPECT_EQ(SampleValue(text, "gpu_fabric_dra_prepare_seconds_count"), 1);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_dra_prepare_seconds_bucket{le=\"0.0025\"}"), 0);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_dra_prepare_seconds_bucket{le=\"0.005\"}"), 1);
  EXPECT_EQ(SampleValue(text,
                        "gpu_fabric_api_requests_total{code=\"201\",resource=\"resourceslices\","
                        "verb=\"create\"}"),
            1);
  EXPECT_EQ(SampleValue(text,
                        "gpu_fabric_api_requests_total{code=\"200\",resource=\"resourceclaims\","
                        "verb=\"get\"}"),
            2);
  EXPECT_EQ(SampleValue(text,
                        "gpu_fabric_api_requests_total{code=\"none\",resource=\"resourceslices\","
                        "verb=\"watch\"}"),
            1);
}

// The prepare histogram has the buckets of gpu_fabric_allocate_seconds.
TEST(MetricsRegistryTest, DraPrepareHasTheBucketsOfAllocate) {
  MetricsRegistry m("1.2.3");
  m.RecordAllocate(kH100, 1, true, 0.1);
  m.RecordDraPrepare(0.1);
  std::vector<std::string> allocate, prepare;
  std::istringstream in(m.Serialize());
  std::string line;
  const std::string allocate_prefix =
      std::string("gpu_fabric_allocate_seconds_bucket{resource=\"") + kH100 + "\",";
  const std::string prepare_prefix = "gpu_fabric_dra_prepare_seconds_bucket{";
  while (std::getline(in, line)) {
    if (line.rfind(allocate_prefix, 0) == 0)
      allocate.push_back(line.substr(allocate_prefix.size()));
    if (line.rfind(prepare_prefix, 0) == 0) prepare.push_back(line.substr(prepare_prefix.size()));
  }
  EXPECT_EQ(allocate.size(), 15u);  // 14 bounds and +Inf
  EXPECT_EQ(prepare, allocate);
}

// Before anything happened: the DRA families without labels read 0 (in either mode); the
// request counter has no series until the first request.
TEST(MetricsRegistryTest, DraFamiliesAreThereBeforeAnythingHappened) {
  MetricsRegistry m("1.2.3");
  const std::string text = m.Serialize();
  EXPECT_EQ(SampleValue(text, "gpu_fabric_dra_claims_prepared"), 0);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_dra_prepare_seconds_count"), 0);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_resource_slice_generation"), 0);
  EXPECT_EQ(ReadExposition(text).count("gpu_fabric_api_requests_total"), 0u);
}

// A hostile or broken API server (or a caller's slip) cannot grow the label set: unknown verbs
// and resources count as "other", statuses outside 100-599 as "none".
TEST(MetricsRegistryTest, ApiRequestLabelsAreBounded) {
  MetricsRegistry m("1.2.3");
  m.RecordApiRequest("DELETE-ALL", "resourceslices", 200);
  m.RecordApiRequest("get", std::string(10 * 1024, 'x'), 404);
  m.RecordApiRequest("patch", "nodes", 999);
  m.RecordApiRequest("patch", "nodes", 99);
  m.RecordApiRequest("patch", "nodes", -1);
  m.RecordApiRequest("list", "pods", 600);
  m.RecordApiRequest("update", "resourceslices", 100);
  m.RecordApiRequest("delete", "resourceslices", 599);
  const std::string text = m.Serialize();
  const auto series = [&](const char* code, const char* resource, const char* verb) {
    return SampleValue(text, std::string("gpu_fabric_api_requests_total{code=\"") + code +
                                 "\",resource=\"" + resource + "\",verb=\"" + verb + "\"}");
  };
  EXPECT_EQ(series("200", "resourceslices", "other"), 1);
  EXPECT_EQ(series("404", "other", "get"), 1);
  EXPECT_EQ(series("none", "nodes", "patch"), 3);
  EXPECT_EQ(series("none", "other", "list"), 1);
  EXPECT_EQ(series("100", "resourceslices", "update"), 1);
  EXPECT_EQ(series("599", "resourceslices", "delete"), 1);
  EXPECT_EQ(text.find(std::string(64, 'x')), std::string::npos);
  EXPECT_EQ(text.find("DELETE-ALL"), std::string::npos);
  std::size_t samples = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    samples += line.rfind("gpu_fabric_api_requests_total{", 0) == 0;
  }
  EXPECT_EQ(samples, 6u);
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
  EXPECT_EQ(SampleValue(text, "gpu_fabric_dra_claims_prepared"), 3);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_resource_slice_generation"), 12);

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
  EXPECT_EQ(SampleValue(text, "gpu_fabric_dra_claims_prepared"), 0);
  EXPECT_EQ(SampleValue(text, "gpu_fabric_resource_slice_generation"), 0);
}

}  // namespace
}  // namespace gfp::plugin::metrics
