#include "query/where_parser.hpp"

#include <algorithm>
#include <iterator>
#include <set>

#include <fmt/format.h>
#include <re2/re2.h>

#include "auth/authorize.hpp"
#include "query/portable_regex.hpp"
#include "query/regex_options.hpp"
#include "schema/codec.hpp"
#include "schema/geo_value.hpp"
#include "schema/names.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"
#include "util/log.hpp"
#include "util/strings.hpp"
#include "util/time.hpp"

namespace crmd::query {

namespace json = boost::json;
using schema::FieldType;

namespace {

// `$nearSphere`'s bounds, each in its unit: the distance over the sphere's radius is radians.
constexpr std::pair<std::string_view, double> kMaxDistances[] = {{"$maxDistance", 1.0},
                                                                 {"$maxDistanceInRadians", 1.0},
                                                                 {"$maxDistanceInMiles", geo::kEarthRadiusMiles},
                                                                 {"$maxDistanceInKilometers", geo::kEarthRadiusKm}};

bool IsMaxDistance(std::string_view op) {
  return std::any_of(std::begin(kMaxDistances), std::end(kMaxDistances), [&](const auto& unit) { return unit.first == op; });
}

ApiError BadQuery(std::string message) { return ApiError{400, errors::kInvalidQuery, std::move(message)}; }

std::string_view TypeTag(const json::value& v) {
  if (!v.is_object()) return {};
  const auto* t = v.get_object().if_contains("__type");
  return t && t->is_string() ? std::string_view(t->get_string()) : std::string_view();
}

std::string_view Member(const json::value& v, std::string_view key) {
  const auto* m = v.is_object() ? v.get_object().if_contains(key) : nullptr;
  return m && m->is_string() ? std::string_view(m->get_string()) : std::string_view();
}

bool IsConstraintObject(const json::value& v) {
  if (!v.is_object() || v.get_object().empty()) return false;
  for (const auto& kv : v.get_object())
    if (kv.key().starts_with('$')) return true;
  return false;
}

// What a filter on one field compares against, with its declared type.
struct Target {
  FieldRef ref;
  std::optional<schema::FieldDef> def;  // nullopt: undeclared, or a path inside an Object
  bool is_path = false;
  // A Relation field (no column: its join table): equality, $in, $nin, $all and $ne with Pointers
  // test what the relation holds; other constraints read it as absent.
  std::string relation;
  std::string relation_target;
};

class Parser {
 public:
  Parser(const schema::Snapshot& snapshot, const auth::Identity& identity)
      : snapshot_(snapshot), identity_(identity) {}

  Result<Expr> Object(const json::value& where, const schema::ClassSchema& cls, std::size_t depth) {
    if (!where.is_object()) return BadQuery("Invalid parameter for query: where");
    if (++nodes_ > kMaxWhereNodes) return BadQuery("Invalid parameter for query: where");
    Expr all;
    all.kind = ExprKind::kAnd;
    for (const auto& kv : where.get_object()) {
      std::string_view key = kv.key();
      const json::value& value = kv.value();
      if (key == "$or" || key == "$and" || key == "$nor") {
        if (!value.is_array() || value.get_array().empty())
          return BadQuery("Invalid parameter for query: where");
        Expr group;
        group.kind = key == "$or" ? ExprKind::kOr : key == "$and" ? ExprKind::kAnd : ExprKind::kNor;
        for (const auto& item : value.get_array()) {
          CRMD_ASSIGN(auto child, Object(item, cls, depth));
          group.children.push_back(std::move(child));
        }
        all.children.push_back(std::move(group));
      } else if (key == "$relatedTo") {
        CRMD_ASSIGN(auto related, RelatedTo(value, cls));
        all.children.push_back(std::move(related));
      } else if (key.starts_with('$')) {
        return errors::InvalidKeyName(key);
      } else {
        CRMD_ASSIGN(auto target, Resolve(key, cls));
        CRMD_ASSIGN(auto constraint, Field(target, value, cls, depth));
        all.children.push_back(std::move(constraint));
      }
    }
    return all;
  }

