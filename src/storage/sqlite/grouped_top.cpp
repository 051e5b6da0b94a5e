#include "storage/sqlite/grouped_top.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace crmd::storage::sqlite {

namespace {

using schema::CompareOp;
using schema::Expr;
using schema::ExprKind;

// Rows of a run read after its first row that missed the page, before seeking past the run: a
// seek costs about ten steps (measured on the bench's index: ~2 us against ~0.2 us), and a short
// run ends by itself.
constexpr int kStepsBeforeSeek = 4;
// Every this many rows the runs are judged: if they averaged fewer than kShortRun rows, seeking
// skips nearly nothing, and SQLite's sorter reads the matches faster than steps out to here.
constexpr std::int64_t kJudgeEveryRows = 256;
constexpr std::int64_t kShortRun = 4;
// Value lists longer than this are bound and read again by every run's statement.
constexpr std::size_t kMaxListValues = 64;

void Conjuncts(const Expr& e, std::vector<const Expr*>& out) {
  if (e.kind != ExprKind::kAnd) {
    out.push_back(&e);
    return;
  }
  for (const auto& child : e.children) Conjuncts(child, out);
}

// Whether SQLite would redo much work for every run's statement: build a sub-query's rows, search
// the text index, read a relation's join table, or read a long list bound as JSON.
bool CostsPerStatement(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kInQuery:
    case ExprKind::kSelect:
    case ExprKind::kText:
    case ExprKind::kRelatedTo:
    case ExprKind::kHoldsAny:
    case ExprKind::kHoldsAll:
    case ExprKind::kGeo: return true;
    case ExprKind::kIn:
    case ExprKind::kAll:
    case ExprKind::kContainedBy: return e.values.size() > kMaxListValues;
    case ExprKind::kAnd:
    case ExprKind::kOr:
    case ExprKind::kNor:
      return std::any_of(e.children.begin(), e.children.end(), CostsPerStatement);
    case ExprKind::kConst:
    case ExprKind::kCompare:
    case ExprKind::kExists:
    case ExprKind::kRegex: return false;
  }
  return true;
}

bool IsRange(CompareOp op) {
  return op == CompareOp::kLt || op == CompareOp::kLte || op == CompareOp::kGt || op == CompareOp::kGte;
}

// A comparison of a whole scalar column (no path into an Object, not an Array's elements).
bool IsScalarCompare(const Expr& e, const std::string& column) {
  return e.kind == ExprKind::kCompare && e.field.column == column && e.field.path.empty() && !e.field.array &&
         !IsNull(e.value);
}

bool HasEquality(const std::vector<const Expr*>& conjuncts, const std::string& column) {
  return std::any_of(conjuncts.begin(), conjuncts.end(),
                     [&](const Expr* e) { return IsScalarCompare(*e, column) && e->op == CompareOp::kEq; });
}

// A range also keeps NULLs out, which sort outside every run bound FindGroupedTop seeks with.
bool HasRange(const std::vector<const Expr*>& conjuncts, const std::string& column) {
  return std::any_of(conjuncts.begin(), conjuncts.end(),
                     [&](const Expr* e) { return IsScalarCompare(*e, column) && IsRange(e->op); });
}

bool OrderedByCreation(const schema::Query& query) {
  const auto& order = query.order;
  if (order.empty() || order.size() > 2 || order[0].first != "createdAt") return false;
  return order.size() == 1 || (order[1].first == "objectId" && order[1].second == order[0].second);
}

// A declared index as CreateIndexes builds it: its columns, descending or not, followed by
// (createdAt, objectId). None for the kinds that are not plain column lists, and for those that
// name createdAt or objectId themselves (then nothing is appended).
std::optional<std::vector<std::pair<std::string, bool>>> PlainColumns(const boost::json::value& spec) {
  if (!spec.is_object() || spec.get_object().empty()) return std::nullopt;
  std::vector<std::pair<std::string, bool>> columns;
  for (const auto& kv : spec.get_object()) {
    if (!kv.value().is_number() || kv.key() == "createdAt" || kv.key() == "objectId") return std::nullopt;
    columns.emplace_back(std::string(kv.key()), kv.value().to_number<double>() < 0);
  }
  return columns;
}

