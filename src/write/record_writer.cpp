#include "write/record_writer.hpp"

#include <algorithm>
#include <optional>

#include "app/application.hpp"
#include "app/write_unit.hpp"
#include "auth/acl.hpp"
#include "auth/authorize.hpp"
#include "logs/timeline.hpp"
#include "schema/codec.hpp"
#include "schema/log_classes.hpp"
#include "schema/system_classes.hpp"
#include "schema/names.hpp"
#include "storage/write_transaction.hpp"
#include "triggers/fire.hpp"
#include "util/errors.hpp"
#include "util/ids.hpp"
#include "util/time.hpp"
#include "write/dotted_keys.hpp"
#include "write/field_changes.hpp"
#include "write/file_values.hpp"
#include "write/installation_rules.hpp"
#include "write/operators.hpp"
#include "write/required_fields.hpp"
#include "write/session_writes.hpp"
#include "write/user_rules.hpp"

namespace crmd::write {

namespace json = boost::json;

namespace {

// Realtime subscribers learn of the write once its unit is durable (app/record_change.hpp); a
// write rolled back (its savepoint, or the whole unit) takes the note with it.
bool Watched(app::WriteUnit& unit, std::string_view class_name) {
  app::ChangeSink* sink = unit.app().changes();
  return sink && sink->Watches(unit.app().id(), class_name);
}

// `watched`: Watched(), when the caller asked already.
void NoteChange(app::WriteUnit& unit, std::string_view class_name, std::string_view object_id,
                app::RecordChange::Kind kind, const json::object* body, json::object before = {},
                std::optional<bool> watched = std::nullopt) {
  if (!(watched ? *watched : Watched(unit, class_name))) return;
  app::ChangeSink* sink = unit.app().changes();
  app::RecordChange change{unit.app().id(), std::string(class_name), std::string(object_id), kind, {}, std::move(before),
                           unit.exclusive()};
  if (body)
    for (const auto& kv : *body) change.fields.emplace_back(kv.key().substr(0, kv.key().find('.')));
  // A shared database tells every server, this one included, at commit and in commit order;
  // a store of this process's alone, the after-commit thread.
  if (unit.txn().Announce(app::EncodeChange(change, storage::WriteTransaction::kMaxAnnouncement))) return;
  unit.AfterCommit([sink, change = std::move(change)]() mutable { sink->Changed(std::move(change)); });
}

using schema::kUserClass;

void Remove(std::vector<std::string>& list, const std::string& item) {
  list.erase(std::remove(list.begin(), list.end(), item), list.end());
}

// Applies the null bookkeeping of `changes` to a row's null list: explicit nulls join it, every
// other column written leaves it.
void UpdateNulls(std::vector<std::string>& nulls, const FieldChanges& changes) {
  if (nulls.empty() && changes.set_null.empty()) return;  // most writes
  for (const auto& f : changes.columns) {
    const bool null = std::find(changes.set_null.begin(), changes.set_null.end(), f) != changes.set_null.end();
    if (!null) Remove(nulls, f);
    else if (std::find(nulls.begin(), nulls.end(), f) == nulls.end()) nulls.push_back(f);
  }
}

// Authorisation before the write begins, so refused requests never queue behind writers.
// A nested write checks against its unit's schema, which may hold classes the unit made.
std::shared_ptr<const schema::Snapshot> SchemaOf(const auth::Context& ctx) {
  return ctx.unit ? ctx.unit->schema() : ctx.app->schema();
}

Status Precheck(const auth::Context& ctx, auth::Operation op, std::string_view class_name) {
  return auth::Authorize(ctx.identity, op, class_name, SchemaOf(ctx)->Find(class_name));
}

// A session user's write records who wrote it (spec §2.1); key writes leave the fields as they are.
void SetWriter(const auth::Context& ctx, const schema::ClassSchema& cls, bool creating,
               FieldChanges& changes) {
  if (ctx.identity.principal != auth::Principal::kUser) return;
  for (const char* field : {"createdBy", "updatedBy"}) {
    if (!creating && std::string_view(field) == "createdBy") continue;
    if (!cls.FindField(field)) continue;
    changes.Set(field, ctx.identity.user_id);
  }
}

// New fields on an existing class need the addField permission (CLP): decided before the body is
// read, answered at its first new field.
Status MayAddFields(const auth::Context& ctx, const schema::ClassSchema* existing) {
  if (!existing) return {};
  return auth::Authorize(ctx.identity, auth::Operation::kAddField, existing->name, existing);
}

Result<UserWrite> PrepareIfUser(auth::Context& ctx, std::string_view class_name, const json::object& body,
                                WriteKind kind) {
  if (class_name != kUserClass) return UserWrite{};
  if (body.contains("password")) app::BeforeSlowWork(ctx);  // a hash: let go of the store first
  return PrepareUserWrite(body, kind, ctx.identity, ctx.remote_ip);
}

// The fields whose current value an update needs: those its operators start from (an Increment
// adds to the stored number, an Add appends to the stored array), the fields its dotted keys
// reach into, and the pointers its history row names (`timeline.index`). A plain value replaces the stored one unread.
std::vector<std::string_view> FieldsToRead(const json::object& body, const schema::ClassSchema& cls, bool dotted) {
  std::vector<std::string_view> keys;
  for (const auto& kv : body)
    if (IsOperator(kv.value()) && !(dotted && kv.key().find('.') != std::string_view::npos)) keys.push_back(kv.key());
  if (dotted) AddDottedFields(body, keys);
  if (cls.timeline)
    if (const auto* index = cls.timeline->if_contains("index"); index && index->is_object())
      for (const auto& kv : index->get_object()) keys.push_back(kv.key());
  return keys;
}

// What an update's realtime subscribers are told the record was (app::RecordChange::before): the
// fields the body writes, as they were, and the previous updatedAt.
json::object ValuesBefore(const json::object& body, const schema::ClassSchema& cls, const storage::Row& current) {
  json::object before{{"updatedAt", current.updated_at}};
  for (const auto& kv : body) {
    const std::string_view field = std::string_view(kv.key()).substr(0, kv.key().find('.'));
    const schema::FieldDef* def = cls.FindField(field);
    // A password's hash is nobody's to read, and the note travels to other servers.
    if (!def || before.contains(field) || schema::IsSecretField(cls.name, field)) continue;
    json::value value = schema::DecodeCell(storage::CellOf(cls, current, field), *def);
    if (!value.is_null()) before[field] = std::move(value);
  }
  return before;
}

// A written field's stored value, looked up in what the write set.
storage::Cell WrittenValue(const FieldChanges& changes, const std::vector<storage::Cell>& cells, std::string_view field) {
  for (std::size_t i = 0; i < changes.columns.size() && i < cells.size(); ++i)
    if (changes.columns[i] == field) return cells[i];
  return std::monostate{};
}

// Spec §7: rows of the trigger and message logs (`_syslogTriggers`, `_syslogSMS`, ...) are kept as
// written; no credential changes or deletes them through the record API.
bool IsProtectedLog(std::string_view class_name) { return class_name.starts_with("_syslog"); }

// Classes whose pointers never keep a record from being deleted: history records what was.
const std::vector<std::string_view> kNeverPins{schema::kTimelineClass};

}  // namespace

std::optional<ApiError> RefuseBeforeBody(const auth::Identity& identity, auth::Operation op,
                                         std::string_view class_name, const schema::Snapshot& snapshot) {
  if (op != auth::Operation::kCreate && IsProtectedLog(class_name)) return errors::SystemTableDenied();
  // Other callers' answers may depend on the body (a user's 206, the rules of system classes).
  if (identity.principal != auth::Principal::kAnonymous && identity.principal != auth::Principal::kRejected)
    return std::nullopt;
  auto refused = auth::Authorize(identity, op, class_name, snapshot.Find(class_name));
  if (refused.ok()) return std::nullopt;
  return std::move(refused).error();
}

Result<json::object> CreateRecord(auth::Context& ctx, std::string_view class_name, const json::object& body,
                                  std::string* session_token) {
  if (auto refused = RefuseBeforeBody(ctx.identity, auth::Operation::kCreate, class_name, *SchemaOf(ctx))) return *refused;
  if (class_name == kUserClass) CRMD_TRY(CheckUserCreator(ctx.identity, body));
  const bool installation = IsInstallationWrite(ctx.identity, class_name);
  if (installation) CRMD_TRY(CheckInstallationWrite(ctx.identity, body, WriteKind::kCreate));
  CRMD_TRY(Precheck(ctx, auth::Operation::kCreate, class_name));
  CRMD_ASSIGN(auto user, PrepareIfUser(ctx, class_name, body, WriteKind::kCreate));
  return app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Result<json::object> {
    storage::WriteTransaction& txn = unit.txn();
    const auto snapshot = unit.schema();  // a copy: ChangeSchema() replaces the unit's
    const schema::ClassSchema* existing = snapshot->Find(class_name);
    if (!existing) {
      for (const auto& [name, other] : snapshot->classes())
        if (schema::EqualsIgnoringCase(name, class_name))
          return errors::ClassNameCaseCollision(class_name, name);
    }
    std::optional<schema::ClassSchema> implicit;  // the class this create makes
    if (!existing) implicit = schema::ClassSchema::NewImplicit(std::string(class_name), !ctx.identity.gates.closed_new_classes);
    const schema::ClassSchema& base = existing ? *existing : *implicit;
    // The body with the class's default values filled in: what every later step sees as written.
    const std::optional<json::object> defaulted = WithDefaults(body, base);
    const json::object& fields = defaulted ? *defaulted : body;
    std::optional<schema::ClassSchema> grown;  // base with the fields the body adds
    CRMD_ASSIGN(auto changes, CollectChanges(fields, base, grown, ctx.identity, WriteKind::kCreate, {}, {},
                                             MayAddFields(ctx, existing)));
    const schema::ClassSchema& cls = grown ? *grown : base;
    const bool schema_change = !existing || changes.schema_changed;
    if (schema_change && !unit.MayChangeSchema()) return app::WriteUnit::Restarting();
    bool unused_end_sessions = false;
    if (class_name == kUserClass)
      CRMD_TRY(ApplyUserRules(txn, cls, fields, WriteKind::kCreate, {}, user, changes, unused_end_sessions));
    if (class_name == "_Role") CRMD_TRY(ApplyRoleRules(txn, cls, fields, WriteKind::kCreate, {}));
    SetWriter(ctx, cls, true, changes);

    if (changes.object_id && existing && txn.Exists(*existing, *changes.object_id))
      return errors::DuplicateObjectId();
    storage::Row row;
    row.created_at = row.updated_at = timeutil::NowIso();
    if (changes.acl) row.acl = *changes.acl;
    UpdateNulls(row.nulls, changes);
    row.cells = std::move(changes.cells);
    // A user without an ACL of its own gets the default one, which names the user's id.
    AttachedFiles attached;
    auto id_decides = [&](storage::Row& r) {
      if (!changes.acl && class_name == kUserClass) r.acl = DefaultUserAcl(r.object_id);
      if (installation) r.acl = InstallationAcl(ctx.identity.installation_id);
      attached = AttachFiles(*ctx.app, cls, r.object_id, changes.columns, r.cells);  // a private address names the id
    };

    if (schema_change) txn.SaveClass(existing, cls);
    if (changes.object_id) {
      row.object_id = *changes.object_id;
      id_decides(row);
      txn.Insert(cls, changes.columns, row);
    } else {
      storage::InsertWithNewId(txn, cls, changes.columns, row, id_decides);
    }
    unit.Wrote(cls.name);
    SettleAtCommit(unit, *ctx.app, std::move(attached));
    for (const auto& rel : changes.relations)
      txn.ChangeRelation(cls, rel.field, row.object_id, rel.ids, rel.add);
    if (session_token) *session_token = CreateSession(*ctx.app, txn, row.object_id, "signup", ctx.installation_id);
    if (cls.timeline && !ctx.skip_timeline) {
      logs::Change change{logs::TimelineEvent::kCreate, &cls, row.object_id, &fields,
                          [&](std::string_view f) { return WrittenValue(changes, row.cells, f); },
                          row.acl, row.created_at, /*fresh_id=*/!changes.object_id};
      CRMD_TRY(logs::RecordChange(unit, ctx, change));
    }
    if (!ctx.skip_triggers)
      CRMD_TRY(triggers::Fire(unit, ctx, {triggers::WriteEvent::kCreate, &cls, row.object_id, &fields, nullptr}));
    NoteChange(unit, cls.name, row.object_id, app::RecordChange::Kind::kCreate, nullptr);
    json::object out{{"objectId", row.object_id}, {"createdAt", row.created_at}};
    // Parse answers the values a create's defaults gave, so a client's object holds them at once.
    if (defaulted)
      for (const auto& [field, options] : base.field_options)
        if (const auto* value = defaulted->if_contains(field); value && options.default_value && *value == *options.default_value)
          out[field] = *value;
    // Last: `cls` may be the class moved here. The unit's schema, not the snapshot: the history
    // may have changed it too.
    if (schema_change) unit.ChangeSchema(unit.schema()->With(grown ? std::move(*grown) : std::move(*implicit)));
    return out;
  });
}