 private:
  Result<Target> Resolve(std::string_view key, const schema::ClassSchema& cls) {
    auto parts = Split(key, '.');
    std::string_view head = parts.front();
    // Parse's stored names of the two dates, which its clients may query by (parseNames gate).
    if (identity_.gates.parse_names && parts.size() == 1) {
      if (head == "_created_at") head = "createdAt";
      else if (head == "_updated_at") head = "updatedAt";
    }
    Target t;
    if (head == "objectId") {
      t.def = schema::FieldDef{FieldType::kString, {}};
      t.ref.column = "objectId";
    } else if (head == "createdAt" || head == "updatedAt") {
      t.def = schema::FieldDef{FieldType::kDate, {}};
      t.ref.column = std::string(head);
    } else {
      if (!schema::IsValidFieldName(head) || schema::IsSecretField(cls.name, head))
        return errors::InvalidKeyName(key);
      if (const auto* def = cls.FindField(head); def && def->type != FieldType::kRelation) {
        t.def = *def;
        t.ref.column = std::string(head);
        t.ref.array = def->type == FieldType::kArray;
        t.ref.tracks_nulls = true;
      } else if (def && parts.size() == 1) {
        t.relation = std::string(head);
        t.relation_target = def->target_class;
      }
    }
    if (parts.size() > 1) {
      for (std::size_t i = 1; i < parts.size(); ++i) {
        if (!schema::IsValidFieldName(parts[i])) return errors::InvalidKeyName(key);
        t.ref.path.emplace_back(parts[i]);
      }
      // Paths reach inside Object values only; elsewhere the field reads as absent.
      if (!t.def || t.def->type != FieldType::kObject) t.ref.column.clear();
      t.def.reset();
      t.ref.array = false;
      t.ref.tracks_nulls = false;
      t.is_path = true;
    }
    return t;
  }

  // The stored form of `value` for comparing with `t`; nullopt when no stored value of the field
  // could equal it (the filter then matches nothing, spec §4.3).
  std::optional<storage::Cell> Encode(const Target& t, const json::value& value, bool element) {
    if (value.is_null()) return storage::Cell();
    if (t.is_path || !t.def || element) return Loose(value);
    switch (t.def->type) {
      case FieldType::kString:
      case FieldType::kHtml:
        if (value.is_string()) return storage::Cell(std::string(value.get_string()));
        return std::nullopt;
      case FieldType::kNumber:
        if (value.is_int64()) return storage::Cell(value.get_int64());
        if (value.is_number()) return storage::Cell(value.to_number<double>());
        return std::nullopt;
      case FieldType::kBoolean:
        if (value.is_bool()) return storage::Cell(std::int64_t{value.get_bool()});
        return std::nullopt;
      case FieldType::kDate: {
        if (TypeTag(value) != "Date") return std::nullopt;
        auto iso = timeutil::NormalizeIso(Member(value, "iso"));
        if (!iso) return std::nullopt;
        return storage::Cell(std::move(*iso));
      }
      case FieldType::kPointer:
        if (TypeTag(value) != "Pointer" || Member(value, "className") != t.def->target_class)
          return std::nullopt;
        return storage::Cell(std::string(Member(value, "objectId")));
      case FieldType::kArray:
      case FieldType::kObject:
      case FieldType::kFile:
      case FieldType::kPrivateFile:
      case FieldType::kAcl:
        return storage::Cell(ToJson(value));
      case FieldType::kBytes:
        if (TypeTag(value) != "Bytes" || Member(value, "base64").empty()) return std::nullopt;
        return storage::Cell(std::string(Member(value, "base64")));
      case FieldType::kGeoPoint: {
        auto point = schema::ParseGeoPoint(value);
        if (!point.ok()) return std::nullopt;
        return storage::Cell(schema::GeoPointJson(point.value()));
      }
      case FieldType::kPolygon: {
        // Stored closed: an open ring asks for the same polygon.
        auto ring = schema::ParsePolygon(value);
        if (!ring.ok()) return std::nullopt;
        return storage::Cell(schema::PolygonJson(ring.value()));
      }
      case FieldType::kRelation:
        return std::nullopt;
    }
    return std::nullopt;
  }

  // The field a geo operator reads must be of `type` when the class declares it; an undeclared
  // field holds nothing, so the operator matches nothing (as any filter on an absent field).
  static Status GeoField(const Target& t, std::string_view op, FieldType type) {
    if (t.is_path || !t.def || t.def->type == type) return {};
    return BadQuery(fmt::format("bad {}: {} is not a {}", op, t.ref.column, schema::TypeName(type)));
  }

