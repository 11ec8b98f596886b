#include "adapters/fm/fabric_manager_library.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "adapters/host/file_reading.h"
#include "common/text_escape.h"

namespace gfp::adapters::fm {
namespace {

// dlerror()'s text, escaped.
std::string DlErrorText() {
  const char* raw = dlerror();
  return EscapeControl(raw != nullptr ? raw : "no dlerror text");
}

// dlsym returns void*; converting it to a function pointer is conditionally supported in C++
// and guaranteed by POSIX.
template <typename Fn>
Status Resolve(void* handle, const std::string& path, const char* symbol, Fn* out) {
  dlerror();  // clear any stale error so a NULL result can be told apart
  void* address = dlsym(handle, symbol);
  if (address == nullptr) {
    return NotFound("Fabric Manager library " + EscapeControl(path) + " lacks symbol " + symbol +
                    ": " + DlErrorText());
  }
  *out = reinterpret_cast<Fn>(address);
  return Status::Ok();
}

// A path containing '/' must be a regular file: opened O_NONBLOCK and checked with fstat, so a
// FIFO fails at once instead of blocking dlopen's own open() forever. (dlopen is then given the
// path, not /proc/self/fd/N: glibc recognises loaded objects by name, and a reused fd number
// would hand back a different, earlier library.) A bare name is left to the dynamic loader's
// search (LD_LIBRARY_PATH, ld.so.cache, ...).
Result<void*> Open(const std::string& path) {
  const std::string context = "cannot load Fabric Manager library " + EscapeControl(path) + ": ";
  if (path.find('/') != std::string::npos) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
      return NotFound(context + std::error_code(errno, std::generic_category()).message());
    struct stat info {};
    const bool regular = ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
    ::close(fd);
    if (!regular) {
      return InvalidArgument(context + "is not a regular file (" +
                             adapters::host::FileTypeName(info.st_mode) + ")");
    }
  }
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return NotFound(context + DlErrorText());
  return handle;
}

Status ResolveAll(void* handle, const std::string& path, FmFunctions* f) {
  GFP_RETURN_IF_ERROR(Resolve(handle, path, "fmLibInit", &f->fmLibInit));
  GFP_RETURN_IF_ERROR(Resolve(handle, path, "fmLibShutdown", &f->fmLibShutdown));
  GFP_RETURN_IF_ERROR(Resolve(handle, path, "fmConnect", &f->fmConnect));
  GFP_RETURN_IF_ERROR(Resolve(handle, path, "fmDisconnect", &f->fmDisconnect));
  GFP_RETURN_IF_ERROR(
      Resolve(handle, path, "fmGetSupportedFabricPartitions", &f->fmGetSupportedFabricPartitions));
  GFP_RETURN_IF_ERROR(
      Resolve(handle, path, "fmActivateFabricPartition", &f->fmActivateFabricPartition));
  GFP_RETURN_IF_ERROR(Resolve(handle, path, "fmActivateFabricPartitionWithVFs",
                              &f->fmActivateFabricPartitionWithVFs));
  GFP_RETURN_IF_ERROR(
      Resolve(handle, path, "fmDeactivateFabricPartition", &f->fmDeactivateFabricPartition));
  GFP_RETURN_IF_ERROR(
      Resolve(handle, path, "fmSetActivatedFabricPartitions", &f->fmSetActivatedFabricPartitions));
  GFP_RETURN_IF_ERROR(
      Resolve(handle, path, "fmGetNvlinkFailedDevices", &f->fmGetNvlinkFailedDevices));
  GFP_RETURN_IF_ERROR(Resolve(handle, path, "fmGetUnsupportedFabricPartitions",
                              &f->fmGetUnsupportedFabricPartitions));
  return Status::Ok();
}

}  // namespace

Result<std::shared_ptr<const FabricManagerLibrary>> FabricManagerLibrary::Load(
    const std::string& path) {
  if (path.empty()) return InvalidArgument("Fabric Manager library path is empty");
  GFP_ASSIGN_OR_RETURN(void* handle, Open(path));
  FmFunctions f;
  if (Status status = ResolveAll(handle, path, &f); !status.ok()) {
    dlclose(handle);
    return status;
  }
  return std::shared_ptr<const FabricManagerLibrary>(new FabricManagerLibrary(path, handle, f));
}

FabricManagerLibrary::~FabricManagerLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

}  // namespace gfp::adapters::fm
