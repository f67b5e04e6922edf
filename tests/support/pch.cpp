// The source of the targets that precompile <gtest/gtest.h> for the unit tests
// (tests/CMakeLists.txt, ccnuma_test_pch): the header is their only content.
