#include "storage/postgres/connection.hpp"

#include <charconv>
#include <cstring>

namespace crmd::storage::postgres {

namespace {

// SQLSTATEs (PostgreSQL's errcodes): a unique violation; a statement cancelled by its
// statement_timeout.
constexpr std::string_view kUniqueViolation = "23505";
constexpr std::string_view kQueryCanceled = "57014";
// Statements prepared on one connection before it forgets them all: an application's statements
// are prepared per schema, and thousands of tenants must not grow a connection without bound.
constexpr std::size_t kMaxPrepared = 4096;

std::string Trimmed(const char* message) {
  std::string text = message ? message : "";
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

}  // namespace

std::optional<std::string_view> Rows::Value(int row, int column) const {
  if (PQgetisnull(result_.get(), row, column)) return std::nullopt;
  return std::string_view(PQgetvalue(result_.get(), row, column),
                          static_cast<std::size_t>(PQgetlength(result_.get(), row, column)));
}

std::int64_t Rows::Affected() const {
  const char* text = PQcmdTuples(result_.get());
  std::int64_t n = 0;
  std::from_chars(text, text + std::strlen(text), n);
  return n;
}

Connection::Connection(const std::string& conninfo) : conn_(PQconnectdb(conninfo.c_str()), &PQfinish) {
  if (!conn_) throw StorageError("postgresql: out of memory connecting");
  if (PQstatus(conn_.get()) != CONNECTION_OK)
    throw StorageError("postgresql: cannot connect: " + Trimmed(PQerrorMessage(conn_.get())));
  // Errors and notices in one language whatever the server's locale; the client decodes UTF-8.
  // Dates are read as UTC; a commit is durable (on disk) before it returns, whatever the server's
  // default.
  Exec("SET client_encoding = 'UTF8'; SET lc_messages = 'C'; SET TimeZone = 'UTC'; SET synchronous_commit = on");
}

void Connection::Exec(std::string_view sql) {
  Check(PQexec(conn_.get(), std::string(sql).c_str()), sql);
}

Rows Connection::Query(const std::string& sql, const Params& params) {
  auto found = prepared_.find(sql);
  if (found == prepared_.end()) {
    if (prepared_.size() >= kMaxPrepared) {
      Exec("DEALLOCATE ALL");
      prepared_.clear();
    }
    std::string name = "s" + std::to_string(next_statement_++);
    Check(PQprepare(conn_.get(), name.c_str(), sql.c_str(), 0, nullptr), sql);
    found = prepared_.emplace(sql, std::move(name)).first;
  }
  std::vector<const char*> values(params.size());
  std::vector<int> lengths(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    values[i] = params[i] ? params[i]->data() : nullptr;
    lengths[i] = params[i] ? static_cast<int>(params[i]->size()) : 0;
  }
  return Check(PQexecPrepared(conn_.get(), found->second.c_str(), static_cast<int>(params.size()), values.data(),
                              lengths.data(), nullptr, 0),
               sql);
}

bool Connection::Healthy() const { return PQstatus(conn_.get()) == CONNECTION_OK; }

bool Connection::InTransaction() const { return PQtransactionStatus(conn_.get()) != PQTRANS_IDLE; }

bool Connection::InFailedTransaction() const { return PQtransactionStatus(conn_.get()) == PQTRANS_INERROR; }

void Connection::BoundStatements(int milliseconds) {
  if (milliseconds == statement_timeout_ms_) return;
  Exec("SET statement_timeout = " + std::to_string(milliseconds));
  statement_timeout_ms_ = milliseconds;
}

Rows Connection::Check(PGresult* result, std::string_view sql) {
  Rows rows(result);
  const auto status = result ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY) return rows;
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  std::string message = Trimmed(result ? PQresultErrorMessage(result) : PQerrorMessage(conn_.get()));
  if (message.empty()) message = Trimmed(PQerrorMessage(conn_.get()));
  if (state && state == kUniqueViolation) throw DuplicateKeyError("postgresql: " + message);
  if (state && state == kQueryCanceled) throw ReadTimedOut("postgresql: " + message);
  throw StorageError("postgresql: " + message + " (in: " + std::string(sql.substr(0, 200)) + ")");
}

}  // namespace crmd::storage::postgres
