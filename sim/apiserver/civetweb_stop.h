// Stops a civetweb server without its two-second wait: civetweb's listening thread sleeps in
// poll() for up to 2 s between looks at its stop flag, so mg_stop takes that long. Connecting to
// the port wakes it.
#pragma once

struct mg_context;

namespace gfp::apisim {

// mg_stop(context), with a connection to 127.0.0.1:`port` every 10 ms until it returns.
void StopPromptly(mg_context* context, int port);

}  // namespace gfp::apisim
