// Turns a pci.ids device name into the resource-name suffix exactly as the Go plugin's
// getDeviceName does, because resource names, socket names and env keys must stay identical
// for a drop-in replacement ("GH100 [H100 SXM5 80GB]" -> "GH100_H100_SXM5_80GB").
#pragma once

#include <string>
#include <string_view>

namespace gfp::adapters::kubelet_naming {

// Go: TrimSpace -> ToUpper -> "/"->"_" -> "."->"_" -> regexp `\s+`->"_" -> drop
// `[^a-zA-Z0-9_.]+`. Input is treated as UTF-8 like Go strings (Unicode trimming, ı->I, ſ->S).
std::string SanitizeDeviceName(std::string_view raw);

}  // namespace gfp::adapters::kubelet_naming
