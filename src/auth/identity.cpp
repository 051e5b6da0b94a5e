#include "auth/identity.hpp"

#include <cctype>

#include "util/ids.hpp"

namespace crmd::auth {

std::vector<std::string> Identity::Principals() const {
  std::vector<std::string> out{"*"};
  if (!installation_id.empty()) out.push_back("installation:" + installation_id);
  if (principal != Principal::kUser) return out;
  out.push_back(user_id);
  for (const auto& role : roles) out.push_back("role:" + role);
  return out;
}

bool IsInstallationId(std::string_view id) {
  if (id.empty() || id.size() > kMaxInstallationIdLength) return false;
  for (char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
  return true;
}

Identity ResolveKeys(const AppCredentials& app, std::optional<std::string_view> master_key,
                     std::optional<std::string_view> api_key) {
  Identity id;
  id.gates = app.gates;
  if (!master_key && !api_key) return id;
  id.principal = Principal::kRejected;
  if (master_key) {
    if (api_key) return id;  // two keys at once is not a credential we issue
    if (ids::ConstantTimeEquals(ids::HashSecret(*master_key), app.master_key_hash))
      id.principal = Principal::kMaster;
    return id;
  }
  const std::string hash = ids::HashSecret(*api_key);
  for (const auto& key : app.api_keys) {
    if (ids::ConstantTimeEquals(hash, key.hash)) {
      id.principal = Principal::kApiKey;
      id.key_name = key.name;
      return id;
    }
  }
  return id;
}

}  // namespace crmd::auth
