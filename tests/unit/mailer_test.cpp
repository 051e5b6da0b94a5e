// mail/mailer: trigger actions' mail is HTML, and Deliver() reports what Send() only logs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "closed_port.hpp"
#include "mail/mailer.hpp"
#include "temp_dir.hpp"

namespace crmd::mail {
namespace {

Mail Html() {
  Mail mail;
  mail.to = "dana@example.com";
  mail.subject = "New lead";
  mail.text = "<p>Hello <b>Dana</b></p>";
  mail.html = true;
  return mail;
}

TEST(MailerTest, HtmlMailIsTextHtmlAndPlainMailTextPlain) {
  Mail mail = Html();
  const std::string html = FormatMessage(mail, "crmd <no-reply@crmd.invalid>");
  EXPECT_NE(html.find("\r\nContent-Type: text/html; charset=utf-8\r\n"), std::string::npos) << html;
  EXPECT_EQ(html.find("text/plain"), std::string::npos);
  EXPECT_NE(html.find("\r\n\r\n<p>Hello <b>Dana</b></p>\r\n"), std::string::npos);
  mail.html = false;
  const std::string plain = FormatMessage(mail, "crmd <no-reply@crmd.invalid>");
  EXPECT_NE(plain.find("\r\nContent-Type: text/plain; charset=utf-8\r\n"), std::string::npos) << plain;
}

TEST(MailerTest, OutboxDeliverWritesTheMailNow) {
  test::TempDir dir("mailer");
  OutboxMailer mailer(dir.File("outbox"));
  std::string error;
  ASSERT_TRUE(mailer.Deliver(Html(), error)) << error;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir.File("outbox"))) files.push_back(entry.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].extension(), ".eml");
  std::ifstream in(files[0], std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("Content-Type: text/html; charset=utf-8"), std::string::npos);
}

TEST(MailerTest, OutboxDeliverReportsAFolderItCannotWrite) {
  test::TempDir dir("mailer");
  std::ofstream(dir.File("file")) << "not a folder";
  OutboxMailer mailer(dir.File("file") + "/outbox");
  std::string error;
  EXPECT_FALSE(mailer.Deliver(Html(), error));
  EXPECT_FALSE(error.empty());
}

TEST(MailerTest, SmtpDeliverReportsAServerThatIsNotThere) {
  SmtpMailer mailer("smtp://127.0.0.1:" + std::to_string(test::ClosedPort()), "crmd@example.com");
  std::string error;
  EXPECT_FALSE(mailer.Deliver(Html(), error));
  EXPECT_FALSE(error.empty());
}

}  // namespace
}  // namespace crmd::mail
