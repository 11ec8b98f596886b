// `GET .../resourceslices?watch=true`: a chunked stream of {"type":...,"object":...} lines, one
// per event after the asked resourceVersion (or the current slices as ADDED when none is
// given), ending at timeoutSeconds. A resourceVersion older than the compacted history gets an
// ERROR event carrying a 410 Expired Status, then the end, as kube-apiserver does.
#pragma once

#include "sim/apiserver/faults.h"
#include "sim/apiserver/http_io.h"
#include "sim/apiserver/object_store.h"
#include "sim/apiserver/route.h"

struct mg_connection;

namespace gfp::apisim {

// Without timeoutSeconds a stream lasts this long (kube-apiserver picks 30 to 60 minutes).
inline constexpr int kDefaultWatchSeconds = 1800;
// The size of the huge event fault's annotation.
inline constexpr std::size_t kHugeEventBytes = 6 * 1024 * 1024;

// The HTTP code to log (200, or 400 for a bad query). `stream_fault` (or null) is a huge or endless
// event fault taken for this request. Ends without the closing chunk when `stop` says so.
int ServeWatch(mg_connection* connection, const ObjectStore& store, const Route& route,
               const Fault* stream_fault, const StopCheck& stop);

}  // namespace gfp::apisim
