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
  std::string text;   // the body: plain text, or HTML when `html`
  bool html = false;  // sent as text/html (trigger actions' mail); plain text otherwise
  // Issue 34: the application's sender (auth::Gates), when it has one: a display name (UTF-8; the
  // caller checked it holds no control character, quote or backslash) and a plain address. Empty:
  // the mailer's own.
  std::string from_name = {};
  std::string from_address = {};
};

class Mailer {
 public:
  virtual ~Mailer() = default;
  // Hands the mail over and returns; a mail that cannot be delivered is logged, not reported.
  virtual void Send(const Mail& mail) = 0;
  // Delivers the mail now, on the caller's thread, for callers that retry (trigger actions):
  // false, with what went wrong in `error`, when it was not delivered.
  virtual bool Deliver(const Mail& mail, std::string& error) = 0;
};

// Thread-safe: each mail is its own file, written whole then renamed into place.
class OutboxMailer final : public Mailer {
 public:
  explicit OutboxMailer(std::string outbox_dir) : dir_(std::move(outbox_dir)) {}
  void Send(const Mail& mail) override;  // throws when the file cannot be written
  bool Deliver(const Mail& mail, std::string& error) override;

 private:
  void Write(const Mail& mail);  // Send() without the count
  std::string dir_;
};

// Queues mails for an SMTP server (`smtp://[user:pass@]host:port`, or `smtps://`); Send() never
// blocks on the network. At most kMaxQueued mails wait; beyond that a mail is dropped and logged.
// Thread-safe. The destructor sends what is queued, then stops. Deliver() bypasses the queue: one
// SMTP session of its own, on the caller's thread, for at most kSmtpTimeoutSeconds.
class SmtpMailer final : public Mailer {
 public:
  static constexpr std::size_t kMaxQueued = 1000;
  // How long one SMTP delivery may take before it is given up.
  static constexpr long kSmtpTimeoutSeconds = 30;

  SmtpMailer(std::string url, std::string from);
  ~SmtpMailer() override;
  void Send(const Mail& mail) override;
  bool Deliver(const Mail& mail, std::string& error) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The RFC 5322 message of `mail` (headers and body, CRLF line ends), from `from` unless the mail
// names its own sender.
std::string FormatMessage(const Mail& mail, const std::string& from);

// The address a mail goes out from (the SMTP envelope): the mail's own, else the one in `from`
// (`Name <address>` or a bare address).
std::string SenderAddress(const Mail& mail, const std::string& from);

}  // namespace crmd::mail
