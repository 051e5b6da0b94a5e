// Unstructured header text (a Subject) as RFC 5322 and RFC 2047 want it: one logical line, ASCII
// on the wire. Text that is plain ASCII stays as it is; text with other characters, or with `=?`
// (which readers would take for an encoded word), or longer than kMaxPlainHeaderText, becomes
// UTF-8 "B" encoded words of at most 75 characters, folded onto continuation lines, so every line
// stays short and a reader shows exactly the text given.
//
// Not an error: control characters (CR and LF among them) are not refused but become spaces:
// a header never gains a line, so no value can add a header of its own.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace crmd::mail {

// Plain text longer than this is encoded (and so folded): RFC 5322 §2.1.1 limits a line to 998
// characters, and the header's name comes before the text.
inline constexpr std::size_t kMaxPlainHeaderText = 900;

// The value to write after `Name: ` (no CRLF at its end). `text` is UTF-8.
std::string HeaderText(std::string_view text);

}  // namespace crmd::mail
