// Every bad input of SPEC §6 that reaches serve through Allocate / GetPreferredAllocation or its
// start-up files: a specific message, no crash, nothing activated, and `journal verify` still
// passes.
#include <fstream>

#include "integration/plugin/serve_fixture.h"

namespace gfp::testing {
namespace {

class BadInputTest : public ServeFixture {
 protected:
  // The call fails with a message containing `expected`, serve keeps running, FM untouched.
  template <typename Outcome>
  void ExpectRefused(const Outcome& outcome, const std::string& expected, const std::string& what) {
    SCOPED_TRACE(what);
    EXPECT_FALSE(outcome.ok()) << what << " was accepted";
    EXPECT_NE(outcome.status.error_message().find(expected), std::string::npos)
        << what << ": expected a message containing \"" << expected << "\", got "
        << Describe(outcome.status);
    EXPECT_TRUE(serve_->Running()) << what << " crashed serve";
    EXPECT_TRUE(ActivePartitions().empty()) << what << " activated a partition";
  }

  // serve must refuse to start, exit non-zero and name `file` and `problem` in its output.
  void ExpectStartupFailure(const std::string& file, const std::string& problem) {
    serve_ = Spawn(ServeArgs(), "serve");
    ASSERT_NE(serve_, nullptr);
    auto exit = serve_->WaitForExit(20s);
    ASSERT_TRUE(exit.has_value()) << "serve kept running with a bad " << file;
    EXPECT_TRUE(exit->exited && exit->code != 0) << exit->ToString();
    const std::string log = serve_->Log();
    EXPECT_NE(log.find(file), std::string::npos) << "the message does not name " << file;
    EXPECT_NE(log.find(problem), std::string::npos) << "the message does not say " << problem;
    EXPECT_FALSE(kubelet_->Resource(resource_).has_value()) << "it registered anyway";
    EXPECT_TRUE(ActivePartitions().empty());
    if (std::filesystem::exists(journal_)) ExpectJournalVerifies();
  }

