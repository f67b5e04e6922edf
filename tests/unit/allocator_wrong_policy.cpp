// Issue 17 (newcomer friction): ccnuma::allocator<double, int> gave a 23-line error that never
// named the valid policy types. It must not compile, with one error that names them; the
// allocator.Issue17.WrongPolicyIsOneErrorNamingTheValidTypes test compiles this file and checks.

#include <ccnuma/allocator.hpp>

#include <vector>

int main() {
    std::vector<double, ccnuma::allocator<double, int>> v(10);
    return static_cast<int>(v.size());
}
