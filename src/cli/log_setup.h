// Where and how the process logs (SPEC §2.1 --log-format): every line to stderr, spdlog's and
// also gRPC's and protobuf's own (through loggers named "grpc" and "protobuf"), in one format.
#pragma once

#include <string>
#include <vector>

#include "common/log_format.h"

namespace gfp::cli {

// Once, at the start of main: text lines on stderr, gRPC and protobuf routed through spdlog.
void InstallLogging();

// Every line from now on is in `format` (serve, once its flag is read).
void UseLogFormat(LogFormat format);
LogFormat CurrentLogFormat();

// Whether `args` (argv without the program name) run `serve` asking for JSON: its last
// --log-format value, or without the flag GPU_FABRIC_LOG_FORMAT, is "json". Read before the
// command line is parsed, so that even an unknown flag is reported as a JSON line.
bool ServeAsksForJson(const std::vector<std::string>& args);

// A start-up error: "error: MESSAGE" on stderr as text, one line at level error as JSON.
void ReportStartupError(const std::string& message);

}  // namespace gfp::cli
