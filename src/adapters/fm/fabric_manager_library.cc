#include "adapters/fm/fabric_manager_library.h"

#include <dlfcn.h>

namespace gfp::fm {
namespace {

std::string DlErrorText() {
  const char* text = dlerror();
  return text != nullptr ? text : "no dlerror text";
}

// dlsym returns void*; converting it to a function pointer is conditionally supported in C++
// and guaranteed by POSIX.
template <typename Fn>
Status Resolve(void* handle, const std::string& path, const char* symbol, Fn* out) {
  dlerror();  // clear any stale error so a NULL result can be told apart
  void* address = dlsym(handle, symbol);
  if (address == nullptr) {
    return NotFound("Fabric Manager library " + path + " lacks symbol " + symbol + ": " +
                    DlErrorText());
  }
  *out = reinterpret_cast<Fn>(address);
  return Status::Ok();
}

}  // namespace

Result<std::shared_ptr<const FabricManagerLibrary>> FabricManagerLibrary::Load(
    const std::string& path) {
  if (path.empty()) return InvalidArgument("Fabric Manager library path is empty");
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return NotFound("cannot load Fabric Manager library " + path + ": " + DlErrorText());
  }
  FmFunctions f;
  Status status = [&]() -> Status {
    GFP_RETURN_IF_ERROR(Resolve(handle, path, "fmLibInit", &f.fmLibInit));
    GFP_RETURN_IF_ERROR(Resolve(handle, path, "fmLibShutdown", &f.fmLibShutdown));
    GFP_RETURN_IF_ERROR(Resolve(handle, path, "fmConnect", &f.fmConnect));
    GFP_RETURN_IF_ERROR(Resolve(handle, path, "fmDisconnect", &f.fmDisconnect));
    GFP_RETURN_IF_ERROR(Resolve(handle, path, "fmGetSupportedFabricPartitions",
                                &f.fmGetSupportedFabricPartitions));
    GFP_RETURN_IF_ERROR(
        Resolve(handle, path, "fmActivateFabricPartition", &f.fmActivateFabricPartition));
    GFP_RETURN_IF_ERROR(Resolve(handle, path, "fmActivateFabricPartitionWithVFs",
                                &f.fmActivateFabricPartitionWithVFs));
    GFP_RETURN_IF_ERROR(
        Resolve(handle, path, "fmDeactivateFabricPartition", &f.fmDeactivateFabricPartition));
    GFP_RETURN_IF_ERROR(Resolve(handle, path, "fmSetActivatedFabricPartitions",
                                &f.fmSetActivatedFabricPartitions));
    GFP_RETURN_IF_ERROR(
        Resolve(handle, path, "fmGetNvlinkFailedDevices", &f.fmGetNvlinkFailedDevices));
    GFP_RETURN_IF_ERROR(Resolve(handle, path, "fmGetUnsupportedFabricPartitions",
                                &f.fmGetUnsupportedFabricPartitions));
    return Status::Ok();
  }();
  if (!status.ok()) {
    dlclose(handle);
    return status;
  }
  return std::shared_ptr<const FabricManagerLibrary>(new FabricManagerLibrary(path, handle, f));
}

FabricManagerLibrary::~FabricManagerLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

}  // namespace gfp::fm
