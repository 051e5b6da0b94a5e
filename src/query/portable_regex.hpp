// `$regex` patterns that the two stores run alike (issue 31 #15). SQLite runs RE2; PostgreSQL its
// own engine (ARE), whose syntax and meaning differ from RE2's in many corners: `.` matches a line
// break there, `\b` is a backspace, `\w` and `[[:alpha:]]` follow the database's locale, case
// folding too, a repetition counts to 255, and `\p{..}`, `\C`, `(?U)` or `(?i:..)` do not exist.
// So a pattern RE2 accepted is rewritten here into a small portable form that means one thing in
// both, or refused with 400 102 `bad $regex: <why>`, whatever the store: the answer never depends
// on it.
//
// The portable form (RE2 syntax that SQLite runs as it is; storage/postgres spells it in ARE token
// by token, the lines marked * differently):
//
//   pattern     := "(?s)" alternation                       `.` is any character
//   alternation := sequence ("|" sequence)*
//   sequence    := (atom quantifier? | assertion)*
//   atom        := char | class | "." | "(" alternation ")" | "(?:" alternation ")"
//   class       := "[" "^"? (char | char "-" char)+ "]"     code points; never NUL or a surrogate
//   char        := a character, but NUL; one of \ . + * ? ( ) | [ ] { } ^ $ (in a class \ ] [ ^ -)
//                  escaped by \; \n \t \r \f \v for those controls, "\x{" 2 hex "}" for the
//                  other controls and DEL                                     *
//   assertion   := "^" | "$"                                 start and end of the text
//                | "(?m:^)" | "(?m:$)"                     * start and end of a line
//                | "\b" | "\B"                             * an ASCII word boundary ([0-9A-Za-z_]), or none
//   quantifier  := ("*" | "+" | "?" | "{n}" | "{n,}" | "{n,m}") "?"?     n, m <= kMaxRegexRepeat
//
// What the rewriting decides (docs/COMPATIBILITY.md §4.3):
// - `.` without the s flag is `[^\n]`; `^` and `$` under the m flag are the line forms; `\A` and
//   `\z` are `^` and `$`; named groups are plain ones; `\Q...\E`, hex and octal escapes are
//   characters; `\d`, `\s`, `\w` and the POSIX classes are their ASCII sets, as in RE2.
// - Case-insensitive matching (i) is spelled out: each letter of the pattern, and each class range
//   of at most kMaxFoldedRange characters, gets its other cases (ASCII, and beyond it the simple
//   case mapping of the C.UTF-8 locale); the `\w`-like classes and wider ranges stay as written.
// - Greediness (`*?`, the U flag) is kept or dropped: it changes which text a match covers, never
//   whether a row matches.
// - Refused: `\p{..}` and `\P{..}` (Unicode classes), `\C` (a byte), a repetition count above
//   kMaxRegexRepeat, a repeated anchor or word boundary, a class that matches no character.
//
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "util/result.hpp"

namespace crmd::query {

// PostgreSQL's largest repetition count (RE_DUP_MAX); RE2 allows 1,000.
inline constexpr int kMaxRegexRepeat = 255;
// Class ranges wider than this keep their characters' case under the i flag: folding enumerates
// each character, and one alphabet is shorter.
inline constexpr std::size_t kMaxFoldedRange = 256;

// `pattern` (one RE2 accepted, the $options already folded in) in the portable form; 400 102
// `bad $regex: ...` for a construct the stores cannot share.
Result<std::string> PortableRegex(std::string_view pattern);

}  // namespace crmd::query
