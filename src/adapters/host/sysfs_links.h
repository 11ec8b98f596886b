// Where a sysfs link really leads. A hostile or broken tree can point a bus entry or an
// mdev_type link anywhere (/etc, /dev/zero); discovery only follows links that stay inside the
// sysfs root it was given.
#pragma once

#include <filesystem>

#include "common/status.h"

namespace gfp::adapters::host {

// Ok when `path` resolves (all links followed) to `root` or below it. NotFound when it does
// not resolve; InvalidArgument "leads outside <root>" otherwise.
Status CheckResolvesInside(const std::filesystem::path& path, const std::filesystem::path& root);

}  // namespace gfp::adapters::host
