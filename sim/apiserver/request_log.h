// Every request the fake API server answered (verb, resource, path, HTTP code; 0: dropped), so
// tests can assert "exactly one GET of the claim per Prepare". Thread-safe.
#pragma once

#include <mutex>
#include <string>
#include <vector>

namespace gfp::apisim {

struct RequestRecord {
  std::string verb;      // get, list, watch, create, update, patch, delete; "" if unrouted
  std::string resource;  // nodes, resourceclaims, resourceslices; "" if unrouted
  std::string path;      // with the query string
  int code = 0;
  int client_port = 0;  // the client's TCP port: requests on one kept-alive connection share it
};

class RequestLog {
 public:
  void Add(RequestRecord record);
  std::vector<RequestRecord> Records() const;
  // Requests of that verb on that resource ("*" matches any).
  int Count(const std::string& verb, const std::string& resource) const;
  void Clear();

 private:
  mutable std::mutex mutex_;
  std::vector<RequestRecord> records_;
};

}  // namespace gfp::apisim
