#include "sim/apiserver/fault_answers.h"

#include <civetweb.h>

#include "sim/apiserver/api_status.h"

namespace gfp::apisim {
namespace {

int AnswerStatus(mg_connection* connection, int code, const std::string& verb,
                 const std::string& resource) {
  const std::string message =
      "injected fault: " + std::to_string(code) + " for " + verb + " " + resource;
  // 429 and 503 carry Retry-After, as kube-apiserver's priority and fairness sends them.
  const std::string headers = code == 429 || code == 503 ? "Retry-After: 1\r\n" : "";
  SendJson(connection, code, StatusObject(code, message), headers, AfterAnswer::kClose);
  return code;
}

// Headers promising a body, then one byte a second until the client or the server gives up.
int AnswerSlowly(mg_connection* connection, const StopCheck& stop) {
  mg_printf(connection,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n"
            "Connection: close\r\n\r\n");
  while (SleepUnless(std::chrono::milliseconds(1000), stop)) {
    if (mg_write(connection, " ", 1) <= 0) break;
  }
  return 200;
}

}  // namespace

int AnswerFault(mg_connection* connection, const Fault& fault, const std::string& verb,
                const std::string& resource, const StopCheck& stop) {
  switch (fault.kind) {
    case FaultKind::kDrop:
      // Nothing written: civetweb closes the connection. Every fault answer closes its
      // connection, so this is a new one and the client sees the drop (on a reused connection
      // curl would retry once by itself).
      return 0;
    case FaultKind::kGarbage: {
      static constexpr char kBody[] = "<html><body>502 Bad Gateway {\"kind\": oops</body></html>";
      mg_printf(connection,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                "Connection: close\r\n\r\n%s",
                sizeof kBody - 1, kBody);
      return 200;
    }
    case FaultKind::kSlowLoris:
      return AnswerSlowly(connection, stop);
    default:
      return AnswerStatus(connection, fault.code, verb, resource);
  }
}

}  // namespace gfp::apisim
