#include "storage/postgres/connection.hpp"

#include <poll.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "metrics/metrics.hpp"
#include "util/log.hpp"

namespace crmd::storage::postgres {

namespace {

// SQLSTATEs (PostgreSQL's errcodes): a unique violation; a statement cancelled by its
// statement_timeout.
constexpr std::string_view kUniqueViolation = "23505";
constexpr std::string_view kQueryCanceled = "57014";
// "cached plan must not change result type".
constexpr std::string_view kFeatureNotSupported = "0A000";
// Statements prepared on one connection before it forgets them all: an application's statements
// are prepared per schema, and thousands of tenants must not grow a connection without bound.
constexpr std::size_t kMaxPrepared = 4096;

std::string Trimmed(const char* message) {
  std::string text = message ? message : "";
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

}  // namespace

bool NeedsEscape(std::string_view text) {
  return text.find('\0') != std::string_view::npos || text.find('\x01') != std::string_view::npos ||
         text.find("\\u000") != std::string_view::npos;
}

bool NeedsUnescape(std::string_view text) {
  return text.find('\x01') != std::string_view::npos || text.find("\\u0001") != std::string_view::npos;
}

std::string EscapeNul(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\0' || c == '\x01') {
      out += '\x01';
      out += c == '\0' ? '0' : '1';
    } else if (c == '\\' && (text.substr(i, 6) == "\\u0000" || text.substr(i, 6) == "\\u0001")) {
      out += "\\u0001";
      out += text[i + 5];
      i += 5;
    } else {
      out += c;
    }
  }
  return out;
}

std::string UnescapeNul(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\x01' && i + 1 < text.size()) {
      out += text[++i] == '0' ? '\0' : '\x01';
    } else if (c == '\\' && i + 6 < text.size() && text.substr(i, 6) == "\\u0001") {
      out += text[i + 6] == '0' ? "\\u0000" : "\\u0001";
      i += 6;
    } else {
      out += c;
    }
  }
  return out;
}

std::optional<std::string_view> Rows::Value(int row, int column) const {
  if (Pq().PQgetisnull(result_.get(), row, column)) return std::nullopt;
  const std::string_view raw(Pq().PQgetvalue(result_.get(), row, column),
                             static_cast<std::size_t>(Pq().PQgetlength(result_.get(), row, column)));
  if (!NeedsUnescape(raw)) return raw;
  return unescaped_.emplace_back(UnescapeNul(raw));
}

std::string_view Rows::Name(int column) const { return Pq().PQfname(result_.get(), column); }

std::int64_t Rows::Integer(int row, int column) const {
  const auto text = Value(row, column);
  std::int64_t n = 0;
  if (!text) throw StorageError("postgresql: an integer column is NULL");
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
  if (ec != std::errc() || end != text->data() + text->size())
    throw StorageError("postgresql: not an integer: " + std::string(*text));
  return n;
}

std::int64_t Rows::Affected() const {
  const char* text = Pq().PQcmdTuples(result_.get());
  std::int64_t n = 0;
  std::from_chars(text, text + std::strlen(text), n);
  return n;
}

Connection::Connection(const std::string& conninfo) : conn_(Pq().PQconnectdb(conninfo.c_str()), Pq().PQfinish) {
  if (!conn_) throw StorageError("postgresql: out of memory connecting");
  if (Pq().PQstatus(conn_.get()) != CONNECTION_OK) {
    const std::string message = "postgresql: cannot connect: " + Trimmed(Pq().PQerrorMessage(conn_.get()));
    if (message.find("Too many open files") != std::string::npos) throw OutOfDescriptors(message);
    throw StoreUnavailable(message);
  }
  cancel_.reset(Pq().PQgetCancel(conn_.get()));
  // The server's warnings go to crmd's log as JSON lines (libpq would print them raw on stderr);
  // its notices ("already exists, skipping") are not sent at all.
  Pq().PQsetNoticeProcessor(
      conn_.get(), [](void*, const char* message) { log::Warn("postgresql says", {{"message", Trimmed(message)}}); }, nullptr);
  // Errors and notices in one language whatever the server's locale; the client decodes UTF-8.
  // Dates are read as UTC; a commit is durable (on disk) before it returns, whatever the server's
  // default.
  Exec("SET client_encoding = 'UTF8'; SET lc_messages = 'C'; SET TimeZone = 'UTC'; SET synchronous_commit = on; "
       "SET client_min_messages = warning");
}

