// libpq, loaded (dlopen) by the first PostgreSQL connection rather than linked.
//
// Linked, libpq brings OpenSSL, Kerberos, LDAP and through it gnutls and p11-kit, whose
// constructors run at exec: ~4 MiB of resident pages and heap in every server, though only one
// with `--store postgresql://` opens a connection. The header (<libpq-fe.h>) still gives the
// types and constants; storage/postgres/connection calls go through the table below, one
// pointer per function it uses, named as libpq names it.
#pragma once

#include <libpq-fe.h>

namespace crmd::storage::postgres {

#define CRMD_LIBPQ_FUNCTIONS(X) \
  X(PQcancel) \
  X(PQclear) \
  X(PQcmdTuples) \
  X(PQconnectdb) \
  X(PQconsumeInput) \
  X(PQenterPipelineMode) \
  X(PQerrorMessage) \
  X(PQexec) \
  X(PQexecPrepared) \
  X(PQexitPipelineMode) \
  X(PQfinish) \
  X(PQfname) \
  X(PQfreeCancel) \
  X(PQfreemem) \
  X(PQgetCancel) \
  X(PQgetResult) \
  X(PQgetisnull) \
  X(PQgetlength) \
  X(PQgetvalue) \
  X(PQnfields) \
  X(PQnotifies) \
  X(PQntuples) \
  X(PQpipelineSync) \
  X(PQprepare) \
  X(PQresultErrorField) \
  X(PQresultErrorMessage) \
  X(PQresultStatus) \
  X(PQsendQueryParams) \
  X(PQsendQueryPrepared) \
  X(PQsetNoticeProcessor) \
  X(PQsocket) \
  X(PQstatus) \
  X(PQtransactionStatus)

struct LibPq {
#define CRMD_LIBPQ_POINTER(name) decltype(&::name) name = nullptr;
  CRMD_LIBPQ_FUNCTIONS(CRMD_LIBPQ_POINTER)
#undef CRMD_LIBPQ_POINTER
};

// The library, loaded once and never unloaded; thread-safe. Throws StorageError when it cannot be
// loaded (the connection it was for cannot be made).
const LibPq& Pq();

}  // namespace crmd::storage::postgres
