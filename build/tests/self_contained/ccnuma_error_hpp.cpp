#include <ccnuma/error.hpp>
#include <ccnuma/error.hpp>
int ccnuma_error_hpp_compiled = 1;
