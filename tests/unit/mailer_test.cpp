// mail/mailer: trigger actions' mail is HTML, and Deliver() reports what Send() only logs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "closed_port.hpp"
#include "mail/header_text.hpp"
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

// Issue 34: an application's mail names its sender (`crmd app set --mail-from-name --mail-from`):
// a quoted ASCII name or RFC 2047 words, and its address, which is also the envelope's.
TEST(MailerTest, AnApplicationsSenderIsTheFromHeaderAndTheEnvelope) {
  Mail mail = Html();
  EXPECT_NE(FormatMessage(mail, "crmd <no-reply@crmd.invalid>").find("From: crmd <no-reply@crmd.invalid>\r\n"), std::string::npos);
  EXPECT_EQ(SenderAddress(mail, "crmd <no-reply@crmd.invalid>"), "no-reply@crmd.invalid");
  EXPECT_EQ(SenderAddress(mail, "ops@example.com"), "ops@example.com");
  mail.from_name = "Acme, Sales";
  mail.from_address = "sales@acme.example";
  EXPECT_NE(FormatMessage(mail, "crmd <no-reply@crmd.invalid>").find("From: \"Acme, Sales\" <sales@acme.example>\r\n"),
            std::string::npos);
  EXPECT_EQ(SenderAddress(mail, "crmd <no-reply@crmd.invalid>"), "sales@acme.example");
  mail.from_name = "\xd7\x90\xd7\xa7\xd7\x9e\xd7\x94";  // Hebrew
  mail.from_address.clear();
  EXPECT_NE(FormatMessage(mail, "crmd <no-reply@crmd.invalid>").find("From: =?UTF-8?B?15DXp9ee15Q=?= <no-reply@crmd.invalid>\r\n"),
            std::string::npos);
}

// Issue 31 #11: a subject is one line whatever it holds, and other characters than ASCII travel
// as RFC 2047 encoded words a reader decodes back to the same text.
TEST(MailerTest, SubjectIsOneLineAndEncodedWhenNotPlainAscii) {
  EXPECT_EQ(HeaderText("New lead"), "New lead");
  EXPECT_EQ(HeaderText("a\r\nBcc: x@evil.test\tz"), "a  Bcc: x@evil.test z");
  EXPECT_EQ(HeaderText("Lead \xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d"), "=?UTF-8?B?TGVhZCDXqdec15XXnQ==?=");
  EXPECT_EQ(HeaderText("=?UTF-8?B?QQ==?="), "=?UTF-8?B?PT9VVEYtOD9CP1FRPT0/PQ==?=");
  // Long text: words of at most 75 characters on folded lines, no character cut in two.
  std::string long_text;
  for (int i = 0; i < 200; ++i) long_text += "\xc3\xa9";  // é
  const std::string folded = HeaderText(long_text);
  std::size_t words = 0;
  for (std::size_t at = 0; at < folded.size();) {
    const std::size_t end = std::min(folded.find("\r\n ", at), folded.size());
    const std::string word = folded.substr(at, end - at);
    EXPECT_LE(word.size(), 75u) << word;
    EXPECT_TRUE(word.starts_with("=?UTF-8?B?") && word.ends_with("?=")) << word;
    ++words;
    at = end == folded.size() ? end : end + 3;
  }
  EXPECT_EQ(words, 10u);  // 400 bytes, 44 a word (a whole number of 2-byte characters)
  const std::string message = FormatMessage(Mail{"dana@example.com", "x\r\nBcc: y@evil.test", "<p/>", true}, "crmd <a@b.c>");
  EXPECT_EQ(message.find("\r\nBcc:"), std::string::npos) << message;
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
