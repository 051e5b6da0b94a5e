// The CRM shortcuts (spec §4.10): what an assistant is asked for most, each one request or a few
// of the record API as the caller.
#include <string>

#include "mcp/args.hpp"
#include "mcp/tool.hpp"
#include "util/strings.hpp"
#include "util/time.hpp"

namespace crmd::mcp {

namespace json = boost::json;

namespace {

// One part of a summary: the rows, or why they could not be read (the rest is still shown).
json::value Part(const ToolCall& call, const std::string& target) {
  auto [status, body] = call.Send("GET", target);
  if (status >= 400 || !body.is_object()) return json::object{{"error", Answered({status, body}).text}};
  return body.get_object()["results"];
}

json::object AccountPointer(const json::object& args) { return PointerTo("Accounts", args.at("accountId").get_string()); }

ToolResult AccountSummary(const ToolCall& call, const json::object& args) {
  const std::string id(args.at("accountId").get_string());
  auto account = call.Send("GET", ClassPath("Accounts", id));
  if (account.first >= 400) return Answered(account);
  const json::object of_account{{"AccountId", AccountPointer(args)}};
  json::object open_tasks = of_account;
  open_tasks["Done"] = json::object{{"$ne", true}};
  return Json(json::object{
      {"account", std::move(account.second)},
      {"contacts", Part(call, "/classes/Contacts?limit=20&keys=Name,Email,PhoneNumber,MobilePhone,JobTitle" + WhereParam(of_account))},
      {"openTasks", Part(call, "/classes/Tasks?limit=20&order=Date&keys=Name,Date,OwnerId,Priority" + WhereParam(open_tasks))},
      {"sales", Part(call, "/classes/Sales?limit=20&order=-createdAt&keys=Name,Total,StageId,SaleStatusId,ClosingDate" + WhereParam(of_account))},
      {"recentHistory", Part(call, "/classes/_Timeline?limit=10&order=-createdAt&keys=event,data,user,createdAt" +
                                       WhereParam(json::object{{"objectClass", "Accounts"}, {"objectIdValue", id}}))}});
}

ToolResult Create(const ToolCall& call, std::string_view table, json::object row) {
  const json::value body = std::move(row);
  return Answered(call.Send("POST", ClassPath(table), &body));
}

// Sets the Pointer fields `args` names (accountId → AccountId of Accounts, ...).
void Link(const json::object& args, json::object& row) {
  static constexpr std::pair<const char*, std::pair<const char*, const char*>> kLinks[] = {
      {"accountId", {"AccountId", "Accounts"}}, {"contactId", {"ContactId", "Contacts"}}, {"saleId", {"SaleId", "Sales"}},
      {"caseId", {"CaseId", "Cases"}},          {"ownerId", {"OwnerId", "_User"}}};
  for (const auto& [arg, field] : kLinks)
    if (const auto* id = args.if_contains(arg)) row[field.first] = PointerTo(field.second, id->get_string());
}

ToolResult LogCall(const ToolCall& call, const json::object& args) {
  json::object row{{"time", DateValue(args.contains("time") ? std::string(args.at("time").get_string()) : timeutil::NowIso())},
                   {"AccountId", AccountPointer(args)}};
  for (const char* field : {"caller", "called", "type", "status"})
    if (const auto* v = args.if_contains(field)) row[field] = *v;
  if (const auto* v = args.if_contains("durationSeconds")) row["duration"] = *v;
  if (const auto* v = args.if_contains("summary")) row["status"] = *v;
  return Create(call, "CallRecords", std::move(row));
}

ToolResult AddNote(const ToolCall& call, const json::object& args) {
  json::object row{{"Name", args.at("title")}, {"Content", args.at("content")}};
  Link(args, row);
  return Create(call, "Notes", std::move(row));
}

ToolResult FollowUpTask(const ToolCall& call, const json::object& args) {
  json::object row{{"Name", args.at("name")}, {"Date", DateValue(args.at("dueDate").get_string())}, {"Done", false}};
  if (const auto* d = args.if_contains("description")) row["Description"] = *d;
  Link(args, row);
  return Create(call, "Tasks", std::move(row));
}

ToolResult OpenTasks(const ToolCall& call, const json::object& args) {
  json::object where{{"Done", json::object{{"$ne", true}}}};
  Link(args, where);
  return call.Relay("/classes/Tasks?order=Date&limit=" + std::to_string(LimitOf(args, 20)) + WhereParam(where));
}

ToolResult CompleteTask(const ToolCall& call, const json::object& args) {
  const json::value body = json::object{{"Done", true}, {"DoneAt", DateValue(timeutil::NowIso())}};
  return Answered(call.Send("PUT", ClassPath("Tasks", args.at("taskId").get_string()), &body));
}

ToolResult FindContact(const ToolCall& call, const json::object& args) {
  std::string pattern;
  for (char c : args.at("text").get_string()) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) pattern.push_back('\\');
    pattern.push_back(c);
  }
  json::array any;
  for (const char* field : {"Name", "Email", "PhoneNumber", "MobilePhone"})
    any.push_back(json::object{{field, json::object{{"$regex", pattern}, {"$options", "i"}}}});
  return call.Relay("/classes/Contacts?limit=" + std::to_string(LimitOf(args, 20)) +
                                       "&keys=Name,Email,PhoneNumber,MobilePhone,JobTitle,AccountId" +
                                       WhereParam(json::object{{"$or", std::move(any)}}));
}

