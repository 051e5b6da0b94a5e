// The SQLite limit beside crmd (issue 33): what SQLite alone does with the statements of the
// bench's workloads, with crmd's durability, on a copy of crmd's own Accounts table.
//
//   sqlite-limit SOURCE WORK SECONDS GROUP READERS
//
// SOURCE is crmd's store file (read only; crmd may be running on it). WORK is made anew: the
// tables `Accounts` and `LeadStatuses` of SOURCE with the statements crmd created them with (read
// from SOURCE's sqlite_master: the same columns and indexes, the (City, Score) one included) and
// their rows. On WORK, as crmd's writer connection does (src/storage/sqlite/connection.cpp,
// sqlite_database.cpp): journal_mode=WAL, synchronous=FULL, foreign_keys=OFF,
// journal_size_limit=64 MiB, a 2,000 KiB page cache (readers 1,024 KiB), and the log copied back
// into the database by a thread of its own once it holds 4,000 pages (a PASSIVE checkpoint on
// its own connection, as crmd's Checkpointer starts one; crmd's writer also copies a short tail
// itself, which this leaves to the next pass). One difference: the default VFS (crmd's coalescing
// VFS hands a commit's log to the OS in one write instead of two per page: less CPU for crmd).
//
// Each mode runs 1 s unmeasured, then SECONDS measured, reads first, so that they see the rows
// crmd's reads saw:
//   get            READERS threads, a connection each: SELECT t0.* by objectId, every column read;
//   count          READERS threads: count(*) WHERE City = ? AND Score >= ? (random, as the bench's);
//   query          READERS threads: the same where, ORDER BY createdAt DESC, objectId DESC LIMIT 100,
//                  every column of every row read;
//   create-each    one writer; INSERT of a 21-field row (the values of the table's newest 2,000
//                  rows, the bench's last loaded, with a new objectId and the time), each its
//                  own transaction and commit (fsync of the log per row);
//   create-group   the same INSERTs, GROUP to a transaction, each in its own SAVEPOINT as crmd's
//                  group commit runs them (src/storage/sqlite/group_commit.hpp);
//   update-each    one writer; UPDATE of updatedAt, Visits = Visits + 1 and Status of a random
//                  row by objectId, a commit each;
//   update-group   the same UPDATEs, GROUP to a transaction, a SAVEPOINT each.
// The statements are crmd's own text where crmd has one (sql/record_statements.cpp); crmd's update
// also reads the row first and writes every own column, which this leaves out: the limit is the
// least SQLite must do.
//
// Output: one line per mode on stdout,
//   LIMIT_RESULT {"mode":"create-each","ops":N,"seconds":S,"perSecond":R,"cpuMsPerOp":C}
// where ops counts rows written or statements read, and cpuMsPerOp is this process's CPU (user +
// system, all threads, the checkpointer's included) per op. Errors go to stderr with exit status 1.
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

enum {
  kSampleRows = 2000,       // rows whose values the inserts cycle through (the bench's 2,000 creates)
  kMaxColumns = 64,         // Accounts has 30
  kMaxReaders = 16,         // threads for the read modes
  kWarmupSeconds = 1,       // unmeasured start of every mode
  kCheckpointPages = 4000,  // crmd's Checkpointer::Limits::start
  kCheckpointPollUs = 1000, // how often the checkpointer looks at the log's length
};

static const char* const kCities[] = {"Tel Aviv", "Haifa", "Jerusalem", "Eilat", "Beersheba", "Netanya", "Ashdod", "Nazareth"};

static void Die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("sqlite-limit: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

static void Check(sqlite3* db, int rc, const char* what) {
  if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE) Die("%s: %s", what, sqlite3_errmsg(db));
}

static void Exec(sqlite3* db, const char* sql) {
  char* err = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) Die("%s: %s", sql, err ? err : "?");
}

static sqlite3_stmt* Prepare(sqlite3* db, const char* sql) {
  sqlite3_stmt* st = NULL;
  Check(db, sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL), sql);
  return st;
}

static double Now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double CpuSeconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

// xorshift64*: a random stream per thread, no locks.
static uint64_t Next(uint64_t* s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ULL;
}

// The time as crmd stores it: ISO 8601 with milliseconds, UTC.
static void IsoNow(char out[32]) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  struct tm tm;
  gmtime_r(&tv.tv_sec, &tm);
  size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(out + n, 32 - n, ".%03dZ", (int)(tv.tv_usec / 1000));
}

static sqlite3* Open(const char* path, int cache_kib) {
  sqlite3* db = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, NULL) != SQLITE_OK)
    Die("open %s: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
  sqlite3_busy_timeout(db, 5000);
  Exec(db, "PRAGMA journal_mode=WAL");
  Exec(db, "PRAGMA synchronous=FULL");
  Exec(db, "PRAGMA foreign_keys=OFF");
  char sql[64];
  snprintf(sql, sizeof sql, "PRAGMA cache_size=-%d", cache_kib);
  Exec(db, sql);
  return db;
}

