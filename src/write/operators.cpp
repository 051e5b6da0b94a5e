#include "write/operators.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "util/errors.hpp"
#include "util/ids.hpp"

namespace crmd::write {

namespace json = boost::json;

namespace {
// Ids accepted in a relation (master-supplied objectIds may exceed 10 characters).
constexpr std::size_t kMaxRelatedIdLength = 64;
// Operations one Batch may hold: the SDK sends two at most (one AddRelation, one RemoveRelation).
constexpr std::size_t kMaxBatchedOperations = 16;
// Items an Array field may hold after an operator: every later operator reads, rewrites and stores
// the whole array.
constexpr std::size_t kMaxArrayItems = 100'000;

// A hash of a JSON value that equal values share, whatever the order of their objects' keys
// (json::value's == ignores it): AddUnique and Remove compare by hash first, so a long list costs
// one pass, not one comparison per pair.
std::size_t HashOf(const json::value& v) {
  switch (v.kind()) {
    case json::kind::null: return 0x9e3779b9u;
    case json::kind::bool_: return v.get_bool() ? 1 : 2;
    case json::kind::int64:
    case json::kind::uint64:
    case json::kind::double_: return std::hash<double>{}(v.to_number<double>());
    case json::kind::string: return std::hash<std::string_view>{}(v.get_string());
    case json::kind::array: {
      std::size_t h = 0x51ed27u;
      for (const auto& item : v.get_array()) h = h * 31 + HashOf(item);
      return h;
    }
    case json::kind::object: {
      std::size_t h = 0x2545f491u;
      for (const auto& kv : v.get_object())  // a sum: the order of keys does not matter
        h += std::hash<std::string_view>{}(kv.key()) * 1099511628211u ^ HashOf(kv.value());
      return h;
    }
  }
  return 0;
}

// A set of JSON values: hash buckets, equality by json::value's ==.
class ValueSet {
 public:
  void Insert(const json::value& v) { buckets_[HashOf(v)].push_back(&v); }
  bool Contains(const json::value& v) const {
    auto it = buckets_.find(HashOf(v));
    if (it == buckets_.end()) return false;
    for (const auto* other : it->second)
      if (*other == v) return true;
    return false;
  }

