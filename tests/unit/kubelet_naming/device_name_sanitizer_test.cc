#include "adapters/kubelet_naming/device_name_sanitizer.h"

#include <gtest/gtest.h>

namespace gfp::adapters::kubelet_naming {
namespace {

// The examples of reference/upstream-behaviour.md §1.3 (text after the device id).
TEST(HostDeviceNameSanitizer, GoPluginExamples) {
  EXPECT_EQ(SanitizeDeviceName("  GH100 [H100 SXM5 80GB]"), "GH100_H100_SXM5_80GB");
  EXPECT_EQ(SanitizeDeviceName(" GH100 [H200 SXM 141GB]"), "GH100_H200_SXM_141GB");
  EXPECT_EQ(SanitizeDeviceName(" GH100 [H100 PCIe]"), "GH100_H100_PCIE");
  EXPECT_EQ(SanitizeDeviceName(" GA100 [A100-SXM-64GB]"), "GA100_A100SXM64GB");
  EXPECT_EQ(SanitizeDeviceName(" GH100 [GH200 120GB / 480GB]"), "GH100_GH200_120GB___480GB");
  EXPECT_EQ(SanitizeDeviceName(" gk104.gl [grid/k./520]"), "GK104_GL_GRID_K__520");
}

TEST(HostDeviceNameSanitizer, WhitespaceRunsBecomeOneUnderscore) {
  EXPECT_EQ(SanitizeDeviceName("a  \t b\n\fc\rd"), "A_B_C_D");
  EXPECT_EQ(SanitizeDeviceName("\t  trimmed  \t"), "TRIMMED");
}

TEST(HostDeviceNameSanitizer, SlashAndDotBecomeUnderscoresBeforeWhitespaceCollapse) {
  EXPECT_EQ(SanitizeDeviceName("a / b"), "A___B");
  EXPECT_EQ(SanitizeDeviceName("x.y/z"), "X_Y_Z");
}

TEST(HostDeviceNameSanitizer, DropsEverythingElse) {
  EXPECT_EQ(SanitizeDeviceName("[a](b){c},d-e+f:g'h\"i"), "ABCDEFGHI");
  EXPECT_EQ(SanitizeDeviceName("[---]"), "");
  EXPECT_EQ(SanitizeDeviceName(""), "");
}

TEST(HostDeviceNameSanitizer, VerticalTabIsTrimmedButNotARegexpSpace) {
  // Go's TrimSpace trims \v, but RE2's \s does not match it, so inside a name it is dropped.
  EXPECT_EQ(SanitizeDeviceName("\va\vb\v"), "AB");
}

TEST(HostDeviceNameSanitizer, UnicodeLikeGoStrings) {
  // A no-break space is trimmed at the ends (unicode.IsSpace) but dropped inside.
  EXPECT_EQ(SanitizeDeviceName("\xC2\xA0gpu \xC2\xA0 x\xC2\xA0"), "GPU__X");
  // Dotless i and long s upper-case to ASCII in Go; other letters vanish.
  EXPECT_EQ(SanitizeDeviceName("\xC4\xB1\xC5\xBF \xC3\xA9t\xC3\xA9"), "IS_T");
  // Invalid UTF-8 bytes are dropped.
  EXPECT_EQ(SanitizeDeviceName("a\xFF\xC3z"), "AZ");
}

}  // namespace
}  // namespace gfp::adapters::kubelet_naming
