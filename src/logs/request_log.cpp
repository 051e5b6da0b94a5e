#include "logs/request_log.hpp"

#include <algorithm>

#include "app/write_unit.hpp"
#include "auth/context.hpp"
#include "schema/log_classes.hpp"
#include "storage/write_transaction.hpp"
#include "util/errors.hpp"
#include "util/log.hpp"
#include "util/time.hpp"

namespace crmd::logs {

namespace {

// Rows written per write unit (one job of the application's write queue): ~2 ms of the writer,
// the longest a client's write waits for the log.
constexpr std::size_t kRowsPerUnit = 128;
// Rows deleted per write unit by the retention: the unit holds the application's writer for
// as long as it runs (~5 ms), and the pass goes on with the next.
constexpr std::int64_t kPruneBatch = 500;
// How long Stop() waits for the last rows to be written.
constexpr std::chrono::seconds kStopWait{10};
// Units per application and pass: a backlog of a year of rows is cut over several passes.
constexpr int kPruneUnitsPerPass = 200;

// The fields crmd writes, and what an older `_RequestLog` lacks of them.
std::optional<schema::ClassSchema> RequestLogClassFor(const schema::Snapshot& snapshot) {
  const schema::ClassSchema wanted = schema::RequestLogClass();
  const schema::ClassSchema* existing = snapshot.Find(schema::kRequestLogClass);
  if (!existing) return wanted;
  std::optional<schema::ClassSchema> out;
  for (const auto& field : wanted.fields) {
    if (existing->FindField(field.first)) continue;
    if (!out) out = *existing;
    out->fields.push_back(field);
  }
  return out;
}

// One row, every field set or an explicit null (spec §2.6 lists them all; crmd has no source for
// country, trustedIP and retries). Every row has the same columns, so that many are one INSERT.
storage::Row RowOf(const RequestEntry& e, std::vector<std::string>& columns) {
  storage::Row row;
  row.created_at = row.updated_at = timeutil::FormatIso(e.at_millis);
  row.acl = "{}";  // the master key reads it (auth/), nobody else
  columns.clear();
  auto text = [&](const char* field, const std::string& value) {
    columns.emplace_back(field);
    if (value.empty()) {
      row.nulls.emplace_back(field);
      row.cells.emplace_back(std::monostate{});
    } else {
      row.cells.emplace_back(value);
    }
  };
  auto number = [&](const char* field, storage::Cell value) {
    columns.emplace_back(field);
    row.cells.push_back(std::move(value));
  };
  text("path", e.path);
  text("method", e.method);
  text("ip", e.ip);
  text("referer", e.referer);
  text("userAgent", e.user_agent);
  text("user", e.user_id);
  number("usingMK", std::int64_t{e.using_master ? 1 : 0});
  number("internal", std::int64_t{0});  // every row is a request from outside
  number("duration", e.duration_ms);
  number("statusCode", std::int64_t{e.status});
  number("contentLength", e.content_length);
  text("service", e.service);
  text("installationId", e.installation_id);
  for (const char* none : {"country", "trustedIP", "retries"}) row.nulls.emplace_back(none);
  return row;
}

}  // namespace

RequestLog::RequestLog(app::Applications& apps, Options options)
    : apps_(apps), options_(options), thread_([this] { Loop(); }) {
  // Rows waiting hold their applications open: short of descriptors, they are written now.
  apps_.OnShortOfDescriptors([this] {
    std::lock_guard lock(mutex_);
    write_now_ = true;
    changed_.notify_all();
  });
}

RequestLog::~RequestLog() { Stop(); }

void RequestLog::Append(std::shared_ptr<app::Application> app, RequestEntry entry) {
  try {
    std::lock_guard lock(mutex_);
    if (stopping_ || count_ >= options_.max_buffered) {
      ++dropped_;
      return;
    }
    auto& w = waiting_[app->id()];
    if (!w.app) {
      w.app = std::move(app);
      if (waiting_.size() >= options_.max_apps_waiting && !write_now_) {
        write_now_ = true;
        changed_.notify_all();
      }
    }
    w.rows.push_back(std::move(entry));
    ++count_;
  } catch (const std::exception&) {
    // Out of memory for a log row: the request stands.
  }
}

void RequestLog::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  apps_.OnShortOfDescriptors({});
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();  // its last turn started a job for every waiting row
  std::unique_lock lock(mutex_);
  if (!changed_.wait_for(lock, kStopWait, [&] { return count_ == 0; }))
    log::Warn("request log rows not written at shutdown", {{"rows", static_cast<std::int64_t>(count_)}});
}

std::vector<RequestEntry> RequestLog::NextRows(Waiting& w) {
  std::vector<RequestEntry> rows;
  const std::size_t n = std::min(w.rows.size(), kRowsPerUnit);
  rows.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    rows.push_back(std::move(w.rows.front()));
    w.rows.pop_front();
  }
  w.writing = !rows.empty();
  return rows;
}