  static Expr GeoExpr(const Target& t, schema::GeoShape shape, std::vector<double> numbers) {
    if (t.is_path || !t.def) return Expr::Const(false);
    Expr e;
    e.kind = ExprKind::kGeo;
    e.field = t.ref;
    e.geo = shape;
    e.numbers = std::move(numbers);
    return e;
  }

  // `$nearSphere` with its optional `$maxDistance` (radians) or `$maxDistanceIn<unit>` siblings.
  static Result<Expr> Near(const Target& t, const json::value& arg, const json::object& constraint) {
    CRMD_TRY(GeoField(t, "$nearSphere", FieldType::kGeoPoint));
    CRMD_ASSIGN(auto point, schema::ParseGeoPoint(arg, "$nearSphere"));
    std::vector<double> numbers{point.latitude, point.longitude};
    for (const auto& [name, radius] : kMaxDistances) {
      const auto* max = constraint.if_contains(name);
      if (!max) continue;
      if (!max->is_number() || !(max->to_number<double>() >= 0))
        return errors::BadRequest(fmt::format("bad {}: must be a number of at least 0", name));
      numbers.push_back(max->to_number<double>() / radius);
      break;
    }
    return GeoExpr(t, schema::GeoShape::kNear, std::move(numbers));
  }

  // `$within: {$box: [corner, opposite corner]}`.
  static Result<Expr> Box(const Target& t, const json::value& arg) {
    CRMD_TRY(GeoField(t, "$within", FieldType::kGeoPoint));
    const auto* box = arg.is_object() ? arg.get_object().if_contains("$box") : nullptr;
    if (!box || !box->is_array() || box->get_array().size() != 2)
      return errors::BadRequest("bad $within: expected {$box: [southwest GeoPoint, northeast GeoPoint]}");
    CRMD_ASSIGN(auto a, schema::ParseGeoPoint(box->get_array()[0], "$box"));
    CRMD_ASSIGN(auto b, schema::ParseGeoPoint(box->get_array()[1], "$box"));
    return GeoExpr(t, schema::GeoShape::kBox, {a.latitude, a.longitude, b.latitude, b.longitude});
  }

  // `$geoWithin: {$polygon: points}` or `{$centerSphere: [[longitude, latitude] or GeoPoint, radians]}`.
  static Result<Expr> GeoWithin(const Target& t, const json::value& arg) {
    CRMD_TRY(GeoField(t, "$geoWithin", FieldType::kGeoPoint));
    const auto* polygon = arg.is_object() ? arg.get_object().if_contains("$polygon") : nullptr;
    const auto* circle = arg.is_object() ? arg.get_object().if_contains("$centerSphere") : nullptr;
    if (polygon) {
      CRMD_ASSIGN(auto ring, schema::ParseRing(*polygon, "$polygon"));
      std::vector<double> numbers;
      for (const auto& p : ring) numbers.insert(numbers.end(), {p.latitude, p.longitude});
      return GeoExpr(t, schema::GeoShape::kPolygon, std::move(numbers));
    }
    if (!circle) return errors::BadRequest("bad $geoWithin: expected $polygon or $centerSphere");
    if (!circle->is_array() || circle->get_array().size() != 2)
      return errors::BadRequest("bad $centerSphere: expected [[longitude, latitude] or GeoPoint, distance in radians]");
    const auto& center = circle->get_array()[0];
    const auto& radius = circle->get_array()[1];
    geo::Point point;
    if (center.is_array()) {
      // Mongo's order, which the SDK sends: longitude first.
      const auto& pair = center.get_array();
      if (pair.size() != 2) return errors::BadRequest("bad $centerSphere: the center is [longitude, latitude]");
      json::value swapped = json::array{pair[1], pair[0]};
      CRMD_ASSIGN(point, schema::ParsePointOrPair(swapped, "$centerSphere"));
    } else {
      CRMD_ASSIGN(point, schema::ParseGeoPoint(center, "$centerSphere"));
    }
    if (!radius.is_number() || !(radius.to_number<double>() >= 0))
      return errors::BadRequest("bad $centerSphere: the distance must be a number of at least 0");
    return GeoExpr(t, schema::GeoShape::kCircle, {point.latitude, point.longitude, radius.to_number<double>()});
  }

