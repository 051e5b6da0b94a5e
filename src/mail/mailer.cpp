#include "mail/mailer.hpp"

#include <ctime>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "util/ids.hpp"
#include "util/time.hpp"

namespace crmd::mail {

namespace {
// Header values may not carry line breaks (header injection).
std::string HeaderSafe(std::string value) {
  for (auto& c : value)
    if (c == '\r' || c == '\n') c = ' ';
  return value;
}
}  // namespace

namespace {
// RFC 5322 date: `Sat, 21 Nov 2026 21:26:38 +0000`.
std::string MailDate() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S +0000", &tm);
  return buf;
}
}  // namespace

void OutboxMailer::Send(const Mail& mail) {
  std::filesystem::create_directories(dir_);
  const std::string name = timeutil::NowIso() + "-" + ids::RandomAlnum(8) + ".eml";
  const auto tmp = std::filesystem::path(dir_) / ("." + name + ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary);
    out << "From: crmd <no-reply@crmd.invalid>\r\n"
        << "To: " << HeaderSafe(mail.to) << "\r\n"
        << "Subject: " << HeaderSafe(mail.subject) << "\r\n"
        << "Date: " << MailDate() << "\r\n"
        << "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"
        << mail.text << "\r\n";
    if (!out) throw std::runtime_error("outbox: cannot write " + tmp.string());
  }
  std::filesystem::rename(tmp, std::filesystem::path(dir_) / name);
}

}  // namespace crmd::mail
