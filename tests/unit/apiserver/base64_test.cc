#include "adapters/apiserver/base64.h"

#include "unit/apiserver/apiserver_fixture.h"

namespace gfp::adapters::apiserver {
namespace {

using testing::Encode;
using testing::ErrorOf;
using ::testing::HasSubstr;

TEST(DecodeBase64, RoundTripsEveryLengthAndByte) {
  std::string bytes;
  for (int i = 0; i < 300; ++i) {
    bytes.push_back(static_cast<char>(i * 37 % 256));
    const Result<std::string> decoded = DecodeBase64(Encode(bytes));
    ASSERT_TRUE(decoded.ok()) << ErrorOf(decoded);
    ASSERT_EQ(*decoded, bytes);
  }
}

TEST(DecodeBase64, KnownVectors) {
  EXPECT_EQ(*DecodeBase64(""), "");
  EXPECT_EQ(*DecodeBase64("Zg=="), "f");
  EXPECT_EQ(*DecodeBase64("Zm8="), "fo");
  EXPECT_EQ(*DecodeBase64("Zm9v"), "foo");
  EXPECT_EQ(*DecodeBase64("Zm9vYg=="), "foob");
}

TEST(DecodeBase64, SkipsLineBreaksAsGoDoes) {
  EXPECT_EQ(*DecodeBase64("Zm9v\nYmFy\r\n"), "foobar");
}

TEST(DecodeBase64, RefusesWhatIsNotBase64NamingTheOffsetOnly) {
  const Result<std::string> star = DecodeBase64("Zm9v*mFy");
  EXPECT_THAT(ErrorOf(star),
              HasSubstr("not valid base64 (a character outside the alphabet at byte 4)"));
  EXPECT_THAT(ErrorOf(DecodeBase64("Zm9 v")), HasSubstr("outside the alphabet at byte 3"));
  EXPECT_THAT(ErrorOf(DecodeBase64("Zm9vY")), HasSubstr("not a multiple of 4"));
  EXPECT_THAT(ErrorOf(DecodeBase64("Zm9")), HasSubstr("not a multiple of 4"));
  EXPECT_THAT(ErrorOf(DecodeBase64("Z===")), HasSubstr("padding too early"));
  EXPECT_THAT(ErrorOf(DecodeBase64("Zg=a")), HasSubstr("data after padding"));
  EXPECT_THAT(ErrorOf(DecodeBase64("Zg==Zm9v")), HasSubstr("data after padding"));
  EXPECT_THAT(ErrorOf(DecodeBase64("Zm9v-_==")), HasSubstr("outside the alphabet"));  // URL form
}

}  // namespace
}  // namespace gfp::adapters::apiserver
