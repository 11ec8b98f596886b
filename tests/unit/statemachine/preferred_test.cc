// GetPreferredAllocation: the Go plugin's NUMA vectors without FM, whole healthy partitions with.
#include "statemachine/preferred.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <tuple>

#include "common/sanitizer_build.h"
#include "common/sm_fixtures.h"

namespace gfp::sm {
namespace {

using gfp::testing::Driver;
using gfp::testing::Modules;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

State NumaState() {
  State s;
  const std::pair<const char*, int> devices[] = {
      {"gpu0", 0}, {"gpu1", 0}, {"gpu2", 1}, {"gpu3", 1}};
  for (const auto& [id, numa] : devices) {
    DeviceState d;
    d.bdf = id;
    d.numa_node = numa;
    s.devices.mutable_value()[id] = d;
  }
  return s;
}

// The Go plugin's own test vectors (upstream-behaviour.md §1.12).
TEST(PreferredByNuma, MatchesTheGoPlugin) {
  const State s = NumaState();
  const std::vector<std::string> all = {"gpu0", "gpu1", "gpu2", "gpu3"};
  auto a = PreferredByNuma(s, {all, {"gpu2"}, 2});
  ASSERT_TRUE(a.ok());
  EXPECT_THAT(*a, ElementsAre("gpu2", "gpu3"));
  auto b = PreferredByNuma(s, {all, {"gpu0", "gpu2"}, 3});
  ASSERT_TRUE(b.ok());
  EXPECT_THAT(*b, ElementsAre("gpu0", "gpu2", "gpu1"));
  auto c = PreferredByNuma(s, {{"gpu0", "gpu1"}, {"gpu0", "gpu1"}, 2});
  ASSERT_TRUE(c.ok());
  EXPECT_THAT(*c, ElementsAre("gpu0", "gpu1"));
  auto e = PreferredByNuma(s, {all, {"gpu0", "gpu2"}, 1});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(), "number of MustIncludeDeviceIDs (2) exceeds allocation size (1)");
}

TEST(PreferredByNuma, PrefersOneNodeThenFillsInKubeletOrder) {
  const State s = NumaState();
  auto a = PreferredByNuma(s, {{"gpu0", "gpu2", "gpu3"}, {}, 2});
  ASSERT_TRUE(a.ok());
  EXPECT_THAT(*a, ElementsAre("gpu2", "gpu3"));
  auto b = PreferredByNuma(s, {{"gpu0", "gpu2", "gpu3", "gpu1"}, {}, 3});
  ASSERT_TRUE(b.ok());
  EXPECT_THAT(*b, ElementsAre("gpu0", "gpu2", "gpu3"));
}

class PreferredByPartitionTest : public ::testing::TestWithParam<int> {};

gfp::testing::NodeFixture NodeFor(int which) {
  switch (which) {
    case 0:
      return gfp::testing::H100Node();
    case 1:
      return gfp::testing::B200Node();
    default:
      return gfp::testing::A100Node();
  }
}

// Every size of every table, from a free node: the answer is exactly one partition's GPUs.
TEST_P(PreferredByPartitionTest, EverySizeGetsOneWholePartition) {
  const auto node = NodeFor(GetParam());
  Driver d;
  d.Boot(node);
  std::set<std::size_t> sizes;
  for (const auto& [id, modules] : node.partitions) sizes.insert(modules.size());
  for (std::size_t size : sizes) {
    auto answer = PreferredByPartition(d.state, {node.bdfs_by_module, {}, size});
    ASSERT_TRUE(answer.ok()) << "size " << size << ": " << answer.status().message();
    ASSERT_EQ(answer->size(), size);
    EXPECT_TRUE(gfp::testing::FixturePartitionOf(node, *answer).has_value()) << "size " << size;
  }
}

INSTANTIATE_TEST_SUITE_P(Tables, PreferredByPartitionTest, ::testing::Values(0, 1, 2));

TEST(PreferredByPartition, KeepsLargerFreePartitionsWhole) {
  const auto node = gfp::testing::H100Node();
  Driver d;
  d.Boot(node);
  // Module 1 is taken: partitions 0 and 1 are broken already. A 2-GPU VM should go to 2,4
  // (breaking nothing whole) rather than 5,7 or 6,8 (which would break partition 2).
  std::vector<std::string> available = Modules(node, {2, 3, 4, 5, 6, 7, 8});
  auto answer = PreferredByPartition(d.state, {available, {}, 2});
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  EXPECT_EQ(gfp::testing::FixturePartitionOf(node, *answer), 4u);
}

TEST(PreferredByPartition, MustIncludeComesFirstThenKubeletOrder) {
  const auto node = gfp::testing::H100Node();
  Driver d;
  d.Boot(node);
  std::vector<std::string> available = node.bdfs_by_module;
  std::reverse(available.begin(), available.end());
  auto answer = PreferredByPartition(d.state, {available, Modules(node, {3}), 4});
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->front(), Modules(node, {3})[0]);
  EXPECT_EQ(gfp::testing::FixturePartitionOf(node, *answer), 1u);
  EXPECT_THAT(*answer, ElementsAre(Modules(node, {3})[0], Modules(node, {4})[0],
                                   Modules(node, {2})[0], Modules(node, {1})[0]));
}

