#include "pg_cluster.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace crmd::test {

namespace {

constexpr const char* kBin = "/usr/lib/postgresql/15/bin/";

// Runs `command` (as the postgres user when we are root), its output into `log`; throws with the
// log's text when it fails.
void Run(const std::string& command, const std::string& log) {
  const std::string as = ::geteuid() == 0 ? "runuser -u postgres -- " : "";
  const std::string line = as + command + " >" + log + " 2>&1";
  if (std::system(line.c_str()) != 0) {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    throw std::runtime_error("`" + command + "` failed: " + text.str());
  }
}

}  // namespace

PgCluster::PgCluster() {
  std::string pattern = (std::filesystem::temp_directory_path() / "crmd-pg-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  dir_ = pattern;
  if (::geteuid() == 0 && std::system(("chown postgres: " + dir_).c_str()) != 0)
    throw std::runtime_error("cannot give " + dir_ + " to the postgres user");
  const std::string log = dir_ + "/tools.log";
  Run(std::string(kBin) + "initdb -D " + dir_ + "/data -U postgres -A trust --no-sync -E UTF8 --locale=C", log);
  // No TCP: the socket lives in the directory, so clusters of parallel tests never collide.
  Run(std::string(kBin) + "pg_ctl start -w -t 60 -D " + dir_ + "/data -l " + dir_ + "/server.log -o \"-k " + dir_ +
          " -c listen_addresses='' -c fsync=off -c max_connections=50\"",
      log);
  conninfo_ = "host=" + dir_ + " port=5432 user=postgres dbname=postgres";
}

PgCluster::PgCluster(std::string dir) : dir_(std::move(dir)), owned_(false) {
  conninfo_ = "host=" + dir_ + " port=5432 user=postgres dbname=postgres";
}

std::string PgCluster::NewDatabase() {
  const std::string name = "db" + std::to_string(::getpid()) + "_" + std::to_string(++databases_);
  Run(std::string(kBin) + "createdb -h " + dir_ + " -U postgres " + name, dir_ + "/tools.log");
  return "postgresql://postgres@/" + name + "?host=" + dir_;
}

PgCluster::~PgCluster() {
  if (!owned_) return;
  const std::string as = ::geteuid() == 0 ? "runuser -u postgres -- " : "";
  (void)std::system((as + kBin + "pg_ctl stop -w -t 30 -m immediate -D " + dir_ + "/data >/dev/null 2>&1").c_str());
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

}  // namespace crmd::test
