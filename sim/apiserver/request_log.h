// Every request the fake API server received (verb, resource, path, HTTP code; 0: dropped or not
// answered yet), so tests can assert "exactly one GET of the claim per Prepare". A request is
// logged when it arrives, before any answer leaves, so a client that has its answer (or gave up)
// can count its requests at once; the code is filled in when the handler returns. Thread-safe.
#pragma once

#include <cstdint>
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
  // Logs an arriving request (its code 0 until Finish) and returns the key Finish takes.
  std::uint64_t Begin(RequestRecord record);
  // Sets the code of the request Begin logged; nothing when it was cleared since.
  void Finish(std::uint64_t key, int code);
  std::vector<RequestRecord> Records() const;
  // Requests of that verb on that resource ("*" matches any).
  int Count(const std::string& verb, const std::string& resource) const;
  void Clear();

 private:
  mutable std::mutex mutex_;
  std::vector<RequestRecord> records_;
  std::uint64_t first_key_ = 1;  // records_[i]'s key is first_key_ + i
};

}  // namespace gfp::apisim