 private:
  std::unordered_map<std::size_t, std::vector<const json::value*>> buckets_;
};
}  // namespace

bool IsOperator(const json::value& value) {
  return value.is_object() && value.get_object().contains("__op");
}

namespace {

// A copy of part of a request body in the default memory: a body may live in an arena of its own
// (api/message.hpp), which a plain copy would share.
json::value Copy(const json::value& v) { return json::value(v, json::storage_ptr()); }

}  // namespace

Result<Operator> ParseOperator(const json::object& value) {
  const auto* op = value.if_contains("__op");
  if (!op || !op->is_string()) return errors::UnsupportedOperator("__op");
  std::string_view name = op->get_string();
  if (name == "Delete") return Operator{OperatorKind::kDelete, nullptr, {}, {}};
  if (name == "Increment") {
    const auto* amount = value.if_contains("amount");
    if (!amount || !amount->is_number())
      return errors::InvalidOperatorArgument("incrementing must provide a number");
    return Operator{OperatorKind::kIncrement, Copy(*amount), {}, {}};
  }
  const bool add = name == "Add", unique = name == "AddUnique", remove = name == "Remove";
  if (add || unique || remove) {
    const auto* objects = value.if_contains("objects");
    if (!objects || !objects->is_array())
      return errors::InvalidOperatorArgument(remove ? "objects to remove must be an array"
                                                    : "objects to add must be an array");
    auto kind = add ? OperatorKind::kAdd : unique ? OperatorKind::kAddUnique : OperatorKind::kRemove;
    return Operator{kind, Copy(*objects), {}, {}};
  }
  if (name == "AddRelation" || name == "RemoveRelation") {
    const bool adding = name == "AddRelation";
    const auto* objects = value.if_contains("objects");
    if (!objects || !objects->is_array())
      return errors::InvalidOperatorArgument(adding ? "objects to add must be an array"
                                                    : "objects to remove must be an array");
    Operator out{adding ? OperatorKind::kAddRelation : OperatorKind::kRemoveRelation, Copy(*objects), {}, {}};
    for (const auto& item : objects->get_array()) {
      const auto* o = item.is_object() ? &item.get_object() : nullptr;
      const auto* type = o ? o->if_contains("__type") : nullptr;
      const auto* cls = o ? o->if_contains("className") : nullptr;
      const auto* id = o ? o->if_contains("objectId") : nullptr;
      if (!type || !cls || !id || !type->is_string() || type->get_string() != "Pointer" ||
          !cls->is_string() || !id->is_string() || !ids::IsAlnumId(id->get_string(), kMaxRelatedIdLength))
        return errors::InvalidOperatorArgument("AddRelation and RemoveRelation take an array of Pointers");
      if (out.relation_class.empty()) out.relation_class = std::string(cls->get_string());
      if (out.relation_class != cls->get_string())
        return errors::InvalidOperatorArgument("All objects in a relation must be of the same class");
      out.relation_ids.emplace_back(id->get_string());
    }
    return out;
  }
  return errors::UnsupportedOperator(name);
}

bool IsBatch(const json::object& value) {
  const auto* op = value.if_contains("__op");
  return op && op->is_string() && op->get_string() == "Batch";
}

Result<std::vector<Operator>> ParseRelationBatch(const json::object& value) {
  const auto* ops = value.if_contains("ops");
  if (!ops || !ops->is_array() || ops->get_array().empty())
    return errors::InvalidOperatorArgument("Batch must provide a non-empty array of operations in ops");
  if (ops->get_array().size() > kMaxBatchedOperations)
    return errors::InvalidOperatorArgument("a Batch may hold at most " + std::to_string(kMaxBatchedOperations) +
                                           " operations");
  std::vector<Operator> out;
  for (const auto& item : ops->get_array()) {
    if (!item.is_object()) return errors::InvalidOperatorArgument("Batch operations must be objects");
    const auto* name = item.get_object().if_contains("__op");
    const bool relation = name && name->is_string() &&
                          (name->get_string() == "AddRelation" || name->get_string() == "RemoveRelation");
    if (!relation) return errors::InvalidOperatorArgument("a Batch may hold only AddRelation and RemoveRelation");
    CRMD_ASSIGN(auto op, ParseOperator(item.get_object()));
    for (const auto& earlier : out)
      if (!op.relation_class.empty() && !earlier.relation_class.empty() && earlier.relation_class != op.relation_class)
        return errors::InvalidOperatorArgument("All objects in a relation must be of the same class");
    out.push_back(std::move(op));
  }
  return out;
}

std::optional<schema::FieldDef> TypeCreatedBy(const Operator& op) {
  switch (op.kind) {
    case OperatorKind::kIncrement: return schema::FieldDef{schema::FieldType::kNumber, {}};
    case OperatorKind::kAdd:
    case OperatorKind::kAddUnique:
    case OperatorKind::kRemove: return schema::FieldDef{schema::FieldType::kArray, {}};
    case OperatorKind::kDelete: return std::nullopt;
    case OperatorKind::kAddRelation:
    case OperatorKind::kRemoveRelation:
      if (op.relation_class.empty()) return std::nullopt;
      return schema::FieldDef{schema::FieldType::kRelation, op.relation_class};
  }
  return std::nullopt;
}

namespace {

json::value Sum(const json::value& a, const json::value& b) {
  if (a.is_int64() && b.is_int64()) {
    std::int64_t out;
    if (!__builtin_add_overflow(a.get_int64(), b.get_int64(), &out)) return out;
  }
  return a.to_number<double>() + b.to_number<double>();
}

}  // namespace

namespace {
ApiError TooManyItems() {
  return errors::InvalidOperatorArgument("an array may hold at most " + std::to_string(kMaxArrayItems) + " items");
}
}  // namespace

Result<std::optional<json::value>> ApplyOperator(const Operator& op, const json::value& current,
                                                 const schema::FieldDef& def, std::string_view table,
                                                 std::string_view field) {
  using Out = std::optional<json::value>;
  switch (op.kind) {
    case OperatorKind::kDelete: return Out();
    case OperatorKind::kAddRelation:
    case OperatorKind::kRemoveRelation:
      // Relations are rows of a join table, not a value: write/field_changes handles them.
      return errors::SchemaMismatch(table, field, def.Describe(), "Relation");
    case OperatorKind::kIncrement: {
      if (def.type != schema::FieldType::kNumber)
        return errors::SchemaMismatch(table, field, def.Describe(), "Number");
      json::value base = current.is_number() ? current : json::value(std::int64_t{0});
      return Out(Sum(base, op.argument));
    }
    case OperatorKind::kAdd:
    case OperatorKind::kAddUnique:
    case OperatorKind::kRemove: {
      if (def.type != schema::FieldType::kArray)
        return errors::SchemaMismatch(table, field, def.Describe(), "Array");
      json::array items = current.is_array() ? current.get_array() : json::array{};
      const auto& objects = op.argument.get_array();
      if (op.kind == OperatorKind::kAdd) {
        if (items.size() + objects.size() > kMaxArrayItems) return TooManyItems();
        for (const auto& o : objects) items.push_back(o);
      } else if (op.kind == OperatorKind::kAddUnique) {
        if (objects.size() > kMaxArrayItems) return TooManyItems();
        ValueSet present;  // points into `items` and `added`: neither may reallocate meanwhile
        json::array added;
        added.reserve(objects.size());
        for (const auto& item : items) present.Insert(item);
        for (const auto& o : objects) {
          if (present.Contains(o)) continue;
          added.push_back(o);
          present.Insert(added.back());
          if (items.size() + added.size() > kMaxArrayItems) return TooManyItems();
        }
        for (auto& a : added) items.push_back(std::move(a));
      } else {
        ValueSet gone;
        for (const auto& o : objects) gone.Insert(o);
        items.erase(std::remove_if(items.begin(), items.end(), [&](const json::value& v) { return gone.Contains(v); }),
                    items.end());
      }
      return Out(json::value(std::move(items)));
    }
  }
  return Out();
}

}  // namespace crmd::write
