// Linked into the OMPT tool's probes in the sanitizer build (tests/CMakeLists.txt). LeakSanitizer
// reports blocks that libomp 14 allocates in __kmp_fork_call and still holds at exit once any
// ASan-built OMPT tool is loaded: a tool of three empty callbacks and no ccnuma code gives the
// same report, and without a tool there is none. Only libomp's own allocator is named, so what
// the tool or the probe allocates, even inside a callback, is still checked. The name is on the
// stack only when it is unwound whole (libomp has no frame pointers), hence
// fast_unwind_on_malloc=0; ASAN_OPTIONS from the environment still add to these defaults.
// Programs' own defaults are the sanitizers' documented way: ctest's ENVIRONMENT list does not
// survive gtest_discover_tests.
// intercept_tls_get_addr=0 for Clang 14's runtime (issue 32, item 4): the tool's thread_local
// lives in the dynamic TLS of a dlopen()ed module, and that runtime misreads glibc 2.36's DTLS
// blocks, so LeakSanitizer's scan at exit crashes ("Tracer caught signal 11", with a DTLS range
// like 0x6000003e3-0xa7000014e5 under LSAN_OPTIONS=verbosity=1; google/sanitizers#1322). The
// probes themselves have no thread_local, and the tool's holds no heap pointer, so the scan
// loses nothing that could hide a leak.

extern "C" const char* __asan_default_options() { return "fast_unwind_on_malloc=0:intercept_tls_get_addr=0"; }
extern "C" const char* __lsan_default_suppressions() { return "leak:___kmp_allocate\n"; }
