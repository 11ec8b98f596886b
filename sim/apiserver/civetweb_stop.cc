#include "sim/apiserver/civetweb_stop.h"

#include <arpa/inet.h>
#include <civetweb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace gfp::apisim {
namespace {

void Knock(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  ::close(fd);
}

}  // namespace

void StopPromptly(mg_context* context, int port) {
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    mg_stop(context);
    stopped = true;
  });
  while (!stopped && port > 0) {
    Knock(port);  // fails once the listener is closed: harmless
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stopper.join();
}

}  // namespace gfp::apisim
