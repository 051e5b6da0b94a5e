// query/encode: the text fast path (WriteRow) answers exactly what the DOM path (EncodeRow) does,
// also with included records in place of pointers.
#include <gtest/gtest.h>

#include "query/encode.hpp"
#include "util/json.hpp"

namespace crmd::query {
namespace {

using schema::FieldDef;
using schema::FieldType;

TEST(EncodeTest, WriteRowMatchesEncodeRowForEveryType) {
  schema::ClassSchema cls = schema::ClassSchema::NewImplicit("Everything");
  cls.fields.emplace_back("S", FieldDef{FieldType::kString, {}});
  cls.fields.emplace_back("H", FieldDef{FieldType::kHtml, {}});
  cls.fields.emplace_back("I", FieldDef{FieldType::kNumber, {}});
  cls.fields.emplace_back("D", FieldDef{FieldType::kNumber, {}});
  cls.fields.emplace_back("B", FieldDef{FieldType::kBoolean, {}});
  cls.fields.emplace_back("When", FieldDef{FieldType::kDate, {}});
  cls.fields.emplace_back("P", FieldDef{FieldType::kPointer, "Accounts"});
  cls.fields.emplace_back("R", FieldDef{FieldType::kRelation, "Tags"});
  cls.fields.emplace_back("A", FieldDef{FieldType::kArray, {}});
  cls.fields.emplace_back("O", FieldDef{FieldType::kObject, {}});
  cls.fields.emplace_back("F", FieldDef{FieldType::kFile, {}});
  cls.fields.emplace_back("N", FieldDef{FieldType::kString, {}});
  cls.fields.emplace_back("Missing", FieldDef{FieldType::kString, {}});
  cls.fields.emplace_back("_hidden", FieldDef{FieldType::kString, {}});
  // Not an identifier (a stored schema's name is not re-checked on load): written escaped.
  cls.fields.emplace_back("W\u00e9ird \"key\"", FieldDef{FieldType::kString, {}});

  storage::Row row;
  row.object_id = "Ab3dEf6hIj";
  row.created_at = "2026-11-21T10:00:00.000Z";
  row.updated_at = "2026-11-21T10:00:01.000Z";
  row.acl = R"({"*":{"read":true}})";
  row.nulls = {"N"};
  row.cells = {std::monostate{}, std::string("Us3rId0001"), std::string("quote \" and \\ and \n שלום"),
               std::string("<b>x</b>"), std::int64_t{42}, 1.5, std::int64_t{1},
               std::string("2026-11-21T10:00:00.000Z"), std::string("Acc0000001"),
               std::string(R"([1,"a",{"x":null}])"), std::string(R"({"k":[true,false]})"),
               std::string(R"({"__type":"File","name":"a.png","url":"u"})"), std::monostate{},
               std::monostate{}, std::string("secret"), std::string("v")};
  std::string fast;
  WriteRow(cls, row, fast);
  EXPECT_EQ(fast, ToJson(EncodeRow(cls, row)));
  EXPECT_NE(fast.find("\"W\u00e9ird \\\"key\\\"\":\"v\""), std::string::npos) << fast;
  EXPECT_EQ(fast.find("secret"), std::string::npos);
  EXPECT_NE(fast.find(R"("N":null)"), std::string::npos);
  EXPECT_EQ(fast.find("Missing"), std::string::npos);
}

TEST(EncodeTest, IncludedRecordsReplaceTheirPointersAsTheDomPathShowsThem) {
  schema::ClassSchema status = schema::ClassSchema::NewImplicit("LeadStatuses");
  status.fields.emplace_back("Name", FieldDef{FieldType::kString, {}});
  storage::Row target;
  target.object_id = "St4tus0001";
  target.created_at = target.updated_at = "2026-11-21T09:00:00.000Z";
  target.cells = {std::monostate{}, std::monostate{}, std::string("Won")};

  schema::ClassSchema cls = schema::ClassSchema::NewImplicit("Accounts");
  cls.fields.emplace_back("Status", FieldDef{FieldType::kPointer, "LeadStatuses"});
  cls.fields.emplace_back("Other", FieldDef{FieldType::kPointer, "LeadStatuses"});
  storage::Row row;
  row.object_id = "Acc0000001";
  row.created_at = row.updated_at = "2026-11-21T10:00:00.000Z";
  row.cells = {std::monostate{}, std::monostate{}, std::string("St4tus0001"), std::string("St4tus0002")};

  std::string included;
  WriteIncludedRow(status, target, included);
  Expansions expansions;
  expansions["Status"].emplace("St4tus0001", included);
  expansions["Other"].emplace("St4tus0001", included);  // Other points elsewhere: stays a Pointer
  std::vector<PointerSpan> spans;
  std::string written, fast;
  WriteRow(cls, row, {"Status", "Other"}, spans, written);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(written.substr(spans[0].begin, spans[0].end - spans[0].begin),
            R"({"__type":"Pointer","className":"LeadStatuses","objectId":"St4tus0001"})");
  SpliceIncluded(written, spans, expansions, fast);

  auto expected = EncodeRow(cls, row);
  boost::json::object record{{"__type", "Object"}, {"className", "LeadStatuses"}};
  for (auto& kv : EncodeRow(status, target)) record[kv.key()] = kv.value();
  expected["Status"] = record;
  EXPECT_EQ(fast, ToJson(expected));
  EXPECT_NE(fast.find(R"("Other":{"__type":"Pointer","className":"LeadStatuses","objectId":"St4tus0002"})"),
            std::string::npos);
}

}  // namespace
}  // namespace crmd::query
