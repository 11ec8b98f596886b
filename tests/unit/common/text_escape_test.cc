#include "common/text_escape.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace gfp {
namespace {

TEST(EscapeControl, PrintableAsciiAndUtf8PassUnchanged) {
  EXPECT_EQ(EscapeControl("0000:1b:00.0"), "0000:1b:00.0");
  EXPECT_EQ(EscapeControl("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"),
            "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
}

TEST(EscapeControl, ANewlineCannotForgeALine) {
  const std::string forged = "0000:1b:00.0\n2026-01-01 seq 9 AllocationGranted";
  const std::string escaped = EscapeControl(forged);
  EXPECT_EQ(escaped.find('\n'), std::string::npos);
  EXPECT_EQ(escaped, "0000:1b:00.0\\n2026-01-01 seq 9 AllocationGranted");
}

TEST(EscapeControl, ControlBytesDelAndBackslashAreEscaped) {
  EXPECT_EQ(EscapeControl(std::string("a\r\tb\x01\x1b[31m\x7f\\", 12)),
            "a\\r\\tb\\x01\\x1b[31m\\x7f\\\\");
  EXPECT_EQ(EscapeControl(std::string("nul\0end", 7)), "nul\\x00end");
}

TEST(EscapeControl, InvalidUtf8IsEscapedBytewise) {
  EXPECT_EQ(EscapeControl("\xFF\xFE"), "\\xff\\xfe");
  EXPECT_EQ(EscapeControl("\xC3"), "\\xc3");                    // truncated sequence
  EXPECT_EQ(EscapeControl("\xC0\xAF"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(EscapeControl("\xED\xA0\x80"), "\\xed\\xa0\\x80");  // surrogate
}

TEST(EscapeAndTruncate, ShortTextIsOnlyEscaped) {
  EXPECT_EQ(EscapeAndTruncate("a\nb", 10), "a\\nb");
}

TEST(EscapeAndTruncate, LongTextSaysHowMuchWasCut) {
  const std::string id(1000, 'x');
  EXPECT_EQ(EscapeAndTruncate(id, 8), "xxxxxxxx\xE2\x80\xA6 (992 more bytes)");
}

TEST(EscapeAndTruncate, NeverSplitsAnEscape) {
  // "ab" fits, "\n" as "\\n" would need 4 bytes in a 3-byte budget: cut before it.
  EXPECT_EQ(EscapeAndTruncate("ab\ncd", 3), "ab\xE2\x80\xA6 (3 more bytes)");
}

// EscapeControl copies runs of plain ASCII whole; EscapeAndTruncate (with room for everything)
// still escapes one character at a time: on any bytes they must agree.
TEST(EscapeControl, CopyingPlainRunsWholeEscapesLikeOneCharacterAtATime) {
  std::mt19937 rng(12);  // fixed seed: a failure prints the text that differs
  const std::string alphabet =
      std::string("ab \\~\x7f\n\t\r\x01") + "\xC3\xA9\xE2\x80\xA6\xF0\x9F\x98\x80\xFF\xC0";
  for (int round = 0; round < 5000; ++round) {
    std::string text;
    const int length = static_cast<int>(rng() % 40);
    for (int i = 0; i < length; ++i) text += alphabet[rng() % alphabet.size()];
    ASSERT_EQ(EscapeControl(text), EscapeAndTruncate(text, 1 << 20))
        << "text: " << EscapeAndTruncate(text, 1 << 20);
  }
}

}  // namespace
}  // namespace gfp
