#!/usr/bin/env bash
# Installs the Debian 12 packages ccnuma needs to build and test. Idempotent: packages already
# present are not touched, so repeated runs cost one dpkg query.
set -euo pipefail
# qemu-system-x86 is for the emulated machine of the vm tests (ccnuma-vm would install it on its
# first run too; here it is installed with the rest, once).
# nlohmann-json3-dev: the library's JSON (private, header-only: a build dependency only) and the
# tools'; libclang-rt-14-dev: libFuzzer for the fuzz targets (clang builds);
# openmpi-bin, libopenmpi-dev: the hybrid MPI + OpenMP example and its tests.
# python3-matplotlib: `ccnuma-bench plot`; likwid: likwid-bench, the peer of `ccnuma-bench triad --peers`.
# libbenchmark-tools: Google Benchmark's compare.py (/usr/share/benchmark), which the bench_check_compare
# test runs on ccnuma-bench's JSON; python3-scipy: the U test it imports.
# hwloc-nox: lstopo-no-graphics and hwloc-calc, which tests compare ccnuma's numbering with (issue 22).
# libomp-dev: LLVM's OpenMP runtime, Clang's, and omp-tools.h, which every build (GCC's too) needs for
# libccnuma-ompt.so and the libomp programs of its tests.
# slurmctld, slurmd, slurm-client, munge: the single-node Slurm of the slurm test (tests/slurm).
# llvm: llvm-symbolizer, which Clang's sanitizer runtimes run to name the functions in a report's
# stacks (GCC's carry their own); without it the asan stage's reports are addresses, and
# sanitizers.LeakInAParallelRegionIsReported, which looks for a function's name, fails.
# zstd, xz-utils: ccnuma-vm decompresses the cached kernel with them once, to boot its ELF image
# directly (docs/tools/ccnuma-vm.md); its tests compress synthetic kernels with them and gzip.
packages=(cmake make g++ clang libomp-dev libhwloc-dev hwloc-nox pkg-config libgtest-dev util-linux qemu-system-x86
  nlohmann-json3-dev libclang-rt-14-dev openmpi-bin libopenmpi-dev python3-matplotlib likwid
  libbenchmark-tools python3-scipy slurmctld slurmd slurm-client munge numactl zstd xz-utils llvm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "ccnuma: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "ccnuma: need root to install packages (run as root or with sudo)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
