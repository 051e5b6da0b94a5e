#include "triggers/fire.hpp"

#include "app/application.hpp"
#include "logs/trigger_log.hpp"
#include "query/encode.hpp"
#include "storage/write_transaction.hpp"
#include "triggers/activation.hpp"
#include "triggers/plan.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"

namespace crmd::triggers {

namespace json = boost::json;

namespace {

bool SentAny(const json::object* body, const std::vector<std::string>& fields) {
  if (!body) return false;
  for (const auto& f : fields)
    if (body->contains(f)) return true;
  return false;
}

// Whether the record `id` of `cls` matches `where`, read in the write's own transaction: the
// record API's compiled where, not a second evaluator.
bool Matches(storage::WriteTransaction& txn, const schema::ClassSchema& cls, std::string_view id,
             const query::Expr& where) {
  query::Query q;
  query::Expr both;
  both.kind = query::ExprKind::kAnd;
  both.children.push_back(query::FieldEquals("objectId", std::string(id)));
  both.children.push_back(where);
  q.where = std::move(both);
  q.limit = 1;
  bool found = false;
  txn.Find(cls, q, [&](storage::Row&) {
    found = true;
    return false;
  });
  return found;
}

}  // namespace

Status Fire(app::WriteUnit& unit, const auth::Context& ctx, const Write& write) {
  const schema::ClassSchema& cls = *write.cls;
  if (cls.triggers.empty()) return {};
  const auto snapshot = unit.schema();
  const auto* triggers = snapshot->TriggerPlan(&Plan::Build).Find(cls.name);
  if (!triggers) return {};
  storage::WriteTransaction& txn = unit.txn();
  // The record as the record API returns it, JSON text: read once, when the first trigger fires.
  std::optional<std::string> record;
  const int step = ctx.trigger_level + 1;
  // A client's write starts a chain (its activations, and theirs, count against one budget).
  const std::string root = ctx.trigger_root.empty() ? ids::NewObjectId() : ctx.trigger_root;
  const std::string_view event = EventName(write.event);
  for (const auto& trigger : *triggers) {
    const Definition& def = trigger.definition;
    if (!def.FiresOn(write.event)) continue;
    bool holds = true;
    for (const auto& fields : def.changed) holds = holds && SentAny(write.body, fields);
    if (holds && trigger.where) holds = Matches(txn, cls, write.object_id, *trigger.where);
    if (!holds) continue;
    if (!record) {
      record.emplace();
      // Written straight as text, as a read answers it (no tree built to be written).
      if (write.before) {
        query::WriteRow(cls, *write.before, *record);
      } else {
        auto row = txn.Get(cls, write.object_id);
        if (!row) return {};  // not written after all: nothing to fire for
        query::WriteRow(cls, *row, *record);
      }
    }
    const std::string_view source = ctx.source_trigger.empty() ? std::string_view(def.id) : std::string_view(ctx.source_trigger);
    const std::string event_name(event);
    const std::string object_id(write.object_id);

    CRMD_TRY(logs::RecordTriggerRun(unit, {def.id, std::nullopt, event_name, object_id, *record, std::nullopt}));
    if (step > kMaxChainDepth) {
      // Spec §6.1: the step past the limit runs no action; each says why.
      for (const auto& action : def.actions)
        CRMD_TRY(logs::RecordTriggerRun(unit, {def.id, action.id, event_name, object_id, "{}", BlockedText(source)}));
      continue;
    }
    if (!unit.app().fan_out().Take(root, static_cast<std::int64_t>(def.actions.size()), kMaxActionsPerWrite)) {
      for (const auto& action : def.actions)
        CRMD_TRY(logs::RecordTriggerRun(unit, {def.id, action.id, event_name, object_id, "{}", FanOutText(source)}));
      continue;
    }
    // The actions that run now in one activation, in order; each queued function call in one of
    // its own on the function queue.
    const auto enter = [&](int lane, std::string_view actions) {
      std::string payload = PayloadText({cls.name, def.id, event, write.object_id, *record, step, source, root, actions, 0});
      const std::int64_t id = txn.outbox().AddOutbox(lane, payload);
      if (auto* sink = unit.app().activations())
        unit.AfterCommit([sink, app_id = unit.app().id(), id, lane, payload = std::move(payload)]() mutable {
          sink->Activated(app_id, id, lane, std::move(payload));
        });
    };
    if (!trigger.now_actions.empty()) enter(kLaneNow, trigger.now_actions);
    for (const auto& queued : trigger.queued_actions) enter(kLaneQueue, queued);
  }
  return {};
}

}  // namespace crmd::triggers
