#include "common/log_format.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace gfp {
namespace {

using Clock = std::chrono::system_clock;

LogRecord Record(std::string_view message, LogContext context = {}) {
  LogRecord r;
  r.time = Clock::time_point(std::chrono::microseconds(1'764'532'800'123'456));
  r.level = spdlog::level::info;
  r.message = message;
  r.context = std::move(context);
  return r;
}

nlohmann::ordered_json Parsed(const std::string& line) {
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  auto json = nlohmann::ordered_json::parse(line, nullptr, false);
  EXPECT_FALSE(json.is_discarded()) << "not JSON: " << line;
  return json;
}

std::vector<std::string> Keys(const nlohmann::ordered_json& json) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : json.items()) keys.push_back(key);
  return keys;
}

LogContext FullContext() {
  LogContext c;
  c.allocation_id = "alloc-7";
  c.partition_id = 3;
  c.pod = "vms/vm-a";
  c.fm_code = "FM_ST_SUCCESS";
  return c;
}

TEST(JsonLogLine, WithoutContextHasTimeLevelAndMessageOnly) {
  const std::string line = JsonLogLine(Record("serving"));
  EXPECT_EQ(line, R"({"time":"2025-11-30T20:00:00.123456Z","level":"info","msg":"serving"})");
  EXPECT_EQ(Keys(Parsed(line)), (std::vector<std::string>{"time", "level", "msg"}));
}

TEST(JsonLogLine, ContextFieldsAppearWhereTheyApply) {
  auto json = Parsed(JsonLogLine(Record("allocated", FullContext())));
  EXPECT_EQ(json["allocation_id"], "alloc-7");
  EXPECT_EQ(json["partition_id"], 3);  // a number
  EXPECT_EQ(json["pod"], "vms/vm-a");
  EXPECT_EQ(json["fm_code"], "FM_ST_SUCCESS");

  LogContext partial;
  partial.partition_id = 0;  // partition 0 exists: present though zero
  json = Parsed(JsonLogLine(Record("x", partial)));
  EXPECT_EQ(Keys(json), (std::vector<std::string>{"time", "level", "msg", "partition_id"}));
  EXPECT_EQ(json["partition_id"], 0);
}

TEST(JsonLogLine, LoggerIsNamedForGrpcAndProtobufLines) {
  LogRecord r = Record("Failed to bind");
  r.logger = "grpc";
  auto json = Parsed(JsonLogLine(r));
  EXPECT_EQ(json["logger"], "grpc");
  EXPECT_FALSE(Parsed(JsonLogLine(Record("x"))).contains("logger"));
}

TEST(JsonLogLine, LevelNames) {
  const std::vector<std::pair<spdlog::level::level_enum, std::string>> cases = {
      {spdlog::level::trace, "trace"}, {spdlog::level::debug, "debug"},
      {spdlog::level::info, "info"},   {spdlog::level::warn, "warn"},
      {spdlog::level::err, "error"},   {spdlog::level::critical, "critical"}};
  for (const auto& [level, name] : cases) {
    LogRecord r = Record("x");
    r.level = level;
    EXPECT_EQ(Parsed(JsonLogLine(r))["level"], name);
  }
}

TEST(JsonLogLine, TimeIsRfc3339UtcWithMicroseconds) {
  LogRecord r = Record("x");
  r.time = Clock::now();
  const std::string time = Parsed(JsonLogLine(r))["time"];
  EXPECT_TRUE(std::regex_match(time, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)")))
      << time;
  r.time = Clock::time_point(std::chrono::microseconds(5));  // leading zeros kept
  EXPECT_EQ(Parsed(JsonLogLine(r))["time"], "1970-01-01T00:00:00.000005Z");
}

TEST(JsonLogLine, ControlBytesQuotesAndBackslashesStayInsideTheString) {
  const std::string hostile = "0000:1b:00.0\n{\"level\":\"error\"}\r\t\x1b[31m\\ \x7f";
  const std::string line = JsonLogLine(Record(hostile, FullContext()));
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line.find('\x1b'), std::string::npos);
  EXPECT_EQ(Parsed(line)["msg"], hostile);  // escaped for JSON, not altered
}

TEST(JsonLogLine, InvalidUtf8StaysValidJson) {
  LogContext context;
  context.pod = "vms/\xff\xfe";
  context.allocation_id = "alloc-\xc3";  // a cut two-byte sequence
  context.fm_code = "FM_ST_\x80";
  const std::string line = JsonLogLine(Record("id \xc0\xaf caf\xc3\xa9", context));
  auto json = Parsed(line);
  EXPECT_EQ(json["msg"], "id \xEF\xBF\xBD\xEF\xBF\xBD caf\xc3\xa9");  // U+FFFD per bad byte
  EXPECT_EQ(json["pod"], "vms/\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(json["allocation_id"], "alloc-\xEF\xBF\xBD");
  EXPECT_EQ(json["fm_code"], "FM_ST_\xEF\xBF\xBD");
}

TEST(TextContextSuffix, OnlyTheFieldsSetEscaped) {
  EXPECT_EQ(TextContextSuffix({}), "");
  EXPECT_EQ(TextContextSuffix(FullContext()),
            " [allocation_id=alloc-7 partition_id=3 pod=vms/vm-a fm_code=FM_ST_SUCCESS]");
  LogContext c;
  c.pod = "vms/a\nFORGED";
  EXPECT_EQ(TextContextSuffix(c), " [pod=vms/a\\nFORGED]");
}

TEST(ParseLogFormat, TextOrJsonElseAnErrorNamingBoth) {
  EXPECT_EQ(*ParseLogFormat("text"), LogFormat::kText);
  EXPECT_EQ(*ParseLogFormat("json"), LogFormat::kJson);
  for (const std::string bad : {"JSON", "xml", "", "json "}) {
    auto parsed = ParseLogFormat(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find("--log-format="), std::string::npos);
    EXPECT_NE(parsed.status().message().find("expected text or json"), std::string::npos);
  }
}

// Through a real spdlog logger: the formatter reads the context of the thread that logs.
class FormatterTest : public ::testing::Test {
 protected:
  std::shared_ptr<spdlog::logger> Logger(LogFormat format) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    sink->set_formatter(MakeLogFormatter(format));
    auto logger = std::make_shared<spdlog::logger>("", sink);
    logger->set_level(spdlog::level::trace);
    return logger;
  }
  std::vector<std::string> Lines() const {
    std::vector<std::string> lines;
    std::istringstream in(out_.str());
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
  std::ostringstream out_;
};

TEST_F(FormatterTest, JsonLinesCarryTheScopedContextOfTheirThreadOnly) {
  auto logger = Logger(LogFormat::kJson);
  {
    ScopedLogContext scope;
    scope.AllocationId("alloc-1").PartitionId(5).Pod("vms", "vm-b");
    logger->warn("activating");
    std::thread([&] { logger->info("other thread"); }).join();
  }
  logger->error("after");
  const auto lines = Lines();
  ASSERT_EQ(lines.size(), 3u) << out_.str();
  auto first = Parsed(lines[0]);
  EXPECT_EQ(first["level"], "warn");
  EXPECT_EQ(first["msg"], "activating");
  EXPECT_EQ(first["allocation_id"], "alloc-1");
  EXPECT_EQ(first["partition_id"], 5);
  EXPECT_EQ(first["pod"], "vms/vm-b");
  EXPECT_EQ(Keys(Parsed(lines[1])), (std::vector<std::string>{"time", "level", "msg"}));
  EXPECT_EQ(Keys(Parsed(lines[2])), (std::vector<std::string>{"time", "level", "msg"}));
}

TEST_F(FormatterTest, TextLinesKeepSpdlogsLayoutWithTheContextAtTheEnd) {
  auto logger = Logger(LogFormat::kText);
  logger->info("plain");
  {
    ScopedLogContext scope;
    scope.AllocationId("alloc-2").FmCode("FM_ST_IN_USE");
    logger->warn("refused");
  }
  const auto lines = Lines();
  ASSERT_EQ(lines.size(), 2u) << out_.str();
  EXPECT_TRUE(
      std::regex_match(lines[0], std::regex(R"(\[\d{4}-\d\d-\d\d [\d:.]+\] \[info\] plain)")))
      << lines[0];
  EXPECT_TRUE(lines[1].ends_with("[warning] refused [allocation_id=alloc-2 fm_code=FM_ST_IN_USE]"))
      << lines[1];
}

}  // namespace
}  // namespace gfp
