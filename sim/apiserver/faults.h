// Faults the fake API server injects, matched by (verb, resource) with "*" as a wildcard, each
// for `count` requests (-1: forever). Thread-safe.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

namespace gfp::apisim {

enum class FaultKind {
  kStatus,        // answer `code` (401/403/409/410/429/500/503) with a Status object
  kDelay,         // wait `delay`, then answer normally
  kDrop,          // close the connection without answering
  kGarbage,       // 200 with a body that is not JSON
  kSlowLoris,     // send the headers, then one byte a second
  kHugeEvent,     // watch only: one event of several MB first, then the stream as usual
  kEndlessEvent,  // watch only: an event line that never ends
};

struct Fault {
  std::string verb = "*";      // get, list, watch, create, update, patch, delete or *
  std::string resource = "*";  // nodes, resourceclaims, resourceslices or *
  FaultKind kind = FaultKind::kStatus;
  int code = 500;
  std::chrono::milliseconds delay{0};
  int count = 1;
};

class FaultTable {
 public:
  void Add(Fault fault);
  void Clear();
  // The first fault that matches into `out`, its count used up by one (false: none); huge and
  // endless events match watches only.
  bool Take(const std::string& verb, const std::string& resource, Fault& out);

 private:
  std::mutex mutex_;
  std::vector<Fault> faults_;
};

}  // namespace gfp::apisim