  // `$geoIntersects: {$point: GeoPoint}` on a Polygon field.
  static Result<Expr> Intersects(const Target& t, const json::value& arg) {
    CRMD_TRY(GeoField(t, "$geoIntersects", FieldType::kPolygon));
    const auto* point = arg.is_object() ? arg.get_object().if_contains("$point") : nullptr;
    if (!point) return errors::BadRequest("bad $geoIntersects: expected {$point: GeoPoint}");
    CRMD_ASSIGN(auto p, schema::ParseGeoPoint(*point, "$point"));
    return GeoExpr(t, schema::GeoShape::kHolds, {p.latitude, p.longitude});
  }

  // Values inside arrays and Object paths carry their JSON type (as SQLite's JSON functions
  // return them: true/false as 1/0, objects as JSON text).
  static std::optional<storage::Cell> Loose(const json::value& value) {
    switch (value.kind()) {
      case json::kind::null: return storage::Cell();
      case json::kind::bool_: return storage::Cell(std::int64_t{value.get_bool()});
      case json::kind::int64: return storage::Cell(value.get_int64());
      case json::kind::uint64:
      case json::kind::double_: return storage::Cell(value.to_number<double>());
      case json::kind::string: return storage::Cell(std::string(value.get_string()));
      case json::kind::array:
      case json::kind::object: return storage::Cell(ToJson(value));
    }
    return std::nullopt;
  }

  Expr Compare(const Target& t, CompareOp op, const json::value& value) {
    // An array compared with an array value is whole-value equality; otherwise element-wise.
    const bool element = t.ref.array && !value.is_array();
    auto cell = Encode(t, value, element);
    if (!cell) return Expr::Const(op == CompareOp::kNe);  // nothing equals it; everything differs
    Expr e;
    e.kind = ExprKind::kCompare;
    e.field = t.ref;
    e.field.array = element;
    e.op = op;
    e.value = std::move(*cell);
    return e;
  }

  Result<Expr> List(ExprKind kind, const Target& t, const json::value& value, std::string_view op,
                    bool negated) {
    if (!value.is_array()) return BadQuery("bad " + std::string(op) + ": value must be an array");
    if (value.get_array().size() > kMaxInValues) return BadQuery("Invalid parameter for query: where");
    Expr e;
    e.kind = kind;
    e.flag = negated;
    e.field = t.ref;
    const bool element = kind != ExprKind::kIn || t.ref.array;
    if (kind != ExprKind::kIn && !t.ref.array && t.ref.column.size() && !t.is_path)
      return BadQuery("bad " + std::string(op) + ": " + t.ref.column + " is not an Array");
    for (const auto& item : value.get_array()) {
      auto cell = Encode(t, item, element);
      if (!cell) continue;  // a value of another type can never match
      if (storage::IsNull(*cell)) e.has_null = true;
      else e.values.push_back(std::move(*cell));
    }
    return e;
  }

  Result<Expr> Regex(const Target& t, const json::value& pattern, const json::object& constraint) {
    if (!pattern.is_string()) return BadQuery("bad $regex: pattern must be a string");
    if (++regexes_ > kMaxRegexes)
      return BadQuery("bad $regex: a query may hold at most " + std::to_string(kMaxRegexes) + " patterns");
    if (pattern.get_string().size() > kMaxRegexLength)
      return BadQuery("bad $regex: a pattern may be at most " + std::to_string(kMaxRegexLength) + " characters");
    std::string_view flags;
    if (const auto* o = constraint.if_contains("$options")) {
      if (!o->is_string()) return BadQuery("bad $options: must be a string");
      flags = o->get_string();
    }
    CRMD_ASSIGN(std::string full, ApplyRegexOptions(pattern.get_string(), flags));
    if (t.def && !t.is_path && !schema::IsStringLike(t.def->type) && t.def->type != FieldType::kArray)
      return BadQuery("bad $regex: " + t.ref.column + " is not a String");
    RE2::Options options;
    options.set_log_errors(false);
    options.set_max_mem(kRegexMemory);
    RE2 re(full, options);
    if (!re.ok()) return BadQuery("bad $regex: " + re.error());
    // What both stores run alike (issue 31 #15); it is what the store gets, so RE2 checks its size.
    CRMD_ASSIGN(std::string portable, PortableRegex(full));
    RE2 runs(portable, options);
    if (!runs.ok()) return BadQuery("bad $regex: " + runs.error());
    Expr e;
    e.kind = ExprKind::kRegex;
    e.field = t.ref;
    e.text = std::move(portable);
    return e;
  }

