#include "adapters/host/pci_ids.h"

#include <gtest/gtest.h>

#include <string>

#include "adapters/kubelet_naming/resource_naming.h"
#include "common/temp_dir.h"
#include "unit/host/fifo_guard.h"

namespace gfp::adapters::host {
namespace {

const std::filesystem::path kFixture = std::filesystem::path(GFP_HOST_TESTDATA_DIR) / "pci.ids";

PciIds LoadFixture() {
  auto db = LoadPciIds(kFixture);
  EXPECT_TRUE(db.ok()) << db.status().message();
  return db.ok() ? *db : PciIds();
}

TEST(HostPciIds, NamesOfTheGoPluginExamples) {
  const PciIds db = LoadFixture();
  EXPECT_TRUE(db.has_nvidia_vendor());
  EXPECT_EQ(db.DeviceName("2330"), "GH100_H100_SXM5_80GB");
  EXPECT_EQ(db.DeviceName("2335"), "GH100_H200_SXM_141GB");
  EXPECT_EQ(db.DeviceName("2331"), "GH100_H100_PCIE");
  EXPECT_EQ(db.DeviceName("20b3"), "GA100_A100SXM64GB");
  EXPECT_EQ(db.DeviceName("2342"), "GH100_GH200_120GB___480GB");
  EXPECT_EQ(db.DeviceName("118e"), "GK104_GL_GRID_K__520");
  EXPECT_EQ(db.DeviceName("2901"), "GB100_B200");
  EXPECT_EQ(db.DeviceName("20b2"), "GA100_A100_SXM4_80GB");
}

TEST(HostPciIds, OddNames) {
  const PciIds db = LoadFixture();
  EXPECT_EQ(db.DeviceName("1001"), "WEIRD_NAME_WITH_BRACKETS__ANDDASHES");
  EXPECT_EQ(db.DeviceName("1002"), "TAB_SEPARATED_NAME");
  // A name that sanitizes to nothing falls back to the raw id, as in Go.
  EXPECT_EQ(db.DeviceName("1003"), std::nullopt);
  EXPECT_EQ(db.ResourceSuffix("1003"), "1003");
}

TEST(HostPciIds, OnlyTheNvidiaBlockIsSearched) {
  const PciIds db = LoadFixture();
  // 20b5 exists only in the Intel block (before) and the Emulex block (after).
  EXPECT_EQ(db.DeviceName("20b5"), std::nullopt);
  EXPECT_EQ(db.DeviceName("abcd"), std::nullopt);
  EXPECT_EQ(db.DeviceName("a1af"), std::nullopt);
  EXPECT_EQ(db.ResourceSuffix("20b5"), "20b5");
}

TEST(HostPciIds, SubDeviceLinesNeverMatch) {
  const PciIds db = LoadFixture();
  EXPECT_EQ(db.DeviceName("2ff0"), std::nullopt);
  EXPECT_EQ(db.DeviceName("10de"), std::nullopt);
}

TEST(HostPciIds, FirstMatchingLineDecidesLikeGo) {
  auto db = PciIds::Parse("10de  NVIDIA\n\t2330  [--]\n\t2330  GH100 [H100]\n");
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(db->DeviceName("2330"), std::nullopt);  // Go breaks at the first match
}

TEST(HostPciIds, CrLfLineEndingsAndLastLineWithoutNewline) {
  auto db =
      PciIds::Parse("10de  NVIDIA\r\n\t2330  GH100 [H100 SXM5 80GB]\r\n\t2331  GH100 [H100 PCIe]");
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(db->DeviceName("2330"), "GH100_H100_SXM5_80GB");
  EXPECT_EQ(db->DeviceName("2331"), "GH100_H100_PCIE");
}

TEST(HostPciIds, BlankLineEndsTheVendorBlock) {
  auto db = PciIds::Parse("10de  NVIDIA\n\t2330  A\n\n\t2331  B\n");
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(db->DeviceName("2330"), "A");
  EXPECT_EQ(db->DeviceName("2331"), std::nullopt);
}

TEST(HostPciIds, NoNvidiaVendorMeansNoNames) {
  auto db = PciIds::Parse("8086  Intel\n\t2330  Intel thing\n");
  ASSERT_TRUE(db.ok());
  EXPECT_FALSE(db->has_nvidia_vendor());
  EXPECT_EQ(db->DeviceName("2330"), std::nullopt);
  EXPECT_EQ(db->ResourceSuffix("2330"), "2330");
}

TEST(HostPciIds, MissingFileIsAnErrorNamingIt) {
  gfp::testing::TempDir dir;
  const auto path = dir.path() / "absent.ids";
  auto db = LoadPciIds(path);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(db.status().message(),
            "pci.ids " + path.string() + ": cannot read file: No such file or directory");
}

TEST(HostPciIds, FifoIsRefusedWithoutBlocking) {
  gfp::testing::TempDir dir;
  const auto fifo = gfp::testing::MakeFifo(dir.path() / "pci.ids");
  auto db = gfp::testing::ReadWithFifoGuard(fifo, [&] { return LoadPciIds(fifo); });
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().message(),
            "pci.ids " + fifo.string() + ": cannot read file: not a regular file (a FIFO)");
}

TEST(HostPciIds, BinaryFileIsMalformed) {
  gfp::testing::TempDir dir;
  const auto path = dir.Write("pci.ids", std::string("10de  NVIDIA\n\t2330  GH") + '\0' + "100\n");
  auto db = LoadPciIds(path);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(db.status().message(),
            "pci.ids " + path.string() + ": not a text file: NUL byte at offset 22");
}

TEST(HostPciIds, OverlongLineIsMalformed) {
  gfp::testing::TempDir dir;
  const auto path =
      dir.Write("pci.ids", "8086  Intel\n# " + std::string(70000, 'x') + "\n10de  NVIDIA\n");
  auto db = LoadPciIds(path);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().message(),
            "pci.ids " + path.string() + ": line 2 is longer than 65535 bytes");
}

