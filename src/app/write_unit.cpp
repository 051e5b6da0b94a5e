#include "app/write_unit.hpp"

#include <stdexcept>
#include <utility>

#include "app/application.hpp"
#include "util/errors.hpp"
#include "util/log.hpp"

namespace crmd::app {

namespace {

std::unique_ptr<storage::WriteTransaction> Begin(Application& app, storage::WriteGroup* queued, bool exclusive) {
  if (queued) return queued->BeginWrite(exclusive);
  return app.db().BeginWrite(exclusive);
}

}  // namespace

WriteUnit::WriteUnit(Application& app, storage::WriteGroup* queued, bool exclusive)
    : app_(app),
      queued_(queued),
      exclusive_(exclusive),
      txn_(Begin(app, queued, exclusive)),
      // Read once the transaction holds the store: schema changes are made by exclusive writes
      // only, so nobody changes it while the unit runs.
      schema_(app.schema()) {}

WriteUnit::~WriteUnit() = default;  // the transaction rolls back unless it committed

bool WriteUnit::MayChangeSchema() {
  if (!exclusive_) restarting_ = true;
  return exclusive_;
}

void WriteUnit::ChangeSchema(std::shared_ptr<const schema::Snapshot> next) {
  if (!exclusive_) throw std::logic_error("a schema change in a grouped write unit");
  schema_ = std::move(next);
  schema_changed_ = true;
}

ApiError WriteUnit::Restarting() { return errors::Internal(); }

void WriteUnit::AfterCommit(Action action) { after_commit_.push_back(std::move(action)); }

void WriteUnit::AtCommit(Action action) { at_commit_.push_back(std::move(action)); }

void WriteUnit::Commit() {
  if (depth_ != 0) throw std::logic_error("a write unit committed inside a nested write");
  txn_->Commit();
  committed_ = true;
  // Before the exclusive transaction lets the next write in (it ends with the unit).
  if (schema_changed_) app_.Publish(schema_);
  for (auto& action : at_commit_) {
    if (queued_ && !txn_->Exclusive()) queued_->AfterFlush(std::move(action));
    else action();
  }
  at_commit_.clear();
  if (!wrote_.empty()) {
    // Once durable: a read between this commit and the group's flush still sees the rows before.
    if (queued_ && !txn_->Exclusive()) queued_->AfterFlush([app = &app_, classes = wrote_] { app->Wrote(classes); });
    else app_.Wrote(wrote_);
  }
  if (after_commit_.empty()) return;
  if (queued_ && !txn_->Exclusive()) {
    queued_->AfterFlush([app = &app_, actions = std::move(after_commit_)]() mutable {
      app->RunAfterCommit(std::move(actions));
    });
  } else {
    app_.RunAfterCommit(std::move(after_commit_));
  }
  after_commit_.clear();
}

void WriteUnit::Wrote(std::string_view class_name) {
  if (wrote_.find(class_name) == wrote_.end()) wrote_.emplace(class_name);
}

WriteUnit::Nested WriteUnit::Nest() { return Nested(*this); }

WriteUnit::Nested::Nested(WriteUnit& unit)
    : unit_(&unit),
      schema_(unit.schema_),
      schema_changed_(unit.schema_changed_),
      actions_(unit.after_commit_.size()),
      at_commit_(unit.at_commit_.size()) {
  unit.txn_->OpenSavepoint();
  ++unit.depth_;
}

WriteUnit::Nested::Nested(Nested&& other) noexcept
    : unit_(std::exchange(other.unit_, nullptr)),
      schema_(std::move(other.schema_)),
      schema_changed_(other.schema_changed_),
      actions_(other.actions_),
      at_commit_(other.at_commit_) {}

void WriteUnit::Nested::Keep() {
  if (!unit_) return;
  WriteUnit& unit = *std::exchange(unit_, nullptr);
  --unit.depth_;
  unit.txn_->ReleaseSavepoint();
}

WriteUnit::Nested::~Nested() {
  if (!unit_) return;
  WriteUnit& unit = *unit_;
  --unit.depth_;
  unit.schema_ = std::move(schema_);
  unit.schema_changed_ = schema_changed_;
  unit.after_commit_.resize(actions_);
  unit.at_commit_.resize(at_commit_);
  try {
    unit.txn_->RollbackSavepoint();
  } catch (const std::exception& e) {
    log::Error("rolling back a nested write failed", {{"error", e.what()}});
  }
}

}  // namespace crmd::app
