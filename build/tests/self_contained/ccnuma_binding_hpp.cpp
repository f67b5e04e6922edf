#include <ccnuma/binding.hpp>
#include <ccnuma/binding.hpp>
int ccnuma_binding_hpp_compiled = 1;