  Result<Expr> Text(const Target& t, const json::value& arg, const schema::ClassSchema& cls) {
    const auto* search = arg.is_object() ? arg.get_object().if_contains("$search") : nullptr;
    if (!search || !search->is_object())
      return BadQuery("bad $text: $search, should be object");
    const auto* term = search->get_object().if_contains("$term");
    if (!term || !term->is_string()) return BadQuery("bad $text: $term, should be string");
    bool indexed = false;
    for (const auto& index : cls.indexes) {
      if (!index.value().is_object()) continue;
      const auto* kind = index.value().get_object().if_contains(t.ref.column);
      indexed = indexed || (kind && kind->is_string() && kind->get_string() == "text");
    }
    if (!indexed || t.is_path) {
      log::Error("IndexNotFound", {{"class", cls.name}, {"field", t.ref.column}});
      return errors::Internal();
    }
    // Mongo's $text matches any of the words; each store says that in its own search syntax.
    std::string spaced(term->get_string());
    for (auto& c : spaced)
      if (static_cast<unsigned char>(c) <= 0x20) c = ' ';  // NUL and other controls end a word
    Expr e;
    e.kind = ExprKind::kText;
    e.field = t.ref;
    for (auto word : Split(spaced, ' '))
      if (!word.empty()) e.terms.emplace_back(word);
    if (e.terms.empty()) return Expr::Const(false);
    return e;
  }

  // `{"className":..., "where":{...}}` -> the sub-query, checked through Authorize (find).
  Result<std::shared_ptr<SubQuery>> Sub(const json::value& spec, std::size_t depth) {
    if (depth + 1 > kMaxSubQueryDepth) return BadQuery("Invalid parameter for query: where");
    std::string_view class_name = Member(spec, "className");
    if (class_name.empty()) return BadQuery("bad sub-query: className is required");
    if (!schema::IsValidUserClassName(class_name) && !schema::IsSystemClassName(class_name))
      return errors::InvalidClassName(class_name);
    auto cls_ptr = snapshot_.classes().find(class_name);
    const schema::ClassSchema* cls = cls_ptr == snapshot_.classes().end() ? nullptr : cls_ptr->second.get();
    CRMD_TRY(auth::Authorize(identity_, auth::Operation::kFind, class_name, cls));
    if (!cls) return std::shared_ptr<SubQuery>();  // no such class: nothing matches
    auto sub = std::make_shared<SubQuery>();
    sub->cls = cls_ptr->second;
    if (const auto* w = spec.get_object().if_contains("where")) {
      CRMD_ASSIGN(auto where, Object(*w, *cls, depth + 1));
      sub->where = std::make_unique<Expr>(std::move(where));
    }
    return sub;
  }

  Result<Expr> InQuery(const Target& t, const json::value& spec, bool negated, std::size_t depth) {
    if (!spec.is_object()) return BadQuery("bad $inQuery: value must be an object");
    if (t.def && t.def->type != FieldType::kPointer)
      return BadQuery("bad $inQuery: " + t.ref.column + " is not a Pointer");
    CRMD_ASSIGN(auto sub, Sub(spec, depth));
    if (!sub || !t.def || t.def->target_class != sub->cls->name) return Expr::Const(negated);
    sub->key = "objectId";
    return SubQueryExpr(ExprKind::kInQuery, t, std::move(sub), negated);
  }

  static Expr SubQueryExpr(ExprKind kind, const Target& t, std::shared_ptr<SubQuery> sub, bool negated) {
    Expr e;
    e.kind = kind;
    e.flag = negated;
    e.field = t.ref;
    e.sub = std::move(sub);
    return e;
  }

