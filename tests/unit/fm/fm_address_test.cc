#include "adapters/fm/fm_address.h"

#include <gtest/gtest.h>

#include <string>

namespace gfp::adapters::fm {
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
  for (const char* bad :
       {"localhost", "1.2.3", "1.2.3.256", "1.2.3.4.5", "1.2.3.4:", "1.2.3.4:0", "1.2.3.4:70000",
        "1.2.3.4:ab", "-1.2.3.4", " 1.2.3.4", "1..2.3", "run/fm.sock", "::1"}) {
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

TEST(FmAddress, Ipv6IsRefusedAsUnsupportedByTheSdk) {
  for (const char* v6 : {"[::1]:6666", "[::1]", "::1", "fe80::1", "[2001:db8::7]:7000"}) {
    auto address = ParseFmAddress(v6);
    ASSERT_FALSE(address.ok()) << v6;
    EXPECT_EQ(address.status().message(),
              std::string("Fabric Manager address \"") + v6 +
                  "\" is IPv6, which the Fabric Manager SDK does not support (its addressInfo "
                  "takes IPv4[:port] or a Unix socket path)");
  }
}

TEST(FmAddress, HostileAddressesGetSpecificMessages) {
  auto message = [](std::string_view text) {
    auto address = ParseFmAddress(text);
    EXPECT_FALSE(address.ok()) << text;
    return address.ok() ? std::string() : address.status().message();
  };
  EXPECT_EQ(message(":6666"), "Fabric Manager address \":6666\" has no host before ':'");
  EXPECT_EQ(message("1.2.3.4:66:66"),
            "Fabric Manager address \"1.2.3.4:66:66\" has an invalid port \"66:66\" (expected "
            "1..65535)");
  EXPECT_EQ(message("1.2.3.4:"), "Fabric Manager address \"1.2.3.4:\" has no port after ':'");
  EXPECT_EQ(message("1.2.3.4:0"),
            "Fabric Manager address \"1.2.3.4:0\" has an invalid port \"0\" (expected 1..65535)");
  EXPECT_EQ(message("1.2.3.4:70000"),
            "Fabric Manager address \"1.2.3.4:70000\" has an invalid port \"70000\" (expected "
            "1..65535)");
  EXPECT_EQ(message(" 1.2.3.4"),
            "Fabric Manager address \" 1.2.3.4\" contains whitespace or control characters");
  EXPECT_EQ(message("1.2.3.4 :6666"),
            "Fabric Manager address \"1.2.3.4 :6666\" contains whitespace or control characters");
  EXPECT_EQ(message("1.2.3.4:66 66"),
            "Fabric Manager address \"1.2.3.4:66 66\" contains whitespace or control characters");
  // Echoed escaped: a newline in the flag cannot forge a log line.
  EXPECT_EQ(message("1.2.3.4\n[error] forged"),
            "Fabric Manager address \"1.2.3.4\\n[error] forged\" contains whitespace or control "
            "characters");
  EXPECT_EQ(message("/run/fm\n.sock"),
            "Fabric Manager address \"/run/fm\\n.sock\" contains whitespace or control characters");
}

TEST(FmAddress, UnixPathMustFitTheConnectStruct) {
  EXPECT_TRUE(ParseFmAddress("/" + std::string(254, 'a')).ok());
  auto too_long = ParseFmAddress("/" + std::string(255, 'a'));
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.status().message().find("longer than 255"), std::string::npos);
}

}  // namespace
}  // namespace gfp::adapters::fm
