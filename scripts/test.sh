#!/usr/bin/env bash
# Quick start, second command: every test. CI (.ci/run) runs this on a fresh clone of main, in a
# fresh Debian 12 root (../shared/fresh-debian.sh runs it the same way), within a 40-minute budget.
#
# Which build runs what, and why (each test means something in one build; running it twice only
# costs time):
#   gcc    GCC 12 + libgomp, warnings as errors. Every label: unit, tools, bench, mpi, package,
#          slurm, and vm, the tests that boot ccnuma-vm's emulated multi-node machine (their first
#          use installs QEMU, a Debian cloud kernel and busybox: docs/tools/ccnuma-vm.md). The
#          guest's kernel does the placing there, and the guest code paths are the same whatever
#          compiled the host side, so guests boot in this build only. The large synthetic machines
#          (98,304 PUs) load here only: hwloc's load is the same code in every build.
#   clang  Clang 14 + libomp, warnings as errors: what needs clang. The library, containers and
#          tools under LLVM's runtime (unit, tools, the bench kernels, mpi, package), the OMPT
#          tool inside libomp programs and clang's warnings. Not ccnuma-bench's portable twin
#          (CCNUMA_BENCH_PORTABLE_TWIN=OFF: its test, Issue32_portable, is the gcc stage's) nor
#          headers_self_contained (the headers' includes, checked by the gcc stage).
#          No guests (nor their programs: CCNUMA_TEST_GUESTS=OFF), no Slurm (ccnuma-run under srun is the same program), no large machines,
#          and not the Python checks of ccnuma-bench's outputs, plot, options and likwid-bench
#          peers (bench_check_*, Issue23_*, Issue32_*): what they check is the same whatever
#          compiled the kernels, which bench_kernel_* run here. Nor the lstopo comparison
#          (topology.Issue22_*: 19 s of lstopo, ccnuma-info and ccnuma-run runs, for numbering
#          that no compiler changes; the same loads and plans run here in binding's corpus test).
#   asan   Clang 14 + libomp with ASan+UBSan (Debug; -O1 where the tests spend their time): unit,
#          tools, the OMPT tool (libccnuma-ompt.so, which only libomp loads) and its tests, so
#          that the tool's memory errors are caught (issue 32, item 4), and the libFuzzer targets
#          (label fuzz), which need clang and a sanitizer; the library is compiled once, with
#          the fuzzers' coverage instrumentation too. One sanitized build, not two: until
#          2026-12-02 GCC's ASan build ran unit and tools and a second, Clang's, built the OMPT
#          tool and the fuzzers, and compiled the library and the tools twice (454 + 173 s of a
#          fresh run's 2,659). The library's code paths are the same under either runtime; what
#          libgomp alone drives (GOMP_CPU_AFFINITY, its wait policy) runs in the gcc stage.
#          libomp 14 leaks a hot team's buffers when a region grows the team; LSAN_OPTIONS
#          below suppresses every leak allocated by libomp itself (an allocation's first two
#          frames name libomp), and keeps two frames of every allocation and free in ASan's
#          reports too (tests/sanitizers/lsan_libomp.supp says why).
#          sanitizers.LeakInAParallelRegionIsReported checks that ccnuma's own leaks, in
#          parallel regions too, still show, and that libomp's were suppressed.
#          Not mpi (Open MPI's own allocations at exit read as leaks), not package (it installs
#          and links a consumer without the sanitizer runtime, the other builds' job), not vm
#          (same code paths as above), not slurm, not the large machines (6x slower under ASan,
#          and no different). Nor what runs no code of ours that the other asan tests do not:
#          the plots and compare.py (Python reading a run's files: bench_check_plot*,
#          bench_check_compare), real likwid-bench peers (bench_check_peers: 46 s of
#          likwid-bench's start-up sleeps; the peers' parsing runs here under fake likwid-bench
#          scripts, Issue23_*, Issue35_1), and the lstopo comparison
#          (topology.Issue22_NumberingAndPlansAgreeWithLstopo: 420 ASan process starts, 96 s,
#          for numbering that no compiler changes; the same loads and plans run here in
#          binding's corpus test).
#          ccnuma-bench is built portable here (no -march=native twin to build twice), and neither
#          the examples nor bench/'s programs are built (their runs are the gcc and clang builds'
#          job; bench/ took 76 compile-seconds a build).
# Each stage prints one line with its build and test seconds, and the end a line per stage, so
# the budget can be read from every CI log. CTEST_ARGS adds ctest options to every stage.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
# A guest that fails prints its console log's last lines before ccnuma-vm's message: the CI log
# is all that stays of a run, and a guest panic at 8b6b97f left only a file name on the CI
# machine's /tmp. 80 lines hold a panic's trace (46 for the sysrq crash of the vm tests).
export CCNUMA_VM_CONSOLE_TAIL=80
bash scripts/deps.sh
jobs=$(nproc)
summary=("deps $((SECONDS - start)) s")
large='Issue17_6_HundredThousandPusLoad'  # the 98,304-PU synthetic machine: gcc only

