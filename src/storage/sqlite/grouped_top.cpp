#include "storage/sqlite/grouped_top.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace crmd::storage::sqlite {

namespace {

using query::CompareOp;
using query::Expr;
using query::ExprKind;

// Rows of a run read after its first row that missed the page, before seeking past the run: a
// seek costs about ten steps (measured on the bench's index: ~2 us against ~0.2 us), and a short
// run ends by itself.
constexpr int kStepsBeforeSeek = 4;
// After this many rows the runs are judged: if they averaged fewer than kShortRun rows, seeking
// skips nearly nothing, and SQLite's sorter reads the matches faster than steps out to here.
constexpr std::int64_t kJudgeAfterRows = 256;
constexpr std::int64_t kShortRun = 4;

void Conjuncts(const Expr& e, std::vector<const Expr*>& out) {
  if (e.kind != ExprKind::kAnd) {
    out.push_back(&e);
    return;
  }
  for (const auto& child : e.children) Conjuncts(child, out);
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
  return std::any_of(conjuncts.begin(), conjuncts.end(), [&](const Expr* e) {
    return IsScalarCompare(*e, column) && (e->op == CompareOp::kLt || e->op == CompareOp::kLte ||
                                           e->op == CompareOp::kGt || e->op == CompareOp::kGte);
  });
}

bool OrderedByCreation(const query::Query& query) {
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

std::optional<GroupedTopPlan> PlanGroupedTop(const schema::ClassSchema& cls, const query::Query& query) {
  if (!query.where || query.limit <= 0 || query.skip < 0 || query.limit > kMaxGroupedTopRows - query.skip ||
      !OrderedByCreation(query))
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

std::optional<std::vector<GroupedTopRow>> FindGroupedTop(Connection& c, const std::string& table,
                                                         const GroupedTopPlan& plan, const SqlFragment& where,
                                                         std::int64_t limit, std::int64_t skip) {
  const std::string group = "t0." + Quote(plan.group_column);
  const char* direction = plan.descending ? "DESC" : "ASC";
  const std::string select =
      fmt::format("SELECT {}, t0.createdAt, t0.objectId, t0._rowid_ FROM {} AS t0 WHERE ({})", group, table, where.sql);
  const std::string order = fmt::format(" ORDER BY {} {}, t0.createdAt {}, t0.objectId {}", group,
                                        plan.group_descending ? "DESC" : "ASC", direction, direction);
  auto first = c.Prepare(select + order);
  auto after = c.Prepare(select + fmt::format(" AND {} {} ?", group, plan.group_descending ? "<" : ">") + order);

  // Whether a row sorts before `than` in the page: TEXT compares as memcmp, as SQLite's BINARY.
  auto before = [&](std::string_view created, std::string_view id, const Kept& than) {
    int cmp = created.compare(than.Created());
    if (cmp == 0) cmp = id.compare(than.Id());
    return plan.descending ? cmp > 0 : cmp < 0;
  };
  // A max-heap under "sorts before" keeps the worst row kept at its front.
  auto heap_order = [&](const Kept& a, const Kept& b) { return before(a.Created(), a.Id(), b); };

  const auto want = static_cast<std::size_t>(skip + limit);
  std::vector<Kept> kept;
  kept.reserve(want);
  std::int64_t rows = 0, runs = 0;
  for (Statement* st = &first; st;) {
    Statement& now = *st;
    st = nullptr;
    for (std::size_t i = 0; i < where.params.size(); ++i) now.BindCell(static_cast<int>(i) + 1, where.params[i]);
    bool stepped = false, in_run = false;
    Cell run;
    int missed = 0;  // rows of the current run that missed the page
    while (now.Step()) {
      if (!stepped && now.TakeSorted()) return std::nullopt;
      stepped = true;
      Cell value = now.Column(0);
      if (!in_run || value != run) {
        run = std::move(value);
        in_run = true;
        missed = 0;
        ++runs;
      }
      if (++rows == kJudgeAfterRows && runs * kShortRun > rows) return std::nullopt;
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
        after.Reset();
        after.BindCell(static_cast<int>(where.params.size()) + 1, run);
        st = &after;
        break;
      }
    }
  }
  std::sort_heap(kept.begin(), kept.end(), heap_order);  // page order
  std::vector<GroupedTopRow> page;
  for (std::size_t i = static_cast<std::size_t>(skip); i < kept.size(); ++i)
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
