#include "store/background_verifier.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "common/text_escape.h"
#include "store/journal.h"

namespace gfp::store {

std::unique_ptr<BackgroundVerifier> BackgroundVerifier::Start(std::filesystem::path path) {
  std::unique_ptr<BackgroundVerifier> verifier(new BackgroundVerifier(std::move(path)));
  verifier->thread_ = std::thread([v = verifier.get()] { v->Run(); });
  return verifier;
}

BackgroundVerifier::BackgroundVerifier(std::filesystem::path path) : path_(std::move(path)) {}

BackgroundVerifier::~BackgroundVerifier() { Stop(); }

void BackgroundVerifier::Stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

bool BackgroundVerifier::ok() const {
  std::lock_guard lock(mu_);
  return report_.ok;
}

VerifyReport BackgroundVerifier::report() const {
  std::lock_guard lock(mu_);
  return report_;
}

void BackgroundVerifier::Run() {
  const auto started = std::chrono::steady_clock::now();
  VerifyReport report;
  auto journal = Journal::Open(path_, OpenMode::kReadOnly);
  if (!journal.ok()) {
    report.ok = false;
    report.reason = journal.status().message();
  } else {
    report = (*journal)->Verify([this](const StoredEvent&) -> Status {
      return stop_.load() ? Unavailable("stopped") : Status::Ok();
    });
  }
  if (stop_.load()) return;  // stopped before the end: nothing was found that can be trusted
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  {
    std::lock_guard lock(mu_);
    report_ = report;
  }
  first_damaged_seq_.store(report.first_bad_seq);
  done_.store(true);
  const std::string name = EscapeControl(path_.string());
  if (report.ok) {
    spdlog::info(
        "background verification of journal {}: intact ({} events, {} snapshots, {:.1f} s)", name,
        report.events_checked, report.snapshots_checked, seconds);
  } else if (report.first_bad_seq != 0) {
    spdlog::error(
        "background verification of journal {}: damaged at seq {}: {} (older history than what "
        "the state was rebuilt from; serving continues; inspect with `gpu-fabric-plugin journal "
        "verify`)",
        name, report.first_bad_seq, EscapeControl(report.reason));
  } else {
    spdlog::error("background verification of journal {} failed: {}", name,
                  EscapeControl(report.reason));
  }
}

}  // namespace gfp::store
