#include "query/portable_regex.hpp"

#include <optional>
#include <vector>

#include "query/char_set.hpp"
#include "util/errors.hpp"

namespace crmd::query {

namespace {

ApiError BadRegex(std::string why) { return ApiError{400, errors::kInvalidQuery, "bad $regex: " + std::move(why)}; }

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsOctal(char c) { return c >= '0' && c <= '7'; }

void AppendUtf8(char32_t c, std::string& out) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xc0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xe0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
  } else {
    out.push_back(static_cast<char>(0xf0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
  }
}

// One character of the portable form; `specials` are the ASCII characters escaped where it goes.
void AppendChar(char32_t c, std::string_view specials, std::string& out) {
  switch (c) {
    case '\n': out += "\\n"; return;
    case '\t': out += "\\t"; return;
    case '\r': out += "\\r"; return;
    case '\f': out += "\\f"; return;
    case '\v': out += "\\v"; return;
    default: break;
  }
  if (c < 0x20 || c == 0x7f) {
    // Other controls as hex: never raw in the text PostgreSQL is sent (its store escapes U+0001).
    static constexpr char kHex[] = "0123456789ABCDEF";
    out += "\\x{";
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xf]);
    out.push_back('}');
    return;
  }
  if (c < 0x80 && specials.find(static_cast<char>(c)) != std::string_view::npos) out.push_back('\\');
  AppendUtf8(c, out);
}

constexpr std::string_view kSpecials = "\\.+*?()|[]{}^$";
constexpr std::string_view kClassSpecials = "\\[]^-";

// A set in the portable form: one character, `.` (everything), or a class that holds no NUL (a
// set with NUL is written as the class of what it lacks).
Status AppendSet(const CharSet& set, std::string& out) {
  if (set.Empty()) return BadRegex("a class matches no character");
  if (set.IsEverything()) {
    out.push_back('.');
    return {};
  }
  if (auto single = set.Single(); single && *single != 0) {
    AppendChar(*single, kSpecials, out);
    return {};
  }
  const bool negate = set.Contains(0);
  const CharSet items = negate ? set.Complement() : set;
  out += negate ? "[^" : "[";
  for (auto [lo, hi] : items.ranges()) {
    AppendChar(lo, kClassSpecials, out);
    if (hi == lo) continue;
    if (hi > lo + 1) out.push_back('-');
    AppendChar(hi, kClassSpecials, out);
  }
  out.push_back(']');
  return {};
}

struct Flags {
  bool fold = false;       // i
  bool multiline = false;  // m
  bool dot_all = false;    // s
};

// What the portable form ends with so far: a quantifier may follow an atom only.
enum class Last { kNothing, kAtom, kAssertion, kRepeated };

class Rewriter {
 public:
  explicit Rewriter(std::string_view pattern) : p_(pattern) {}

  Result<std::string> Run() {
    out_ = "(?s)";
    while (at_ < p_.size()) {
      switch (p_[at_]) {
        case '|':
          out_.push_back('|');
          last_ = Last::kNothing;
          ++at_;
          break;
        case '(': CRMD_TRY(OpenGroup()); break;
        case ')':
          if (saved_.empty()) return BadRegex("unexpected )");
          flags_ = saved_.back();
          saved_.pop_back();
          out_.push_back(')');
          last_ = Last::kAtom;
          ++at_;
          break;
        case '*':
        case '+':
        case '?': CRMD_TRY(Quantifier(1)); break;
        case '{':
          if (const std::size_t n = RepeatLength(); n > 0) {
            CRMD_TRY(Quantifier(n));
          } else {
            ++at_;
            CRMD_TRY(Literal('{'));
          }
          break;
        case '^': Assertion(flags_.multiline ? "(?m:^)" : "^", 1); break;
        case '$': Assertion(flags_.multiline ? "(?m:$)" : "$", 1); break;
        case '.':
          out_ += flags_.dot_all ? "." : "[^\\n]";
          last_ = Last::kAtom;
          ++at_;
          break;
        case '[': CRMD_TRY(Class()); break;
        case '\\': CRMD_TRY(Escape()); break;
        default: {
          CRMD_ASSIGN(const char32_t c, NextChar());
          CRMD_TRY(Literal(c));
        }
      }
    }
    if (!saved_.empty()) return BadRegex("missing )");
    return std::move(out_);
  }

