// One application (tenant) at run time: its store and its current schema snapshot.
//
// Thread-safe. Schema changes are published by exclusive write units (app/write_unit.hpp), after
// their commit and before their transaction ends, so no other write starts on a stale schema and
// readers never see a schema before its columns exist.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "app/after_commit.hpp"
#include "app/fan_out.hpp"
#include "app/record_change.hpp"
#include "app/write_queue.hpp"
#include "mail/mailer.hpp"
#include "schema/class_schema.hpp"
#include "storage/database.hpp"
#include "storage/stores.hpp"

namespace crmd::app {

// Service settings every application shares (crmd serve flags).
struct Settings {
  std::chrono::seconds session_ttl{365L * 24 * 3600};
  // Spec §3.1: 8 consecutive failures lock a login for this long.
  std::chrono::minutes lockout{30};
  std::string public_url = "http://127.0.0.1:8080";  // base of links in mails and of file addresses
  // Where attached public files are served from (`--static-url`): `<static_url>/<appId>/<name>`.
  // crmd serves it itself under `<public_url>/static` when no CDN fronts it.
  std::string static_url = "http://127.0.0.1:8080/static";
  // Where a browser without the right to a file is sent (`--signin-url`); empty: crmd's own sign-in
  // gate, `<public_url>/<prefix>/apps/<appId>/signin` (api/signin_gate).
  std::string signin_url;
  std::string prefix = "core";
  std::string smtp_url;  // empty: mails go to each application's outbox folder
  std::string mail_from = "no-reply@crmd.invalid";
  // Password reset mails one address gets per hour at most (a flood of requests sends no more).
  int reset_mails_per_hour = 3;
};

// Where a phone number without a country code is from, unless the registry says otherwise: the
// product base's market.
inline constexpr std::string_view kDefaultPhoneRegion = "IL";

// Receives the trigger activations a durable write left in its application's outbox
// (triggers::Runner runs them). Thread-safe; must not block.
class ActivationSink {
 public:
  virtual ~ActivationSink() = default;
  // `payload` is the entry's as committed (saves the runner a read of it).
  virtual void Activated(const std::string& app_id, std::int64_t entry, int lane, std::string payload) = 0;
};

class Application {
 public:
  // `smtp` (owned by Applications, may be null) delivers mail when configured. `after_commit`
  // (owned by Applications) runs what committed writes leave to do; null: the application runs
  // its own.
  Application(std::string id, std::unique_ptr<storage::Database> db, std::string dir,
              const Settings& settings, mail::Mailer* smtp, AfterCommitRunner* after_commit = nullptr);

  const std::string& id() const { return id_; }
  // The application's store, by the part a caller uses: its records (schema, writes, reads), the
  // outbox of trigger activations the trigger runner reads, and its administration.
  storage::RecordStore& db() { return *db_; }
  storage::Outbox& trigger_outbox() { return *db_; }
  storage::StoreAdmin& store_admin() { return *db_; }
  const Settings& settings() const { return settings_; }
  // `DATA/apps/<appId>`: the store, and the `outbox/` of mails when no SMTP server is set.
  const std::string& dir() const { return dir_; }
  // Where this application's mail goes: the SMTP server, or its outbox folder.
  mail::Mailer& mailer() { return smtp_ ? *smtp_ : outbox_; }

  std::shared_ptr<const schema::Snapshot> schema() const;
  void Publish(std::shared_ptr<const schema::Snapshot> next);
  // Reads the schema from the store again and publishes it: another server on the same database
  // changed it (storage::Stores::Watch). Takes an exclusive write turn, so that no write of this
  // process publishes a newer schema in between.
  void ReloadSchema();

  // The `_User` that stands for master-key and API-key writes (spec §2.6: `_RequestLog.user`
  // points at it); empty until write::PrepareApplication ran.
  std::string system_user_id() const;
  void SetSystemUserId(std::string id);

  // How many durable commits wrote rows of `class_name` so far: what is derived from its rows
  // holds while this stays the same. Read it before reading the rows (a commit during the read
  // then makes what was read stale, not the next read).
  std::uint64_t Generation(std::string_view class_name) const;
  // After a durable commit that wrote rows of `classes`.
  void Wrote(const std::set<std::string, std::less<>>& classes);

  // The application's region (ISO 3166 alpha-2, `crmd app create --region`): contacts are matched
  // by phone in its reading of their numbers. Returns whether it changed.
  std::string phone_region() const;
  bool SetPhoneRegion(std::string region);

  // The schema under which the contacts' phone index was last found in place (write/phone_keys):
  // checked again when the schema changes.
  bool PhoneIndexCheckedFor(const std::shared_ptr<const schema::Snapshot>& snapshot) const;
  void SetPhoneIndexCheckedFor(std::shared_ptr<const schema::Snapshot> snapshot);

  // A Config flag (spec §4.9) as read at `generation` of Config, or nullopt when not cached then.
  std::optional<bool> CachedFlag(std::string_view flag, std::uint64_t generation) const;
  void CacheFlag(std::string_view flag, std::uint64_t generation, bool on);