TEST(PreferredByPartition, NoCandidateNamesEveryPartitionAndWhy) {
  const auto node = gfp::testing::H100Node();
  Driver d;
  d.Boot(node);
  auto partitions = gfp::testing::PartitionsOf(node);
  partitions[5].set_unsupported(true);  // partition 5 (5,7)
  ObserveFabricState f;
  f.now = d.now;
  f.partitions = partitions;
  d.Run(f);
  auto answer = PreferredByPartition(d.state, {Modules(node, {1, 2, 5, 7, 6}), {}, 2});
  ASSERT_FALSE(answer.ok());
  const std::string& m = answer.status().message();
  EXPECT_THAT(m, HasSubstr("no Fabric Manager partition of 2 GPUs"));
  EXPECT_THAT(m, HasSubstr("partition 3: GPU 0000:d1:00.0 is not available"));
  EXPECT_THAT(m, HasSubstr("partition 5: degraded"));
  EXPECT_THAT(m, HasSubstr("partition 6: GPU 0000:1b:00.0 is not available"));
  auto three = PreferredByPartition(d.state, {node.bdfs_by_module, {}, 3});
  ASSERT_FALSE(three.ok());
  EXPECT_THAT(three.status().message(), HasSubstr("no partition has 3 GPUs (sizes: 1 2 4 8)"));
  auto too_many = PreferredByPartition(d.state, {node.bdfs_by_module, Modules(node, {1, 2}), 1});
  EXPECT_THAT(too_many.status().message(), HasSubstr("exceeds allocation size"));
}

// Lowers this process's address-space limit to what it maps now plus `headroom` for one scope,
// so that sizing a buffer by an outside number fails here as it would on a small node.
class AddressSpaceCap {
 public:
  explicit AddressSpaceCap(std::size_t headroom) {
    if (::getrlimit(RLIMIT_AS, &saved_) != 0) return;
    std::ifstream statm("/proc/self/statm");
    std::size_t pages = 0;
    statm >> pages;
    rlimit capped = saved_;
    capped.rlim_cur = pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)) + headroom;
    applied_ = ::setrlimit(RLIMIT_AS, &capped) == 0;
  }
  ~AddressSpaceCap() {
    if (applied_) ::setrlimit(RLIMIT_AS, &saved_);
  }
  bool applied() const { return applied_; }

 private:
  rlimit saved_{};
  bool applied_ = false;
};

// kubelet's allocation size is an int32: the largest is refused like any size without a
// partition, with nothing sized by it (2^31 - 1 ints would be 8 GiB).
TEST(PreferredByPartition, TheLargestAllocationSizeIsRefusedByName) {
  if (gfp::testing::kSanitizerBuild) {
    GTEST_SKIP() << "sanitizers map terabytes of shadow memory: no address-space cap";
  }
  const auto node = gfp::testing::H100Node();
  Driver d;
  d.Boot(node);
  ObserveFabricState f;
  f.now = d.now;
  f.partitions = gfp::testing::PartitionsOf(node);
  d.Run(f);
  Result<std::vector<std::string>> answer = InvalidArgument("not asked");
  {
    AddressSpaceCap cap(std::size_t{1} << 30);
    ASSERT_TRUE(cap.applied());
    answer = PreferredByPartition(d.state, {node.bdfs_by_module, {}, 2147483647});
  }
  ASSERT_FALSE(answer.ok());
  EXPECT_THAT(answer.status().message(),
              HasSubstr("no partition has 2147483647 GPUs (sizes: 1 2 4 8)"));
}