// ---------------------------------------------------------------------------------------------
// The checkpointer: the writer's commits report the log's length (the WAL hook, which also turns
// SQLite's checkpoint inside the COMMIT off); a thread copies the log back once it is long.
static atomic_int log_pages;
static atomic_int checkpointer_stop;

static int OnCommit(void* unused, sqlite3* db, const char* name, int pages) {
  (void)unused, (void)db, (void)name;
  atomic_store(&log_pages, pages);
  return SQLITE_OK;
}

static void* CheckpointerMain(void* path) {
  sqlite3* db = Open(path, 1024);
  while (!atomic_load(&checkpointer_stop)) {
    if (atomic_load(&log_pages) < kCheckpointPages) {
      usleep(kCheckpointPollUs);
      continue;
    }
    int log = 0, copied = 0;
    const int rc = sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, &copied);
    if (rc != SQLITE_OK && rc != SQLITE_BUSY) Die("checkpoint: %s", sqlite3_errmsg(db));
    atomic_store(&log_pages, 0);  // the next commit says how long it is now
  }
  sqlite3_close(db);
  return NULL;
}

// ---------------------------------------------------------------------------------------------
// The copy: crmd's CREATE statements for the two tables and their indexes, then their rows.
static void CopyTables(sqlite3* db, const char* source) {
  char* uri = sqlite3_mprintf("ATTACH 'file:%q?mode=ro' AS src", source);
  Exec(db, uri);
  sqlite3_free(uri);
  sqlite3_stmt* st = Prepare(db,
      "SELECT sql FROM src.sqlite_master WHERE tbl_name IN ('Accounts', 'LeadStatuses') AND sql IS NOT NULL "
      "ORDER BY type = 'table' DESC, name");
  int tables = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    const char* sql = (const char*)sqlite3_column_text(st, 0);
    if (strncmp(sql, "CREATE TABLE", 12) == 0) tables++;
    Exec(db, sql);
  }
  sqlite3_finalize(st);
  if (tables != 2) Die("%s has no Accounts and LeadStatuses tables", source);
  Exec(db, "BEGIN");
  Exec(db, "INSERT INTO main.\"Accounts\" SELECT * FROM src.\"Accounts\"");
  Exec(db, "INSERT INTO main.\"LeadStatuses\" SELECT * FROM src.\"LeadStatuses\"");
  Exec(db, "COMMIT");
  Exec(db, "DETACH src");
  Exec(db, "ANALYZE");
  Exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
}

// ---------------------------------------------------------------------------------------------
typedef struct {
  sqlite3_value* v[kMaxColumns];
} SampleRow;

typedef struct {
  int columns;
  int object_id, created_at, updated_at;  // their column numbers
  char insert_sql[8192];
  SampleRow rows[kSampleRows];
  int sample_count;
  char** ids;  // every objectId of the copy
  int id_count;
} Table;

