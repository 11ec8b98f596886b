// A stand-in FM library that exports every SDK function except fmGetNvlinkFailedDevices, to test
// that the loader names the missing symbol.
#include "adapters/fm/fm_abi.h"

namespace abi = gfp::adapters::fm::abi;

#define EXPORT extern "C" __attribute__((visibility("default")))

EXPORT abi::fmReturn_t fmLibInit() { return abi::kSuccess; }
EXPORT abi::fmReturn_t fmLibShutdown() { return abi::kSuccess; }
EXPORT abi::fmReturn_t fmConnect(void*, abi::fmHandle_t*) { return abi::kSuccess; }
EXPORT abi::fmReturn_t fmDisconnect(abi::fmHandle_t) { return abi::kSuccess; }
EXPORT abi::fmReturn_t fmGetSupportedFabricPartitions(abi::fmHandle_t, abi::FabricPartitionList*) {
  return abi::kSuccess;
}
EXPORT abi::fmReturn_t fmActivateFabricPartition(abi::fmHandle_t, abi::fmFabricPartitionId_t) {
  return abi::kSuccess;
}
EXPORT abi::fmReturn_t fmActivateFabricPartitionWithVFs(abi::fmHandle_t, abi::fmFabricPartitionId_t,
                                                        abi::PciDevice*, unsigned int) {
  return abi::kSuccess;
}
EXPORT abi::fmReturn_t fmDeactivateFabricPartition(abi::fmHandle_t, abi::fmFabricPartitionId_t) {
  return abi::kSuccess;
}
EXPORT abi::fmReturn_t fmSetActivatedFabricPartitions(abi::fmHandle_t,
                                                      abi::ActivatedFabricPartitionList*) {
  return abi::kSuccess;
}
EXPORT abi::fmReturn_t fmGetUnsupportedFabricPartitions(abi::fmHandle_t,
                                                        abi::UnsupportedFabricPartitionList*) {
  return abi::kSuccess;
}
