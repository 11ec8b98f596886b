// Names and env keys of vGPU resources, as the Go plugin and KubeVirt spell them.
#include "adapters/kubelet_naming/vgpu_naming.h"

#include <gtest/gtest.h>

namespace gfp::adapters::kubelet_naming {
namespace {

// upstream-behaviour.md §1.4: each `\s+` -> "_", no uppercase, nothing else stripped.
TEST(HostVgpuNaming, WhitespaceRunsBecomeOneUnderscoreAsGoRegexpDoes) {
  EXPECT_EQ(ReplaceWhitespaceRuns("GRID T4-1Q"), "GRID_T4-1Q");
  EXPECT_EQ(ReplaceWhitespaceRuns("GRID A100-4C"), "GRID_A100-4C");
  EXPECT_EQ(ReplaceWhitespaceRuns("NVIDIA  \t H100XM-80C"), "NVIDIA_H100XM-80C");
  EXPECT_EQ(ReplaceWhitespaceRuns("a\r\n\fb"), "a_b");
  // RE2's \s does not include \v: Go leaves it in place.
  EXPECT_EQ(ReplaceWhitespaceRuns("a\vb"), "a\vb");
  EXPECT_EQ(ReplaceWhitespaceRuns("lower case"), "lower_case");
}

// upstream-behaviour.md §1.10 and §1.13: MDEV_PCI_RESOURCE_ + KubeVirt's ResourceNameToEnvVar.
TEST(HostVgpuNaming, MdevEnvKeyIsKubevirtsResourceNameToEnvVar) {
  EXPECT_EQ(MdevEnvKey("GRID_A100-4C"), "MDEV_PCI_RESOURCE_NVIDIA_COM_GRID_A100-4C");
  EXPECT_EQ(MdevEnvKey("GRID_T4-1q"), "MDEV_PCI_RESOURCE_NVIDIA_COM_GRID_T4-1Q");
  // KubeVirt also turns "." into "_" (Go's plugin only upper-cases; KubeVirt is what reads it).
  EXPECT_EQ(MdevEnvKey("A.b"), "MDEV_PCI_RESOURCE_NVIDIA_COM_A_B");
}

// upstream-behaviour.md §3.2: VFs are served as passthrough devices, PCI_RESOURCE_ + name.
TEST(HostVgpuNaming, VfEnvKeyIsThePassthroughPrefix) {
  EXPECT_EQ(VgpuVfEnvKey("NVIDIA_H100XM-80C"), "PCI_RESOURCE_NVIDIA_COM_NVIDIA_H100XM-80C");
  EXPECT_EQ(VgpuVfEnvKey("NVIDIA_H200X-141C"), "PCI_RESOURCE_NVIDIA_COM_NVIDIA_H200X-141C");
  EXPECT_EQ(ResourceNameToEnvVar("PCI_RESOURCE", "nvidia.com/GH100_H100_SXM5_80GB"),
            "PCI_RESOURCE_NVIDIA_COM_GH100_H100_SXM5_80GB");
}

TEST(HostVgpuNaming, ResourceSuffixMustBeAKubernetesQualifiedName) {
  EXPECT_TRUE(IsValidResourceSuffix("GRID_A100-4C"));
  EXPECT_TRUE(IsValidResourceSuffix("NVIDIA_H100XM-1-10C"));
  EXPECT_TRUE(IsValidResourceSuffix(std::string(63, 'A')));
  EXPECT_FALSE(IsValidResourceSuffix(std::string(64, 'A')));
  EXPECT_FALSE(IsValidResourceSuffix(""));
  EXPECT_FALSE(IsValidResourceSuffix("_GRID"));
  EXPECT_FALSE(IsValidResourceSuffix("GRID-"));
  EXPECT_FALSE(IsValidResourceSuffix("GRID/A100"));
  EXPECT_FALSE(IsValidResourceSuffix("GRID\nA100"));
  EXPECT_FALSE(IsValidResourceSuffix("GRID\xc3\xa9"));
}

}  // namespace
}  // namespace gfp::adapters::kubelet_naming
