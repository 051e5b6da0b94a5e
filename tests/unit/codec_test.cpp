// schema/codec: the wire formats and type rules of spec §2.2.
#include <gtest/gtest.h>

#include "schema/codec.hpp"
#include "util/json.hpp"

namespace crmd::schema {
namespace {

namespace json = boost::json;

json::value J(const char* text) { return ParseJson(text).value(); }

TEST(CodecTest, NumberWrittenToStringFieldIsStoredAsText) {
  FieldDef def{FieldType::kString, {}};
  auto cell = EncodeValue(J("42"), def, "Accounts", "Name");
  ASSERT_TRUE(cell.ok());
  EXPECT_EQ(std::get<std::string>(cell.value()), "42");
  EXPECT_EQ(std::get<std::string>(EncodeValue(J("1.5"), def, "A", "f").value()), "1.5");
}

TEST(CodecTest, MismatchMessageNamesTableFieldAndBothTypes) {
  FieldDef date{FieldType::kDate, {}};
  auto r = EncodeValue(J("\"2026-01-01\""), date, "Tasks", "Date");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, 111);
  EXPECT_EQ(r.error().message, "schema mismatch for Tasks.Date; expected Date but got String");

  FieldDef ptr{FieldType::kPointer, "LeadStatuses"};
  auto p = EncodeValue(J("\"abcdefghij\""), ptr, "Accounts", "LeadStatusId");
  EXPECT_EQ(p.error().message,
            "schema mismatch for Accounts.LeadStatusId; expected Pointer<LeadStatuses> but got String");
  auto other = EncodeValue(J(R"({"__type":"Pointer","className":"Other","objectId":"abcdefghij"})"),
                           ptr, "Accounts", "LeadStatusId");
  EXPECT_EQ(other.error().message,
            "schema mismatch for Accounts.LeadStatusId; expected Pointer<LeadStatuses> but got "
            "Pointer<Other>");
}

TEST(CodecTest, DateIsStoredCanonicalAndDecodedAsDateObject) {
  FieldDef date{FieldType::kDate, {}};
  auto cell = EncodeValue(J(R"({"__type":"Date","iso":"2026-11-21T12:00:00+02:00"})"), date, "T", "d");
  ASSERT_TRUE(cell.ok());
  EXPECT_EQ(std::get<std::string>(cell.value()), "2026-11-21T10:00:00.000Z");
  EXPECT_EQ(ToJson(DecodeCell(cell.value(), date)),
            R"({"__type":"Date","iso":"2026-11-21T10:00:00.000Z"})");
}

TEST(CodecTest, PointerRoundTripsThroughItsId) {
  FieldDef ptr{FieldType::kPointer, "Accounts"};
  auto cell = EncodeValue(J(R"({"__type":"Pointer","className":"Accounts","objectId":"Ab3dEf6hIj"})"),
                          ptr, "Tasks", "AccountId");
  ASSERT_TRUE(cell.ok());
  EXPECT_EQ(std::get<std::string>(cell.value()), "Ab3dEf6hIj");
  EXPECT_EQ(ToJson(DecodeCell(cell.value(), ptr)),
            R"({"__type":"Pointer","className":"Accounts","objectId":"Ab3dEf6hIj"})");
}

TEST(CodecTest, PointerIdThatCouldPoseAsPrincipalIsRefused) {
  FieldDef ptr{FieldType::kPointer, "_User"};
  auto r = EncodeValue(J(R"({"__type":"Pointer","className":"_User","objectId":"role:Admin"})"), ptr,
                       "T", "owner");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, 111);  // spec §2.2: a malformed Pointer in a write is a type mismatch
}

TEST(CodecTest, InfersTypesOfFirstWrites) {
  EXPECT_EQ(InferFieldType(J("\"x\""), "T", "f").value()->type, FieldType::kString);
  EXPECT_EQ(InferFieldType(J("1"), "T", "f").value()->type, FieldType::kNumber);
  EXPECT_EQ(InferFieldType(J("true"), "T", "f").value()->type, FieldType::kBoolean);
  EXPECT_EQ(InferFieldType(J("[]"), "T", "f").value()->type, FieldType::kArray);
  EXPECT_EQ(InferFieldType(J("{}"), "T", "f").value()->type, FieldType::kObject);
  EXPECT_EQ(InferFieldType(J(R"({"__type":"Date","iso":"2026-01-01"})"), "T", "f").value()->type,
            FieldType::kDate);
  auto ptr = InferFieldType(J(R"({"__type":"Pointer","className":"A","objectId":"x"})"), "T", "f");
  EXPECT_EQ(ptr.value()->target_class, "A");
  EXPECT_FALSE(InferFieldType(J("null"), "T", "f").value().has_value());
  EXPECT_FALSE(InferFieldType(J(R"({"__type":"Bogus"})"), "T", "f").ok());
}

TEST(CodecTest, NestedOperatorAndDottedKeysAreRefused) {
  FieldDef obj{FieldType::kObject, {}};
  for (const char* bad : {R"({"$where":"1"})", R"({"a":{"b.c":1}})", R"({"a":[{"$gt":1}]})"}) {
    auto r = EncodeValue(J(bad), obj, "T", "f");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, 121) << bad;
    EXPECT_EQ(r.error().message, "Nested keys should not contain the '$' or '.' characters");
  }
  EXPECT_TRUE(EncodeValue(J(R"({"a":{"b":[1,{"c":null}]}})"), obj, "T", "f").ok());
}

TEST(CodecTest, BooleanIsStoredAsIntegerAndDecodedAsBool) {
  FieldDef b{FieldType::kBoolean, {}};
  auto cell = EncodeValue(J("true"), b, "T", "f");
  EXPECT_EQ(std::get<std::int64_t>(cell.value()), 1);
  EXPECT_EQ(DecodeCell(cell.value(), b), json::value(true));
  EXPECT_FALSE(EncodeValue(J("1"), b, "T", "f").ok());
}

}  // namespace
}  // namespace crmd::schema
