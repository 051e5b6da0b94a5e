// Outgoing mail. With `--smtp-url`, mails go to that SMTP server (libcurl) from one background
// sender, so a request never waits on a mail server and known and unknown addresses answer alike.
// Without it, mails are written as RFC 5322 `.eml` files to the application's outbox folder
// (`DATA/apps/<appId>/outbox/`), where an operator or a test reads them.
#pragma once

#include <memory>
#include <string>

namespace crmd::mail {

struct Mail {
  std::string to;
  std::string subject;
  std::string text;  // plain text body
};

class Mailer {
 public:
  virtual ~Mailer() = default;
  virtual void Send(const Mail& mail) = 0;
};

// Thread-safe: each mail is its own file, written whole then renamed into place.
class OutboxMailer final : public Mailer {
 public:
  explicit OutboxMailer(std::string outbox_dir) : dir_(std::move(outbox_dir)) {}
  void Send(const Mail& mail) override;

 private:
  std::string dir_;
};

// Queues mails for an SMTP server (`smtp://[user:pass@]host:port`, or `smtps://`); Send() never
// blocks on the network. At most kMaxQueued mails wait; beyond that a mail is dropped and logged.
// Thread-safe. The destructor sends what is queued, then stops.
class SmtpMailer final : public Mailer {
 public:
  static constexpr std::size_t kMaxQueued = 1000;

  SmtpMailer(std::string url, std::string from);
  ~SmtpMailer() override;
  void Send(const Mail& mail) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The RFC 5322 message of `mail` (headers and body, CRLF line ends).
std::string FormatMessage(const Mail& mail, const std::string& from);

}  // namespace crmd::mail