// A row kept for the page: its sort key (createdAt then objectId) inline, so the heap moves no
// strings. Keys that do not fit (objectIds are 10 characters, createdAt 24) send the query to the
// plain statement.
struct Kept {
  static constexpr std::size_t kKeyBytes = 56;
  std::array<char, kKeyBytes> key{};
  std::uint8_t created_size = 0, id_size = 0;
  std::int64_t rowid = 0;

  std::string_view Created() const { return {key.data(), created_size}; }
  std::string_view Id() const { return {key.data() + created_size, id_size}; }
  static bool Fits(std::string_view created, std::string_view id) { return created.size() + id.size() <= kKeyBytes; }
  void Set(std::string_view created, std::string_view id, std::int64_t row) {
    std::copy(created.begin(), created.end(), key.data());
    std::copy(id.begin(), id.end(), key.data() + created.size());
    created_size = static_cast<std::uint8_t>(created.size());
    id_size = static_cast<std::uint8_t>(id.size());
    rowid = row;
  }
};

}  // namespace

std::optional<GroupedTopPlan> PlanGroupedTop(const schema::ClassSchema& cls, const schema::Query& query) {
  if (!query.where || query.limit <= 0 || query.skip < 0 || query.limit > kMaxGroupedTopRows - query.skip ||
      !OrderedByCreation(query) || CostsPerStatement(*query.where))
    return std::nullopt;
  std::vector<const Expr*> conjuncts;
  Conjuncts(*query.where, conjuncts);
  for (const auto& index : cls.indexes) {
    const auto columns = PlainColumns(index.value());
    if (!columns) continue;
    const auto& [last, last_descending] = columns->back();
    bool fits = HasRange(conjuncts, last);
    for (std::size_t i = 0; fits && i + 1 < columns->size(); ++i) fits = HasEquality(conjuncts, (*columns)[i].first);
    if (!fits) continue;
    GroupedTopPlan plan;
    plan.group_column = last;
    plan.descending = query.order[0].second;
    // Read forward, the index gives the runs in its own direction and createdAt ascending; read
    // backward, both reversed.
    plan.group_descending = plan.descending != last_descending;
    return plan;
  }
  return std::nullopt;
}

namespace {

// The where of the statements that seek past a run: the query's, less its bounds on the run
// column on the side the seek bound takes. SQLite seeks on one bound per side and may pick the
// query's (say `Score >= 0`), which would read every run before the bound again on each seek; the
// seek bound implies it, as the run it starts after met it.
SqlFragment SeekWhere(const schema::ClassSchema& cls, const schema::Query& query, const GroupedTopPlan& plan) {
  std::vector<const Expr*> conjuncts;
  Conjuncts(*query.where, conjuncts);
  schema::Query seek;
  seek.readable_by = query.readable_by;
  seek.history_of = query.history_of;
  seek.where = Expr{};
  seek.where->kind = ExprKind::kAnd;
  for (const Expr* e : conjuncts) {
    const bool same_side = plan.group_descending ? (e->op == CompareOp::kLt || e->op == CompareOp::kLte)
                                                 : (e->op == CompareOp::kGt || e->op == CompareOp::kGte);
    if (IsScalarCompare(*e, plan.group_column) && same_side) continue;
    seek.where->children.push_back(*e);
  }
  return CompileWhere(seek, cls);
}

}  // namespace

