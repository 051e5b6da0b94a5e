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
int ExportApp(const AdminArgs& args);      // -> {"appId","rows","relations","outbox","files","filesBytes"}
int ImportApp(const AdminArgs& args);      // the same, and {"files","filesBytes"}

// `crmd app list|stats|rename|delete` (cli/app_lifecycle_commands.cpp)
int ListApps(const AdminArgs& args);   // -> {"apps":[{"appId","name","createdAt","storeBytes","files","filesBytes","lastRequest"}]}
int AppStats(const AdminArgs& args);   // -> the same of one, and {"classes":{name: rows},"requests","apiKeys","functions"}
int RenameApp(const AdminArgs& args);  // -> {"appId","name"}
int DeleteApp(const AdminArgs& args);  // -> {"appId","deleted":true}

// `crmd backup|restore`, `crmd backup verify` (cli/backup_commands.cpp); `file` is --out or --in
int Backup(const AdminArgs& args);        // -> {"out","apps","files","filesBytes","seconds"}
int VerifyBackup(const AdminArgs& args);  // -> {"in","ok":true,"apps","createdAt","crmd"}
int Restore(const AdminArgs& args);       // -> {"data","apps","createdAt"}

// `crmd key ...` (cli/key_commands.cpp)
int CreateKey(const AdminArgs& args);  // -> {"apiKey"}
int RevokeKey(const AdminArgs& args);  // -> {"revoked"}
int ListKeys(const AdminArgs& args);   // -> {"appId","keys":[{"name","createdAt","revokedAt"}]}
int RotateMasterKey(const AdminArgs& args);  // -> {"appId","masterKey"}

// `crmd function ...` (cli/function_commands.cpp)
int DeployFunction(const AdminArgs& args);  // -> {"appId","deployed","bytes"}
int ListFunctions(const AdminArgs& args);   // -> {"appId","functions":[...]}
int RemoveFunction(const AdminArgs& args);  // -> {"appId","removed"}

// `crmd files gc` (cli/files_commands.cpp)
int CollectFiles(const AdminArgs& args);  // -> {"appId","removed":[names],"kept"}

}  // namespace crmd::cli
