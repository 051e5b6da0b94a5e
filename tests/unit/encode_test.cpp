// query/encode: the text fast path (WriteRow) answers exactly what the DOM path (EncodeRow) does.
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
               std::monostate{}, std::string("secret")};
  std::string fast;
  WriteRow(cls, row, fast);
  EXPECT_EQ(fast, ToJson(EncodeRow(cls, row)));
  EXPECT_EQ(fast.find("secret"), std::string::npos);
  EXPECT_NE(fast.find(R"("N":null)"), std::string::npos);
  EXPECT_EQ(fast.find("Missing"), std::string::npos);
}

}  // namespace
}  // namespace crmd::query