Rows Connection::Exec(std::string_view sql) {
  if (deferred_.empty()) return Check(Pq().PQexec(conn_.get(), std::string(sql).c_str()), sql);
  // Statements without parameters travel together as one simple query anyway.
  std::string all;
  for (const auto& d : deferred_) all.append(d).append("; ");
  deferred_.clear();
  all.append(sql);
  return Check(Pq().PQexec(conn_.get(), all.c_str()), all);
}

void Connection::Defer(std::string sql) { deferred_.push_back(std::move(sql)); }

Rows Connection::Pipelined(const std::string& name, const std::string& sql, int count, const char* const* values,
                           const int* lengths) {
  PGconn* c = conn_.get();
  const std::vector<std::string> deferred = std::move(deferred_);
  deferred_.clear();
  const std::size_t commands = deferred.size() + 1;
  bool sent = Pq().PQenterPipelineMode(c) == 1;
  for (const auto& d : deferred)
    sent = sent && Pq().PQsendQueryParams(c, d.c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0) == 1;
  sent = sent && Pq().PQsendQueryPrepared(c, name.c_str(), count, values, lengths, nullptr, 0) == 1 && Pq().PQpipelineSync(c) == 1;
  if (!sent) {
    broken_ = true;
    throw StoreUnavailable("postgresql: " + Trimmed(Pq().PQerrorMessage(c)));
  }
  // Each command's results end with a null; the pipeline's with its sync. After a failure the
  // commands left answer PGRES_PIPELINE_ABORTED.
  std::unique_ptr<PGresult, void (*)(PGresult*)> failure(nullptr, Pq().PQclear), answer(nullptr, Pq().PQclear);
  std::size_t ended = 0, failed_at = 0;
  for (;;) {
    PGresult* r = Pq().PQgetResult(c);
    if (!r) {
      if (++ended > commands || Pq().PQstatus(c) != CONNECTION_OK) break;
      continue;
    }
    const auto status = Pq().PQresultStatus(r);
    if (status == PGRES_PIPELINE_SYNC) {
      Pq().PQclear(r);
      break;
    }
    const bool ok = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY;
    if (ok && ended + 1 == commands && !answer) answer.reset(r);
    else if (!ok && status != PGRES_PIPELINE_ABORTED && !failure) failure.reset(r), failed_at = ended;
    else Pq().PQclear(r);
  }
  if (Pq().PQexitPipelineMode(c) != 1) broken_ = true;
  if (failure) return Check(failure.release(), failed_at < deferred.size() ? deferred[failed_at] : sql);
  if (!answer) {
    broken_ = true;
    throw StoreUnavailable("postgresql: the pipeline ended without an answer: " + Trimmed(Pq().PQerrorMessage(c)));
  }
  return Rows(answer.release());
}

const std::string& Connection::Prepared(const std::string& sql) {
  auto found = prepared_.find(sql);
  if (found == prepared_.end()) {
    if (prepared_.size() >= kMaxPrepared) {
      Exec("DEALLOCATE ALL");
      prepared_.clear();
    }
    std::string name = "s" + std::to_string(next_statement_++);
    Check(Pq().PQprepare(conn_.get(), name.c_str(), sql.c_str(), 0, nullptr), sql);
    found = prepared_.emplace(sql, std::move(name)).first;
  }
  return found->second;
}

