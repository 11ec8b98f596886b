// Test helpers for the metrics endpoint: a minimal HTTP/1.1 client over TCP (IPv4 or IPv6), and a
// reader of the Prometheus text exposition (families, their types, the label names of each sample).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace gfp::testing {

struct HttpReply {
  int status = 0;       // 0: no answer (connection refused, timeout, garbage)
  std::string headers;  // the header lines after the status line, as sent
  std::string body;
};

// A TCP connection to host (an IPv4 or IPv6 address) and port, or -1. `timeout` bounds each
// send and receive on it.
inline int ConnectTcp(const std::string& host, int port,
                      std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  sockaddr_storage storage{};
  socklen_t length = 0;
  sockaddr_in v4{};
  sockaddr_in6 v6{};
  if (::inet_pton(AF_INET, host.c_str(), &v4.sin_addr) == 1) {
    v4.sin_family = AF_INET;
    v4.sin_port = htons(static_cast<std::uint16_t>(port));
    length = sizeof v4;
    std::memcpy(&storage, &v4, length);
  } else if (::inet_pton(AF_INET6, host.c_str(), &v6.sin6_addr) == 1) {
    v6.sin6_family = AF_INET6;
    v6.sin6_port = htons(static_cast<std::uint16_t>(port));
    length = sizeof v6;
    std::memcpy(&storage, &v6, length);
  } else {
    return -1;
  }
  const int fd = ::socket(storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  timeval tv{static_cast<time_t>(timeout.count() / 1000),
             static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&storage), length) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// One HTTP/1.1 request; the reply is read until the server closes the connection.
struct HttpRequest {
  std::string host = "127.0.0.1";  // an IPv4 or IPv6 address (no brackets)
  int port = 0;
  std::string method = "GET";
  std::string path = "/";
  std::string connection = "close";  // the Connection header
  std::string extra_headers;         // "Name: value\r\n" lines
  std::chrono::milliseconds timeout = std::chrono::seconds(5);
};

inline HttpReply HttpSend(const HttpRequest& request) {
  HttpReply reply;
  const int fd = ConnectTcp(request.host, request.port, request.timeout);
  if (fd < 0) return reply;
  const std::string text = request.method + " " + request.path +
                           " HTTP/1.1\r\nHost: localhost\r\nConnection: " + request.connection +
                           "\r\n" + request.extra_headers + "\r\n";
  if (::send(fd, text.data(), text.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(text.size())) {
    ::close(fd);
    return reply;
  }
  std::string raw;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    raw.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  std::smatch m;
  static const std::regex status_line(R"(^HTTP/1\.[01] (\d{3})[^\r\n]*\r\n)");
  if (!std::regex_search(raw, m, status_line)) return reply;
  reply.status = std::stoi(m[1]);
  const auto line_end = static_cast<std::size_t>(m.length(0));
  const auto body = raw.find("\r\n\r\n");
  if (body == std::string::npos) return reply;
  reply.headers = raw.substr(line_end, body + 2 - line_end);
  reply.body = raw.substr(body + 4);
  return reply;
}

// GET (or another method) of `path` on 127.0.0.1:port; waits at most `timeout` for the answer.
inline HttpReply HttpGet(int port, const std::string& path,
                         std::chrono::milliseconds timeout = std::chrono::seconds(5),
                         const std::string& method = "GET") {
  HttpRequest request;
  request.port = port;
  request.path = path;
  request.timeout = timeout;
  request.method = method;
  return HttpSend(request);
}

// One family of the exposition: its TYPE and the label names of every sample (histogram
// samples' `le` excluded, as it is part of the type, not of the family's labels).
struct ExposedFamily {
  std::string type;
  std::set<std::set<std::string>> label_sets;
};

inline std::map<std::string, ExposedFamily> ReadExposition(const std::string& text) {
  std::map<std::string, ExposedFamily> families;
  std::istringstream in(text);
  std::string line;
  static const std::regex type_line(R"(^# TYPE (\S+) (\S+)$)");
  static const std::regex sample(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? \S+$)");
  static const std::regex label(R"(([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\]|\\.)*)\")");
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, type_line)) {
      families[m[1]].type = m[2];
      continue;
    }
    if (line.empty() || line[0] == '#' || !std::regex_match(line, m, sample)) continue;
    std::string name = m[1];
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string s(suffix);
      if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0 &&
          families.count(name.substr(0, name.size() - s.size())) &&
          families[name.substr(0, name.size() - s.size())].type == "histogram") {
        name = name.substr(0, name.size() - s.size());
      }
    }
    std::set<std::string> names;
    const std::string labels = m[3];
    for (std::sregex_iterator it(labels.begin(), labels.end(), label), end; it != end; ++it) {
      if ((*it)[1] != "le") names.insert((*it)[1]);
    }
    families[name].label_sets.insert(names);
  }
  return families;
}

// The value of the sample written exactly as `series` (e.g.
// `gpu_fabric_partitions_free{size="2"}`).
inline std::optional<double> SampleValue(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      return std::stod(line.substr(series.size() + 1));
    }
  }
  return std::nullopt;
}

}  // namespace gfp::testing

namespace gfp::testing {

// SPEC §8.1 and §11: every family, its type and exactly its labels. A family with labels shows
// in a scrape from its first sample on (gpu_fabric_api_requests_total: the first API request).
struct SpecFamily {
  std::string type;
  std::set<std::string> labels;
};
inline const std::map<std::string, SpecFamily>& SpecFamilies() {
  static const std::map<std::string, SpecFamily> families = {
      {"gpu_fabric_build_info", {"gauge", {"version"}}},
      {"gpu_fabric_devices", {"gauge", {"resource", "health"}}},
      {"gpu_fabric_allocations_total", {"counter", {"resource", "result"}}},
      {"gpu_fabric_allocate_seconds", {"histogram", {"resource"}}},
      {"gpu_fabric_partition_operations_total", {"counter", {"operation", "result", "fm_code"}}},
      {"gpu_fabric_partitions_active", {"gauge", {}}},
      {"gpu_fabric_partitions_free", {"gauge", {"size"}}},
      {"gpu_fabric_fabric_manager_up", {"gauge", {}}},
      {"gpu_fabric_drift_total", {"counter", {"kind"}}},
      {"gpu_fabric_journal_last_seq", {"gauge", {}}},
      {"gpu_fabric_journal_first_damaged_seq", {"gauge", {}}},
      {"gpu_fabric_journal_append_seconds", {"histogram", {}}},
      {"gpu_fabric_reconcile_seconds", {"histogram", {}}},
      {"gpu_fabric_pod_resources_errors_total", {"counter", {}}},
      // Beyond SPEC §8.1: a forged Allocate (or kubelet ahead of our listing), docs/security.md.
      {"gpu_fabric_devices_taken_from_live_pods_total", {"counter", {}}},
      // DRA mode (SPEC §11), registered in both modes.
      {"gpu_fabric_dra_claims_prepared", {"gauge", {}}},
      {"gpu_fabric_dra_prepare_seconds", {"histogram", {}}},
      {"gpu_fabric_api_requests_total", {"counter", {"verb", "resource", "code"}}},
      {"gpu_fabric_resource_slice_generation", {"gauge", {}}},
  };
  return families;
}

}  // namespace gfp::testing