stage() {  # name, "targets" ("" for all), ctest args, then cmake args...
  local name=$1 targets=$2 tests=$3; shift 3
  local t0=$SECONDS
  echo "== [$name] configure and build"
  cmake -S . -B "build-$name" -DCCNUMA_WARNINGS_AS_ERRORS=ON "$@" >/dev/null
  if [[ -n $targets ]]; then
    # shellcheck disable=SC2086  # the target list splits on purpose
    cmake --build "build-$name" -j"$jobs" --target $targets
  else
    cmake --build "build-$name" -j"$jobs"
  fi
  local t1=$SECONDS
  echo "== [$name] test"
  # shellcheck disable=SC2086  # the ctest arguments split on purpose
  (cd "build-$name" && ctest --output-on-failure -j"$jobs" $tests ${CTEST_ARGS:-})
  local t2=$SECONDS
  echo "== [$name] stage time: build $((t1 - t0)) s, test $((t2 - t1)) s"
  summary+=("$name build $((t1 - t0)) s, test $((t2 - t1)) s")
}

gcc=(-DCMAKE_CXX_COMPILER=g++ -DCMAKE_C_COMPILER=gcc)
clang=(-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang)

# Debug information: line tables only (-g1), which is what a failing test's backtrace and a
# sanitizer's report print. Full -g made the compiles 13-20% longer (vector_test: 42.6 s against
# 37.1 s with clang, 41.3 s against 33.3 s with GCC) for variables that nobody reads in CI.
release=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")
stage gcc "" "" "${gcc[@]}" "${release[@]}"
stage clang "" "-LE vm|slurm -E $large|^bench_check_|^Issue23_|^Issue32_|^topology\\.Issue22_" "${clang[@]}" "${release[@]}" \
  -DCCNUMA_TEST_GUESTS=OFF -DCCNUMA_BENCH_PORTABLE_TWIN=OFF
# Only sanitized programs read these; the stages above are done. LSAN_OPTIONS: libomp 14's own
# leaks (tests/sanitizers/lsan_libomp.supp), matched on an allocation's first two frames.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan_libomp.supp:malloc_context_size=2"
# A Debug build: everything at -O0 but the library and the tests that loop over it, at -O1
# (CCNUMA_HOT_FLAGS, top-level CMakeLists.txt).
stage asan "" "-LE package|vm|mpi|slurm -E $large|^bench_check_(plot|compare|peers$)|^topology\\.Issue22_" "${clang[@]}" \
  -DCMAKE_BUILD_TYPE=Debug -DCCNUMA_SANITIZE=ON -DCCNUMA_TEST_GUESTS=OFF -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
  -DCMAKE_C_FLAGS_DEBUG=-g1 -DCCNUMA_BENCH_NATIVE=OFF -DCCNUMA_BUILD_EXAMPLES=OFF -DCCNUMA_BUILD_BENCH=OFF

echo "== stage times (total $((SECONDS - start)) s):"
printf '==   %s\n' "${summary[@]}"
echo "== all test suites passed (gcc, clang, asan+ubsan with clang)"
