// How a log line looks (SPEC §2.1 --log-format): `text`, spdlog's usual line with the thread's
// log context (common/log_context.h) at its end, or `json`, one JSON object per line with
// `time`, `level`, `msg`, the context's fields where they apply and `logger` for lines that
// come from gRPC or protobuf. Both are spdlog formatters, run on the thread that logs.
#pragma once

#include <spdlog/formatter.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "common/log_context.h"
#include "common/status.h"

namespace gfp {

enum class LogFormat { kText, kJson };

// "text" or "json"; anything else is an error naming the allowed values.
Result<LogFormat> ParseLogFormat(const std::string& value);

// trace, debug, info, warn, error, critical (the names --log-level takes, plus critical).
const char* LogLevelName(spdlog::level::level_enum level);

// One log line as the formatters see it.
struct LogRecord {
  std::chrono::system_clock::time_point time;
  spdlog::level::level_enum level = spdlog::level::info;
  std::string_view logger;  // empty for the plugin's own lines
  std::string_view message;
  LogContext context;
};

// The JSON object of one line, without the newline. Always valid JSON: control bytes are
// escaped, bytes that are not UTF-8 become U+FFFD. `time` is RFC3339 UTC with microseconds.
std::string JsonLogLine(const LogRecord& record);

// The context at the end of a text line: " [allocation_id=alloc-1 partition_id=3 pod=ns/name
// fm_code=FM_ST_SUCCESS]" with only the fields set (escaped); empty without context.
std::string TextContextSuffix(const LogContext& context);

// The formatter for `format`, reading the context of the thread that logs.
std::unique_ptr<spdlog::formatter> MakeLogFormatter(LogFormat format);

}  // namespace gfp