Rows Connection::Query(const std::string& sql, const Params& params) {
  std::vector<const char*> values(params.size());
  std::vector<int> lengths(params.size());
  std::deque<std::string> escaped;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (params[i] && NeedsEscape(*params[i])) {
      values[i] = escaped.emplace_back(EscapeNul(*params[i])).c_str();
      lengths[i] = static_cast<int>(escaped.back().size());
      continue;
    }
    values[i] = params[i] ? params[i]->c_str() : nullptr;
    lengths[i] = params[i] ? static_cast<int>(params[i]->size()) : 0;
  }
  auto run = [&] {
    return Pq().PQexecPrepared(conn_.get(), Prepared(sql).c_str(), static_cast<int>(params.size()), values.data(),
                          lengths.data(), nullptr, 0);
  };
  if (!deferred_.empty()) return Pipelined(Prepared(sql), sql, static_cast<int>(params.size()), values.data(), lengths.data());
  PGresult* result = run();
  // A statement prepared before its table gained or lost a column (another write's schema change)
  // cannot return the new row type: outside a transaction it is prepared again and run once more.
  const char* state = result ? Pq().PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  if (state && state == kFeatureNotSupported && !InTransaction()) {
    Pq().PQclear(result);
    const auto found = prepared_.find(sql);
    Exec("DEALLOCATE " + found->second);
    prepared_.erase(found);
    result = run();
  }
  return Check(result, sql);
}

bool Connection::Healthy() const { return !broken_ && Pq().PQstatus(conn_.get()) == CONNECTION_OK; }

bool Connection::InTransaction() const { return Pq().PQtransactionStatus(conn_.get()) != PQTRANS_IDLE; }

bool Connection::InFailedTransaction() const { return Pq().PQtransactionStatus(conn_.get()) == PQTRANS_INERROR; }

void Connection::AwaitNotifications(int timeout_ms, const std::function<void(std::string_view)>& received, int wake_fd) {
  pollfd fds[2] = {{Pq().PQsocket(conn_.get()), POLLIN, 0}, {wake_fd, POLLIN, 0}};
  if (fds[0].fd < 0) throw StoreUnavailable("postgresql: the listening connection is closed");
  if (::poll(fds, wake_fd < 0 ? 1 : 2, timeout_ms) < 0 && errno != EINTR) throw StoreUnavailable("postgresql: poll failed");
  if (fds[1].revents != 0) return;
  if (!Pq().PQconsumeInput(conn_.get()) || !Healthy())
    throw StoreUnavailable("postgresql: the listening connection broke: " + Trimmed(Pq().PQerrorMessage(conn_.get())));
  while (PGnotify* n = Pq().PQnotifies(conn_.get())) {
    std::unique_ptr<PGnotify, void (*)(void*)> owned(n, Pq().PQfreemem);
    received(n->extra ? std::string_view(n->extra) : std::string_view());
  }
}

void Connection::Cancel() {
  char error[256];
  if (cancel_) Pq().PQcancel(cancel_.get(), error, sizeof error);
}

void Connection::BoundStatements(int milliseconds) {
  if (milliseconds == statement_timeout_ms_) return;
  Exec("SET statement_timeout = " + std::to_string(milliseconds));
  statement_timeout_ms_ = milliseconds;
}

Rows Connection::Check(PGresult* result, std::string_view sql) {
  Rows rows(result);
  const auto status = result ? Pq().PQresultStatus(result) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY) return rows;
  const char* state = result ? Pq().PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  std::string message = Trimmed(result ? Pq().PQresultErrorMessage(result) : Pq().PQerrorMessage(conn_.get()));
  if (message.empty()) message = Trimmed(Pq().PQerrorMessage(conn_.get()));
  if (state && state == kUniqueViolation) {
    metrics::CountStatementError(metrics::StatementError::kDuplicate);
    throw DuplicateKeyError("postgresql: " + message);
  }
  if (state && state == kQueryCanceled) {
    metrics::CountStatementError(metrics::StatementError::kCanceled);
    throw ReadTimedOut("postgresql: " + message);
  }
  // The server went away mid-statement (a restart, a crash): this connection is dropped by the
  // pool, and the next request connects anew. An error without a SQLSTATE is libpq's own, not the
  // server's: the connection broke, though libpq may not have marked it bad yet (it reports "server
  // closed the connection unexpectedly" so inside a multi-statement PQexec).
  if (!Healthy() || !state || std::string_view(state).starts_with("57P") || std::string_view(state).starts_with("08")) {
    metrics::CountStatementError(metrics::StatementError::kUnavailable);
    throw StoreUnavailable("postgresql: " + message);
  }
  metrics::CountStatementError(metrics::StatementError::kOther);
  throw StorageError("postgresql: " + message + " (in: " + std::string(sql.substr(0, 200)) + ")");
}

}  // namespace crmd::storage::postgres
