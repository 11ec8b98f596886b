// What the core needs of Fabric Manager, and nothing more: connect, read the fabric state, carry
// out one partition operation. Everything is in journal form (events::FmResult, events::Partition)
// so the core never sees how FM is reached.
//
// Two implementations: FmLibraryPort (the SDK through dlopen, bounded calls on a worker thread:
// what `serve` uses) and the simulation's in-memory model (sim/world), which lets the core run on
// one thread with a manual clock so that a seed reproduces a run byte for byte.
//
// Contract for implementations:
//  - Every call returns; a call FM did not answer in time is FM_ST_TIMEOUT with a message that
//    says so ("no reply within ..."), after which connected() is false until Connect succeeds.
//  - A call that finds its connection gone reconnects and retries a bounded number of times
//    before it reports FM_ST_CONNECTION_NOT_VALID.
//  - Outcomes name FM's code (code, name) and, on failure, a message naming the call.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "statemachine/decide.h"
#include "statemachine/events.pb.h"

namespace gfp::plugin::core {

class FabricPort {
 public:
  virtual ~FabricPort() = default;

  // Connects (or reconnects); the result in journal form.
  virtual events::FmResult Connect() = 0;
  // True while the last connection is believed good (no call has failed on it since).
  virtual bool connected() const = 0;
  // Which connect struct the last successful connect used (1 or 2; 0 before any).
  virtual int connect_struct_version() const = 0;
  // Where FM is reached, for messages and the journal.
  virtual const std::string& address() const = 0;

  // FM's supported partitions, sorted by id, with isActive flags and degraded ones marked
  // unsupported. On failure `failure` (when given) holds FM's answer.
  virtual Result<std::vector<events::Partition>> FabricState(events::FmResult* failure) = 0;

  // Carries out one activate / deactivate / set-activated effect.
  virtual events::FmResult Carry(const sm::Effect& effect) = 0;
};

}  // namespace gfp::plugin::core
