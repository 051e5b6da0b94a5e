// Outgoing mail. With no SMTP server configured, mails are written as RFC 5322 `.eml` files to
// the application's outbox folder (`DATA/apps/<appId>/outbox/`), where an operator or a test
// reads them. Thread-safe: each mail is its own file, written whole then renamed into place.
#pragma once

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

class OutboxMailer final : public Mailer {
 public:
  explicit OutboxMailer(std::string outbox_dir) : dir_(std::move(outbox_dir)) {}
  void Send(const Mail& mail) override;

 private:
  std::string dir_;
};

}  // namespace crmd::mail
