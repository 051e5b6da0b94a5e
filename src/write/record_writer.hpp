// The write pipeline (DESIGN.md "A write, end to end") for single records: create, update,
// delete. Every path that writes records (REST, batch items, functions, triggers, MCP) calls
// these, so checks happen in one place.
//
// Each call is one write unit (app/write_unit.hpp): the row, any new class or columns, its
// `_Timeline` row and the trigger activations it fires (triggers/fire.hpp) commit together or not
// at all; the activations' actions run after that commit.
#pragma once

#include <boost/json.hpp>
#include <optional>
#include <string_view>

#include "auth/authorize.hpp"
#include "auth/context.hpp"
#include "schema/class_schema.hpp"
#include "util/result.hpp"

namespace crmd::write {

// What a write of `op` (create, update, delete) to `class_name` answers when its caller and path
// alone decide it, before its body is read (the HTTP server asks, so that a body nobody will read
// is not received): a protected log row, an anonymous write (the CAPTCHA gate), a refused
// credential. nullopt when the body may matter. The write functions below ask it first too.
std::optional<ApiError> RefuseBeforeBody(const auth::Identity& identity, auth::Operation op,
                                         std::string_view class_name, const schema::Snapshot& snapshot);

// 201 body `{objectId, createdAt}`. With `session_token` (sign-up), a session for the new record
// (a `_User`) is created in the same transaction and its token written there.
Result<boost::json::object> CreateRecord(auth::Context& ctx, std::string_view class_name,
                                         const boost::json::object& body,
                                         std::string* session_token = nullptr);

// 200 body `{updatedAt, objectId, ...results of Increment/Add/AddUnique/Remove}`.
Result<boost::json::object> UpdateRecord(auth::Context& ctx, std::string_view class_name,
                                         std::string_view object_id, const boost::json::object& body);

// 200 body `{}`. 119 when another record points at it (spec §3.4).
Result<boost::json::object> DeleteRecord(auth::Context& ctx, std::string_view class_name,
                                         std::string_view object_id);

}  // namespace crmd::write