void RequestLog::Loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait_for(lock, options_.interval, [&] { return stopping_ || write_now_; });
    write_now_ = false;
    const std::uint64_t dropped = std::exchange(dropped_, 0);
    const bool stop = stopping_;
    // A chain of jobs for every application whose rows wait and that has none running.
    std::vector<std::pair<std::shared_ptr<app::Application>, std::vector<RequestEntry>>> starts;
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      Waiting& w = it->second;
      if (!w.writing && !w.rows.empty()) starts.emplace_back(w.app, NextRows(w));
      if (!w.writing && w.rows.empty()) it = waiting_.erase(it);  // an idle application holds nothing
      else ++it;
    }
    lock.unlock();
    if (dropped > 0) log::Warn("request log rows dropped", {{"rows", static_cast<std::int64_t>(dropped)}});
    for (auto& [app, rows] : starts) SubmitJob(std::move(app), std::move(rows));
    if (!stop && options_.retention_days > 0) {
      const auto now = std::chrono::steady_clock::now();
      for (auto& app : apps_.OpenApplications()) {
        auto [it, fresh] = pruned_.try_emplace(app->id(), now);
        if (!fresh && now - it->second < options_.retention_every) continue;
        it->second = now;
        try {
          Prune(*app);
        } catch (const std::exception& e) {
          log::Error("request log retention failed", {{"app", app->id()}, {"error", e.what()}});
        }
      }
    }
    lock.lock();
    if (stop) return;
  }
}

void RequestLog::SubmitJob(std::shared_ptr<app::Application> app, std::vector<RequestEntry> rows) {
  auto shared = std::make_shared<std::vector<RequestEntry>>(std::move(rows));
  app::WriteQueue& queue = app->writes();
  queue.Submit({[this, app, shared](storage::WriteGroup& group) { Write(*app, group, *shared); },
                // On the queue's thread, or at once when the queue refused the job: must not block.
                [this, app, shared](storage::CommitOutcome outcome) {
                  std::vector<RequestEntry> next;
                  {
                    std::lock_guard lock(mutex_);
                    count_ -= shared->size();
                    if (!storage::Durable(outcome)) dropped_ += shared->size();
                    auto it = waiting_.find(app->id());
                    if (it != waiting_.end()) {
                      next = NextRows(it->second);
                      // Written up: lets go of the application, which the store cache may close.
                      if (next.empty()) waiting_.erase(it);
                    }
                    changed_.notify_all();
                  }
                  shared->clear();
                  if (!next.empty()) SubmitJob(app, std::move(next));
                }});
}

void RequestLog::Write(app::Application& app, storage::WriteGroup& group, const std::vector<RequestEntry>& rows) {
  auth::Context ctx;
  ctx.app = std::shared_ptr<app::Application>(&app, [](app::Application*) {});  // kept by the job
  ctx.identity = auth::Identity::System();
  ctx.queued = &group;
  // The store down (PostgreSQL restarting) loses these rows as any write's: counted, not thrown.
  Status written;
  try {
    written = app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Status {
    if (auto shape = RequestLogClassFor(*unit.schema())) {
      if (!unit.MayChangeSchema()) return app::WriteUnit::Restarting();
      unit.txn().SaveClass(unit.schema()->Find(schema::kRequestLogClass), *shape);
      unit.ChangeSchema(unit.schema()->With(std::move(*shape)));
    }
    const auto& cls = *unit.schema()->Find(schema::kRequestLogClass);
    std::vector<std::string> columns;
    std::vector<storage::Row> stored;
    stored.reserve(rows.size());
    for (const auto& entry : rows) stored.push_back(RowOf(entry, columns));
    storage::InsertManyWithNewIds(unit.txn(), cls, columns, stored);
    return {};
    });
  } catch (const storage::StoreUnavailable& e) {
    written = Status(errors::Unavailable(e.what()));
  }
  if (!written.ok()) {
    log::Error("request log rows not written", {{"app", app.id()}, {"error", written.error().message}});
    std::lock_guard lock(mutex_);
    dropped_ += rows.size();
  }
}

void RequestLog::Prune(app::Application& app) {
  const auto* cls = app.schema()->Find(schema::kRequestLogClass);
  if (!cls) return;
  const std::int64_t cutoff = timeutil::NowMillis() - std::int64_t{options_.retention_days} * 86'400'000;
  schema::Query older;
  older.where = schema::FieldEquals("createdAt", timeutil::FormatIso(cutoff));
  older.where->op = schema::CompareOp::kLt;
  older.order = {{"createdAt", false}};
  older.limit = kPruneBatch;
  auth::Context ctx;
  ctx.app = std::shared_ptr<app::Application>(&app, [](app::Application*) {});  // kept by the caller
  ctx.identity = auth::Identity::System();
  std::int64_t total = 0;
  for (int unit_count = 0; unit_count < kPruneUnitsPerPass; ++unit_count) {
    auto deleted = app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Result<std::int64_t> {
      const auto* current = unit.schema()->Find(schema::kRequestLogClass);
      if (!current) return std::int64_t{0};
      std::vector<std::string> ids;
      unit.txn().Find(*current, older, [&](storage::Row& row) {
        ids.push_back(std::move(row.object_id));
        return true;
      });
      for (const auto& id : ids) unit.txn().Delete(*current, id);
      return static_cast<std::int64_t>(ids.size());
    });
    if (!deleted.ok()) throw std::runtime_error(deleted.error().message);
    total += deleted.value();
    if (deleted.value() < kPruneBatch) break;
  }
  if (total > 0) log::Info("request log pruned", {{"app", app.id()}, {"rows", total}, {"days", options_.retention_days}});
}

}  // namespace crmd::logs
