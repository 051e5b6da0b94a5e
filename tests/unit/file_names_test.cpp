// files/file_names (issue 20, spec §4.8, ../shared/SECURITY.md "files"): any name a person would
// give a file is accepted; names that could leave the application's folder are not.
#include <gtest/gtest.h>

#include <string>

#include "files/file_names.hpp"

namespace crmd::files {
namespace {

TEST(FileNamesTest, NamesPeopleGiveFilesAreAccepted) {
  for (const char* name : {"quote.pdf", "My Offer (final) v2.docx", "הצעת מחיר.pdf", "ÉTÉ 2026.png", "a",
                           "...pdf", "name with 'quotes' and \"double\".txt", "100%.csv"})
    EXPECT_TRUE(IsUploadName(name)) << name;
  EXPECT_TRUE(IsUploadName(std::string(kMaxFileName, 'x')));
}

TEST(FileNamesTest, NamesThatCouldLeaveTheFolderOrBreakAFileSystemAreRefused) {
  for (std::string name : {"", ".", "..", "../secret.txt", "a/b.png", "..\\x.png", "x\\y", "line\nbreak.txt",
                           "bell\a.txt", "tab\tin.txt", "del\x7f.txt", "bad \xff utf8.txt", "overlong \xc0\xaf.txt",
                           "surrogate \xed\xa0\x80.txt", "cut \xe2\x82.txt"})
    EXPECT_FALSE(IsUploadName(name)) << name;
  EXPECT_FALSE(IsUploadName(std::string("nul\0.txt", 8)));
  EXPECT_FALSE(IsUploadName(std::string(kMaxFileName + 1, 'x')));
}

TEST(FileNamesTest, StoredNamesArePrefixedByRandomHexAndFitAFileSystemName) {
  const std::string a = NewStoredName("quote.pdf"), b = NewStoredName("quote.pdf");
  EXPECT_NE(a, b);
  EXPECT_EQ(a.size(), kPrefixLength + 1 + 9);
  EXPECT_EQ(a.substr(kPrefixLength), "_quote.pdf");
  EXPECT_TRUE(IsStoredName(a));
  EXPECT_LE(NewStoredName(std::string(kMaxFileName, 'x')).size(), 255u);
  EXPECT_FALSE(IsStoredName("quote.pdf"));
  EXPECT_FALSE(IsStoredName(std::string(kPrefixLength, 'g') + "_quote.pdf"));  // not hex
  EXPECT_FALSE(IsStoredName(a.substr(0, kPrefixLength) + "_../x"));
  EXPECT_FALSE(IsStoredName(a.substr(0, kPrefixLength) + "_"));
}

TEST(FileNamesTest, ASegmentIsPercentEncodedButForUnreservedCharacters) {
  EXPECT_EQ(EncodeSegment("My Offer (1).pdf"), "My%20Offer%20%281%29.pdf");
  EXPECT_EQ(EncodeSegment("a-b_c~d.e"), "a-b_c~d.e");
  EXPECT_EQ(EncodeSegment("שלום.txt"), "%D7%A9%D7%9C%D7%95%D7%9D.txt");
  EXPECT_EQ(EncodeSegment("a/b?c#d%e"), "a%2Fb%3Fc%23d%25e");
}

}  // namespace
}  // namespace crmd::files
