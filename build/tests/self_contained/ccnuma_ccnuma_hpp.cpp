#include <ccnuma/ccnuma.hpp>
#include <ccnuma/ccnuma.hpp>
int ccnuma_ccnuma_hpp_compiled = 1;