  Result<Expr> Select(const Target& t, const json::value& spec, bool negated, std::size_t depth) {
    const auto* query = spec.is_object() ? spec.get_object().if_contains("query") : nullptr;
    std::string_view key = Member(spec, "key");
    if (!query || !query->is_object() || key.empty())
      return BadQuery("bad $select: needs {query: {className, where}, key}");
    if (t.def && t.def->type == FieldType::kPointer)
      return BadQuery("bad $select: " + t.ref.column + " is a Pointer; use $inQuery");
    bool builtin = key == "objectId" || key == "createdAt" || key == "updatedAt";
    if (!builtin && !schema::IsValidFieldName(key)) return errors::InvalidKeyName(key);
    CRMD_ASSIGN(auto sub, Sub(*query, depth));
    if (!sub || t.ref.column.empty()) return Expr::Const(negated);
    const auto* key_def = sub->cls->FindField(key);
    if (!builtin && (!key_def || key_def->type == FieldType::kRelation ||
                     schema::IsSecretField(sub->cls->name, key)))
      return Expr::Const(negated);
    // Values of different types never match (SQLite's IN would equate 5 and "5").
    const FieldType key_type = key == "objectId" ? FieldType::kString
                               : builtin        ? FieldType::kDate
                                                : key_def->type;
    auto same_kind = [](FieldType a, FieldType b) {
      return a == b || (schema::IsStringLike(a) && schema::IsStringLike(b));
    };
    if (t.def && !same_kind(t.def->type, key_type)) return Expr::Const(negated);
    sub->key = std::string(key);
    return SubQueryExpr(ExprKind::kSelect, t, std::move(sub), negated);
  }

  Result<Expr> RelatedTo(const json::value& spec, const schema::ClassSchema& cls) {
    const auto* object = spec.is_object() ? spec.get_object().if_contains("object") : nullptr;
    std::string_view key = Member(spec, "key");
    if (!object || TypeTag(*object) != "Pointer" || !schema::IsValidFieldName(key))
      return BadQuery("bad $relatedTo: needs {object: Pointer, key}");
    std::string_view owner = Member(*object, "className");
    if (!schema::IsValidUserClassName(owner) && !schema::IsSystemClassName(owner))
      return errors::InvalidClassName(owner);
    auto it = snapshot_.classes().find(owner);
    const schema::ClassSchema* owner_cls = it == snapshot_.classes().end() ? nullptr : it->second.get();
    CRMD_TRY(auth::Authorize(identity_, auth::Operation::kGet, owner, owner_cls));
    if (!owner_cls) return Expr::Const(false);
    const auto* rel = owner_cls->FindField(key);
    if (!rel || rel->type != FieldType::kRelation || rel->target_class != cls.name) return Expr::Const(false);
    Expr e;
    e.kind = ExprKind::kRelatedTo;
    e.owner_class = std::string(owner);
    e.owner_id = std::string(Member(*object, "objectId"));
    e.text = std::string(key);
    return e;
  }

  static bool IsRelationOperator(std::string_view op) {
    return op == "$eq" || op == "$ne" || op == "$in" || op == "$nin" || op == "$all";
  }

  // The Pointers of a constraint on a Relation field (Parse: the owners whose relation holds them).
  // A value that is no Pointer to the relation's class can never be held, so it is left out.
  Result<Expr> RelationConstraint(const Target& t, std::string_view op, const json::value& arg) {
    std::vector<const json::value*> pointers;
    if (op == "$eq" || op == "$ne") {
      pointers.push_back(&arg);
    } else {
      if (!arg.is_array()) return BadQuery("bad " + std::string(op) + ": value must be an array");
      if (arg.get_array().size() > kMaxInValues) return BadQuery("Invalid parameter for query: where");
      for (const auto& item : arg.get_array()) pointers.push_back(&item);
    }
    const bool negated = op == "$ne" || op == "$nin";
    return Holds(t, op == "$all" ? ExprKind::kHoldsAll : ExprKind::kHoldsAny, pointers, negated);
  }

  static Expr Holds(const Target& t, ExprKind kind, const std::vector<const json::value*>& pointers, bool negated) {
    std::set<std::string_view> ids;
    bool foreign = false;  // some value can never be held
    for (const auto* p : pointers) {
      const std::string_view id = Member(*p, "objectId");
      if (TypeTag(*p) == "Pointer" && Member(*p, "className") == t.relation_target && !id.empty()) ids.insert(id);
      else foreign = true;
    }
    // $all of something never held matches nothing; an empty $in nothing, an empty $nin all.
    if (ids.empty() || (kind == ExprKind::kHoldsAll && foreign)) return Expr::Const(negated);
    Expr e;
    e.kind = kind;
    e.flag = negated;
    e.field.column = t.relation;
    for (auto id : ids) e.values.emplace_back(std::string(id));
    return e;
  }