TEST(HostPciIds, FindsFirstExistingCandidate) {
  gfp::testing::TempDir dir;
  const std::string second = dir.Write("hwdata/pci.ids", "").string();
  const std::string third = dir.Write("usr/pci.ids", "").string();
  const std::string first = (dir.path() / "misc/pci.ids").string();
  const char* candidates[] = {first.c_str(), second.c_str(), third.c_str()};
  auto found = FindPciIdsFile(candidates);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->string(), second);
}

TEST(HostPciIds, NoCandidateExists) {
  gfp::testing::TempDir dir;
  const std::string a = (dir.path() / "a").string();
  const std::string b = (dir.path() / "b").string();
  const char* candidates[] = {a.c_str(), b.c_str()};
  auto found = FindPciIdsFile(candidates);
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().message(), "no pci.ids file found (tried " + a + ", " + b + ")");
}

TEST(HostPciIds, DefaultSearchOrder) {
  ASSERT_EQ(kDefaultPciIdsPaths.size(), 3u);
  EXPECT_STREQ(kDefaultPciIdsPaths[0], "/usr/share/misc/pci.ids");
  EXPECT_STREQ(kDefaultPciIdsPaths[1], "/usr/share/hwdata/pci.ids");
  EXPECT_STREQ(kDefaultPciIdsPaths[2], "/usr/pci.ids");
}

TEST(HostResourceNaming, NamedDevice) {
  const kubelet_naming::ResourceNaming naming = NameResource(LoadFixture(), "2330");
  EXPECT_TRUE(naming.named_by_pci_ids);
  EXPECT_EQ(naming.resource_name, "nvidia.com/GH100_H100_SXM5_80GB");
  EXPECT_EQ(naming.socket_name, "kubevirt-GH100_H100_SXM5_80GB.sock");
  EXPECT_EQ(naming.env_key, "PCI_RESOURCE_NVIDIA_COM_GH100_H100_SXM5_80GB");
}

TEST(HostResourceNaming, UnnamedDeviceFallsBackToRawId) {
  const kubelet_naming::ResourceNaming naming = NameResource(LoadFixture(), "20b5");
  EXPECT_FALSE(naming.named_by_pci_ids);
  EXPECT_EQ(naming.suffix, "20b5");
  EXPECT_EQ(naming.resource_name, "nvidia.com/20b5");
  EXPECT_EQ(naming.socket_name, "kubevirt-20b5.sock");
  EXPECT_EQ(naming.env_key, "PCI_RESOURCE_NVIDIA_COM_20B5");  // Go upper-cases the key
}

TEST(HostResourceNaming, EmptyDatabaseAlwaysFallsBack) {
  EXPECT_EQ(NameResource(PciIds(), "2330").resource_name, "nvidia.com/2330");
}

}  // namespace
}  // namespace gfp::adapters::host