Result<json::object> UpdateRecord(auth::Context& ctx, std::string_view class_name, std::string_view object_id,
                                  const json::object& sent) {
  // Spec §4.7: another user's session gets 206 before any permission check.
  if (auto refused = RefuseBeforeBody(ctx.identity, auth::Operation::kUpdate, class_name, *SchemaOf(ctx))) return *refused;
  if (class_name == kUserClass) CRMD_TRY(CheckUserWriter(ctx.identity, sent, std::string(object_id)));
  if (IsInstallationWrite(ctx.identity, class_name)) CRMD_TRY(CheckInstallationWrite(ctx.identity, sent, WriteKind::kUpdate));
  CRMD_TRY(Precheck(ctx, auth::Operation::kUpdate, class_name));
  CRMD_ASSIGN(auto user, PrepareIfUser(ctx, class_name, sent, WriteKind::kUpdate));
  // Keys reaching inside an Object field, where the application allows them (auth::Gates).
  const bool dotted = ctx.identity.gates.dotted_keys && HasDottedKeys(sent);
  return app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Result<json::object> {
    storage::WriteTransaction& txn = unit.txn();
    const auto snapshot = unit.schema();  // a copy: ChangeSchema() replaces the unit's
    const schema::ClassSchema* existing = snapshot->Find(class_name);
    if (!existing) return errors::ObjectNotFound();
    // The row's ACL and the current values its operators start from and its history names, not
    // the whole row; the rules of a system class may read more of it. Whatever comes to read more
    // of the row here (a trigger) needs Get.
    // Realtime subscribers are told what the written fields were (LiveQuery's `original`).
    const bool watched = Watched(unit, class_name);
    auto fields = FieldsToRead(sent, *existing, dotted);
    if (watched)
      for (const auto& kv : sent) fields.push_back(std::string_view(kv.key()).substr(0, kv.key().find('.')));
    auto current = class_name.starts_with('_') ? txn.Get(*existing, object_id) : txn.GetFields(*existing, object_id, fields);
    if (!current) return errors::ObjectNotFound();
    // Without write permission on the record, it answers as if it did not exist (Parse).
    if (!auth::AclAllows(ctx.identity, current->acl, auth::AclRight::kWrite))
      return errors::ObjectNotFound();
    std::optional<json::object> folded;  // the body with its dotted keys folded into their fields
    if (dotted) {
      CRMD_ASSIGN(auto whole, FoldDottedKeys(sent, *existing, CurrentValues(*existing, *current)));
      folded = std::move(whole);
    }
    const json::object& body = folded ? *folded : sent;

    std::optional<schema::ClassSchema> grown;  // the class with the fields the body adds
    CRMD_ASSIGN(auto changes, CollectChanges(body, *existing, grown, ctx.identity, WriteKind::kUpdate, object_id,
                                             CurrentValues(*existing, *current), MayAddFields(ctx, existing)));
    const schema::ClassSchema& cls = grown ? *grown : *existing;
    if (changes.schema_changed && !unit.MayChangeSchema()) return app::WriteUnit::Restarting();
    if (class_name == kUserClass) {
      // The system user never gets a password: it must not become a user one can sign in as.
      if (body.contains("password") && schema::IsSystemUser(*existing, *current))
        return errors::CannotModifyUser(object_id);
      bool end_sessions = false;
      CRMD_TRY(ApplyUserRules(txn, cls, body, WriteKind::kUpdate, current->object_id, user, changes,
                              end_sessions));
      // A new password or a deactivation ends every session of the user (SECURITY.md).
      if (end_sessions) {
        // A user who changed their own password keeps the session they did it with (Parse).
        const bool own = ctx.identity.principal == auth::Principal::kUser && ctx.identity.user_id == current->object_id;
        DeleteUserSessions(*ctx.app, txn, current->object_id, own ? std::string_view(ctx.identity.session_id) : "");
      }
    }
    if (class_name == "_Role")
      CRMD_TRY(ApplyRoleRules(txn, cls, body, WriteKind::kUpdate, current->object_id));
    SetWriter(ctx, cls, false, changes);

    storage::Row row;
    row.object_id = current->object_id;
    row.updated_at = timeutil::NowIso();
    row.acl = changes.acl ? *changes.acl : current->acl;
    row.nulls = current->nulls;
    UpdateNulls(row.nulls, changes);
    row.cells = std::move(changes.cells);
    SettleAtCommit(unit, *ctx.app, AttachFiles(*ctx.app, cls, row.object_id, changes.columns, row.cells));

    if (changes.schema_changed) txn.SaveClass(existing, cls);
    txn.Update(cls, changes.columns, row);
    unit.Wrote(cls.name);
    // Who may read the record may read its history, and no one else (issue 31 #8).
    if (row.acl != current->acl) logs::FollowAcl(unit, cls.name, row.object_id, row.acl);
    for (const auto& rel : changes.relations)
      txn.ChangeRelation(cls, rel.field, row.object_id, rel.ids, rel.add);
    if (cls.timeline) {
      logs::Change change{logs::TimelineEvent::kUpdate, &cls, row.object_id, &body,
                          [&](std::string_view f) {
                            auto written = WrittenValue(changes, row.cells, f);
                            if (!storage::IsNull(written)) return written;
                            // Unless the update cleared it, the value it did not touch.
                            const bool cleared = std::find(changes.columns.begin(), changes.columns.end(), f) !=
                                                 changes.columns.end();
                            return cleared ? storage::Cell() : storage::CellOf(*existing, *current, f);
                          },
                          row.acl, row.updated_at};
      CRMD_TRY(logs::RecordChange(unit, ctx, change));
    }
    CRMD_TRY(triggers::Fire(unit, ctx, {triggers::WriteEvent::kUpdate, &cls, row.object_id, &body, nullptr}));
    NoteChange(unit, cls.name, row.object_id, app::RecordChange::Kind::kUpdate, &body,
               watched ? ValuesBefore(body, *existing, *current) : json::object(), watched);
    if (changes.schema_changed) unit.ChangeSchema(unit.schema()->With(std::move(*grown)));

    json::object out{{"updatedAt", row.updated_at}, {"objectId", row.object_id}};
    for (auto& kv : changes.echoed) out[kv.key()] = std::move(kv.value());
    if (folded)
      for (auto& kv : DottedIncrementResults(sent, *folded)) out[kv.key()] = std::move(kv.value());
    return out;
  });
}