  void WriteFile(const std::filesystem::path& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
    ASSERT_TRUE(out.good()) << path;
  }
};

TEST_F(BadInputTest, AllocateAndPreferredRejectBadDeviceIds) {
  Prepare({});
  StartServe();
  const auto gpus = node_.GpuBdfs();
  const std::string a = PartitionBdfs(3)[0];
  const std::string b = PartitionBdfs(3)[1];

  ExpectRefused(Allocate({{a, "0000:ee:00.0"}}), "unknown device 0000:ee:00.0", "unknown id");
  ExpectRefused(Allocate({{a, a}}), "device " + a + " is requested twice", "duplicate id");
  ExpectRefused(Allocate({{a, std::string(64, '1')}}), "is longer than 63 characters",
                "64-character id");
  ExpectRefused(Allocate({{a, "../../etc/passwd"}}), "contains a path or control character",
                "id with a path");
  ExpectRefused(Allocate({{a, "0000:1b:00.0\n"}}), "contains a path or control character",
                "id with a control character");
  ExpectRefused(Allocate({{}}), "empty allocation request", "empty container request");
  ExpectRefused(Allocate({}), "without container requests", "no container request");
  // An NVSwitch function is on the node but never a device of ours.
  ExpectRefused(Allocate({{node_.nvswitches[0].bdf}}), "unknown device " + node_.nvswitches[0].bdf,
                "NVSwitch BDF");
  // Three GPUs: no partition of that size.
  ExpectRefused(Allocate({{gpus[0], gpus[1], gpus[2]}}), "no partition has 3 GPUs",
                "size with no partition");
  // A second container with a bad id: nothing activated for the first one either.
  ExpectRefused(Allocate({{a, b}, {"0000:ee:00.0"}}), "container 1: unknown device",
                "second container bad");

  ExpectRefused(Preferred(gpus, {gpus[0], gpus[1], gpus[2]}, 2),
                "number of MustIncludeDeviceIDs (3) exceeds allocation size (2)",
                "must-include larger than size");
  ExpectRefused(Preferred(gpus, {}, 5), "no partition has 5 GPUs", "GPA size with no partition");
  ExpectRefused(Preferred(gpus, {}, 0), "allocation size 0", "GPA size 0");
  ExpectRefused(Preferred(gpus, {}, -1), "negative allocation size", "GPA negative size");

  // Still fully usable afterwards.
  auto good = Allocate({{a, b}});
  EXPECT_TRUE(good.ok()) << Describe(good.status);
  ExpectJournalVerifies();
}

TEST_F(BadInputTest, AllocateRejectsUnhealthyDevices) {
  ServeSetup setup;
  setup.reconcile_interval = "10m";  // Allocate itself must notice
  Prepare(setup);
  StartServe();
  const auto pair = PartitionBdfs(4);  // modules 2, 4

  // Driver changed behind our back (no inotify event for sysfs): Allocate re-checks the host.
  ASSERT_TRUE(node_.RebindDriver(pair[0], "nvidia").ok());
  ExpectRefused(Allocate({pair}), "device " + pair[0] + " is unhealthy", "device on nvidia driver");
  EXPECT_TRUE(WaitForDevices([&](const auto& d) { return HealthOf(d, pair[0]) == "Unhealthy"; }))
      << "the failed re-check was not published through ListAndWatch";
  ASSERT_TRUE(node_.RebindDriver(pair[0], "vfio-pci").ok());

  // Missing /dev/vfio/<group>.
  ASSERT_TRUE(node_.RemoveVfioGroupNode(GroupOf(pair[1])).ok());
  auto refused = Allocate({pair});
  ExpectRefused(refused, "device " + pair[1] + " is unhealthy", "missing VFIO group node");
  EXPECT_NE(refused.status.error_message().find(GroupOf(pair[1])), std::string::npos)
      << "the reason should name the group: " << Describe(refused.status);
  ASSERT_TRUE(node_.RecreateVfioGroupNode(GroupOf(pair[1])).ok());

  // IOMMU group moved: the device is not what was discovered any more.
  ASSERT_TRUE(node_.SetIommuGroup(pair[0], "999").ok());
  ExpectRefused(Allocate({pair}), "device " + pair[0] + " is unhealthy", "IOMMU group changed");
  ExpectJournalVerifies();
}

TEST_F(BadInputTest, ForeignResourceDeviceIsRefused) {
  Prepare({});
  // One GPU reports another device id: it becomes its own resource (named by the raw id).
  const std::string foreign = node_.gpus[0].bdf;
  WriteFile(node_.DeviceDir(foreign) / "device", "0x20b5\n");
  StartServe();
  const auto log = kubelet_->RegistrationLog();
  std::string other;
  for (const auto& attempt : log) {
    if (attempt.request.resource_name() != resource_) other = attempt.request.resource_name();
  }
  ASSERT_FALSE(other.empty()) << "the foreign GPU's resource did not register";
  EXPECT_TRUE(
      WaitForDevices([&](const auto& d) { return d.size() == 7 && AllHealth(d, "Healthy"); }));

  ExpectRefused(Allocate({{foreign}}), "device " + foreign + " belongs to " + other,
                "device of another resource");
  ExpectJournalVerifies();
}

TEST_F(BadInputTest, FabricManagerErrorFailsAllocateWithItsName) {
  Prepare({});
  StartServe();
  ASSERT_TRUE(fm_->InjectFailure("fmActivateFabricPartition", -2 /* FM_ST_GENERIC_ERROR */).ok());
  auto refused = Allocate({PartitionBdfs(1)});
  ExpectRefused(refused, "FM_ST_GENERIC_ERROR", "FM activation failure");
  EXPECT_NE(refused.status.error_message().find("partition 1"), std::string::npos)
      << Describe(refused.status);
  auto types = HistoryTypes();
  EXPECT_NE(std::find(types.begin(), types.end(), "PartitionActivationFailed"), types.end());
  EXPECT_NE(std::find(types.begin(), types.end(), "AllocationRejected"), types.end());
  // The failure was one call: the retry by the kubelet succeeds.
  auto retried = Allocate({PartitionBdfs(1)});
  EXPECT_TRUE(retried.ok()) << Describe(retried.status);
  EXPECT_EQ(ActivePartitions(), std::vector<std::uint32_t>{1});
  ExpectJournalVerifies();
}

TEST_F(BadInputTest, FabricManagerInUseFailsAllocateWithItsName) {
  ServeSetup setup;
  setup.reconcile_interval = "10m";
  Prepare(setup);
  StartServe();
  // Twice: after the first IN_USE the plugin refreshes FM's state and retries once.
  ASSERT_TRUE(fm_->InjectFailure("fmActivateFabricPartition", -7 /* FM_ST_IN_USE */, 2).ok());
  ExpectRefused(Allocate({PartitionBdfs(2)}), "FM_ST_IN_USE", "FM in use");
  ExpectJournalVerifies();
}

TEST_F(BadInputTest, MalformedModuleMappingStopsStartup) {
  Prepare({});
  WriteFile(node_.module_mapping_file, "{\"0000:1b:00.0\": \"8\", ");
  ExpectStartupFailure(node_.module_mapping_file.string(), "");
}

TEST_F(BadInputTest, ModuleMappingWithNonNumericIdStopsStartup) {
  Prepare({});
  std::string text = "{";
  for (const auto& gpu : node_.gpus) {
    text += (text.size() > 1 ? ", \"" : "\"") + gpu.bdf + "\": \"" +
            (gpu.bdf == node_.gpus[3].bdf ? std::string("four") : std::to_string(gpu.module_id)) +
            "\"";
  }
  WriteFile(node_.module_mapping_file, text + "}");
  ExpectStartupFailure(node_.module_mapping_file.string(), node_.gpus[3].bdf);
}

TEST_F(BadInputTest, ModuleMappingMissingAGpuStopsStartup) {
  Prepare({});
  std::string text = "{";
  for (std::size_t i = 1; i < node_.gpus.size(); ++i) {
    text += (i > 1 ? ", \"" : "\"") + node_.gpus[i].bdf + "\": \"" +
            std::to_string(node_.gpus[i].module_id) + "\"";
  }
  WriteFile(node_.module_mapping_file, text + "}");
  ExpectStartupFailure(node_.module_mapping_file.string(), node_.gpus[0].bdf);
}

TEST_F(BadInputTest, MalformedPciIdsStopsStartup) {
  Prepare({});
  constexpr char kText[] = "10de  NVIDIA Corporation\n\t2330  GH100\0 oops\n";
  WriteFile(node_.pci_ids_file, std::string(kText, sizeof(kText) - 1));
  ExpectStartupFailure(node_.pci_ids_file.string(), "NUL byte");
}

TEST_F(BadInputTest, MissingFmLibraryStopsStartup) {
  Prepare({});
  serve_ = Spawn(ServeArgs({{"--fm-library", (dir() / "no-such-libnvfm.so").string()}}), "serve");
  ASSERT_NE(serve_, nullptr);
  auto exit = serve_->WaitForExit(20s);
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->exited && exit->code != 0) << exit->ToString();
  EXPECT_NE(serve_->Log().find("no-such-libnvfm.so"), std::string::npos) << serve_->Log();
}

}  // namespace
}  // namespace gfp::testing
