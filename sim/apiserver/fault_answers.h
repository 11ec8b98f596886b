// How the fake API server answers a request an injected fault hits (other than a delay, which
// only postpones the real answer, and the watch-only faults in watch_stream).
#pragma once

#include <string>

#include "sim/apiserver/faults.h"
#include "sim/apiserver/http_io.h"

struct mg_connection;

namespace gfp::apisim {

// The HTTP code to log: the fault's code, 200 for garbage and slow loris, 0 for a drop.
int AnswerFault(mg_connection* connection, const Fault& fault, const std::string& verb,
                const std::string& resource, const StopCheck& stop);

}  // namespace gfp::apisim