ToolResult AccountContacts(const ToolCall& call, const json::object& args) {
  return call.Relay("/classes/Contacts?limit=" + std::to_string(LimitOf(args, 100)) +
                                       WhereParam(json::object{{"AccountId", AccountPointer(args)}}));
}

ToolResult PipelineSummary(const ToolCall& call, const json::object& args) {
  json::array pipeline;
  if (const auto* id = args.if_contains("pipelineId"))
    pipeline.push_back(json::object{{"$match", json::object{{"PipelineId", PointerTo("Pipelines", id->get_string())}}}});
  pipeline.push_back(json::object{{"$group", json::object{{"_id", "$StageId"}, {"deals", json::object{{"$sum", 1}}},
                                                          {"total", json::object{{"$sum", "$Total"}}}}}});
  return call.Relay("/classes-aggregate/Sales?pipeline=" + PercentEncode(json::serialize(pipeline)));
}

ToolResult LogEmail(const ToolCall& call, const json::object& args) {
  json::object row{{"Subject", args.at("subject")}, {"Body", args.at("body")}, {"SendAt", DateValue(timeutil::NowIso())}};
  if (const auto* v = args.if_contains("to")) row["MailTo"] = *v;
  if (const auto* v = args.if_contains("from")) row["MailFrom"] = *v;
  if (const auto* v = args.if_contains("direction")) row["Direction"] = *v;
  Link(args, row);
  return Create(call, "Emails", std::move(row));
}

ToolResult AccountEmails(const ToolCall& call, const json::object& args) {
  return call.Relay("/classes/Emails?order=-createdAt&keys=Subject,MailFrom,MailTo,Direction,SendAt,SendStatus&limit=" +
                                       std::to_string(LimitOf(args, 20)) + WhereParam(json::object{{"AccountId", AccountPointer(args)}}));
}

}  // namespace

