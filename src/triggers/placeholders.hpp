// `{{Field}}` in an action's strings (docs/TRIGGERS.md): the triggering record's value of Field.
// A Pointer gives its objectId, a Date its ISO time, a string itself, a number or boolean its JSON
// text; a field the record lacks, or null, the empty string. `{{` not followed by a field name
// and `}}` is kept as written.
//
// The author's text is kept as written; the values put into it come from records anyone may have
// written (a web form's lead), so each is escaped for where the text goes (issue 31 #11).
#pragma once

#include <boost/json.hpp>
#include <string>
#include <string_view>

namespace crmd::triggers {

enum class Escape {
  kNone,    // data the write pipeline checks again (record actions, notifications)
  kHtml,    // HTML text or a quoted attribute: & < > " ' as character references
  kHeader,  // one line of a mail or HTTP header: line breaks and other controls become spaces
};

std::string Fill(std::string_view text, const boost::json::object& record, Escape escape = Escape::kNone);
// Every string inside `value` (keys stay as they are), filled.
boost::json::value FillAll(const boost::json::value& value, const boost::json::object& record);

}  // namespace crmd::triggers