Result<json::object> DeleteRecord(auth::Context& ctx, std::string_view class_name,
                                  std::string_view object_id) {
  if (auto refused = RefuseBeforeBody(ctx.identity, auth::Operation::kDelete, class_name, *SchemaOf(ctx))) return *refused;
  CRMD_TRY(Precheck(ctx, auth::Operation::kDelete, class_name));
  if (class_name == kUserClass) CRMD_TRY(CheckUserWriter(ctx.identity, {}, std::string(object_id)));
  return app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Result<json::object> {
    storage::WriteTransaction& txn = unit.txn();
    const auto snapshot = unit.schema();  // a copy: ChangeSchema() replaces the unit's
    const schema::ClassSchema* cls = snapshot->Find(class_name);
    if (!cls) return errors::ObjectNotFound();
    auto current = txn.Get(*cls, object_id);
    if (!current) return errors::ObjectNotFound();
    if (!auth::AclAllows(ctx.identity, current->acl, auth::AclRight::kWrite))
      return errors::ObjectNotFound();
    // The system user is what `_RequestLog.user` points at (spec §2.6): refused by the pointer
    // rule, also before (and after retention pruned) any row of the log names it.
    if (class_name == kUserClass && schema::IsSystemUser(*cls, *current))
      return errors::PointerExists(object_id, schema::kRequestLogClass, "user");
    // A user's sessions go with the user; they are not references that block the delete.
    if (class_name == kUserClass) DeleteUserSessions(*ctx.app, txn, current->object_id);
    if (auto ref = txn.FindReference(*snapshot, class_name, object_id, kNeverPins))
      return errors::PointerExists(object_id, ref->table, ref->field);
    // Before the row goes: a delete's conditions and actions see the record as it was.
    CRMD_TRY(triggers::Fire(unit, ctx, {triggers::WriteEvent::kDelete, cls, current->object_id, nullptr, &*current}));
    txn.Delete(*cls, object_id);
    unit.Wrote(cls->name);
    NoteChange(unit, cls->name, current->object_id, app::RecordChange::Kind::kDelete, nullptr);
    if (cls->timeline) {
      logs::Change change{logs::TimelineEvent::kDelete, cls, current->object_id, nullptr, {}, current->acl,
                          timeutil::NowIso()};
      CRMD_TRY(logs::RecordChange(unit, ctx, change));
    }
    return json::object{};
  });
}

}  // namespace crmd::write
