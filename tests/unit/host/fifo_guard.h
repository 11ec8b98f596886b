// Reading a FIFO must fail fast, never block. A regression would hang the suite, so the read
// runs on a thread and, when it has not returned in time, a writer opens the FIFO to release it
// and the test fails instead.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>

namespace gfp::testing {

inline std::filesystem::path MakeFifo(const std::filesystem::path& path) {
  EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0) << "mkfifo " << path;
  return path;
}

template <typename Read>
auto ReadWithFifoGuard(const std::filesystem::path& fifo, Read read) -> decltype(read()) {
  auto result = std::async(std::launch::async, read);
  if (result.wait_for(std::chrono::seconds(5)) == std::future_status::timeout) {
    ADD_FAILURE() << "reading the FIFO " << fifo << " blocked for 5 s";
    // A writer end lets the blocked open() return; closing it gives the reader end-of-file.
    for (int attempt = 0; attempt < 100; ++attempt) {
      const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd >= 0) {
        ::close(fd);
        if (result.wait_for(std::chrono::milliseconds(100)) == std::future_status::ready) break;
      }
    }
  }
  return result.get();
}

}  // namespace gfp::testing
