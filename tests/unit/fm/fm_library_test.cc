// Loading the SDK: a missing file and a library without one of the 11 symbols.
#include <gtest/gtest.h>

#include "adapters/fm/fabric_manager_client.h"
#include "adapters/fm/fabric_manager_library.h"
#include "fm_test_support.h"

namespace gfp::fm {
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
  EXPECT_NE(library.status().message().find(path), std::string::npos)
      << library.status().message();
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
  EXPECT_NE(library.status().message().find(path), std::string::npos)
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
}  // namespace gfp::fm