static void LoadTable(sqlite3* db, Table* t) {
  sqlite3_stmt* st = Prepare(db, "SELECT * FROM \"Accounts\" ORDER BY createdAt DESC, objectId DESC LIMIT 2000");
  t->columns = sqlite3_column_count(st);
  if (t->columns > kMaxColumns) Die("Accounts has %d columns", t->columns);
  char* p = t->insert_sql;
  char* end = t->insert_sql + sizeof t->insert_sql;
  p += snprintf(p, end - p, "INSERT INTO \"Accounts\" (");
  t->object_id = t->created_at = t->updated_at = -1;
  for (int i = 0; i < t->columns; i++) {
    const char* name = sqlite3_column_name(st, i);
    if (!strcmp(name, "objectId")) t->object_id = i;
    if (!strcmp(name, "createdAt")) t->created_at = i;
    if (!strcmp(name, "updatedAt")) t->updated_at = i;
    p += snprintf(p, end - p, "%s\"%s\"", i ? ", " : "", name);
  }
  p += snprintf(p, end - p, ") VALUES (");
  for (int i = 0; i < t->columns; i++) p += snprintf(p, end - p, "%s?%d", i ? ", " : "", i + 1);
  snprintf(p, end - p, ")");
  if (t->object_id < 0 || t->created_at < 0 || t->updated_at < 0) Die("Accounts lacks its own columns");
  while (t->sample_count < kSampleRows && sqlite3_step(st) == SQLITE_ROW) {
    for (int i = 0; i < t->columns; i++) t->rows[t->sample_count].v[i] = sqlite3_value_dup(sqlite3_column_value(st, i));
    t->sample_count++;
  }
  sqlite3_finalize(st);
  if (t->sample_count == 0) Die("Accounts is empty");

  st = Prepare(db, "SELECT count(*) FROM \"Accounts\"");
  sqlite3_step(st);
  const int n = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  t->ids = calloc((size_t)n, sizeof *t->ids);
  st = Prepare(db, "SELECT objectId FROM \"Accounts\"");
  while (t->id_count < n && sqlite3_step(st) == SQLITE_ROW) t->ids[t->id_count++] = strdup((const char*)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
}

// ---------------------------------------------------------------------------------------------
// Writes: one thread, GROUP statements a transaction (1: a commit each, no savepoint).
typedef struct {
  long ops;
  double seconds;
  double cpu;
} Outcome;

static void Report(const char* mode, Outcome o) {
  printf("LIMIT_RESULT {\"mode\":\"%s\",\"ops\":%ld,\"seconds\":%.3f,\"perSecond\":%.1f,\"cpuMsPerOp\":%.5f}\n", mode, o.ops,
         o.seconds, o.ops / o.seconds, o.ops ? o.cpu * 1000.0 / o.ops : 0.0);
  fflush(stdout);
}

static long serial = 0;  // new objectIds: "L" and 9 digits, as long as crmd's

static void Insert(sqlite3* db, sqlite3_stmt* st, const Table* t) {
  const SampleRow* row = &t->rows[serial % t->sample_count];
  char id[16], now[32];
  snprintf(id, sizeof id, "L%09ld", serial++);
  IsoNow(now);
  for (int i = 0; i < t->columns; i++) {
    if (i == t->object_id) sqlite3_bind_text(st, i + 1, id, -1, SQLITE_TRANSIENT);
    else if (i == t->created_at || i == t->updated_at) sqlite3_bind_text(st, i + 1, now, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_value(st, i + 1, row->v[i]);
  }
  Check(db, sqlite3_step(st), "insert");
  sqlite3_reset(st);
}

static void Update(sqlite3* db, sqlite3_stmt* st, const Table* t, uint64_t* rnd, long k) {
  char now[32], status[32];
  IsoNow(now);
  snprintf(status, sizeof status, "touched %ld", k % 7);
  sqlite3_bind_text(st, 1, now, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, status, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 3, t->ids[Next(rnd) % (uint64_t)t->id_count], -1, SQLITE_STATIC);
  Check(db, sqlite3_step(st), "update");
  sqlite3_reset(st);
}

static Outcome Write(sqlite3* db, const Table* t, int update, int group, double seconds) {
  sqlite3_stmt* st = update ? Prepare(db, "UPDATE \"Accounts\" SET \"updatedAt\" = ?1, \"Visits\" = \"Visits\" + 1, \"Status\" = ?2 WHERE \"objectId\" = ?3")
                            : Prepare(db, t->insert_sql);
  sqlite3_stmt* begin = Prepare(db, "BEGIN");
  sqlite3_stmt* commit = Prepare(db, "COMMIT");
  sqlite3_stmt* savepoint = Prepare(db, "SAVEPOINT item");
  sqlite3_stmt* release = Prepare(db, "RELEASE item");
  uint64_t rnd = 0x9e3779b97f4a7c15ULL;
  Outcome o = {0, 0, 0};
  for (int pass = 0; pass < 2; pass++) {  // warm-up, then the measured run
    const double span = pass ? seconds : kWarmupSeconds;
    const double start = Now(), cpu = CpuSeconds();
    long ops = 0;
    while (Now() - start < span) {
      if (group > 1) Check(db, sqlite3_step(begin), "begin"), sqlite3_reset(begin);
      for (int g = 0; g < group; g++) {
        if (group > 1) Check(db, sqlite3_step(savepoint), "savepoint"), sqlite3_reset(savepoint);
        if (update) Update(db, st, t, &rnd, ops);
        else Insert(db, st, t);
        if (group > 1) Check(db, sqlite3_step(release), "release"), sqlite3_reset(release);
        ops++;
      }
      if (group > 1) Check(db, sqlite3_step(commit), "commit"), sqlite3_reset(commit);
    }
    o = (Outcome){ops, Now() - start, CpuSeconds() - cpu};
  }
  sqlite3_finalize(st);
  sqlite3_finalize(begin);
  sqlite3_finalize(commit);
  sqlite3_finalize(savepoint);
  sqlite3_finalize(release);
  return o;
}

// ---------------------------------------------------------------------------------------------
// Reads: READERS threads, each with a connection of its own, until a shared deadline.
typedef enum { kGet, kCount, kQuery } ReadKind;

typedef struct {
  const char* path;
  const Table* t;
  ReadKind kind;
  double until;
  int seed;
  long ops;
} Reader;

static void ReadAll(sqlite3_stmt* st) {
  const int n = sqlite3_column_count(st);
  while (sqlite3_step(st) == SQLITE_ROW)
    for (int i = 0; i < n; i++) (void)sqlite3_column_text(st, i);  // as crmd reads each column's text or number
}

static void* ReaderMain(void* arg) {
  Reader* r = arg;
  sqlite3* db = Open(r->path, 1024);
  const char* sql = r->kind == kGet ? "SELECT t0.* FROM \"Accounts\" AS t0 WHERE t0.\"objectId\" = ?1"
                    : r->kind == kCount
                        ? "SELECT count(*) FROM \"Accounts\" AS t0 WHERE (t0.\"City\" = ?1 AND (t0.\"Score\" >= ?2))"
                        : "SELECT t0.* FROM \"Accounts\" AS t0 WHERE (t0.\"City\" = ?1 AND (t0.\"Score\" >= ?2)) "
                          "ORDER BY t0.\"createdAt\" DESC, t0.\"objectId\" DESC LIMIT ?3 OFFSET ?4";
  sqlite3_stmt* st = Prepare(db, sql);
  uint64_t rnd = 0x2545f4914f6cdd1dULL + (uint64_t)r->seed;
  while (Now() < r->until) {
    if (r->kind == kGet) {
      sqlite3_bind_text(st, 1, r->t->ids[Next(&rnd) % (uint64_t)r->t->id_count], -1, SQLITE_STATIC);
    } else {
      sqlite3_bind_text(st, 1, kCities[Next(&rnd) % 8], -1, SQLITE_STATIC);
      sqlite3_bind_int(st, 2, (int)(Next(&rnd) % 100));
      if (r->kind == kQuery) sqlite3_bind_int(st, 3, 100), sqlite3_bind_int(st, 4, 0);
    }
    ReadAll(st);
    sqlite3_reset(st);
    r->ops++;
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return NULL;
}

static Outcome Read(const char* path, const Table* t, ReadKind kind, int readers, double seconds) {
  Outcome o = {0, 0, 0};
  for (int pass = 0; pass < 2; pass++) {
    const double span = pass ? seconds : kWarmupSeconds;
    Reader r[kMaxReaders];
    pthread_t th[kMaxReaders];
    const double start = Now(), cpu = CpuSeconds();
    for (int i = 0; i < readers; i++) {
      r[i] = (Reader){path, t, kind, start + span, i, 0};
      if (pthread_create(&th[i], NULL, ReaderMain, &r[i])) Die("pthread_create");
    }
    long ops = 0;
    for (int i = 0; i < readers; i++) pthread_join(th[i], NULL), ops += r[i].ops;
    o = (Outcome){ops, Now() - start, CpuSeconds() - cpu};
  }
  return o;
}

int main(int argc, char** argv) {
  if (argc != 6) Die("usage: sqlite-limit SOURCE WORK SECONDS GROUP READERS");
  const char* source = argv[1];
  const char* work = argv[2];
  const double seconds = atof(argv[3]);
  const int group = atoi(argv[4]);
  const int readers = atoi(argv[5]);
  if (seconds <= 0 || group < 2 || readers < 1 || readers > kMaxReaders) Die("bad SECONDS, GROUP or READERS");
  if (sqlite3_threadsafe() == 0) Die("this SQLite is built without threads");
  sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);  // as crmd: no global mutex around each allocation

  for (const char* suffix = ""; suffix; suffix = !*suffix ? "-wal" : !strcmp(suffix, "-wal") ? "-shm" : NULL) {
    char p[4096];
    snprintf(p, sizeof p, "%s%s", work, suffix);
    unlink(p);
  }
  sqlite3* db = Open(work, 2000);
  Exec(db, "PRAGMA journal_size_limit=67108864");
  CopyTables(db, source);
  static Table t;  // ~1 MB of sample values' pointers: not on the stack
  LoadTable(db, &t);
  fprintf(stderr, "sqlite-limit: %d rows copied, %d columns, SQLite %s\n", t.id_count, t.columns, sqlite3_libversion());

  Report("get", Read(work, &t, kGet, readers, seconds));
  Report("count", Read(work, &t, kCount, readers, seconds));
  Report("query", Read(work, &t, kQuery, readers, seconds));

  sqlite3_wal_hook(db, OnCommit, NULL);
  pthread_t checkpointer;
  if (pthread_create(&checkpointer, NULL, CheckpointerMain, (void*)work)) Die("pthread_create");
  Report("create-each", Write(db, &t, 0, 1, seconds));
  Report("create-group", Write(db, &t, 0, group, seconds));
  Report("update-each", Write(db, &t, 1, 1, seconds));
  Report("update-group", Write(db, &t, 1, group, seconds));
  atomic_store(&checkpointer_stop, 1);
  pthread_join(checkpointer, NULL);
  sqlite3_close(db);
  return 0;
}
