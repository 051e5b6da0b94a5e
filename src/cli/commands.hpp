// The admin commands of crmd's command line (README "Command line"; their JSON answers are a
// contract other tooling relies on). Each returns the process's exit code; a fault of the store
// is thrown. The server itself, `crmd serve`, is main.cpp's.
#pragma once

#include <string>

#include "cli/command_line.hpp"

namespace crmd::cli {

// `crmd app ...` (cli/app_commands.cpp)
int CreateApp(const AdminArgs& args);  // -> {"appId","masterKey","apiKey","apiKeyName","gates"}
int SetGates(const AdminArgs& args);   // -> {"appId","gates"}
int SetRegion(const AdminArgs& args);  // -> {"appId","region"}
int WebhookSecret(const AdminArgs& args);  // -> {"appId","webhookSecret"}
int OAuthRotate(const AdminArgs& args);    // -> {"appId","rotated":true}
int ExportApp(const AdminArgs& args);      // -> {"appId","rows","relations","outbox"}
int ImportApp(const AdminArgs& args);      // the same

// `crmd key ...` (cli/key_commands.cpp)
int CreateKey(const AdminArgs& args);  // -> {"apiKey"}
int RevokeKey(const AdminArgs& args);  // -> {"revoked"}
int ListKeys(const AdminArgs& args);   // -> {"appId","keys":[{"name","createdAt","revokedAt"}]}

// `crmd function ...` (cli/function_commands.cpp)
int DeployFunction(const AdminArgs& args);  // -> {"appId","deployed","bytes"}
int ListFunctions(const AdminArgs& args);   // -> {"appId","functions":[...]}
int RemoveFunction(const AdminArgs& args);  // -> {"appId","removed"}

// `crmd files gc` (cli/files_commands.cpp)
int CollectFiles(const AdminArgs& args);  // -> {"appId","removed":[names],"kept"}

}  // namespace crmd::cli
