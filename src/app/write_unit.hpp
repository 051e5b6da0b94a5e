// The write unit of work (DESIGN.md "A write, end to end"): one object owns the storage
// transaction of an outermost write and what commits with it or after it.
//
//   - the transaction: grouped (it shares its commit with concurrent writes), or exclusive;
//   - the pending schema: the application's when the unit began, plus the classes and fields its
//     writes added, published to the application at the outermost commit, never before;
//   - the actions to run after commit: handed on once the commit is durable (for a write queue's
//     write, after the queue's flush), to a thread that waits for no queue (app/after_commit.hpp);
//   - the identity of the outermost write, and a depth counter of the writes nested in it.
//
// Nested writes (product-base rows, later function, trigger and MCP writes) join the unit through
// their Context (Context::unit): each runs in a savepoint of the unit's transaction, at depth + 1,
// and fails alone; none begins a transaction of its own. Which thread runs a write decides
// nothing. A batch's items are the one exception: independent by contract (spec §4.4), each is a
// unit of its own in one write group (Context::queued), which commits them together; a savepoint
// around a whole batch would keep the original of every page it changes in SQLite's sub-journal.
//
// A write that must grow the schema needs an exclusive transaction. In a grouped unit it stops
// and marks the unit: RunWrite then rolls the whole unit back and runs it again, exclusively, from
// the start, so the schema change commits atomically with everything else the unit does.
//
// Not thread-safe: a unit belongs to the request that runs it.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <set>
#include <type_traits>
#include <vector>

#include "schema/class_schema.hpp"
#include "storage/write_group.hpp"
#include "storage/write_transaction.hpp"
#include "util/result.hpp"

namespace crmd::app {

class Application;

class WriteUnit {
 public:
  using Action = std::function<void()>;

  // Begins an outermost write of `app`: in `queued` (a write queue's or a batch's group) when
  // given, else a transaction of its own.
  WriteUnit(Application& app, storage::WriteGroup* queued, bool exclusive);
  ~WriteUnit();  // rolls back unless committed
  WriteUnit(const WriteUnit&) = delete;
  WriteUnit& operator=(const WriteUnit&) = delete;

  storage::WriteTransaction& txn() { return *txn_; }
  Application& app() { return app_; }
  bool exclusive() const { return exclusive_; }
  // 0 while the outermost write runs; each nested write adds one for as long as it runs.
  int depth() const { return depth_; }

  // The schema every write of the unit works against.
  const std::shared_ptr<const schema::Snapshot>& schema() const { return schema_; }
  // Whether a write may change the schema in this unit: true when it is exclusive. When not, the
  // unit is marked to run again exclusively, and the write must stop and return Restarting().
  bool MayChangeSchema();
  // Makes `next` the unit's schema (published when the unit commits). Only after MayChangeSchema().
  void ChangeSchema(std::shared_ptr<const schema::Snapshot> next);
  bool restarting() const { return restarting_; }
  // What a write answers when it stopped for a restart. Never reaches a client: the outermost
  // RunWrite runs the unit again.
  static ApiError Restarting();

  // Notes that the unit writes rows of `class_name`: once its commit is durable, the class's
  // generation moves on (Application::Generation), so what was derived from its rows is read again.
  void Wrote(std::string_view class_name);

  // Runs `action` once the unit's commit is durable; never when it rolls back. Added by a nested
  // write that is then rolled back, it goes with it.
  void AfterCommit(Action action);
  // Runs `action` on the committing thread as soon as the commit is durable, before the write is
  // answered (for a write queue's write: at its flush); never when it rolls back. For what the
  // answer promises and that takes no time (a file's second name): it must not block.
  void AtCommit(Action action);

  // Commits the outermost write: durable when it returns (for a write queue's group: at the
  // queue's flush), then publishes the unit's schema and hands its after-commit actions on.
  // Throws StorageError when the commit failed.
  void Commit();

  // The scope of one nested write: a savepoint, depth + 1. Destroyed without Keep(), it rolls the
  // nested write back, its schema changes and after-commit actions with it.
  class Nested {
   public:
    ~Nested();
    Nested(Nested&& other) noexcept;
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;
    Nested& operator=(Nested&&) = delete;
    void Keep();