std::optional<std::vector<GroupedTopRow>> FindGroupedTop(Connection& c, const schema::ClassSchema& cls,
                                                         const schema::Query& query, const GroupedTopPlan& plan,
                                                         GroupedTopStats* stats) {
  const std::string table = Quote(cls.name);
  const std::string group = "t0." + Quote(plan.group_column);
  const char* direction = plan.descending ? "DESC" : "ASC";
  const std::string columns = fmt::format("SELECT {}, t0.createdAt, t0.objectId, t0._rowid_ FROM {} AS t0", group, table);
  const std::string order = fmt::format(" ORDER BY {} {}, t0.createdAt {}, t0.objectId {}", group,
                                        plan.group_descending ? "DESC" : "ASC", direction, direction);
  const SqlFragment where = CompileWhere(query, cls), seek_where = SeekWhere(cls, query, plan);
  const std::string first_sql = fmt::format("{} WHERE {}{}", columns, where.sql, order);
  const std::string seek_sql = fmt::format("{} WHERE ({}) AND {} {} ?{}", columns, seek_where.sql, group,
                                           plan.group_descending ? "<" : ">", order);
  // A plan that sorts would sort every match for each run: the plain statement does that once.
  if (c.PlanSorts(first_sql) || c.PlanSorts(seek_sql)) return std::nullopt;
  auto first = c.Prepare(first_sql);
  auto seek = c.Prepare(seek_sql);
  first.BindAll(where.params);

  // Whether a row sorts before `than` in the page: TEXT compares as memcmp, as SQLite's BINARY.
  auto before = [&](std::string_view created, std::string_view id, const Kept& than) {
    int cmp = created.compare(than.Created());
    if (cmp == 0) cmp = id.compare(than.Id());
    return plan.descending ? cmp > 0 : cmp < 0;
  };
  // A max-heap under "sorts before" keeps the worst row kept at its front.
  auto heap_order = [&](const Kept& a, const Kept& b) { return before(a.Created(), a.Id(), b); };

  const auto want = static_cast<std::size_t>(query.skip + query.limit);
  std::vector<Kept> kept;
  kept.reserve(want);
  GroupedTopStats local;
  GroupedTopStats& count = stats ? *stats : local;
  std::int64_t runs = 0;
  std::optional<Cell> past;  // the run the statement now running seeks past
  for (Statement* st = &first; st;) {
    Statement& now = *st;
    st = nullptr;
    now.TakeSorted();
    now.TakeVmSteps();
    bool stepped = false, in_run = false;
    Cell run;
    int missed = 0;  // rows of the current run that missed the page
    while (now.Step()) {
      if (!stepped && now.TakeSorted()) return std::nullopt;  // planned otherwise since PlanSorts
      Cell value = now.Column(0);
      // A seek that did not get past its run (a value SQLite orders past the bound it was read
      // back as: a BLOB read as text) would loop forever.
      if (!stepped && past && value == *past) return std::nullopt;
      stepped = true;
      if (!in_run || value != run) {
        run = std::move(value);
        in_run = true;
        missed = 0;
        ++runs;
      }
      if (++count.rows % kJudgeEveryRows == 0 && runs * kShortRun > count.rows) return std::nullopt;
      const std::string_view created = now.ColumnView(1), id = now.ColumnView(2);
      if (!Kept::Fits(created, id)) return std::nullopt;
      if (kept.size() < want || before(created, id, kept.front())) {
        if (kept.size() == want) std::pop_heap(kept.begin(), kept.end(), heap_order);
        else kept.emplace_back();
        kept.back().Set(created, id, std::get<std::int64_t>(now.Column(3)));
        std::push_heap(kept.begin(), kept.end(), heap_order);
        continue;
      }
      // The rest of this run sorts after this row, which missed the page already.
      if (++missed >= kStepsBeforeSeek) {
        count.vm_steps += now.TakeVmSteps();
        seek.Reset();
        seek.BindAll(seek_where.params);
        seek.BindCell(static_cast<int>(seek_where.params.size()) + 1, run);
        past = std::move(run);
        ++count.seeks;
        st = &seek;
        break;
      }
    }
    if (!st) count.vm_steps += now.TakeVmSteps();
  }
  std::sort_heap(kept.begin(), kept.end(), heap_order);  // page order
  std::vector<GroupedTopRow> page;
  for (std::size_t i = static_cast<std::size_t>(query.skip); i < kept.size(); ++i)
    page.push_back(GroupedTopRow{kept[i].rowid, std::string(kept[i].Id())});
  return page;
}

bool PageOrder::Add(Row& row, const RowSink& sink) {
  if (Done()) return !stopped_;
  if (row.object_id != page_[next_].object_id) {
    early_.emplace(row.object_id, row);
    return true;
  }
  stopped_ = !sink(row);
  for (++next_; !stopped_ && next_ < page_.size(); ++next_) {
    auto held = early_.find(page_[next_].object_id);
    if (held == early_.end()) break;
    stopped_ = !sink(held->second);
    early_.erase(held);
  }
  return !stopped_;
}

}  // namespace crmd::storage::sqlite
