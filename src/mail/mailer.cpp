#include "mail/mailer.hpp"

#include <fmt/format.h>

#include <condition_variable>
#include <ctime>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "mail/header_text.hpp"
#include "metrics/metrics.hpp"
#include "util/curl_library.hpp"
#include "util/ids.hpp"
#include "util/log.hpp"
#include "util/time.hpp"

namespace crmd::mail {

namespace {

// Header values may not carry line breaks (header injection).
std::string HeaderSafe(std::string value) {
  for (auto& c : value)
    if (c == '\r' || c == '\n') c = ' ';
  return value;
}

// RFC 5322 date: `Sat, 21 Nov 2026 21:26:38 +0000`.
std::string MailDate() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S +0000", &tm);
  return buf;
}

struct Payload {
  const std::string* text;
  std::size_t offset = 0;
};

std::size_t ReadPayload(char* buffer, std::size_t size, std::size_t count, void* user) {
  auto* p = static_cast<Payload*>(user);
  const std::size_t n = std::min(size * count, p->text->size() - p->offset);
  std::copy_n(p->text->data() + p->offset, n, buffer);
  p->offset += n;
  return n;
}

// Delivers one mail by SMTP; false, with curl's message in `error`, on failure.
bool DeliverSmtp(const std::string& url, const std::string& from, const Mail& mail, std::string& error) {
  std::string problem;
  const CurlLibrary* lib = Curl(problem);
  CURL* curl = lib ? lib->easy_init() : nullptr;
  if (!curl) {
    metrics::CountMail(metrics::MailVia::kSmtp, metrics::MailResult::kFailed);
    error = lib ? "curl could not start" : "curl could not start: " + problem;
    return false;
  }
  const std::string message = FormatMessage(mail, from);
  Payload payload{&message};
  const std::string recipient = fmt::format("<{}>", HeaderSafe(mail.to)),
                    sender = fmt::format("<{}>", HeaderSafe(SenderAddress(mail, from)));
  curl_slist* rcpt = lib->slist_append(nullptr, recipient.c_str());
  lib->easy_setopt(curl, CURLOPT_URL, url.c_str());
  lib->easy_setopt(curl, CURLOPT_MAIL_FROM, sender.c_str());
  lib->easy_setopt(curl, CURLOPT_MAIL_RCPT, rcpt);
  lib->easy_setopt(curl, CURLOPT_READFUNCTION, ReadPayload);
  lib->easy_setopt(curl, CURLOPT_READDATA, &payload);
  lib->easy_setopt(curl, CURLOPT_UPLOAD, 1L);
  lib->easy_setopt(curl, CURLOPT_TIMEOUT, SmtpMailer::kSmtpTimeoutSeconds);
  lib->easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  lib->easy_setopt(curl, CURLOPT_USE_SSL, static_cast<long>(CURLUSESSL_TRY));
  char message_error[CURL_ERROR_SIZE] = "";
  lib->easy_setopt(curl, CURLOPT_ERRORBUFFER, message_error);
  const CURLcode rc = lib->easy_perform(curl);
  lib->slist_free_all(rcpt);
  lib->easy_cleanup(curl);
  if (rc != CURLE_OK) error = message_error[0] ? message_error : lib->easy_strerror(rc);
  metrics::CountMail(metrics::MailVia::kSmtp, rc == CURLE_OK ? metrics::MailResult::kSent : metrics::MailResult::kFailed);
  return rc == CURLE_OK;
}

}  // namespace

std::string SenderAddress(const Mail& mail, const std::string& from) {
  if (!mail.from_address.empty()) return mail.from_address;
  const auto open = from.find('<'), close = from.rfind('>');
  if (open != std::string::npos && close != std::string::npos && close > open) return from.substr(open + 1, close - open - 1);
  return from;
}

namespace {

// The From header's value: the server's sender, or the application's name and address. A plain
// ASCII name is quoted (a comma in it stays a name); any other is RFC 2047 words, which a phrase
// may hold.
std::string FromHeader(const Mail& mail, const std::string& from) {
  if (mail.from_name.empty() && mail.from_address.empty()) return HeaderSafe(from);
  const std::string address = "<" + HeaderSafe(SenderAddress(mail, from)) + ">";
  if (mail.from_name.empty()) return address;
  const std::string name = HeaderText(mail.from_name);
  const bool encoded = name.starts_with("=?");
  return (encoded ? name : "\"" + HeaderSafe(mail.from_name) + "\"") + " " + address;
}

}  // namespace

std::string FormatMessage(const Mail& mail, const std::string& from) {
  return "From: " + FromHeader(mail, from) + "\r\n" + "To: " + HeaderSafe(mail.to) + "\r\n" +
         "Subject: " + HeaderText(mail.subject) + "\r\n" + "Date: " + MailDate() + "\r\n" +
         "MIME-Version: 1.0\r\nContent-Type: " + (mail.html ? "text/html" : "text/plain") +
         "; charset=utf-8\r\n\r\n" + mail.text + "\r\n";
}

void OutboxMailer::Send(const Mail& mail) {
  try {
    Write(mail);
  } catch (...) {
    metrics::CountMail(metrics::MailVia::kOutbox, metrics::MailResult::kFailed);
    throw;
  }
  metrics::CountMail(metrics::MailVia::kOutbox, metrics::MailResult::kSent);
}

void OutboxMailer::Write(const Mail& mail) {
  std::filesystem::create_directories(dir_);
  const std::string name = timeutil::NowIso() + "-" + ids::RandomAlnum(8) + ".eml";
  const auto tmp = std::filesystem::path(dir_) / ("." + name + ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary);
    out << FormatMessage(mail, "crmd <no-reply@crmd.invalid>");
    if (!out) throw std::runtime_error("outbox: cannot write " + tmp.string());
  }
  std::filesystem::rename(tmp, std::filesystem::path(dir_) / name);
}

bool OutboxMailer::Deliver(const Mail& mail, std::string& error) {
  try {
    Send(mail);
    return true;
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
}

struct SmtpMailer::Impl {
  std::string url;
  std::string from;
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<Mail> queue;
  bool stopping = false;
  std::thread worker;

  void Run() {
    for (;;) {
      Mail mail;
      {
        std::unique_lock lock(mutex);
        wake.wait(lock, [&] { return stopping || !queue.empty(); });
        if (queue.empty()) return;
        mail = std::move(queue.front());
        queue.pop_front();
      }
      std::string error;
      if (!DeliverSmtp(url, from, mail, error)) log::Error("mail not delivered", {{"error", error}});
    }
  }
};

SmtpMailer::SmtpMailer(std::string url, std::string from) : impl_(std::make_unique<Impl>()) {
  impl_->url = std::move(url);
  impl_->from = std::move(from);
  impl_->worker = std::thread([this] { impl_->Run(); });
}

SmtpMailer::~SmtpMailer() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  impl_->worker.join();
}

bool SmtpMailer::Deliver(const Mail& mail, std::string& error) {
  return DeliverSmtp(impl_->url, impl_->from, mail, error);
}

void SmtpMailer::Send(const Mail& mail) {
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->queue.size() >= kMaxQueued) {
      metrics::CountMail(metrics::MailVia::kSmtp, metrics::MailResult::kDropped);
      log::Error("mail dropped: queue full", {{"queued", impl_->queue.size()}});
      return;
    }
    impl_->queue.push_back(mail);
  }
  impl_->wake.notify_one();
}

}  // namespace crmd::mail
