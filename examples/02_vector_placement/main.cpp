// The golden rule, seen page by page: a std::vector is constructed serially, so all its pages
// land on the node of the main thread; a ccnuma::vector is constructed by the threads that
// later compute on it. Run it on a multi-node machine (or in ccnuma-vm) with bound threads:
//
//   ccnuma-run --bind 8,scatter -- ./vector_placement [MiB]

#include <ccnuma/pages.hpp>
#include <ccnuma/vector.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    const std::size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64;
    if (mib == 0 || mib > (std::size_t{1} << 20)) {
        std::fprintf(stderr, "vector_placement: the size must be 1 to 1048576 MiB, not \"%s\"\n", argv[1]);
        return 2;
    }
    const std::size_t n = (mib << 20) / sizeof(double);
    try {
        std::vector<double> plain(n, 1.0);
        const auto plain_report = ccnuma::report_placement(plain.data(), n, sizeof(double));
        std::printf("std::vector<double>    (%zu MiB): %s\n", mib, plain_report.to_string().c_str());

        ccnuma::vector<double> a(n), b(n, 1.0), c(n, 2.0), d(n, 3.0);
        a = b + c * d;  // the triad, one fused schedule(static) loop over local pages
        std::printf("ccnuma::vector<double> (%zu MiB): %s\n", mib, a.placement().to_string().c_str());

        if (ccnuma::min(a) != 7.0 || ccnuma::max(a) != 7.0) {
            std::fprintf(stderr, "vector_placement: a = b + c * d is not 7 everywhere\n");
            return 1;
        }
        std::printf("a = b + c * d checked: %zu elements\n", n);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "vector_placement: %s\n", e.what());
        return 1;
    }
}
