#include "cli/demo/sim_library.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/temp_dir.h"

namespace gfp::cli {
namespace {

using ::testing::HasSubstr;

constexpr char kLibrary[] = "libnvfm-sim.so";

class SimLibraryTest : public ::testing::Test {
 protected:
  // A build tree (build/gpu-fabric-plugin, build/sim/fm/) and an installed package
  // (usr/bin/gpu-fabric-plugin, usr/lib/gpu-fabric-plugin/) side by side.
  std::filesystem::path BuildBinary() const { return dir_.path() / "build" / "gpu-fabric-plugin"; }
  std::filesystem::path BuildLibrary() const {
    return dir_.path() / "build" / "sim" / "fm" / kLibrary;
  }
  std::filesystem::path InstalledBinary() const {
    return dir_.path() / "root" / "usr" / "bin" / "gpu-fabric-plugin";
  }
  std::filesystem::path InstalledLibrary() const {
    return dir_.path() / "root" / "usr" / "lib" / "gpu-fabric-plugin" / kLibrary;
  }
  void Create(const std::filesystem::path& file) const {
    dir_.Write(std::filesystem::relative(file, dir_.path()).string(), "ELF");
  }

  testing::TempDir dir_;
};

TEST_F(SimLibraryTest, ABuildTreeBinaryUsesTheLibraryBesideIt) {
  Create(BuildBinary());
  Create(BuildLibrary());
  auto found = FindSimLibrary("", BuildBinary(), "/elsewhere/libnvfm-sim.so");
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, BuildLibrary());
}

TEST_F(SimLibraryTest, AnInstalledBinaryUsesItsPackagesLibraryEvenWhenTheBuildTreeStillExists) {
  Create(InstalledBinary());
  Create(InstalledLibrary());
  Create(BuildLibrary());
  auto found = FindSimLibrary("", InstalledBinary(), BuildLibrary());
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, InstalledLibrary());
}

TEST_F(SimLibraryTest, AnInstalledBinaryWorksWithoutTheBuildTree) {
  Create(InstalledBinary());
  Create(InstalledLibrary());
  auto found = FindSimLibrary("", InstalledBinary(), BuildLibrary());
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, InstalledLibrary());
}

TEST_F(SimLibraryTest, FallsBackToWhereTheLibraryWasBuilt) {
  Create(InstalledBinary());
  Create(BuildLibrary());
  auto found = FindSimLibrary("", InstalledBinary(), BuildLibrary());
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, BuildLibrary());
}

TEST_F(SimLibraryTest, NoLibraryAnywhereNamesEveryPlaceLookedAt) {
  Create(InstalledBinary());
  auto found = FindSimLibrary("", InstalledBinary(), BuildLibrary());
  ASSERT_FALSE(found.ok()) << "found " << *found;
  EXPECT_EQ(found.status().code(), ErrorCode::kNotFound);
  const std::string message = found.status().message();
  EXPECT_THAT(message, HasSubstr("libnvfm-sim.so"));
  EXPECT_THAT(message, HasSubstr((dir_.path() / "root/usr/bin/sim/fm/libnvfm-sim.so").string()));
  EXPECT_THAT(message, HasSubstr(InstalledLibrary().string()));
  EXPECT_THAT(message, HasSubstr(BuildLibrary().string()));
  EXPECT_THAT(message, HasSubstr("--fm-library"));
}

TEST_F(SimLibraryTest, TheFlagWinsAsGiven) {
  Create(BuildBinary());
  Create(BuildLibrary());
  auto found = FindSimLibrary("/opt/fm/libnvfm-sim.so", BuildBinary(), BuildLibrary());
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, "/opt/fm/libnvfm-sim.so");
}

TEST(SimLibraryCandidates, BuildTreeThenInstallPrefixThenBuildPath) {
  EXPECT_EQ(SimLibraryCandidates("/usr/bin/gpu-fabric-plugin", "/src/build/sim/fm/libnvfm-sim.so"),
            (std::vector<std::filesystem::path>{"/usr/bin/sim/fm/libnvfm-sim.so",
                                                "/usr/lib/gpu-fabric-plugin/libnvfm-sim.so",
                                                "/src/build/sim/fm/libnvfm-sim.so"}));
}

TEST(SimLibraryCandidates, WithoutAKnownExecutableOnlyTheBuildPath) {
  EXPECT_EQ(SimLibraryCandidates("", "/src/build/sim/fm/libnvfm-sim.so"),
            (std::vector<std::filesystem::path>{"/src/build/sim/fm/libnvfm-sim.so"}));
}

}  // namespace
}  // namespace gfp::cli
