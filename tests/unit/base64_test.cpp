// util/base64 (issue 31 #13): Parse's JSON file is decoded a piece at a time; the pieces must be
// accepted and decoded exactly as the whole text is, wherever the text is cut.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "util/base64.hpp"

namespace crmd {
namespace {

// Decodes `text` cut into pieces of `size` characters; nullopt where the decoder refuses it.
std::optional<std::string> InPieces(std::string_view text, std::size_t size) {
  Base64Decoder decoder;
  std::string out;
  for (std::size_t at = 0; at < text.size(); at += size)
    if (!decoder.Add(text.substr(at, size), out)) return std::nullopt;
  if (!decoder.Finish(out)) return std::nullopt;
  return out;
}

TEST(Base64Test, PiecesDecodeAsTheWholeTextWhereverItIsCut) {
  const std::vector<std::string> texts = {
      "", "QQ==", "QUI=", "QUJD", "QUJD\r\nREVG", " Q U J D ", "QQ==\n", "QUJDRA==",
      // Refused whole, so refused in pieces.
      "QQ", "QUJ", "Q===", "QQ==QUJD", "QQ== QUJD", "***", "QUJD!", "QUJDR", "=QUJ",
  };
  for (const auto& text : texts) {
    const auto whole = DecodeBase64(text);
    for (std::size_t size : {1u, 2u, 3u, 5u, 1000u}) EXPECT_EQ(InPieces(text, size), whole) << text << " by " << size;
  }
}

TEST(Base64Test, ALargeTextDecodesInPiecesOfAnySize) {
  std::string bytes;
  for (int i = 0; i < 100'000; ++i) bytes += static_cast<char>((i * 131) % 251);
  // As a client writes it: 76 characters a line.
  std::string text;
  {
    std::string line;
    const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string plain;
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
      const unsigned a = static_cast<unsigned char>(bytes[i]);
      const unsigned b = i + 1 < bytes.size() ? static_cast<unsigned char>(bytes[i + 1]) : 0;
      const unsigned c = i + 2 < bytes.size() ? static_cast<unsigned char>(bytes[i + 2]) : 0;
      plain += alphabet[a >> 2];
      plain += alphabet[((a & 3) << 4) | (b >> 4)];
      plain += i + 1 < bytes.size() ? alphabet[((b & 15) << 2) | (c >> 6)] : '=';
      plain += i + 2 < bytes.size() ? alphabet[c & 63] : '=';
    }
    for (std::size_t i = 0; i < plain.size(); i += 76) text += plain.substr(i, 76) + "\r\n";
  }
  ASSERT_EQ(DecodeBase64(text), bytes);
  for (std::size_t size : {1u, 7u, 4096u, 8192u, 65536u}) EXPECT_EQ(InPieces(text, size), bytes) << size;
}

}  // namespace
}  // namespace crmd
