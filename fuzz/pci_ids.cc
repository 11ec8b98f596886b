// Fuzz target: the pci.ids names database. Parse must accept or refuse the text; the lookups
// that name resources must then work for any device id, including ids taken from the text.
#include "adapters/host/pci_ids.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  gfp::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto ids = gfp::adapters::host::PciIds::Parse(text);
  if (!ids.ok()) return 0;
  for (const char* id : {"2330", "20b2", "2901", "", "\t", "10de"}) {
    (void)ids->DeviceName(id);
    (void)ids->ResourceSuffix(id);
  }
  // Ids that may actually be in the text: the first word of each tab-indented line.
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line[0] == '\t') {
      (void)ids->ResourceSuffix(line.substr(1, 4));
    }
    pos = end + 1;
  }
  return 0;
}
