// Write groups over a store double whose COMMITs fail when told to: what a write group and the
// write queue do with a failed or lost commit, without a disk that fails. Its grouped writes are
// null transactions: a job may begin them but not write through them.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "storage/group_transaction.hpp"
#include "storage/write_group.hpp"

namespace crmd::test {

class FailingCommits final : public storage::WriteGroups {
 public:
  std::set<std::size_t> failing;  // the COMMITs that fail, counted from 0 over every group
  bool lost = false;              // set by a job: an error rolled the open transaction back
  std::size_t commits = 0;        // COMMITs issued (of an open transaction) so far
  // The COMMITs that end otherwise than durable or failed (unavailable, unknown), by number.
  std::map<std::size_t, storage::CommitOutcome> outcomes;

 private:
  class Group final : public storage::GroupTransaction {
   public:
    explicit Group(FailingCommits& db) : db_(db) {}
    std::unique_ptr<storage::WriteTransaction> BeginWrite(bool exclusive) override {
      if (!exclusive) open_ = true;
      return nullptr;
    }
    storage::CommitOutcome Commit() override {
      if (!open_) return storage::CommitOutcome::kDurable;
      open_ = false;
      const bool lost = db_.lost;
      db_.lost = false;
      if (auto told = outcomes_told(db_.commits); told) {
        ++db_.commits;
        return *told;
      }
      return !db_.failing.contains(db_.commits++) && !lost ? storage::CommitOutcome::kDurable : storage::CommitOutcome::kFailed;
    }
    bool Lost() const override { return open_ && db_.lost; }
    bool ExclusiveWaiting() const override { return false; }

   private:
    std::optional<storage::CommitOutcome> outcomes_told(std::size_t commit) const {
      const auto found = db_.outcomes.find(commit);
      if (found == db_.outcomes.end()) return std::nullopt;
      return found->second;
    }
    FailingCommits& db_;
    bool open_ = false;
  };

  std::unique_ptr<storage::GroupTransaction> BeginGroupTransaction() override { return std::make_unique<Group>(*this); }
};

}  // namespace crmd::test
