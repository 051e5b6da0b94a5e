// files::AllowedType (issue 20, spec §4.8, ../shared/SECURITY.md "files"): the type is judged by
// content against an allowlist, and must be one the extension stands for. Every file is made here
// with the bytes its format starts with.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "files/file_type.hpp"

namespace crmd::files {
namespace {

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

void Le16(std::string& out, std::uint16_t v) {
  out.push_back(static_cast<char>(v & 0xff));
  out.push_back(static_cast<char>(v >> 8));
}
void Le32(std::string& out, std::uint32_t v) {
  Le16(out, static_cast<std::uint16_t>(v & 0xffff));
  Le16(out, static_cast<std::uint16_t>(v >> 16));
}

// A 1x1 PNG: signature, IHDR, IDAT, IEND (libmagic reads the signature and IHDR).
std::string Png() {
  return Bytes({0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 'I', 'H', 'D', 'R', 0, 0, 0, 1, 0, 0, 0, 1,
                8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89, 0, 0, 0, 0x0a, 'I', 'D', 'A', 'T', 0x78, 0x9c, 0x63, 0, 1,
                0, 0, 5, 0, 1, 0x0d, 0x0a, 0x2d, 0xb4, 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82});
}

std::string Jpeg() {
  std::string out = Bytes({0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0});
  out.append(64, '\0');
  out += Bytes({0xff, 0xd9});
  return out;
}

std::string Pdf() {
  return "%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 0 >> "
         "endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n";
}

// A zip of one stored entry named `entry` (libmagic reads the local header, not the CRC).
std::string Zip(const std::string& entry, const std::string& content) {
  std::string out = "PK\x03\x04";
  Le16(out, 20);  // version needed
  Le16(out, 0);   // flags
  Le16(out, 0);   // stored
  Le32(out, 0);   // time and date
  Le32(out, 0);   // crc (not checked here)
  Le32(out, static_cast<std::uint32_t>(content.size()));
  Le32(out, static_cast<std::uint32_t>(content.size()));
  Le16(out, static_cast<std::uint16_t>(entry.size()));
  Le16(out, 0);
  out += entry + content;
  const auto central = static_cast<std::uint32_t>(out.size());
  out += "PK\x01\x02";
  Le16(out, 20);
  Le16(out, 20);
  Le16(out, 0);
  Le16(out, 0);
  Le32(out, 0);
  Le32(out, 0);
  Le32(out, static_cast<std::uint32_t>(content.size()));
  Le32(out, static_cast<std::uint32_t>(content.size()));
  Le16(out, static_cast<std::uint16_t>(entry.size()));
  Le16(out, 0);
  Le16(out, 0);
  Le16(out, 0);
  Le16(out, 0);
  Le32(out, 0);
  Le32(out, 0);  // local header offset
  out += entry;
  const auto central_size = static_cast<std::uint32_t>(out.size()) - central;
  out += "PK\x05\x06";
  Le16(out, 0);
  Le16(out, 0);
  Le16(out, 1);
  Le16(out, 1);
  Le32(out, central_size);
  Le32(out, central);
  Le16(out, 0);
  return out;
}

constexpr const char* kHtml = "<!DOCTYPE html>\n<html><head><title>Pay now</title></head><body><script>alert(1)</script></body></html>\n";
constexpr const char* kSvg =
    "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"><script>alert(1)</script></svg>\n";

TEST(FileTypeTest, AllowedContentMatchingItsExtensionIsTakenWhateverTheCase) {
  EXPECT_EQ(AllowedType("logo.png", Png()), "image/png");
  EXPECT_EQ(AllowedType("LOGO.PNG", Png()), "image/png");
  EXPECT_EQ(AllowedType("photo (1).jpg", Jpeg()), "image/jpeg");
  EXPECT_EQ(AllowedType("photo.jpeg", Jpeg()), "image/jpeg");
  EXPECT_EQ(AllowedType("quote.pdf", Pdf()), "application/pdf");
  EXPECT_EQ(AllowedType("files.zip", Zip("a.txt", "hello")), "application/zip");
  EXPECT_EQ(AllowedType("הצעת מחיר.txt", "שלום, this is plain text.\n"), "text/plain");
  EXPECT_TRUE(AllowedType("leads.csv", "Name,Phone\nDana,0501234567\nAvi,0527654321\n"));
  EXPECT_EQ(AllowedType("anim.gif", std::string("GIF89a\x01\x00\x01\x00\x00\x00\x00;", 13)), "image/gif");
  // An Office Open XML document is a zip whose first entry names it.
  EXPECT_TRUE(AllowedType("offer.docx", Zip("[Content_Types].xml", "<Types/>")));
}

TEST(FileTypeTest, ContentTheAllowlistLacksOrThatIsNotWhatItsNameSaysIsRefused) {
  EXPECT_FALSE(AllowedType("page.html", kHtml));    // not on the allowlist
  EXPECT_FALSE(AllowedType("page.txt", kHtml));     // HTML is not plain text
  EXPECT_FALSE(AllowedType("image.png", kSvg));     // an SVG named .png
  EXPECT_FALSE(AllowedType("image.svg", kSvg));
  EXPECT_FALSE(AllowedType("logo.jpg", Png()));     // a PNG named .jpg
  EXPECT_FALSE(AllowedType("quote.pdf", "just text, no PDF\n"));
  EXPECT_FALSE(AllowedType("archive.zip", Pdf()));
  EXPECT_FALSE(AllowedType("run.exe", std::string("MZ\x90\x00\x03\x00\x00\x00", 8) + std::string(120, '\0')));
  EXPECT_FALSE(AllowedType("script.js", "alert(1);\n"));
}

TEST(FileTypeTest, NoExtensionOrNoContentIsRefused) {
  EXPECT_FALSE(AllowedType("logo", Png()));
  EXPECT_FALSE(AllowedType("logo.", Png()));
  EXPECT_FALSE(AllowedType("empty.txt", ""));
  EXPECT_EQ(SniffedType(""), "");
  EXPECT_EQ(SniffedType(Png()), "image/png");
}

// Downloads are typed by the name the upload checked, never by reading the content again.
TEST(FileTypeTest, ServedTypeIsTheExtensionsRegisteredType) {
  EXPECT_EQ(ServedType("0123_logo.PNG"), "image/png");
  EXPECT_EQ(ServedType("a_quote.pdf"), "application/pdf");
  EXPECT_EQ(ServedType("a_list.csv"), "text/csv");
  EXPECT_EQ(ServedType("a_voice.wav"), "audio/wav");
  EXPECT_EQ(ServedType("a_deck.pptx"), "application/vnd.openxmlformats-officedocument.presentationml.presentation");
  EXPECT_EQ(ServedType("a_page.html"), "application/octet-stream");
  EXPECT_EQ(ServedType("a_noextension"), "application/octet-stream");
}

}  // namespace
}  // namespace crmd::files
