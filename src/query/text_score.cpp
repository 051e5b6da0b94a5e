#include "query/text_score.hpp"

#include <algorithm>
#include <cctype>

#include "util/errors.hpp"
#include "util/json.hpp"

namespace crmd::query {

namespace json = boost::json;

namespace {

// The searched field and its terms: the first top-level (or `$and`) `{"f":{"$text":{"$search":{"$term":..}}}}`.
bool FindText(const json::value& where, std::string& field, std::string& term) {
  const auto* o = where.if_object();
  if (!o) return false;
  for (const auto& kv : *o) {
    if (kv.key() == "$and" && kv.value().is_array()) {
      for (const auto& part : kv.value().get_array())
        if (FindText(part, field, term)) return true;
      continue;
    }
    const auto* constraint = kv.value().if_object();
    const auto* text = constraint ? constraint->if_contains("$text") : nullptr;
    const auto* search = text && text->is_object() ? text->get_object().if_contains("$search") : nullptr;
    const auto* t = search && search->is_object() ? search->get_object().if_contains("$term") : nullptr;
    if (t && t->is_string()) {
      field = std::string(kv.key());
      term = std::string(t->get_string());
      return true;
    }
  }
  return false;
}

// Lower-cased words: runs of letters and digits (and any non-ASCII byte, so words of other scripts
// hold together).
std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> out;
  std::string word;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c >= 0x80) {
      word.push_back(static_cast<char>(std::tolower(c)));
    } else if (!word.empty()) {
      out.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

double Score(const json::value* value, const std::vector<std::string>& terms) {
  if (!value || !value->is_string()) return 0;
  const auto words = Words(value->get_string());
  if (words.empty()) return 0;
  std::size_t hits = 0;
  for (const auto& w : words) hits += std::count(terms.begin(), terms.end(), w) > 0 ? 1 : 0;
  return static_cast<double>(hits) / static_cast<double>(words.size());
}

}  // namespace

Status ListByScore(auth::Context& ctx, std::string_view class_name, ListRequest request, bool order_by_score,
                   bool show_score, std::string& out) {
  std::string field, term;
  if (!request.where || !FindText(*request.where, field, term)) return errors::InvalidQueryParameter("order");
  const auto terms = Words(term);
  // The field scored must be read even when the keys leave it out.
  bool added_field = false;
  if (request.keys && std::find(request.keys->begin(), request.keys->end(), field) == request.keys->end()) {
    request.keys->push_back(field);
    added_field = true;
  }
  const std::int64_t skip = request.skip, limit = request.limit;
  if (order_by_score) {
    request.skip = 0;
    request.limit = kMaxScoredRows + 1;
  }
  std::string text;
  CRMD_TRY(ListRecords(ctx, class_name, request, text));
  auto parsed = ParseJson(text);
  if (!parsed.ok() || !parsed.value().is_object()) return errors::Internal();
  auto& answer = parsed.value().get_object();
  auto* found = answer.if_contains("results");
  if (!found || !found->is_array()) return errors::Internal();
  auto& rows = found->get_array();
  std::vector<std::pair<double, json::value>> scored;
  scored.reserve(rows.size());
  for (auto& row : rows) {
    const double score = row.is_object() ? Score(row.get_object().if_contains(field), terms) : 0;
    scored.emplace_back(score, std::move(row));
  }
  if (order_by_score) {
    if (scored.size() > static_cast<std::size_t>(kMaxScoredRows))
      return ApiError{400, errors::kInvalidQuery,
                      "A $score order reads at most " + std::to_string(kMaxScoredRows) + " matches; narrow the where."};
    // Best first, as Parse sorts by score whatever the direction; ties keep the query's order.
    std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    const auto first = std::min<std::size_t>(static_cast<std::size_t>(skip), scored.size());
    scored.erase(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(first));
    if (limit >= 0 && scored.size() > static_cast<std::size_t>(limit)) scored.resize(static_cast<std::size_t>(limit));
  }
  json::array results;
  for (auto& [score, row] : scored) {
    if (row.is_object()) {
      if (added_field) row.get_object().erase(field);
      if (show_score) row.get_object()["score"] = score;
    }
    results.push_back(std::move(row));
  }
  *found = std::move(results);
  WriteJson(parsed.value(), out);
  return {};
}

}  // namespace crmd::query
