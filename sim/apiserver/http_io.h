// Writing answers on a civetweb connection: whole JSON answers, chunked streams, and waits that
// end early when the server stops.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

struct mg_connection;

namespace gfp::apisim {

// true when the server is stopping or the request's stream should end.
using StopCheck = std::function<bool()>;

// How an answer leaves its connection: open for the client's next request, as kube-apiserver
// keeps it, or closed ("Connection: close"), as after an injected fault, so that the client's
// next request opens a new connection and a dropped one is seen as dropped.
enum class AfterAnswer { kKeepAlive, kClose };

// The status line, JSON headers, any `extra_headers` ("Name: v\r\n") and the body.
void SendJson(mg_connection* connection, int code, const nlohmann::json& body,
              const std::string& extra_headers = "", AfterAnswer after = AfterAnswer::kKeepAlive);
// Headers of a chunked 200 answer (a watch stream).
void SendStreamHeaders(mg_connection* connection);
// One chunk; false when the client is gone.
bool SendChunk(mg_connection* connection, std::string_view data);
void EndChunks(mg_connection* connection);
// Sleeps `duration` in short steps; false when `stop` said so first.
bool SleepUnless(std::chrono::milliseconds duration, const StopCheck& stop);
// The request body, refused beyond `max_bytes`.
Result<std::string> ReadBody(mg_connection* connection, std::size_t max_bytes);

}  // namespace gfp::apisim
