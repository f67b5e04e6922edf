// Issue 17 (newcomer friction): the segments(v) snippet of docs/segments.md, with only the
// headers that page names. It failed with an unrelated template error unless <ccnuma/vector.hpp>
// came first, because seg_array.hpp only forward-declared ccnuma::vector; segments(v) now has
// its own header, which includes vector.hpp. Compiled by the headers_self_contained test, so a
// regression fails ctest.

#include <ccnuma/algorithm.hpp>
#include <ccnuma/segments.hpp>

#include <cstddef>

double segments_docs_snippet(std::size_t n) {
    ccnuma::vector<double> v(n, 1.0);
    auto segs = ccnuma::segments(v);                                // one segment per thread's chunk
    double s = ccnuma::par::reduce(segs.begin(), segs.end(), 0.0);  // chunk t on thread t
    return s;
}
