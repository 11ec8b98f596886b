// Our own declaration of the NVIDIA Fabric Manager SDK ABI (libnvfm.so.1), restated from
// shared/reference/fabric-manager.md §1–2. No NVIDIA header is used: every size and offset the
// reference gives is checked below, so a layout mistake fails the build instead of corrupting
// memory at run time. The simulated FM library compiles against this same header.
//
// Nothing here is a macro: FM_ST_* names are reserved for generated protobuf code.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fm_codes/fm_codes.h"

namespace gfp::adapters::fm::abi {

// fmReturn_t is a C enum, i.e. a 32-bit signed int in the return register. We keep it as int so a
// library returning a value outside the enum is still representable.
using fmReturn_t = int;
using fmHandle_t = void*;
using fmFabricPartitionId_t = unsigned int;

// The return codes are the one table the state machine uses too (fm_codes/fm_codes.h):
// abi::kInUse is fm_codes::kInUse.
using FmReturn = fm_codes::Value;
using enum fm_codes::Value;
inline constexpr int kLowestKnownReturn = fm_codes::kLowestKnown;

inline constexpr std::size_t kMaxStrLength = 256;
inline constexpr std::size_t kUuidBufferSize = 80;
inline constexpr std::size_t kPciBusIdBufferSize = 32;
inline constexpr std::uint16_t kDefaultCmdPort = 6666;
inline constexpr std::size_t kMaxNumGpus = 16;
inline constexpr std::size_t kMaxNumNvSwitches = 12;
inline constexpr std::size_t kMaxFabricPartitions = 64;
inline constexpr std::size_t kMaxNumNvlinkPorts = 64;

// nvFmApiAddrTypes (v2 header).
enum AddressType : unsigned int {
  kAddrUnknown = 0,
  kAddrInet = 1,
  kAddrUnix = 2,
  kAddrVsock = 3,
};

// MAKE_FM_PARAM_VERSION: struct size in the low 24 bits, struct version in the top byte.
constexpr unsigned int MakeParamVersion(std::size_t struct_size, unsigned int version) {
  return static_cast<unsigned int>(struct_size) | (version << 24);
}

struct ConnectParamsV1 {
  unsigned int version;
  char addressInfo[kMaxStrLength];
  unsigned int timeoutMs;
  unsigned int addressIsUnixSocket;  // 1 = unix socket path, 0 = TCP
};

struct ConnectParamsV2 {
  unsigned int version;
  char addressInfo[kMaxStrLength];
  unsigned int timeoutMs;
  unsigned int addressIsUnixSocket;  // deprecated in v2 but still read by some libraries
  AddressType addressType;
};

struct PciDevice {
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int function;
};

struct FabricPartitionGpuInfo {
  unsigned int physicalId;  // same value as the GPU module id
  char uuid[kUuidBufferSize];
  char pciBusId[kPciBusIdBufferSize];
  unsigned int numNvLinksAvailable;
  unsigned int maxNumNvLinks;
  unsigned int nvlinkLineRateMBps;
};

struct FabricPartitionInfo {
  fmFabricPartitionId_t partitionId;
  unsigned int isActive;
  unsigned int numGpus;
  FabricPartitionGpuInfo gpuInfo[kMaxNumGpus];
};

struct FabricPartitionList {  // fmFabricPartitionList_v2; 131852 bytes: keep it on the heap
  unsigned int version;
  unsigned int numPartitions;
  unsigned int maxNumPartitions;
  FabricPartitionInfo partitionInfo[kMaxFabricPartitions];
};

struct ActivatedFabricPartitionList {
  unsigned int version;
  unsigned int numPartitions;
  fmFabricPartitionId_t partitionIds[kMaxFabricPartitions];
};

struct NvlinkFailedDeviceInfo {
  char uuid[kUuidBufferSize];
  char pciBusId[kPciBusIdBufferSize];
  unsigned int numPorts;
  unsigned int portNum[kMaxNumNvlinkPorts];
};

struct NvlinkFailedDevices {
  unsigned int version;
  unsigned int numGpus;
  unsigned int numSwitches;
  NvlinkFailedDeviceInfo gpuInfo[kMaxNumGpus];
  NvlinkFailedDeviceInfo switchInfo[kMaxNumNvSwitches];
};

struct UnsupportedFabricPartitionInfo {
  fmFabricPartitionId_t partitionId;
  unsigned int numGpus;
  unsigned int gpuPhysicalIds[kMaxNumGpus];
};

struct UnsupportedFabricPartitionList {
  unsigned int version;
  unsigned int numPartitions;
  UnsupportedFabricPartitionInfo partitionInfo[kMaxFabricPartitions];
};

// Version constants, computed like the SDK does (note: the "v2" partition list uses version 1).
inline constexpr unsigned int kConnectParamsV1Version =
    MakeParamVersion(sizeof(ConnectParamsV1), 1);
inline constexpr unsigned int kConnectParamsV2Version =
    MakeParamVersion(sizeof(ConnectParamsV2), 2);
inline constexpr unsigned int kFabricPartitionListVersion =
    MakeParamVersion(sizeof(FabricPartitionList), 1);
inline constexpr unsigned int kActivatedFabricPartitionListVersion =
    MakeParamVersion(sizeof(ActivatedFabricPartitionList), 1);
inline constexpr unsigned int kNvlinkFailedDevicesVersion =
    MakeParamVersion(sizeof(NvlinkFailedDevices), 1);
inline constexpr unsigned int kUnsupportedFabricPartitionListVersion =
    MakeParamVersion(sizeof(UnsupportedFabricPartitionList), 1);

// ---- Layout checks (reference §2.3, §2.4) ----
static_assert(sizeof(fmHandle_t) == 8);
static_assert(sizeof(AddressType) == 4);
static_assert(sizeof(ConnectParamsV1) == 268);
static_assert(offsetof(ConnectParamsV1, addressInfo) == 4);
static_assert(offsetof(ConnectParamsV1, timeoutMs) == 260);
static_assert(offsetof(ConnectParamsV1, addressIsUnixSocket) == 264);
static_assert(sizeof(ConnectParamsV2) == 272);
static_assert(offsetof(ConnectParamsV2, timeoutMs) == 260);
static_assert(offsetof(ConnectParamsV2, addressIsUnixSocket) == 264);
static_assert(offsetof(ConnectParamsV2, addressType) == 268);
static_assert(sizeof(PciDevice) == 16);
static_assert(offsetof(PciDevice, function) == 12);
static_assert(sizeof(FabricPartitionGpuInfo) == 128);
static_assert(offsetof(FabricPartitionGpuInfo, uuid) == 4);
static_assert(offsetof(FabricPartitionGpuInfo, pciBusId) == 84);
static_assert(offsetof(FabricPartitionGpuInfo, numNvLinksAvailable) == 116);
static_assert(offsetof(FabricPartitionGpuInfo, maxNumNvLinks) == 120);
static_assert(offsetof(FabricPartitionGpuInfo, nvlinkLineRateMBps) == 124);
static_assert(sizeof(FabricPartitionInfo) == 2060);
static_assert(offsetof(FabricPartitionInfo, isActive) == 4);
static_assert(offsetof(FabricPartitionInfo, numGpus) == 8);
static_assert(offsetof(FabricPartitionInfo, gpuInfo) == 12);
static_assert(sizeof(FabricPartitionList) == 131852);
static_assert(offsetof(FabricPartitionList, numPartitions) == 4);
static_assert(offsetof(FabricPartitionList, maxNumPartitions) == 8);
static_assert(offsetof(FabricPartitionList, partitionInfo) == 12);
static_assert(sizeof(ActivatedFabricPartitionList) == 264);
static_assert(offsetof(ActivatedFabricPartitionList, partitionIds) == 8);
static_assert(sizeof(NvlinkFailedDeviceInfo) == 372);
static_assert(offsetof(NvlinkFailedDeviceInfo, pciBusId) == 80);
static_assert(offsetof(NvlinkFailedDeviceInfo, numPorts) == 112);
static_assert(offsetof(NvlinkFailedDeviceInfo, portNum) == 116);
static_assert(sizeof(NvlinkFailedDevices) == 10428);
static_assert(offsetof(NvlinkFailedDevices, gpuInfo) == 12);
static_assert(offsetof(NvlinkFailedDevices, switchInfo) == 5964);
static_assert(sizeof(UnsupportedFabricPartitionInfo) == 72);
static_assert(offsetof(UnsupportedFabricPartitionInfo, gpuPhysicalIds) == 8);
static_assert(sizeof(UnsupportedFabricPartitionList) == 4616);
static_assert(offsetof(UnsupportedFabricPartitionList, partitionInfo) == 8);

static_assert(kConnectParamsV1Version == 0x0100010C);
static_assert(kConnectParamsV2Version == 0x02000110);
static_assert(kFabricPartitionListVersion == 0x0102030C);
static_assert(kActivatedFabricPartitionListVersion == 0x01000108);
static_assert(kNvlinkFailedDevicesVersion == 0x010028BC);
static_assert(kUnsupportedFabricPartitionListVersion == 0x01001208);

// ---- The 11 exported functions, as plain C function-pointer types ----
extern "C" {
using fmLibInit_fn = fmReturn_t (*)();
using fmLibShutdown_fn = fmReturn_t (*)();
// The library reads `version` first and then only the bytes that version implies, so one
// pointer type serves both connect structs.
using fmConnect_fn = fmReturn_t (*)(void* connectParams, fmHandle_t* pFmHandle);
using fmDisconnect_fn = fmReturn_t (*)(fmHandle_t pFmHandle);
using fmGetSupportedFabricPartitions_fn = fmReturn_t (*)(fmHandle_t pFmHandle,
                                                         FabricPartitionList* pFmFabricPartition);
using fmActivateFabricPartition_fn = fmReturn_t (*)(fmHandle_t pFmHandle,
                                                    fmFabricPartitionId_t partitionId);
using fmActivateFabricPartitionWithVFs_fn = fmReturn_t (*)(fmHandle_t pFmHandle,
                                                           fmFabricPartitionId_t partitionId,
                                                           PciDevice* vfList, unsigned int numVfs);
using fmDeactivateFabricPartition_fn = fmReturn_t (*)(fmHandle_t pFmHandle,
                                                      fmFabricPartitionId_t partitionId);
using fmSetActivatedFabricPartitions_fn =
    fmReturn_t (*)(fmHandle_t pFmHandle, ActivatedFabricPartitionList* pFmActivatedPartitionList);
using fmGetNvlinkFailedDevices_fn = fmReturn_t (*)(fmHandle_t pFmHandle,
                                                   NvlinkFailedDevices* pFmNvlinkFailedDevices);
using fmGetUnsupportedFabricPartitions_fn =
    fmReturn_t (*)(fmHandle_t pFmHandle, UnsupportedFabricPartitionList* pFmUnsupportedPartitions);
}

// Symbol names, in one place so the loader, the simulator and the tests agree.
inline constexpr const char* kSymbolNames[] = {
    "fmLibInit",
    "fmLibShutdown",
    "fmConnect",
    "fmDisconnect",
    "fmGetSupportedFabricPartitions",
    "fmActivateFabricPartition",
    "fmActivateFabricPartitionWithVFs",
    "fmDeactivateFabricPartition",
    "fmSetActivatedFabricPartitions",
    "fmGetNvlinkFailedDevices",
    "fmGetUnsupportedFabricPartitions",
};

}  // namespace gfp::adapters::fm::abi