  Result<Expr> Field(const Target& t, const json::value& value, const schema::ClassSchema& cls,
                     std::size_t depth) {
    if (!IsConstraintObject(value)) {
      if (++nodes_ > kMaxWhereNodes) return BadQuery("Invalid parameter for query: where");
      if (!t.relation.empty() && TypeTag(value) == "Pointer") return Holds(t, ExprKind::kHoldsAny, {&value}, false);
      return Compare(t, CompareOp::kEq, value);
    }
    Expr all;
    all.kind = ExprKind::kAnd;
    const auto& constraint = value.get_object();
    for (const auto& kv : constraint) {
      if (++nodes_ > kMaxWhereNodes) return BadQuery("Invalid parameter for query: where");
      std::string_view op = kv.key();
      const json::value& arg = kv.value();
      if (!t.relation.empty() && IsRelationOperator(op)) {
        CRMD_ASSIGN(auto e, RelationConstraint(t, op, arg));
        all.children.push_back(std::move(e));
      } else if (op == "$eq") all.children.push_back(Compare(t, CompareOp::kEq, arg));
      else if (op == "$ne") all.children.push_back(Compare(t, CompareOp::kNe, arg));
      else if (op == "$lt") all.children.push_back(Compare(t, CompareOp::kLt, arg));
      else if (op == "$lte") all.children.push_back(Compare(t, CompareOp::kLte, arg));
      else if (op == "$gt") all.children.push_back(Compare(t, CompareOp::kGt, arg));
      else if (op == "$gte") all.children.push_back(Compare(t, CompareOp::kGte, arg));
      else if (op == "$in" || op == "$nin") {
        CRMD_ASSIGN(auto e, List(ExprKind::kIn, t, arg, op, op == "$nin"));
        all.children.push_back(std::move(e));
      } else if (op == "$all") {
        CRMD_ASSIGN(auto e, List(ExprKind::kAll, t, arg, op, false));
        all.children.push_back(std::move(e));
      } else if (op == "$containedBy") {
        CRMD_ASSIGN(auto e, List(ExprKind::kContainedBy, t, arg, op, false));
        all.children.push_back(std::move(e));
      } else if (op == "$exists") {
        if (!arg.is_bool()) return BadQuery("bad $exists: value must be a boolean");
        Expr e;
        e.kind = ExprKind::kExists;
        e.flag = arg.get_bool();
        e.field = t.ref;
        all.children.push_back(std::move(e));
      } else if (op == "$regex") {
        CRMD_ASSIGN(auto e, Regex(t, arg, constraint));
        all.children.push_back(std::move(e));
      } else if (op == "$nearSphere") {
        CRMD_ASSIGN(auto e, Near(t, arg, constraint));
        all.children.push_back(std::move(e));
      } else if (IsMaxDistance(op)) {
        if (!constraint.contains("$nearSphere")) return errors::BadConstraint(op);
      } else if (op == "$within") {
        CRMD_ASSIGN(auto e, Box(t, arg));
        all.children.push_back(std::move(e));
      } else if (op == "$geoWithin") {
        CRMD_ASSIGN(auto e, GeoWithin(t, arg));
        all.children.push_back(std::move(e));
      } else if (op == "$geoIntersects") {
        CRMD_ASSIGN(auto e, Intersects(t, arg));
        all.children.push_back(std::move(e));
      } else if (op == "$options") {
        if (!constraint.contains("$regex")) return errors::BadConstraint(op);
      } else if (op == "$text") {
        CRMD_ASSIGN(auto e, Text(t, arg, cls));
        all.children.push_back(std::move(e));
      } else if (op == "$inQuery" || op == "$notInQuery") {
        CRMD_ASSIGN(auto e, InQuery(t, arg, op == "$notInQuery", depth));
        all.children.push_back(std::move(e));
      } else if (op == "$select" || op == "$dontSelect") {
        CRMD_ASSIGN(auto e, Select(t, arg, op == "$dontSelect", depth));
        all.children.push_back(std::move(e));
      } else {
        return errors::BadConstraint(op);  // `$or` here included: spec §4.3 allows it at the top only
      }
    }
    return all;
  }

  const schema::Snapshot& snapshot_;
  const auth::Identity& identity_;
  std::size_t nodes_ = 0;
  std::size_t regexes_ = 0;
};

}  // namespace

Result<Expr> ParseWhere(const json::value& where, const schema::ClassSchema& cls,
                        const schema::Snapshot& snapshot, const auth::Identity& identity) {
  Parser parser(snapshot, identity);
  return parser.Object(where, cls, 0);
}

}  // namespace crmd::query