 private:
  Result<char32_t> NextChar() {
    const auto lead = static_cast<unsigned char>(p_[at_]);
    const std::size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xe ? 3 : (lead >> 3) == 0x1e ? 4 : 0;
    if (length == 0 || at_ + length > p_.size()) return BadRegex("the pattern is not UTF-8");
    char32_t c = length == 1 ? lead : lead & (0x7f >> length);
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(p_[at_ + k]);
      if ((next & 0xc0) != 0x80) return BadRegex("the pattern is not UTF-8");
      c = (c << 6) | (next & 0x3f);
    }
    at_ += length;
    return c;
  }

  Status Literal(char32_t c) {
    CharSet set;
    set.Add(c);
    set.Normalize();
    if (flags_.fold) FoldCase(set, kMaxFoldedRange);
    last_ = Last::kAtom;
    return AppendSet(set, out_);
  }

  void Assertion(std::string_view text, std::size_t consumed) {
    out_ += text;
    last_ = Last::kAssertion;
    at_ += consumed;
  }

  // `(`, `(?:`, `(?P<name>`, `(?<name>`, `(?flags)`, `(?flags:`.
  Status OpenGroup() {
    if (p_.substr(at_, 2) != "(?") {
      Push("(", 1);
      return {};
    }
    const std::string_view rest = p_.substr(at_ + 2);
    if (rest.starts_with("P<") || (rest.starts_with("<") && !rest.starts_with("<=") && !rest.starts_with("<!"))) {
      const std::size_t close = p_.find('>', at_);
      if (close == std::string_view::npos) return BadRegex("missing > of a group name");
      Push("(", close + 1 - at_);
      return {};
    }
    if (rest.starts_with(":")) {
      Push("(?:", 3);
      return {};
    }
    Flags set = flags_;
    bool negated = false;
    for (std::size_t k = 0; k < rest.size(); ++k) {
      switch (rest[k]) {
        case '-': negated = true; break;
        case 'i': set.fold = !negated; break;
        case 'm': set.multiline = !negated; break;
        case 's': set.dot_all = !negated; break;
        case 'U': break;  // greediness: which text a match covers, not whether it matches
        case ')':
          flags_ = set;
          at_ += 2 + k + 1;
          return {};
        case ':':
          Push("(?:", 2 + k + 1);
          flags_ = set;
          return {};
        default: return BadRegex("the group (?" + std::string(rest.substr(0, k + 1)) + " is not supported");
      }
    }
    return BadRegex("missing )");
  }

  void Push(std::string_view text, std::size_t consumed) {
    out_ += text;
    saved_.push_back(flags_);
    last_ = Last::kNothing;
    at_ += consumed;
  }

  // The length of RE2's `{n}`, `{n,}` or `{n,m}` at at_ (no leading zeros), 0 when `{` is a literal.
  std::size_t RepeatLength() const {
    std::size_t k = at_ + 1;
    auto digits = [&]() {
      const std::size_t from = k;
      while (k < p_.size() && p_[k] >= '0' && p_[k] <= '9') ++k;
      const std::size_t n = k - from;
      return n > 0 && n <= 8 && !(n > 1 && p_[from] == '0');
    };
    if (!digits()) return 0;
    if (k < p_.size() && p_[k] == ',') {
      ++k;
      if (k < p_.size() && p_[k] != '}' && !digits()) return 0;
    }
    return k < p_.size() && p_[k] == '}' ? k + 1 - at_ : 0;
  }

  Status Quantifier(std::size_t length) {
    if (last_ == Last::kNothing) return BadRegex("missing argument to repetition operator");
    if (last_ == Last::kAssertion) return BadRegex("an anchor or a word boundary cannot be repeated");
    if (last_ == Last::kRepeated) return BadRegex("bad repetition operator");
    const std::string_view text = p_.substr(at_, length);
    if (text.front() == '{') {
      // `{n}`, `{n,}` or `{n,m}`: at most 8 digits each (RepeatLength).
      const std::string_view counts = text.substr(1, text.size() - 2);
      const std::size_t comma = counts.find(',');
      for (std::string_view count : {counts.substr(0, comma), comma == std::string_view::npos ? std::string_view() : counts.substr(comma + 1)})
        if (!count.empty() && std::stol(std::string(count)) > kMaxRegexRepeat)
          return BadRegex("a repetition count may be at most " + std::to_string(kMaxRegexRepeat));
    }
    out_ += text;
    at_ += length;
    if (at_ < p_.size() && p_[at_] == '?') {  // lazy: kept, the match is the same row
      out_.push_back('?');
      ++at_;
    }
    last_ = Last::kRepeated;
    return {};
  }

  // A character escape at at_ (`\n`, `\x41`, `\x{10FFFF}`, `\101`, `\.`), as a character.
  Result<char32_t> CharEscape() {
    if (at_ + 1 >= p_.size()) return BadRegex("trailing \\");
    const char e = p_[at_ + 1];
    switch (e) {
      case 'a': at_ += 2; return char32_t{0x07};
      case 'f': at_ += 2; return char32_t{'\f'};
      case 't': at_ += 2; return char32_t{'\t'};
      case 'n': at_ += 2; return char32_t{'\n'};
      case 'r': at_ += 2; return char32_t{'\r'};
      case 'v': at_ += 2; return char32_t{'\v'};
      case 'x': {
        char32_t c = 0;
        if (at_ + 2 < p_.size() && p_[at_ + 2] == '{') {
          const std::size_t close = p_.find('}', at_ + 3);
          if (close == std::string_view::npos || close == at_ + 3 || close - at_ - 3 > 8) return BadRegex("bad \\x{...} escape");
          for (std::size_t k = at_ + 3; k < close; ++k) {
            if (HexDigit(p_[k]) < 0) return BadRegex("bad \\x{...} escape");
            c = c * 16 + static_cast<char32_t>(HexDigit(p_[k]));
          }
          at_ = close + 1;
        } else {
          if (at_ + 3 >= p_.size() || HexDigit(p_[at_ + 2]) < 0 || HexDigit(p_[at_ + 3]) < 0) return BadRegex("bad \\x escape");
          c = static_cast<char32_t>(HexDigit(p_[at_ + 2]) * 16 + HexDigit(p_[at_ + 3]));
          at_ += 4;
        }
        if (c > kLastCodePoint) return BadRegex("bad \\x escape");
        return c;
      }
      default: break;
    }
    if (IsOctal(e)) {
      // RE2: \1 to \7 alone would be back references; \0, or two or three digits, are octal.
      if (e != '0' && (at_ + 2 >= p_.size() || !IsOctal(p_[at_ + 2]))) return BadRegex("back references are not supported");
      char32_t c = 0;
      std::size_t k = at_ + 1;
      for (int digits = 0; digits < 3 && k < p_.size() && IsOctal(p_[k]); ++digits, ++k) c = c * 8 + static_cast<char32_t>(p_[k] - '0');
      at_ = k;
      return c;
    }
    const auto u = static_cast<unsigned char>(e);
    if (u < 0x80 && !((e >= '0' && e <= '9') || (e >= 'A' && e <= 'Z') || (e >= 'a' && e <= 'z'))) {
      at_ += 2;
      return char32_t{u};  // punctuation stands for itself
    }
    if (e == 'p' || e == 'P') return BadRegex("\\p and \\P (Unicode classes) are not supported");
    if (e == 'C') return BadRegex("\\C (a single byte) is not supported");
    return BadRegex(std::string("the escape \\") + e + " is not supported");
  }

  Status Escape() {
    if (at_ + 1 >= p_.size()) return BadRegex("trailing \\");
    const char e = p_[at_ + 1];
    switch (e) {
      case 'A': Assertion("^", 2); return {};
      case 'z': Assertion("$", 2); return {};
      case 'b': Assertion("\\b", 2); return {};
      case 'B': Assertion("\\B", 2); return {};
      case 'Q': {
        at_ += 2;
        while (at_ < p_.size()) {
          if (p_.substr(at_, 2) == "\\E") {
            at_ += 2;
            break;
          }
          CRMD_ASSIGN(const char32_t c, NextChar());
          CRMD_TRY(Literal(c));
        }
        return {};
      }
      case 'E': at_ += 2; return {};  // an \E that ends no \Q
      default: break;
    }
    if (IsPerlClass(e)) {
      at_ += 2;
      last_ = Last::kAtom;
      return AppendSet(PerlClass(e), out_);
    }
    CRMD_ASSIGN(const char32_t c, CharEscape());
    return Literal(c);
  }

  // `[...]`, `[^...]`: characters, ranges, `\d`-like and `[:name:]` classes.
  Status Class() {
    ++at_;
    const bool negated = at_ < p_.size() && p_[at_] == '^';
    if (negated) ++at_;
    CharSet members;
    for (bool first = true;; first = false) {
      if (at_ >= p_.size()) return BadRegex("missing ]");
      const char c = p_[at_];
      if (c == ']' && !first) {
        ++at_;
        break;
      }
      if (c == '[' && p_.substr(at_, 2) == "[:") {
        if (const std::size_t close = p_.find(":]", at_ + 2); close != std::string_view::npos) {
          std::string_view name = p_.substr(at_ + 2, close - at_ - 2);
          const bool not_in = name.starts_with('^');
          if (not_in) name.remove_prefix(1);
          auto set = PosixClass(name);
          if (!set) return BadRegex("the class [:" + std::string(name) + ":] is not supported");
          members.AddAll(not_in ? set->Complement() : *set);
          at_ = close + 2;
          continue;
        }
      }
      if (c == '\\' && at_ + 1 < p_.size() && IsPerlClass(p_[at_ + 1])) {
        members.AddAll(PerlClass(p_[at_ + 1]));
        at_ += 2;
        continue;
      }
      CRMD_ASSIGN(const char32_t lo, ClassChar());
      if (at_ + 1 < p_.size() && p_[at_] == '-' && p_[at_ + 1] != ']') {
        ++at_;
        CRMD_ASSIGN(const char32_t hi, ClassChar());
        if (hi < lo) return BadRegex("bad character class range");
        members.Add(lo, hi);
      } else {
        members.Add(lo);
      }
    }
    members.Normalize();
    if (flags_.fold) FoldCase(members, kMaxFoldedRange);
    last_ = Last::kAtom;
    return AppendSet(negated ? members.Complement() : members, out_);
  }

  Result<char32_t> ClassChar() {
    if (p_[at_] != '\\') return NextChar();
    if (at_ + 1 < p_.size() && (p_[at_ + 1] == 'Q' || p_[at_ + 1] == 'E')) return BadRegex("\\Q...\\E inside a class is not supported");
    return CharEscape();
  }

  std::string_view p_;
  std::size_t at_ = 0;
  Flags flags_;
  std::vector<Flags> saved_;  // the flags each open group restores at its end
  Last last_ = Last::kNothing;
  std::string out_;
};

}  // namespace

Result<std::string> PortableRegex(std::string_view pattern) { return Rewriter(pattern).Run(); }

}  // namespace crmd::query
