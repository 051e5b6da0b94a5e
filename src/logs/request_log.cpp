#include "logs/request_log.hpp"

#include "app/write_unit.hpp"
#include "schema/log_classes.hpp"
#include "storage/database.hpp"
#include "util/log.hpp"
#include "util/time.hpp"

namespace crmd::logs {

namespace {

// Rows deleted per write unit by the retention: the unit holds the application's writer for
// as long as it runs (~20 ms), and the pass goes on with the next.
constexpr std::int64_t kPruneBatch = 2000;
// Units per application and pass: a backlog of a year of rows is cut over several passes.
constexpr int kPruneUnitsPerPass = 50;

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
// country, trustedIP and retries).
storage::Row RowOf(const RequestEntry& e, std::vector<std::string>& columns) {
  storage::Row row;
  row.created_at = row.updated_at = timeutil::FormatIso(e.at_millis);
  row.acl = "{}";  // the master key reads it (auth/), nobody else
  columns.clear();
  auto text = [&](const char* field, const std::string& value) {
    if (value.empty()) {
      row.nulls.emplace_back(field);
      return;
    }
    columns.emplace_back(field);
    row.cells.emplace_back(value);
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
    : apps_(apps), options_(options), thread_([this] { Loop(); }) {}

RequestLog::~RequestLog() { Stop(); }

void RequestLog::Append(std::shared_ptr<app::Application> app, RequestEntry entry) {
  try {
    std::lock_guard lock(mutex_);
    if (stopping_ || count_ >= options_.max_buffered) {
      ++dropped_;
      return;
    }
    auto& slot = buffered_[app->id()];
    if (!slot.first) slot.first = std::move(app);
    slot.second.push_back(std::move(entry));
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
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RequestLog::Loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait_for(lock, options_.interval, [&] { return stopping_; });
    auto batch = std::move(buffered_);
    buffered_.clear();
    count_ = 0;
    std::uint64_t dropped = std::exchange(dropped_, 0);
    const bool stop = stopping_;
    lock.unlock();
    for (auto& [id, slot] : batch) {
      try {
        Write(*slot.first, slot.second);
      } catch (const std::exception& e) {
        dropped += slot.second.size();
        log::Error("request log rows not written", {{"app", id}, {"error", e.what()}});
      }
    }
    if (dropped > 0) log::Warn("request log rows dropped", {{"rows", static_cast<std::int64_t>(dropped)}});
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

void RequestLog::Write(app::Application& app, std::vector<RequestEntry>& rows) {
  if (rows.empty()) return;
  auth::Context ctx;
  ctx.app = std::shared_ptr<app::Application>(&app, [](app::Application*) {});  // kept by the batch
  ctx.identity = auth::Identity::System();
  auto written = app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Status {
    if (auto shape = RequestLogClassFor(*unit.schema())) {
      if (!unit.MayChangeSchema()) return app::WriteUnit::Restarting();
      unit.txn().SaveClass(unit.schema()->Find(schema::kRequestLogClass), *shape);
      unit.ChangeSchema(unit.schema()->With(std::move(*shape)));
    }
    const auto& cls = *unit.schema()->Find(schema::kRequestLogClass);
    std::vector<std::string> columns;
    for (const auto& entry : rows) {
      storage::Row row = RowOf(entry, columns);
      storage::InsertWithNewId(unit.txn(), cls, columns, row, [](storage::Row&) {});
    }
    return {};
  });
  if (!written.ok()) throw std::runtime_error(written.error().message);
}

void RequestLog::Prune(app::Application& app) {
  const auto* cls = app.schema()->Find(schema::kRequestLogClass);
  if (!cls) return;
  const std::int64_t cutoff = timeutil::NowMillis() - std::int64_t{options_.retention_days} * 86'400'000;
  query::Query older;
  older.where = query::FieldEquals("createdAt", timeutil::FormatIso(cutoff));
  older.where->op = query::CompareOp::kLt;
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