void AddCrmTools(std::vector<Tool>& tools) {
  using namespace args;
  const auto account = Id("The account's objectId.");
  const auto limit = Int("Rows to return (default 20).", 1, 1000);
  tools.push_back(Tool{"Get-Account-Summary", "Summarise an account",
                       "One account with what an assistant needs to talk about it: its fields, its contacts, its open "
                       "tasks, its deals and its last 10 changes. A part the user may not read says so instead.",
                       Params({{"accountId", account}}, {"accountId"}), Switch::kView, true, AccountSummary});
  tools.push_back(Tool{"Get-Account-Contacts", "An account's contacts", "Lists the contacts (people) of one account: name, email, phone numbers, job title. Use Get-Account-Summary for the whole picture.",
                       Params({{"accountId", account}, {"limit", limit}}, {"accountId"}), Switch::kView, true, AccountContacts});
  tools.push_back(Tool{"Find-Contact", "Find a contact",
                       "Finds contacts whose name, email or phone numbers contain `text` (case-insensitive).",
                       Params({{"text", Str("A name, email or phone fragment.", 256)}, {"limit", limit}}, {"text"}),
                       Switch::kView, true, FindContact});
  tools.push_back(Tool{"Log-Call", "Log a call",
                       "Records a phone call with an account in CallRecords: when (`time`, ISO 8601; now by default), "
                       "the numbers, the direction as `type` (e.g. incoming, outgoing), `durationSeconds` and a short "
                       "`summary`.",
                       Params({{"accountId", account}, {"time", Str("When, ISO 8601.", 64)}, {"caller", Str("Calling number.", 64)},
                               {"called", Str("Called number.", 64)}, {"type", Str("Direction: incoming or outgoing.", 64)},
                               {"durationSeconds", Int("Length in seconds.", 0, 86400)}, {"summary", Str("What was said.", 2000)}},
                              {"accountId"}),
                       Switch::kCreate, false, LogCall});
  tools.push_back(Tool{"Add-Note", "Add a note",
                       "Adds a note (Notes: a title and HTML or plain-text content) to an account, contact, deal or case.",
                       Params({{"title", Str("The note's title.", 256)}, {"content", Str("The note.", 20000)}, {"accountId", account},
                               {"contactId", Id("A contact's objectId.")}, {"saleId", Id("A deal's objectId.")}, {"caseId", Id("A case's objectId.")}},
                              {"title", "content"}),
                       Switch::kCreate, false, AddNote});
  tools.push_back(Tool{"Create-Follow-Up-Task", "Create a follow-up task",
                       "Creates an open task due at `dueDate` (ISO 8601), optionally for an account or contact and "
                       "assigned to a user (`ownerId`).",
                       Params({{"name", Str("What to do.", 256)}, {"dueDate", Str("When, ISO 8601.", 64)},
                               {"description", Str("Details.", 4000)}, {"accountId", account},
                               {"contactId", Id("A contact's objectId.")}, {"ownerId", Id("The assignee's user objectId.")}},
                              {"name", "dueDate"}),
                       Switch::kCreate, false, FollowUpTask});
  tools.push_back(Tool{"Get-Open-Tasks", "Open tasks",
                       "Lists tasks not done, soonest first, of an account, a contact or an owner (all when none is given).",
                       Params({{"accountId", account}, {"contactId", Id("A contact's objectId.")}, {"ownerId", Id("A user's objectId.")},
                               {"limit", limit}}),
                       Switch::kView, true, OpenTasks});
  tools.push_back(Tool{"Complete-Task", "Complete a task", "Marks a task done now (Done true, DoneAt the current time); it then leaves Get-Open-Tasks.",
                       Params({{"taskId", Id("The task's objectId.")}}, {"taskId"}), Switch::kUpdate, false, CompleteTask});
  tools.push_back(Tool{"Get-Pipeline-Summary", "Summarise the pipeline",
                       "Counts deals (Sales) and sums their Total per pipeline stage, of one pipeline or all.",
                       Params({{"pipelineId", Id("A pipeline's objectId.")}}), Switch::kView, true, PipelineSummary});
  tools.push_back(Tool{"Log-Email", "Log an email",
                       "Records an email exchanged with a customer in Emails (nothing is sent): subject, body, addresses, "
                       "direction, and the account or contact it belongs to.",
                       Params({{"subject", Str("Subject.", 998)}, {"body", Str("Body, HTML or text.", 100000)}, {"to", Str("To.", 998)},
                               {"from", Str("From.", 998)}, {"direction", Str("incoming or outgoing.", 32)}, {"accountId", account},
                               {"contactId", Id("A contact's objectId.")}},
                              {"subject", "body"}),
                       Switch::kCreate, false, LogEmail});
  tools.push_back(Tool{"Get-Account-Emails", "An account's emails", "Lists the emails logged for an account (Emails: subject, addresses, direction, when), newest first.",
                       Params({{"accountId", account}, {"limit", limit}}, {"accountId"}), Switch::kView, true, AccountEmails});
}

}  // namespace crmd::mcp
