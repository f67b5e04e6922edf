#include <ccnuma/version.hpp>

#include <gtest/gtest.h>

#include <string>

TEST(Version, HeaderMacrosStringAndLibraryAgree) {
    const std::string from_macros = std::to_string(CCNUMA_VERSION_MAJOR) + "." +
                                    std::to_string(CCNUMA_VERSION_MINOR) + "." +
                                    std::to_string(CCNUMA_VERSION_PATCH);
    EXPECT_EQ(from_macros, ccnuma::version_string);
    EXPECT_STREQ(ccnuma::library_version(), ccnuma::version_string);
}
