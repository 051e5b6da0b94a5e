// The pace an upload must keep (issue 31 #10): a trickle of a byte every few seconds would
// otherwise hold its connection, its slot and its temporary file for ever, each read getting a
// fresh timeout. An upload must bring at least `min_rate` bytes a second, counted over consecutive
// windows (of the request timeout) from its first byte, and must end within `total`.
//
// Not an error: a min_rate of 0 means no minimum; a read then waits at most one window, as any
// read of a request does. Not thread-safe: one per upload, used by its session alone.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace crmd::http {

class UploadPace {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Verdict { kGoOn, kTooSlow, kTooLong };

  UploadPace(std::uint64_t min_rate, std::chrono::seconds window, std::chrono::seconds total, Clock::time_point start)
      : min_rate_(min_rate),
        window_(window),
        need_(min_rate * static_cast<std::uint64_t>(window.count())),
        ends_by_(start + total),
        window_end_(start + window),
        last_(start) {}

  // `bytes` more arrived at `now`.
  Verdict Add(std::uint64_t bytes, Clock::time_point now) {
    if (min_rate_ > 0) {
      for (; now >= window_end_; window_end_ += window_) {
        if (window_bytes_ < need_) return Verdict::kTooSlow;
        window_bytes_ = 0;
      }
      window_bytes_ += bytes;
    }
    last_ = now;
    return now >= ends_by_ ? Verdict::kTooLong : Verdict::kGoOn;
  }

  // When the upload has failed if nothing more arrives by then: a read waits no longer.
  Clock::time_point Deadline() const {
    if (min_rate_ == 0) return std::min(ends_by_, last_ + window_);
    // A window already full fails no earlier than the end of the next one.
    return std::min(ends_by_, window_bytes_ >= need_ ? window_end_ + window_ : window_end_);
  }

 private:
  const std::uint64_t min_rate_;
  const Clock::duration window_;
  const std::uint64_t need_;  // bytes each window must bring
  const Clock::time_point ends_by_;
  Clock::time_point window_end_;
  std::uint64_t window_bytes_ = 0;
  Clock::time_point last_;
};

}  // namespace crmd::http