   private:
    friend class WriteUnit;
    explicit Nested(WriteUnit& unit);
    WriteUnit* unit_;
    std::shared_ptr<const schema::Snapshot> schema_;
    bool schema_changed_;
    std::size_t actions_;
    std::size_t at_commit_;
  };
  Nested Nest();

 private:
  Application& app_;
  storage::WriteGroup* queued_;
  bool exclusive_;
  std::unique_ptr<storage::WriteTransaction> txn_;
  std::shared_ptr<const schema::Snapshot> schema_;
  bool schema_changed_ = false;
  bool restarting_ = false;
  bool committed_ = false;
  int depth_ = 0;
  std::vector<Action> after_commit_;
  std::vector<Action> at_commit_;
  std::set<std::string, std::less<>> wrote_;  // a nested write rolled back may leave its class here: harmless
};

enum class WriteStart {
  kGrouped,    // as most writes: exclusive only if it turns out to change the schema
  kExclusive,  // a write that changes the schema for sure (the schema API)
};

// The functions below take the request's context: any type with `app`
// (std::shared_ptr<Application>), `unit` (WriteUnit*) and `queued` (storage::WriteGroup*) members,
// such as auth::Context, which lives in a layer above this one.

namespace detail {
// Points the context at `unit` for as long as the outermost write runs.
template <typename Context>
class UnitScope {
 public:
  UnitScope(Context& ctx, WriteUnit& unit) : ctx_(ctx) { ctx_.unit = &unit; }
  ~UnitScope() { ctx_.unit = nullptr; }
  UnitScope(const UnitScope&) = delete;
  UnitScope& operator=(const UnitScope&) = delete;

 private:
  Context& ctx_;
};
}  // namespace detail

// Before work that takes long and needs no store (a password hash): what the caller's write group
// holds is made durable and the store let go, so no other write waits behind that work (a batch's
// items share a group that holds the store from their first write to its flush). A nested write
// cannot let go of its unit: it does the work holding it.
template <typename Context>
void BeforeSlowWork(Context& ctx) {
  if (!ctx.unit && ctx.queued) ctx.queued->Flush();
}

// Runs `body(unit)` as one write of `ctx`; `body` returns a Result (or Status).
//   - Nested (ctx.unit is set): in a savepoint of that unit, kept when the body succeeds, rolled
//     back when it fails or throws.
//   - Outermost: begins a unit (in ctx.queued when set), committed when the body succeeds and
//     rolled back otherwise, so a failed write leaves nothing behind. If a write of the body needed
//     a schema change the unit could not make, the unit is rolled back and the body runs again in
//     an exclusive unit: a body must therefore do nothing outside the unit that it cannot do twice
//     (what must happen once goes into AfterCommit).
template <typename Context, typename Body>
auto RunWrite(Context& ctx, Body&& body, WriteStart start = WriteStart::kGrouped)
    -> std::invoke_result_t<Body&, WriteUnit&> {
  using Outcome = std::invoke_result_t<Body&, WriteUnit&>;
  if (ctx.unit) {
    WriteUnit& unit = *ctx.unit;
    if (unit.restarting()) return Outcome(WriteUnit::Restarting());
    if (start == WriteStart::kExclusive && !unit.MayChangeSchema()) return Outcome(WriteUnit::Restarting());
    auto nested = unit.Nest();
    Outcome outcome = body(unit);
    if (outcome.ok() && !unit.restarting()) nested.Keep();
    return outcome;
  }
  bool exclusive = start == WriteStart::kExclusive;
  for (;;) {
    WriteUnit unit(*ctx.app, ctx.queued, exclusive);
    detail::UnitScope<Context> scope(ctx, unit);
    Outcome outcome = body(unit);
    if (unit.restarting() && !exclusive) {
      exclusive = true;
      continue;
    }
    if (outcome.ok()) unit.Commit();
    return outcome;
  }
}

}  // namespace crmd::app