// Issue 8: without FM's table the answer said "no partition has 2 GPUs (sizes:)".
TEST(PreferredByPartition, WithoutTheTableSaysFabricManagerIsNotUsable) {
  const auto node = gfp::testing::H100Node();
  Driver d;
  d.Boot(node);
  d.state.partitions.mutable_value().clear();
  d.state.fm_connected = false;
  auto answer = PreferredByPartition(d.state, {node.bdfs_by_module, {}, 2});
  ASSERT_FALSE(answer.ok());
  EXPECT_THAT(answer.status().message(), HasSubstr("Fabric Manager is not usable"));
  EXPECT_THAT(answer.status().message(), ::testing::Not(HasSubstr("sizes:")));
}

TEST(PreferredByPartition, MustIncludeIdsAreEscapedInTheAnswer) {
  const auto node = gfp::testing::H100Node();
  Driver d;
  d.Boot(node);
  auto answer = PreferredByPartition(d.state, {node.bdfs_by_module, {"x\nFORGED"}, 2});
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().message().find('\n'), std::string::npos);
}

// Three GPUs (modules 1-3) with VFs, and two 2-GPU partitions sharing GPU 1: partition 1 with
// GPU 2 (NUMA 0), partition 2 with GPU 3 (NUMA 1). GPU 1 has a VF on each NUMA node.
State ThreeGpusWithVfs() {
  State s;
  s.fm_enabled = true;
  const std::tuple<const char*, const char*, int> devices[] = {{"0000:01:00.1", "0000:01:00.0", 0},
                                                               {"0000:01:00.2", "0000:01:00.0", 1},
                                                               {"0000:02:00.1", "0000:02:00.0", 0},
                                                               {"0000:03:00.1", "0000:03:00.0", 1}};
  for (const auto& [vf, gpu, numa] : devices) {
    DeviceState d;
    d.bdf = vf;
    d.kind = DeviceKind::kVgpuVf;
    d.parent_bdf = gpu;
    d.numa_node = numa;
    s.devices.mutable_value()[vf] = d;
  }
  for (ModuleId module : {1u, 2u, 3u}) {
    const std::string gpu = "0000:0" + std::to_string(module) + ":00.0";
    s.module_of_bdf.mutable_value()[gpu] = module;
    s.bdf_of_module.mutable_value()[module] = gpu;
  }
  s.partitions.mutable_value()[1] = PartitionState{1, {1, 2}, 12, 12, false};
  s.partitions.mutable_value()[2] = PartitionState{2, {1, 3}, 12, 12, false};
  return s;
}

// The NUMA node counted for a GPU is that of the device answered for it: the must-include VF's,
// not the GPU's lowest available VF's.
TEST(PreferredByPartition, RanksByTheNumaNodeOfTheMustIncludeVf) {
  const State s = ThreeGpusWithVfs();
  const std::vector<std::string> available{"0000:01:00.1", "0000:01:00.2", "0000:02:00.1",
                                           "0000:03:00.1"};
  auto answer = PreferredByPartition(s, {available, {"0000:01:00.2"}, 2});  // on NUMA 1
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  EXPECT_THAT(*answer, ElementsAre("0000:01:00.2", "0000:03:00.1"));
  // Without the must-include VF GPU 1 answers its lowest VF (NUMA 0): partition 1.
  answer = PreferredByPartition(s, {available, {}, 2});
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  EXPECT_THAT(*answer, ElementsAre("0000:01:00.1", "0000:02:00.1"));
}

// The VF wording of the refusal: a GPU without an available VF, a partition without the GPU of a
// must-include VF.
TEST(PreferredByPartition, VfRefusalNamesTheGpuWithoutAVfAndTheMustIncludeVfsGpu) {
  const State s = ThreeGpusWithVfs();
  auto answer = PreferredByPartition(s, {{"0000:01:00.1", "0000:03:00.1"}, {"0000:02:00.1"}, 2});
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().message(),
            "no Fabric Manager partition of 2 GPUs can be formed from the available devices: "
            "partition 1: GPU 0000:02:00.0 has no available VF; partition 2: does not contain "
            "GPU 0000:02:00.0 of must-include VF 0000:02:00.1");
}

}  // namespace
}  // namespace gfp::sm
