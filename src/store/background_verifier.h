// The whole-journal check that serve runs after start (SPEC §5): damage in old history must not
// stop serving, but must be found, logged with its seq and exposed (metrics, /readyz). Runs on its
// own thread and its own read-only connection, so it never blocks appends (a WAL reader).
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "store/journal_types.h"

namespace gfp::store {

class BackgroundVerifier {
 public:
  // Starts verifying the journal at `path` now.
  static std::unique_ptr<BackgroundVerifier> Start(std::filesystem::path path);
  ~BackgroundVerifier();  // Stop()
  BackgroundVerifier(const BackgroundVerifier&) = delete;
  BackgroundVerifier& operator=(const BackgroundVerifier&) = delete;

  // Asks the check to stop and waits for it (it stops between two events). Idempotent.
  void Stop();

  // True once the check finished (not when it was stopped first).
  bool done() const { return done_.load(); }
  // The first damaged seq found, 0 while none is (and when the journal is intact).
  std::uint64_t first_damaged_seq() const { return first_damaged_seq_.load(); }
  // False when the check ran into a problem, also one not tied to a seq (e.g. an I/O error).
  bool ok() const;
  // The full report once done() (empty reason while running).
  VerifyReport report() const;

 private:
  explicit BackgroundVerifier(std::filesystem::path path);
  void Run();

  const std::filesystem::path path_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  std::atomic<std::uint64_t> first_damaged_seq_{0};
  mutable std::mutex mu_;
  VerifyReport report_;  // guarded by mu_
  std::thread thread_;
};

}  // namespace gfp::store
