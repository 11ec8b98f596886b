#include "cli/flag_values.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <limits>
#include <string>
#include <vector>

namespace gfp::cli {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;

std::string DurationError(const std::string& value, milliseconds maximum = hours(24)) {
  auto parsed = ParseDurationFlag("reconcile-interval", value, maximum);
  EXPECT_FALSE(parsed.ok()) << value << " was accepted as " << parsed->count() << " ms";
  return parsed.ok() ? "" : parsed.status().message();
}

TEST(FlagValues, DurationsWithEveryUnit) {
  EXPECT_EQ(*ParseDurationFlag("x", "250ms", hours(24)), milliseconds(250));
  EXPECT_EQ(*ParseDurationFlag("x", "5s", hours(24)), milliseconds(5000));
  EXPECT_EQ(*ParseDurationFlag("x", "2m", hours(24)), milliseconds(120'000));
  EXPECT_EQ(*ParseDurationFlag("x", "1h", hours(24)), milliseconds(3'600'000));
  EXPECT_EQ(*ParseDurationFlag("x", "0s", hours(24)), milliseconds(0));
}

TEST(FlagValues, DurationAtTheMaximumIsAccepted) {
  EXPECT_EQ(*ParseDurationFlag("x", "24h", hours(24)), hours(24));
  EXPECT_EQ(*ParseDurationFlag("x", "1440m", hours(24)), hours(24));
  EXPECT_EQ(*ParseDurationFlag("x", "86400000ms", hours(24)), hours(24));
  EXPECT_EQ(*ParseDurationFlag("x", "720h", hours(720)), hours(720));
}

TEST(FlagValues, DurationAboveTheMaximumNamesFlagValueAndMaximum) {
  EXPECT_EQ(DurationError("86400001ms"),
            "--reconcile-interval=86400001ms is above the maximum 24h");
  EXPECT_EQ(DurationError("25h"), "--reconcile-interval=25h is above the maximum 24h");
  EXPECT_EQ(DurationError("721h", hours(720)),
            "--reconcile-interval=721h is above the maximum 720h (30 days)");
}

TEST(FlagValues, DurationsThatOverflowAreAboveTheMaximum) {
  // 9999999999999 s = 9.99e15 ms fits in int64 ms but is far beyond any maximum; before, it
  // was multiplied without a check and came out negative for larger counts.
  EXPECT_EQ(DurationError("9999999999999s", hours(720)),
            "--reconcile-interval=9999999999999s is above the maximum 720h (30 days)");
  EXPECT_EQ(DurationError("9223372036854775807ms"),
            "--reconcile-interval=9223372036854775807ms is above the maximum 24h");
  EXPECT_EQ(DurationError("9223372036854775807h"),
            "--reconcile-interval=9223372036854775807h is above the maximum 24h");
  EXPECT_EQ(DurationError("153722867280912931m"),  // * 60000 wraps int64
            "--reconcile-interval=153722867280912931m is above the maximum 24h");
  EXPECT_EQ(DurationError("99999999999999999999999s"),  // not even an int64
            "--reconcile-interval=99999999999999999999999s is above the maximum 24h");
}

TEST(FlagValues, MalformedDurations) {
  for (const char* bad : {"", "s", "-5s", "+5s", "5", "5 s", " 5s", "5sec", "5S", "1.5s", "0x5s"}) {
    const std::string message = DurationError(bad);
    EXPECT_EQ(message.rfind(std::string("--reconcile-interval=") + bad + ":", 0), 0u) << message;
  }
  EXPECT_EQ(DurationError("5\nforged"),
            "--reconcile-interval=5\\nforged: unknown unit \"\\nforged\" (use ms, s, m or h)");
}

TEST(FlagValues, BoolValues) {
  for (const char* yes : {"", "1", "t", "T", "true", "TRUE", "True"}) {
    EXPECT_TRUE(*ParseBoolFlag("fabric-manager", yes)) << yes;
  }
  for (const char* no : {"0", "f", "F", "false", "FALSE"}) {
    EXPECT_FALSE(*ParseBoolFlag("fabric-manager", no)) << no;
  }
  auto bad = ParseBoolFlag("fabric-manager", "yes\n[error] forged");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "--fabric-manager=yes\\n[error] forged: expected 1/0, true/false or t/f");
}

Status CheckArgs(std::vector<std::string> args) { return CheckNoEmptyValues(args); }

TEST(FlagValues, EmptyValuesOnTheCommandLineAreFound) {
  EXPECT_TRUE(CheckArgs({"serve", "--journal=/j", "--fabric-manager", "--pci-ids", "/p"}).ok());
  EXPECT_TRUE(CheckArgs({"serve", "--fabric-manager", "--journal=/j"}).ok());  // bare bool

  const Status glued = CheckArgs({"serve", "--journal=", "--sysfs-root=/x"});
  EXPECT_EQ(glued.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(glued.message(),
            "--journal: the value is empty; give a value, or leave the flag out to use its "
            "default");
  EXPECT_EQ(CheckArgs({"serve", "--pci-ids", "", "--journal=J"}).message(),
            "--pci-ids: the value is empty; give a value, or leave the flag out to use its "
            "default");
  EXPECT_EQ(CheckArgs({"serve", "--fabric-manager="}).message(),
            "--fabric-manager: the value is empty; give a value, or leave the flag out to use "
            "its default");
  // A lone "" that follows no flag is left to the parser (it is an extra argument).
  EXPECT_TRUE(CheckArgs({"serve", ""}).ok());
  EXPECT_TRUE(CheckArgs({"serve", "--journal=/j", ""}).ok());
  // After "--" nothing is a flag.
  EXPECT_TRUE(CheckArgs({"serve", "--", "--journal="}).ok());
}

TEST(FlagValues, EmptyEnvironmentVariableIsFound) {
  ASSERT_EQ(setenv("GFP_TEST_EMPTY", "", 1), 0);
  ASSERT_EQ(setenv("GFP_TEST_SET", "x", 1), 0);
  ASSERT_EQ(unsetenv("GFP_TEST_UNSET"), 0);
  EXPECT_TRUE(CheckEnvironmentValueNotEmpty("journal", "GFP_TEST_SET").ok());
  EXPECT_TRUE(CheckEnvironmentValueNotEmpty("journal", "GFP_TEST_UNSET").ok());
  const Status empty = CheckEnvironmentValueNotEmpty("journal", "GFP_TEST_EMPTY");
  EXPECT_EQ(empty.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(empty.message(),
            "--journal: environment variable GFP_TEST_EMPTY is set but empty; give a value, or "
            "unset it to use the default");
}

}  // namespace
}  // namespace gfp::cli