  // Who runs this application's trigger activations; null: they wait in the outbox for a server
  // that runs them.
  ActivationSink* activations() const { return activations_; }
  void SetActivations(ActivationSink* sink) { activations_ = sink; }
  // Who learns of this application's durable record writes (realtime subscribers); null: nobody.
  ChangeSink* changes() const { return changes_; }
  void SetChanges(ChangeSink* sink) { changes_ = sink; }
  // The trigger actions each chain of this application started (issue 31 #18).
  FanOut& fan_out() { return fan_out_; }

  // Hands the after-commit actions of a durable write unit to the runner's thread.
  void RunAfterCommit(std::vector<AfterCommitRunner::Action> actions) { after_commit_->Post(std::move(actions)); }
  AfterCommitRunner& after_commit() { return *after_commit_; }

  // The queue of this application's record writes, made on first use; its thread runs only while
  // there are writes (an application nobody writes to costs no thread).
  WriteQueue& writes();
  // Finishes the queued writes and ends the queue's thread; writes submitted later fail.
  void StopWrites();
  // StopWrites() without the wait (WriteQueue::RequestStop); StopWrites() then waits.
  void RequestStopWrites();
  // Writes in its queue, waiting or running (0 without a queue; none is made).
  std::size_t queued_writes() const;

 private:
  std::string id_;
  std::unique_ptr<storage::Database> db_;
  std::string dir_;
  const Settings& settings_;
  mail::Mailer* smtp_;
  mail::OutboxMailer outbox_;
  std::unique_ptr<AfterCommitRunner> own_after_commit_;  // when none was given
  AfterCommitRunner* after_commit_;
  ActivationSink* activations_ = nullptr;  // set before anyone else uses the application
  ChangeSink* changes_ = nullptr;          // the same
  FanOut fan_out_;
  mutable std::mutex mutex_;
  std::shared_ptr<const schema::Snapshot> schema_;
  std::string system_user_id_;          // guarded by mutex_
  std::string phone_region_{kDefaultPhoneRegion};  // guarded by mutex_
  std::shared_ptr<const schema::Snapshot> phone_index_checked_;  // guarded by mutex_
  std::map<std::string, std::uint64_t, std::less<>> generations_;  // guarded by mutex_
  struct Flag {
    std::uint64_t generation;
    bool on;
  };
  std::map<std::string, Flag, std::less<>> flags_;  // guarded by mutex_
  bool writes_stopped_ = false;         // guarded by mutex_
  std::unique_ptr<WriteQueue> writes_;  // after db_: stopped before the store closes
};

struct StoreOptions {
  storage::Durability durability = storage::Durability::kFull;
  int readers = 4;
  // Stores kept open at most. Past it, the least recently used ones nobody is using are closed
  // (one in use stays open until its last user lets go: the cache may run over for a while).
  std::size_t max_open = 1000;
  // A PostgreSQL database (`--store`) instead of SQLite files under the data directory, through
  // one pool of at most `connections` connections.
  std::string url;
  std::size_t connections = 32;
  // This server's name among those on the database (storage::PostgresStores).
  std::string instance;
};

// Opens application stores on first use and keeps the most recently used open (a bounded cache:
// each open store holds descriptors, a few MiB and, while busy, threads). Thread-safe.
//
// An Application stays valid while anyone holds its shared_ptr, closed or not: work that outlives
// its request (a queued write, an after-commit action) holds one, never a bare reference.
class Applications {
 public:
  // Runs on every application as it is opened, before anyone else can use it: it brings the
  // store to what this release writes (the layer above sets it: write::PrepareApplication).
  using Preparer = std::function<void(Application&)>;

  Applications(std::string data_dir, StoreOptions options, Settings settings = {}, Preparer prepare = {});
  ~Applications();  // StopWrites()

  // `app_id` must already be known to the registry (callers check); it names a directory, so it
  // is validated again here. Two callers of one closed application open it once; callers of
  // different ones open them at the same time.
  std::shared_ptr<Application> Open(const std::string& app_id);

  // Where each application's region comes from (the registry); by default kDefaultPhoneRegion.
  // Set before the first Open.
  void SetRegionSource(std::function<std::string(const std::string& app_id)> region_of) { region_of_ = std::move(region_of); }
  // Who runs trigger activations (triggers::Runner). Set before the first Open.
  void SetActivationSink(ActivationSink* sink) { activations_ = sink; }
  // Who learns of record writes (api::LiveHub). Set before the first Open.
  void SetChangeSink(ChangeSink* sink) { changes_ = sink; }
  // What every application is served with (public URL, prefix, ...).
  const Settings& settings() const { return settings_; }
  // Whether the store of `app_id` holds trigger activations (storage::Stores::HasOutboxEntries).
  bool HasPendingActivations(const std::string& app_id) { return stores_->HasOutboxEntries(app_id); }
  // The applications that have a store.
  std::vector<std::string> StoredApplications() { return stores_->List(); }
  // How this server shares trigger outboxes with the others on its database; null when the stores
  // are its alone (storage::Stores::outbox_takeover).
  storage::OutboxTakeover* outbox_takeover() { return stores_->outbox_takeover(); }
  // The schema of `app_id` (or of every open application: "*") changed in the store.
  void SchemaChanged(const std::string& app_id);

