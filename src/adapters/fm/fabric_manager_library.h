// Loads the Fabric Manager SDK (libnvfm.so.1 or the simulator) at run time and resolves its 11
// functions. Loading at run time keeps the plugin startable on nodes without FM installed.
#pragma once

#include <memory>
#include <string>

#include "adapters/fm/fm_abi.h"
#include "common/status.h"

namespace gfp::adapters::fm {

struct FmFunctions {
  abi::fmLibInit_fn fmLibInit = nullptr;
  abi::fmLibShutdown_fn fmLibShutdown = nullptr;
  abi::fmConnect_fn fmConnect = nullptr;
  abi::fmDisconnect_fn fmDisconnect = nullptr;
  abi::fmGetSupportedFabricPartitions_fn fmGetSupportedFabricPartitions = nullptr;
  abi::fmActivateFabricPartition_fn fmActivateFabricPartition = nullptr;
  abi::fmActivateFabricPartitionWithVFs_fn fmActivateFabricPartitionWithVFs = nullptr;
  abi::fmDeactivateFabricPartition_fn fmDeactivateFabricPartition = nullptr;
  abi::fmSetActivatedFabricPartitions_fn fmSetActivatedFabricPartitions = nullptr;
  abi::fmGetNvlinkFailedDevices_fn fmGetNvlinkFailedDevices = nullptr;
  abi::fmGetUnsupportedFabricPartitions_fn fmGetUnsupportedFabricPartitions = nullptr;
};

class FabricManagerLibrary {
 public:
  // dlopen(path, RTLD_NOW | RTLD_LOCAL) and dlsym of every SDK function. A missing library or
  // symbol is an error naming the path / symbol and carrying dlerror()'s text. A path containing
  // '/' must be a regular file ("... is not a regular file (a FIFO)", found without blocking).
  static Result<std::shared_ptr<const FabricManagerLibrary>> Load(const std::string& path);

  ~FabricManagerLibrary();
  FabricManagerLibrary(const FabricManagerLibrary&) = delete;
  FabricManagerLibrary& operator=(const FabricManagerLibrary&) = delete;

  const FmFunctions& fn() const { return functions_; }
  const std::string& path() const { return path_; }

 private:
  FabricManagerLibrary(std::string path, void* handle, FmFunctions functions)
      : path_(std::move(path)), handle_(handle), functions_(functions) {}

  std::string path_;
  void* handle_;
  FmFunctions functions_;
};

}  // namespace gfp::adapters::fm
