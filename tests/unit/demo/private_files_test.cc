#include "cli/private_files.h"

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
  auto found = FindPrivateFile(kSimLibrary, "", BuildBinary());
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, BuildLibrary());
}

TEST_F(SimLibraryTest, AnInstalledBinaryUsesItsPackagesLibraryEvenWhenTheBuildTreeStillExists) {
  Create(InstalledBinary());
  Create(InstalledLibrary());
  Create(BuildLibrary());
  auto found = FindPrivateFile(kSimLibrary, "", InstalledBinary());
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, InstalledLibrary());
}

TEST_F(SimLibraryTest, AnInstalledBinaryWorksWithoutTheBuildTree) {
  Create(InstalledBinary());
  Create(InstalledLibrary());
  auto found = FindPrivateFile(kSimLibrary, "", InstalledBinary());
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, InstalledLibrary());
}

// A copied or installed binary without its own library never loads a build tree's (issue 21: the
// path the library was built at used to be the last candidate).
TEST_F(SimLibraryTest, ABinaryWithoutItsOwnLibraryNeverLoadsTheBuildTrees) {
  Create(InstalledBinary());
  Create(BuildLibrary());
  auto found = FindPrivateFile(kSimLibrary, "", InstalledBinary());
  ASSERT_FALSE(found.ok()) << "loaded " << *found;
  EXPECT_THAT(found.status().message(), ::testing::Not(HasSubstr(BuildLibrary().string())));
}

TEST_F(SimLibraryTest, NoLibraryAnywhereNamesEveryPlaceLookedAt) {
  Create(InstalledBinary());
  auto found = FindPrivateFile(kSimLibrary, "", InstalledBinary());
  ASSERT_FALSE(found.ok()) << "found " << *found;
  EXPECT_EQ(found.status().code(), ErrorCode::kNotFound);
  const std::string message = found.status().message();
  EXPECT_THAT(message, HasSubstr("libnvfm-sim.so"));
  EXPECT_THAT(message, HasSubstr((dir_.path() / "root/usr/bin/sim/fm/libnvfm-sim.so").string()));
  EXPECT_THAT(message, HasSubstr((dir_.path() / "root/usr/bin/libnvfm-sim.so").string()));
  EXPECT_THAT(message, HasSubstr(InstalledLibrary().string()));
  EXPECT_THAT(message, HasSubstr("--fm-library"));
}

TEST_F(SimLibraryTest, TheFlagWinsAsGiven) {
  Create(BuildBinary());
  Create(BuildLibrary());
  auto found = FindPrivateFile(kSimLibrary, "/opt/fm/libnvfm-sim.so", BuildBinary());
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, "/opt/fm/libnvfm-sim.so");
}

TEST(SimLibraryCandidates, BuildTreeThenBesideThenInstallPrefix) {
  EXPECT_EQ(PrivateFileCandidates(kSimLibrary, "/usr/bin/gpu-fabric-plugin"),
            (std::vector<std::filesystem::path>{"/usr/bin/sim/fm/libnvfm-sim.so",
                                                "/usr/bin/libnvfm-sim.so",
                                                "/usr/lib/gpu-fabric-plugin/libnvfm-sim.so"}));
}

TEST(SimLibraryCandidates, WithoutAKnownExecutableNone) {
  EXPECT_TRUE(PrivateFileCandidates(kSimLibrary, "").empty());
}

// The demo program, installed in the package's private folder, finds the library beside itself.
TEST_F(SimLibraryTest, TheInstalledDemoProgramUsesTheLibraryBesideIt) {
  const auto demo = dir_.path() / "root" / "usr" / "lib" / "gpu-fabric-plugin" / kDemoProgram.name;
  Create(demo);
  Create(InstalledLibrary());
  Create(BuildLibrary());
  auto found = FindPrivateFile(kSimLibrary, "", demo);
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, InstalledLibrary());
}

// `gpu-fabric-plugin demo` finds the demo program beside it in a build tree, in the package's
// private folder when installed.
TEST_F(SimLibraryTest, TheDemoProgramIsFoundBesideABuildTreeBinaryOrInThePackage) {
  const auto built = dir_.path() / "build" / kDemoProgram.name;
  const auto installed =
      dir_.path() / "root" / "usr" / "lib" / "gpu-fabric-plugin" / kDemoProgram.name;
  Create(BuildBinary());
  Create(built);
  Create(InstalledBinary());
  Create(installed);
  auto from_build = FindPrivateFile(kDemoProgram, "", BuildBinary());
  ASSERT_TRUE(from_build.ok()) << from_build.status().message();
  EXPECT_EQ(*from_build, built);
  auto from_package = FindPrivateFile(kDemoProgram, "", InstalledBinary());
  ASSERT_TRUE(from_package.ok()) << from_package.status().message();
  EXPECT_EQ(*from_package, installed);
}

}  // namespace
}  // namespace gfp::cli
