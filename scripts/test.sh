#!/usr/bin/env bash
# Quick start, second command: every test. Builds and tests with GCC 12 (libgomp) and with
# Clang 14 (libomp), warnings as errors, then runs the unit and tool tests under ASan+UBSan.
# The gcc and clang runs include the label vm: tests that boot ccnuma-vm's emulated multi-node
# machine (its first use installs QEMU, a Debian cloud kernel and busybox; see docs/tools/ccnuma-vm.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
jobs=$(nproc)

build_and_test() {  # name, extra cmake args...
  local name=$1; shift
  echo "== [$name] configure and build"
  cmake -S . -B "build-$name" -DCCNUMA_WARNINGS_AS_ERRORS=ON "$@" >/dev/null
  cmake --build "build-$name" -j"$jobs"
  echo "== [$name] test"
  (cd "build-$name" && ctest --output-on-failure -j"$jobs" ${CTEST_ARGS:-})
}

build_and_test gcc -DCMAKE_CXX_COMPILER=g++ -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo
build_and_test clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo
# The sanitizer build skips the mpi label (Open MPI's own allocations at exit read as leaks), the
# package test (it installs and links a consumer without the
# sanitizer runtime, which is the gcc and clang builds' job) and the vm label (the gcc and clang
# builds boot the emulated machine already; its code paths are the same under ASan).
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
CTEST_ARGS="-LE package|vm|mpi" \
build_and_test asan -DCMAKE_CXX_COMPILER=g++ -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=Debug -DCCNUMA_SANITIZE=ON
echo "== all test suites passed (gcc, clang, asan+ubsan)"
