#include "cli/log_setup.h"

#include <google/protobuf/stubs/logging.h>
#include <grpc/support/log.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string_view>

namespace gfp::cli {
namespace {

std::atomic<LogFormat> g_format{LogFormat::kText};
// Never destroyed: gRPC's threads may still log while the process exits. The globals hold the
// shared_ptr itself (not only the logger), so LeakSanitizer sees it reachable.
std::shared_ptr<spdlog::logger>* g_grpc_logger = nullptr;
std::shared_ptr<spdlog::logger>* g_protobuf_logger = nullptr;

std::shared_ptr<spdlog::logger>* LeakedLogger(const std::string& name,
                                              const spdlog::sink_ptr& sink) {
  auto* logger = new std::shared_ptr<spdlog::logger>(std::make_shared<spdlog::logger>(name, sink));
  spdlog::drop(name);
  spdlog::register_logger(*logger);  // so that spdlog::set_level and set_formatter reach it
  return logger;
}

std::string_view BaseName(const char* path) {
  const std::string_view text = path ? path : "";
  const std::size_t slash = text.rfind('/');
  return slash == std::string_view::npos ? text : text.substr(slash + 1);
}

// gRPC calls this only for severities its GRPC_VERBOSITY lets through (ERROR by default).
void LogFromGrpc(gpr_log_func_args* args) {
  spdlog::level::level_enum level = spdlog::level::err;
  if (args->severity == GPR_LOG_SEVERITY_DEBUG) level = spdlog::level::debug;
  if (args->severity == GPR_LOG_SEVERITY_INFO) level = spdlog::level::info;
  (*g_grpc_logger)
      ->log(level, "{} ({}:{})", args->message ? args->message : "", BaseName(args->file),
            args->line);
}

void LogFromProtobuf(google::protobuf::LogLevel severity, const char* file, int line,
                     const std::string& message) {
  spdlog::level::level_enum level = spdlog::level::err;
  if (severity == google::protobuf::LOGLEVEL_INFO) level = spdlog::level::info;
  if (severity == google::protobuf::LOGLEVEL_WARNING) level = spdlog::level::warn;
  if (severity == google::protobuf::LOGLEVEL_FATAL) level = spdlog::level::critical;
  (*g_protobuf_logger)->log(level, "{} ({}:{})", message, BaseName(file), line);
}

}  // namespace

void InstallLogging() {
  // spdlog's own default logger writes to stdout; stdout carries only a command's output.
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("", sink));
  g_grpc_logger = LeakedLogger("grpc", sink);
  g_protobuf_logger = LeakedLogger("protobuf", sink);
  UseLogFormat(LogFormat::kText);
  gpr_set_log_function(LogFromGrpc);
  google::protobuf::SetLogHandler(LogFromProtobuf);
}

void UseLogFormat(LogFormat format) {
  g_format.store(format);
  spdlog::set_formatter(MakeLogFormatter(format));
}

LogFormat CurrentLogFormat() { return g_format.load(); }

bool ServeAsksForJson(const std::vector<std::string>& args) {
  if (args.empty() || args[0] != "serve") return false;
  const std::string flag = "--log-format";
  const char* env = std::getenv("GPU_FABRIC_LOG_FORMAT");
  std::string value = env ? env : "";
  for (std::size_t i = 1; i < args.size() && args[i] != "--"; ++i) {
    if (args[i].rfind(flag + "=", 0) == 0) value = args[i].substr(flag.size() + 1);
    if (args[i] == flag && i + 1 < args.size()) value = args[++i];
  }
  return value == "json";
}

void ReportStartupError(const std::string& message) {
  if (g_format.load() == LogFormat::kJson) {
    spdlog::error("{}", message);
  } else {
    std::cerr << "error: " << message << "\n";
  }
}

}  // namespace gfp::cli
