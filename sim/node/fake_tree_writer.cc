#include "sim/node/fake_tree_writer.h"

#include <fstream>
#include <system_error>

namespace gfp::sim {
namespace {

Status FsError(const std::string& what, const std::filesystem::path& path,
               const std::error_code& ec) {
  return Internal("fake node: cannot " + what + " " + path.string() + ": " + ec.message());
}

}  // namespace

Status MakeDirectories(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return FsError("create directory", dir, ec);
  return Status::Ok();
}

Status WriteTextFile(const std::filesystem::path& file, const std::string& content) {
  GFP_RETURN_IF_ERROR(MakeDirectories(file.parent_path()));
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  if (!out) return Internal("fake node: cannot write " + file.string());
  return Status::Ok();
}

Status MakeRelativeSymlink(const std::filesystem::path& target, const std::filesystem::path& link) {
  GFP_RETURN_IF_ERROR(MakeDirectories(link.parent_path()));
  std::error_code ec;
  std::filesystem::remove(link, ec);  // replacing is how a rebind looks; absent is fine
  if (ec) return FsError("remove", link, ec);
  const std::filesystem::path relative = target.lexically_relative(link.parent_path());
  std::filesystem::create_symlink(relative, link, ec);
  if (ec) return FsError("create symlink", link, ec);
  return Status::Ok();
}

Status RemovePath(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) return FsError("remove", path, ec);
  return Status::Ok();
}

}  // namespace gfp::sim
