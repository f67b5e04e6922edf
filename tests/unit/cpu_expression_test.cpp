#include <gtest/gtest.h>
TEST(CpuExpression, Placeholder) {}
