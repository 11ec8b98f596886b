#include "adapters/host/sysfs_links.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/temp_dir.h"

namespace gfp::adapters::host {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(HostSysfsLinks, LinksStayingInsideTheRootAreFine) {
  gfp::testing::TempDir dir;
  const fs::path sys = dir.path() / "sys";
  fs::create_directories(sys / "devices/a");
  fs::create_directories(sys / "bus");
  fs::create_symlink("../devices/a", sys / "bus/a");
  EXPECT_TRUE(CheckResolvesInside(sys / "bus/a", sys).ok());
  EXPECT_TRUE(CheckResolvesInside(sys, sys).ok());
}

TEST(HostSysfsLinks, LinksLeadingOutsideOrNowhereAreRefused) {
  gfp::testing::TempDir dir;
  const fs::path sys = dir.path() / "sys";
  fs::create_directories(sys / "bus");
  fs::create_directories(dir.path() / "sysfake");  // a sibling sharing the root's name prefix
  fs::create_symlink("../../sysfake", sys / "bus/prefix");
  fs::create_symlink("../..", sys / "bus/up");
  fs::create_symlink("nowhere", sys / "bus/dangling");
  const Status prefix = CheckResolvesInside(sys / "bus/prefix", sys);
  EXPECT_EQ(prefix.code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(prefix.message(), HasSubstr("leads outside " + fs::canonical(sys).string() + " (to " +
                                          fs::canonical(dir.path()).string() + "/sysfake)"));
  EXPECT_EQ(CheckResolvesInside(sys / "bus/up", sys).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(CheckResolvesInside(sys / "bus/dangling", sys).code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace gfp::adapters::host