  // The application is no more (the registry dropped it): its store leaves the cache and closes
  // once nobody uses it, so that one made again under the id is opened anew. Not an error when it
  // is not open.
  void Forget(const std::string& app_id);

  // Issue 36: what the writes of every server on a shared database announce (LiveQuery), until
  // StopWatchingRecords(); storage::Stores::WatchRecords. Whether the stores are shared.
  void WatchRecords(std::function<void(std::string_view payload)> announced) { stores_->WatchRecords(std::move(announced)); }
  void StopWatchingRecords() { stores_->StopWatchingRecords(); }
  bool SharedStores() const { return stores_->Shared(); }

  // Whether the stores answer now (storage::Stores::Ready): `/ready`.
  bool StoresReady() { return stores_->Ready(); }

  // The applications open now.
  std::vector<std::shared_ptr<Application>> OpenApplications();
  // Stores open now, the ones being closed included.
  std::size_t open_count();
  // Writes in the write queues of the open applications, waiting or running (/metrics).
  std::size_t queued_writes();

  // Out of descriptors: closes a few of the least recently used stores nobody uses, at once, and
  // asks whoever keeps stores open for later work to let go (OnShortOfDescriptors). Returns how
  // many it closed.
  std::size_t Relieve();
  // `let_go` runs in Relieve, under this cache's lock: it must be quick and must not call back.
  // An empty function removes it.
  void OnShortOfDescriptors(std::function<void()> let_go);

  // Finishes every application's queued writes and ends their threads (after the server stopped).
  void StopWrites();
  // For a process about to exit (issue 33): StopWrites(), then lets go of every store without
  // closing it, the ones waiting for the closer too. Closes freed each store's caches, schema and
  // statements and unmapped its files one after another on one thread, for nothing the exit
  // needs: 0.4 s of a SIGTERM with a thousand stores open, over a second on a loaded machine.
  // Nothing is lost: every acknowledged write is durable once StopWrites() returned, and a SQLite
  // connection closes without a checkpoint anyway (storage/sqlite/connection.cpp), so the kernel
  // releasing the descriptors and locks at the exit leaves the files as the closes would; the
  // next open reads their logs. The one difference: a log past 1 MiB, which a close copies into
  // the database, is read at the next open instead (16 MiB: the first request took 9 ms instead
  // of 4) and copied after that store's next commit. A checkpoint still running on a store's
  // thread is cut short as by a crash, which SQLite is made to survive. Only destruction may
  // follow.
  void StopForExit();

  // The base of links in mails, once the port is bound. Call before serving (not thread-safe).
  void SetPublicUrl(std::string url, std::string static_url = {}, std::string signin_url = {}) {
    settings_.static_url = static_url.empty() ? url + "/static" : std::move(static_url);
    settings_.signin_url = std::move(signin_url);
    settings_.public_url = std::move(url);
  }

 private:
  struct Slot {
    std::shared_ptr<Application> app;  // null while its first caller opens it
    std::list<std::string>::iterator recent;
  };
  std::shared_ptr<Application> OpenStore(const std::string& app_id);
  // Takes the least recently used applications nobody uses out of the cache until it holds
  // `target` (or none is left to take); mutex_ held. The caller closes them or hands them to the
  // closer.
  std::vector<std::shared_ptr<Application>> TakeIdle(std::size_t target);
  void Close(std::vector<std::shared_ptr<Application>> apps);
  void CloserLoop();
  static constexpr std::chrono::seconds kRecheck{1};
  // Stores closed at once when opening one more ran out of descriptors.
  static constexpr std::size_t kFreeWhenShort = 8;

  std::string data_dir_;
  StoreOptions options_;
  std::unique_ptr<storage::Stores> stores_;
  Settings settings_;
  Preparer prepare_;
  std::function<std::string(const std::string&)> region_of_;
  ActivationSink* activations_ = nullptr;
  ChangeSink* changes_ = nullptr;
  std::unique_ptr<mail::Mailer> smtp_;
  std::mutex mutex_;
  std::condition_variable changed_;  // an application finished opening, or one is to be closed
  std::map<std::string, Slot, std::less<>> open_;
  std::list<std::string> recent_;        // ids in open_, the most recently used first
  // Taken out, not closed yet. One may be opened again meanwhile: SQLite shares a file between
  // connections, and the one taken out has no users left.
  std::size_t closing_ = 0;
  std::deque<std::shared_ptr<Application>> to_close_;
  bool stopped_ = false;
  bool exiting_ = false;  // StopForExit(): what the closer takes is left open
  std::function<void()> on_short_;
  std::thread closer_;  // closes taken-out stores off the request that evicted them
  // Last: destroyed (drained) first, while the applications its actions use are still open. A
  // write queue stopped after it runs its last actions itself.
  AfterCommitRunner after_commit_;
};

// [A-Za-z0-9_-]{1,64}: application ids become directory names.
bool IsValidAppId(std::string_view app_id);

}  // namespace crmd::app
