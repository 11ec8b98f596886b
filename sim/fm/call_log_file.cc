#include "sim/fm/call_log_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace gfp::fmsim {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

constexpr std::size_t kChunk = 64 * 1024;

std::string Errno() { return std::strerror(errno); }

// Lines in the file: its newlines, plus one for a last line that has none.
Result<std::uint64_t> CountLines(std::FILE* in, const std::string& path) {
  char buffer[kChunk];
  std::uint64_t lines = 0;
  char last = '\n';
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, in)) {
    for (std::size_t i = 0; i < n; ++i) lines += buffer[i] == '\n';
    last = buffer[n - 1];
  }
  if (std::ferror(in)) return Internal("cannot read " + path + ": " + Errno());
  return lines + (last != '\n');
}

// Copies `in` from just after its `skip`-th newline to the end into `out`.
Status CopyAfterLines(std::FILE* in, std::uint64_t skip, std::FILE* out, const std::string& path) {
  char buffer[kChunk];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, in)) {
    std::size_t from = 0;
    while (skip > 0 && from < n) {
      const void* newline = std::memchr(buffer + from, '\n', n - from);
      if (newline == nullptr) {
        from = n;
        break;
      }
      from = static_cast<std::size_t>(static_cast<const char*>(newline) - buffer) + 1;
      --skip;
    }
    if (from < n && std::fwrite(buffer + from, 1, n - from, out) != n - from) {
      return Internal("cannot write " + path + ".tmp: " + Errno());
    }
  }
  if (std::ferror(in)) return Internal("cannot read " + path + ": " + Errno());
  return Status::Ok();
}

}  // namespace

Result<std::uint64_t> KeepLastLines(const std::string& path, std::uint64_t keep) {
  File in(std::fopen(path.c_str(), "rb"));
  if (!in) return Internal("cannot open " + path + ": " + Errno());
  GFP_ASSIGN_OR_RETURN(const std::uint64_t lines, CountLines(in.get(), path));
  if (lines <= keep) return lines;
  std::rewind(in.get());
  const std::string tmp = path + ".tmp";
  File out(std::fopen(tmp.c_str(), "wb"));
  if (!out) return Internal("cannot create " + tmp + ": " + Errno());
  GFP_RETURN_IF_ERROR(CopyAfterLines(in.get(), lines - keep, out.get(), path));
  if (std::fclose(out.release()) != 0) return Internal("cannot write " + tmp + ": " + Errno());
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Internal("cannot rename " + tmp + " to " + path + ": " + Errno());
  }
  return keep;
}

}  // namespace gfp::fmsim
