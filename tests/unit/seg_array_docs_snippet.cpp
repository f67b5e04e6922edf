// Issue 17 (newcomer friction): the segments(v) snippet of docs/seg_array.md, with only the
// header that page names. It failed with an unrelated template error unless <ccnuma/vector.hpp>
// came first, because seg_array.hpp only forward-declared ccnuma::vector. Compiled by the
// headers_self_contained test, so a regression fails ctest.

#include <ccnuma/algorithm.hpp>

#include <cstddef>

double seg_array_docs_snippet(std::size_t n) {
    ccnuma::vector<double> v(n, 1.0);
    auto segs = ccnuma::segments(v);                                // one segment per thread's chunk
    double s = ccnuma::par::reduce(segs.begin(), segs.end(), 0.0);  // chunk t on thread t
    return s;
}
