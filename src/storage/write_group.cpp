#include "storage/write_group.hpp"

#include <chrono>
#include <exception>
#include <utility>

#include "metrics/metrics.hpp"
#include "storage/group_transaction.hpp"
#include "util/log.hpp"

namespace crmd::storage {

WriteGroup::WriteGroup(std::unique_ptr<GroupTransaction> txn, std::vector<CommitOutcome>& outcomes)
    : txn_(std::move(txn)), outcomes_(outcomes) {}

WriteGroup::~WriteGroup() { Flush(); }

std::unique_ptr<WriteTransaction> WriteGroup::BeginWrite(bool exclusive) {
  FlushIfLost();
  if (exclusive) {
    // What came before is durable before the exclusive write starts; it would otherwise wait for
    // this group's own transaction.
    Flush();
    return txn_->BeginWrite(/*exclusive=*/true);
  }
  auto write = txn_->BeginWrite(/*exclusive=*/false);
  if (members_.empty() || members_.back() != job_) members_.push_back(job_);
  return write;
}

void WriteGroup::Flush() {
  const auto started = std::chrono::steady_clock::now();
  const CommitOutcome outcome = txn_->Commit();
  metrics::ObserveCommit("write_queue", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  const bool committed = Durable(outcome);
  for (const std::size_t job : members_) outcomes_[job] = Worse(outcomes_[job], outcome);
  members_.clear();
  auto actions = std::move(after_flush_);
  after_flush_.clear();
  if (!committed) return;  // they were left for writes that are lost
  for (auto& action : actions) {
    try {
      action();
    } catch (const std::exception& e) {
      log::Error("after-flush action failed", {{"error", e.what()}});
    } catch (...) {
      log::Error("after-flush action failed", {{"error", "unknown exception"}});
    }
  }
}

// Not flushed first when lost: the writes that left the action were begun after the last check,
// so a loss since then took them too, and the failed flush must drop it with them.
void WriteGroup::AfterFlush(std::function<void()> action) { after_flush_.push_back(std::move(action)); }

bool WriteGroup::ExclusiveWaiting() const { return txn_->ExclusiveWaiting(); }

void WriteGroup::FlushIfLost() {
  if (txn_->Lost()) Flush();
}

std::vector<CommitOutcome> WriteGroups::CommitBatch(std::span<const Job> jobs) {
  std::vector<CommitOutcome> outcomes(jobs.size(), CommitOutcome::kDurable);
  {
    WriteGroup group(BeginGroupTransaction(), outcomes);
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      // A transaction lost to the last job's error would otherwise hold the store through the jobs
      // that write nothing.
      group.FlushIfLost();
      group.job_ = i;
      try {
        jobs[i](group);
      } catch (const std::exception& e) {
        // A job answers its own faults; this is a last line, so one job cannot end the others.
        log::Error("write group job failed", {{"error", e.what()}});
      } catch (...) {
        log::Error("write group job failed", {{"error", "unknown exception"}});
      }
    }
    group.Flush();
  }
  return outcomes;
}

}  // namespace crmd::storage
