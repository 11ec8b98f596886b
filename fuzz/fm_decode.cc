// Fuzz target: the structs Fabric Manager fills in. The bytes become the raw struct (zero-padded
// or cut to its size) exactly as a hostile or broken libnvfm could leave it; the decoders must
// return values or errors without reading outside the struct. The first byte picks the struct.
#include "adapters/fm/fm_decode.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "adapters/fm/fm_abi.h"
#include "fuzz/fuzz_support.h"

namespace {

// Heap copies so ASan sees reads past the end (FabricPartitionList is 131852 bytes).
template <typename Struct>
std::unique_ptr<Struct> StructFrom(const std::uint8_t* data, std::size_t size) {
  auto out = std::make_unique<Struct>();
  std::memset(out.get(), 0, sizeof(Struct));
  std::memcpy(out.get(), data, size < sizeof(Struct) ? size : sizeof(Struct));
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  gfp::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  namespace abi = gfp::adapters::fm::abi;
  const std::uint8_t which = data[0] % 3;
  ++data;
  --size;
  if (which == 0) {
    (void)gfp::adapters::fm::DecodePartitionList(*StructFrom<abi::FabricPartitionList>(data, size));
  } else if (which == 1) {
    (void)gfp::adapters::fm::DecodeUnsupportedPartitions(
        *StructFrom<abi::UnsupportedFabricPartitionList>(data, size));
  } else {
    (void)gfp::adapters::fm::DecodeNvlinkFailedDevices(
        *StructFrom<abi::NvlinkFailedDevices>(data, size));
  }
  return 0;
}
