#include "sim/apiserver/http_io.h"

#include <civetweb.h>

#include <thread>

#include "sim/apiserver/api_status.h"

namespace gfp::apisim {

void SendJson(mg_connection* connection, int code, const nlohmann::json& body,
              const std::string& extra_headers, AfterAnswer after) {
  const std::string text = body.dump();
  mg_printf(connection,
            "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
            "Cache-Control: no-cache, private\r\n%s%s\r\n",
            code, HttpReason(code), text.size(), extra_headers.c_str(),
            after == AfterAnswer::kClose ? "Connection: close\r\n" : "");
  mg_write(connection, text.data(), text.size());
}

void SendStreamHeaders(mg_connection* connection) {
  mg_printf(connection,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            "Cache-Control: no-cache, private\r\nTransfer-Encoding: chunked\r\n"
            "Connection: close\r\n\r\n");
}

bool SendChunk(mg_connection* connection, std::string_view data) {
  if (data.empty()) return true;  // an empty chunk would end the stream
  if (mg_printf(connection, "%zx\r\n", data.size()) <= 0) return false;
  if (mg_write(connection, data.data(), data.size()) <= 0) return false;
  return mg_write(connection, "\r\n", 2) > 0;
}

void EndChunks(mg_connection* connection) { mg_write(connection, "0\r\n\r\n", 5); }

bool SleepUnless(std::chrono::milliseconds duration, const StopCheck& stop) {
  const auto until = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < until) {
    if (stop()) return false;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(20), until - std::chrono::steady_clock::now()));
  }
  return !stop();
}

Result<std::string> ReadBody(mg_connection* connection, std::size_t max_bytes) {
  std::string body;
  char buffer[16384];
  for (;;) {
    const int n = mg_read(connection, buffer, sizeof buffer);
    if (n < 0) return Unavailable("reading the request body failed");
    if (n == 0) return body;
    body.append(buffer, static_cast<std::size_t>(n));
    if (body.size() > max_bytes) {
      return ResourceExhausted("the request body is larger than " + std::to_string(max_bytes) +
                               " bytes");
    }
  }
}

}  // namespace gfp::apisim
