#include <gtest/gtest.h>

#include <string>

#include "adapters/fm/fm_address.h"

namespace gfp::fm {
namespace {

TEST(FmAddress, SlashMeansUnixSocket) {
  auto address = ParseFmAddress("/run/nvidia-fabricmanager/fmpm.sock");
  ASSERT_TRUE(address.ok()) << address.status().message();
  EXPECT_TRUE(address->is_unix_socket);
  EXPECT_EQ(address->AddressInfo(), "/run/nvidia-fabricmanager/fmpm.sock");
}

TEST(FmAddress, Ipv4GetsDefaultPort6666) {
  auto address = ParseFmAddress("127.0.0.1");
  ASSERT_TRUE(address.ok()) << address.status().message();
  EXPECT_FALSE(address->is_unix_socket);
  EXPECT_EQ(address->port, 6666);
  EXPECT_EQ(address->AddressInfo(), "127.0.0.1:6666");
}

TEST(FmAddress, Ipv4WithPort) {
  auto address = ParseFmAddress("10.0.0.7:7000");
  ASSERT_TRUE(address.ok()) << address.status().message();
  EXPECT_EQ(address->AddressInfo(), "10.0.0.7:7000");
}

TEST(FmAddress, GarbageIsRejectedWithTheValueInTheMessage) {
  for (const char* bad : {"localhost", "1.2.3", "1.2.3.256", "1.2.3.4.5", "1.2.3.4:", "1.2.3.4:0",
                          "1.2.3.4:70000", "1.2.3.4:ab", "-1.2.3.4", " 1.2.3.4", "1..2.3",
                          "run/fm.sock", "::1"}) {
    auto address = ParseFmAddress(bad);
    ASSERT_FALSE(address.ok()) << bad;
    EXPECT_EQ(address.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(address.status().message().find(std::string("\"") + bad), std::string::npos)
        << address.status().message();
  }
  auto empty = ParseFmAddress("");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos);
}

TEST(FmAddress, UnixPathMustFitTheConnectStruct) {
  EXPECT_TRUE(ParseFmAddress("/" + std::string(254, 'a')).ok());
  auto too_long = ParseFmAddress("/" + std::string(255, 'a'));
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.status().message().find("longer than 255"), std::string::npos);
}

}  // namespace
}  // namespace gfp::fm
