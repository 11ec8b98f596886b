// SlicePublisher's defence against another writer of our ResourceSlice (a second plugin instance
// with the same --node-name, a controller): a few rewrites of the slice back to ours are fine
// (kubelet wiped it, an operator edited it), but more than kMaxRewrites within kWindow means
// two writers take turns, so further rewrites wait an exponentially growing hold (capped). The
// episode ends when no interference was seen for a whole window. Single-threaded.
#pragma once

#include <algorithm>
#include <chrono>
#include <deque>

#include "statemachine/state.h"

namespace gfp::plugin::dra_mode {

class RewriteBackoff {
 public:
  static constexpr std::size_t kMaxRewrites = 3;
  static constexpr sm::Micros kWindow = 60'000'000;
  static constexpr std::chrono::milliseconds kFirstHold{1000}, kMaxHold{60000};

  struct Decision {
    bool write = true;                        // rewrite now
    std::chrono::milliseconds retry_after{};  // 0: no hold; else pass again no sooner
    bool episode_started = false;             // the first hold: warn once
  };

  // A pass found our slice changed (or removed, or joined by another) by someone else, though
  // our devices are as we last wrote them.
  Decision Interfered(sm::Micros now) {
    Quiet(now);  // an old episode is over: this one counts afresh
    last_seen_ = now;
    if (now < hold_until_) {
      return {false, std::chrono::milliseconds((hold_until_ - now + 999) / 1000), false};
    }
    while (!rewrites_.empty() && now - rewrites_.front() >= kWindow) rewrites_.pop_front();
    rewrites_.push_back(now);
    bool started = false;
    if (hold_.count() > 0) {
      hold_ = std::min(hold_ * 2, kMaxHold);
    } else if (rewrites_.size() > kMaxRewrites) {
      hold_ = kFirstHold;
      started = true;
    }
    hold_until_ = hold_.count() > 0 ? now + hold_.count() * 1000 : 0;
    return {true, hold_, started};
  }

  // Ends an episode once nothing interfered for a whole window: true when one ended now.
  bool Quiet(sm::Micros now) {
    if (hold_.count() == 0 || now - last_seen_ < kWindow) return false;
    *this = RewriteBackoff();
    return true;
  }

  bool holding() const { return hold_.count() > 0; }

 private:
  std::deque<sm::Micros> rewrites_;  // our rewrites after interference, within the window
  sm::Micros last_seen_ = 0;
  sm::Micros hold_until_ = 0;
  std::chrono::milliseconds hold_{0};
};

}  // namespace gfp::plugin::dra_mode
