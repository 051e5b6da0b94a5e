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

bool Queued(const Action& action) {
  if (action.type != ActionType::kServerSideCode) return false;
  const auto* data = action.definition.at("actionData").as_object().at("server-side-code").if_object();
  const auto* q = data ? data->if_contains("useQueue") : nullptr;
  return q && q->is_bool() && q->get_bool();
}

}  // namespace

Status Fire(app::WriteUnit& unit, const auth::Context& ctx, const Write& write) {
  const schema::ClassSchema& cls = *write.cls;
  if (cls.triggers.empty()) return {};
  const auto snapshot = unit.schema();
  const auto* triggers = snapshot->TriggerPlan(&Plan::Build).Find(cls.name);
  if (!triggers) return {};
  storage::WriteTransaction& txn = unit.txn();
  std::optional<json::object> record;  // read once, when the first trigger fires
  const int step = ctx.trigger_level + 1;
  // A client's write starts a chain (its activations, and theirs, count against one budget).
  const std::string root = ctx.trigger_root.empty() ? ids::NewObjectId() : ctx.trigger_root;
  for (const auto& trigger : *triggers) {
    const Definition& def = trigger.definition;
    if (!def.FiresOn(write.event)) continue;
    bool holds = true;
    for (const auto& fields : def.changed) holds = holds && SentAny(write.body, fields);
    if (holds && trigger.where) holds = Matches(txn, cls, write.object_id, *trigger.where);
    if (!holds) continue;
    if (!record) {
      if (write.before) {
        record = query::EncodeRow(cls, *write.before);
      } else {
        auto row = txn.Get(cls, write.object_id);
        if (!row) return {};  // not written after all: nothing to fire for
        record = query::EncodeRow(cls, *row);
      }
    }
    Activation activation;
    activation.class_name = cls.name;
    activation.trigger_id = def.id;
    activation.event = std::string(EventName(write.event));
    activation.object_id = std::string(write.object_id);
    activation.record = *record;
    activation.step = step;
    activation.source = ctx.source_trigger.empty() ? def.id : ctx.source_trigger;
    activation.root = root;

    CRMD_TRY(logs::RecordTriggerRun(unit, {def.id, std::nullopt, activation.event, activation.object_id,
                                           ToJson(*record), std::nullopt}));
    if (step > kMaxChainDepth) {
      // Spec §6.1: the step past the limit runs no action; each says why.
      for (const auto& action : def.actions)
        CRMD_TRY(logs::RecordTriggerRun(unit, {def.id, action.id, activation.event, activation.object_id, "{}",
                                               BlockedText(activation.source)}));
      continue;
    }
    // The actions that run now in one activation, in order; each queued function call in one of
    // its own on the function queue.
    std::vector<std::pair<int, Activation>> entries;
    entries.emplace_back(kLaneNow, activation);
    for (const auto& action : def.actions) {
      if (!Queued(action)) {
        entries.front().second.actions.push_back(action.definition);
        continue;
      }
      Activation queued = activation;
      queued.actions.push_back(action.definition);
      entries.emplace_back(kLaneQueue, std::move(queued));
    }
    if (entries.front().second.actions.empty()) entries.erase(entries.begin());
    if (!unit.app().fan_out().Take(root, static_cast<std::int64_t>(def.actions.size()), kMaxActionsPerWrite)) {
      for (const auto& action : def.actions)
        CRMD_TRY(logs::RecordTriggerRun(unit, {def.id, action.id, activation.event, activation.object_id, "{}",
                                               FanOutText(activation.source)}));
      continue;
    }
    for (const auto& [lane, entry] : entries) {
      std::string payload = entry.Serialize();
      const std::int64_t id = txn.outbox().AddOutbox(lane, payload);
      if (auto* sink = unit.app().activations())
        unit.AfterCommit([sink, app_id = unit.app().id(), id, lane = lane, payload = std::move(payload)]() mutable {
          sink->Activated(app_id, id, lane, std::move(payload));
        });
    }
  }
  return {};
}

}  // namespace crmd::triggers
