#include "adapters/host/bdf.h"

#include <gtest/gtest.h>

namespace gfp::adapters::host {
namespace {

TEST(HostBdf, NormalizesNvidiaSmiSpelling) {
  auto bdf = NormalizeBdf("00000000:AB:00.0");
  ASSERT_TRUE(bdf.ok()) << bdf.status().message();
  EXPECT_EQ(*bdf, "0000:ab:00.0");
}

TEST(HostBdf, KeepsCanonicalForm) {
  EXPECT_EQ(*NormalizeBdf("0000:1b:00.0"), "0000:1b:00.0");
  EXPECT_EQ(*NormalizeBdf("0:1B:1f.7"), "0000:1b:1f.7");
  // Domains above 0xffff keep their digits like the kernel's "%04x" (VMD domains).
  EXPECT_EQ(*NormalizeBdf("10000:E1:00.0"), "10000:e1:00.0");
}

TEST(HostBdf, RejectsMalformedAddresses) {
  for (const char* bad :
       {"", "0000:1b:00", "0000-1b-00.0", "0000:1b:00.8", "0000:1b:20.0", "0000:zz:00.0",
        "000000000:1b:00.0", "0000:1b:00.0 ", "1b:00.0", "0000:1b:00.0/..", "gpu0"}) {
    auto bdf = NormalizeBdf(bad);
    EXPECT_FALSE(bdf.ok()) << bad;
    if (!bdf.ok()) {
      EXPECT_EQ(bdf.status().message(), std::string("\"") + bad +
                                            "\" is not a PCI address (expected DDDD:BB:DD.F, "
                                            "e.g. 0000:1b:00.0)");
    }
  }
}

TEST(HostBdf, CanonicalCheck) {
  EXPECT_TRUE(IsCanonicalBdf("0000:1b:00.0"));
  EXPECT_FALSE(IsCanonicalBdf("0000:1B:00.0"));
  EXPECT_FALSE(IsCanonicalBdf("00000000:1b:00.0"));
  EXPECT_FALSE(IsCanonicalBdf("devices"));
}

}  // namespace
}  // namespace gfp::adapters::host
