// serve's start-up checks that need no side effects, run before the journal (or anything else)
// is created: a refused start leaves every file as it was.
#pragma once

#include "common/status.h"
#include "plugin/serve_config.h"

namespace gfp::cli {

// --sysfs-root / --dev-root are directories; --journal is not a directory, FIFO or other
// non-regular file and its nearest existing ancestor is a directory; --pci-ids (when given) is a
// regular file; with --fabric-manager: --fm-address parses, --pci-module-mapping is a regular
// file, and --fm-library, when it is a path (contains '/'), is a regular file; --node-labels-file
// (when given) needs --fabric-manager and passes plugin::labels::CheckNodeLabelsPath. Messages name
// the flag and its (escaped) value: "--pci-ids=/x is not a regular file (a FIFO)".
Status CheckServeConfig(const plugin::ServeConfig& config);

}  // namespace gfp::cli
