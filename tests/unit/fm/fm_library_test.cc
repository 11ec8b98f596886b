// Loading the SDK: a missing file and a library without one of the 11 symbols.
#include <gtest/gtest.h>

#include "adapters/fm/fabric_manager_client.h"
#include "adapters/fm/fabric_manager_library.h"
#include "common/temp_dir.h"
#include "fm_test_support.h"
#include "unit/host/fifo_guard.h"

namespace gfp::adapters::fm {
namespace {

TEST(FmLibrary, LoadsTheSimulatorWithAllSymbols) {
  auto library = FabricManagerLibrary::Load(testing::kSimLibrary);
  ASSERT_TRUE(library.ok()) << library.status().message();
  const FmFunctions& fn = (*library)->fn();
  EXPECT_NE(fn.fmLibInit, nullptr);
  EXPECT_NE(fn.fmActivateFabricPartitionWithVFs, nullptr);
  EXPECT_NE(fn.fmGetUnsupportedFabricPartitions, nullptr);
  EXPECT_EQ((*library)->path(), testing::kSimLibrary);
}

TEST(FmLibrary, MissingLibraryNamesThePath) {
  const std::string path = "/nonexistent/dir/libnvfm.so.1";
  auto library = FabricManagerLibrary::Load(path);
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(library.status().message().find(path), std::string::npos) << library.status().message();
  EXPECT_NE(library.status().message().find("No such file"), std::string::npos)
      << library.status().message();  // dlerror() text is included

  FabricManagerConfig config;
  config.library_path = path;
  auto client = FabricManagerClient::Create(config);
  ASSERT_FALSE(client.ok());
  EXPECT_NE(client.status().message().find(path), std::string::npos);
}

TEST(FmLibrary, MissingSymbolNamesTheSymbolAndPath) {
  const std::string path = GFP_FM_MISSING_SYMBOL_LIBRARY;
  auto library = FabricManagerLibrary::Load(path);
  ASSERT_FALSE(library.ok());
  EXPECT_NE(library.status().message().find("fmGetNvlinkFailedDevices"), std::string::npos)
      << library.status().message();
  EXPECT_NE(library.status().message().find(path), std::string::npos) << library.status().message();
}

TEST(FmLibrary, FifoIsRefusedWithoutBlocking) {
  gfp::testing::TempDir dir;
  const auto fifo = gfp::testing::MakeFifo(dir.path() / "libnvfm.so.1");
  auto library =
      gfp::testing::ReadWithFifoGuard(fifo, [&] { return FabricManagerLibrary::Load(fifo); });
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(library.status().message(), "cannot load Fabric Manager library " + fifo.string() +
                                            ": is not a regular file (a FIFO)");
}

TEST(FmLibrary, DirectoryIsRefused) {
  gfp::testing::TempDir dir;
  auto library = FabricManagerLibrary::Load(dir.path().string());
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().message(), "cannot load Fabric Manager library " +
                                            dir.path().string() +
                                            ": is not a regular file (a directory)");
}

TEST(FmLibrary, NotAnElfFileNamesThePath) {
  gfp::testing::TempDir dir;
  const auto not_elf = dir.Write("libnvfm.so.1", "not an ELF file");
  auto library = FabricManagerLibrary::Load(not_elf.string());
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().message().rfind(
                "cannot load Fabric Manager library " + not_elf.string() + ": ", 0),
            0u)
      << library.status().message();
}

TEST(FmLibrary, EmptyPathIsRejected) {
  auto library = FabricManagerLibrary::Load("");
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), ErrorCode::kInvalidArgument);
}

TEST(FmLibrary, ClientRejectsBadConfiguration) {
  FabricManagerConfig config;
  config.library_path = testing::kSimLibrary;
  config.connect_timeout = std::chrono::milliseconds(0);
  auto zero_timeout = FabricManagerClient::Create(config);
  ASSERT_FALSE(zero_timeout.ok());
  EXPECT_NE(zero_timeout.status().message().find("connect timeout"), std::string::npos);

  config.connect_timeout = std::chrono::milliseconds(1000);
  config.address = "fm.example:6666";
  auto bad_address = FabricManagerClient::Create(config);
  ASSERT_FALSE(bad_address.ok());
  EXPECT_NE(bad_address.status().message().find("fm.example"), std::string::npos);
}

}  // namespace
}  // namespace gfp::adapters::fm
