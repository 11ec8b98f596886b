#include "common/log_format.h"

#include <spdlog/pattern_formatter.h>

#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "common/text_escape.h"

namespace gfp {
namespace {

// "2026-11-30T20:10:23.123456Z"
std::string Rfc3339Utc(std::chrono::system_clock::time_point time) {
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(time.time_since_epoch()).count();
  std::time_t seconds = static_cast<std::time_t>(micros / 1'000'000);
  long long fraction = micros % 1'000'000;
  if (fraction < 0) fraction += 1'000'000, --seconds;
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, fraction);
  return buffer;
}

LogRecord RecordOf(const spdlog::details::log_msg& msg) {
  return {msg.time, msg.level, std::string_view(msg.logger_name.data(), msg.logger_name.size()),
          std::string_view(msg.payload.data(), msg.payload.size()), CurrentLogContext()};
}

class JsonLogFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const std::string line = JsonLogLine(RecordOf(msg)) + "\n";
    dest.append(line.data(), line.data() + line.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonLogFormatter>();
  }
};

// spdlog's default line ("[time] [level] message"), then the context.
class TextLogFormatter final : public spdlog::formatter {
 public:
  TextLogFormatter() : line_(spdlog::pattern_time_type::local, "") {}
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    line_.format(msg, dest);
    const std::string suffix = TextContextSuffix(CurrentLogContext()) + "\n";
    dest.append(suffix.data(), suffix.data() + suffix.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<TextLogFormatter>();
  }

 private:
  spdlog::pattern_formatter line_;
};

}  // namespace

Result<LogFormat> ParseLogFormat(const std::string& value) {
  if (value == "text") return LogFormat::kText;
  if (value == "json") return LogFormat::kJson;
  return InvalidArgument("--log-format=" + EscapeAndTruncate(value, 100) +
                         ": expected text or json");
}

const char* LogLevelName(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
      return "trace";
    case spdlog::level::debug:
      return "debug";
    case spdlog::level::info:
      return "info";
    case spdlog::level::warn:
      return "warn";
    case spdlog::level::err:
      return "error";
    case spdlog::level::critical:
      return "critical";
    default:
      return "off";
  }
}

std::string JsonLogLine(const LogRecord& record) {
  nlohmann::ordered_json line;
  line["time"] = Rfc3339Utc(record.time);
  line["level"] = LogLevelName(record.level);
  line["msg"] = std::string(record.message);
  if (!record.logger.empty()) line["logger"] = std::string(record.logger);
  const LogContext& c = record.context;
  if (!c.allocation_id.empty()) line["allocation_id"] = c.allocation_id;
  if (c.partition_id) line["partition_id"] = *c.partition_id;
  if (!c.pod.empty()) line["pod"] = c.pod;
  if (!c.fm_code.empty()) line["fm_code"] = c.fm_code;
  return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string TextContextSuffix(const LogContext& context) {
  std::string fields;
  const auto add = [&](const char* key, const std::string& value) {
    if (value.empty()) return;
    fields += (fields.empty() ? "" : " ") + std::string(key) + "=" + EscapeAndTruncate(value, 256);
  };
  add("allocation_id", context.allocation_id);
  add("partition_id", context.partition_id ? std::to_string(*context.partition_id) : "");
  add("pod", context.pod);
  add("fm_code", context.fm_code);
  return fields.empty() ? "" : " [" + fields + "]";
}

std::unique_ptr<spdlog::formatter> MakeLogFormatter(LogFormat format) {
  if (format == LogFormat::kJson) return std::make_unique<JsonLogFormatter>();
  return std::make_unique<TextLogFormatter>();
}

}  // namespace gfp
