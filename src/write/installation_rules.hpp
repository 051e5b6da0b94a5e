// Parse's installations (issue 36), where the application's `installations` gate is on
// (auth::Gates::installations, docs/PROFILES.md): a client names itself with the installation-id
// header and makes, reads and changes only its own `_Installation` row. The row's ACL names
// `installation:<id>` alone (auth::Identity::Principals), so the read pipeline and the update's
// ACL check decide as for any record; these rules keep the row the installation's own.
#pragma once

#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "auth/identity.hpp"
#include "util/result.hpp"
#include "write/field_changes.hpp"

namespace crmd::write {

// Whether the rules below apply: an `_Installation` write by an installation, not a key.
bool IsInstallationWrite(const auth::Identity& identity, std::string_view class_name);

// A create must carry the caller's own `installationId`; neither a create nor an update sets the
// ACL (119), and an update never changes `installationId` (136, Parse's text).
Status CheckInstallationWrite(const auth::Identity& identity, const boost::json::object& body, WriteKind kind);

// The ACL of the row an installation makes: itself, read and write.
std::string InstallationAcl(std::string_view installation_id);

}  // namespace crmd::write
