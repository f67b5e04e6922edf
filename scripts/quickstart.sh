#!/usr/bin/env bash
# Quick start, first command: installs what is needed, builds, and runs the main job: the
# machine as ccnuma sees it, nested binding plans, the same program on an emulated 4-node
# machine, where the binding is verified inside the threads, and there the placement of a
# std::vector against a ccnuma::vector, page by page.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCCNUMA_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
echo "== ccnuma-info"
build/tools/ccnuma-info
pus=$(nproc)
echo
echo "== binding plan for this machine: ${pus},scatter"
build/tools/ccnuma-run --bind "${pus},scatter" --print-plan
echo
echo "== binding plan for a 2-socket, 8-node SMT server (the paper's nested strategy)"
CCNUMA_TOPOLOGY="pack:2 numa:4 core:8 pu:2" build/tools/ccnuma-run --bind 4,scatter,4,subcompact --print-plan
echo
echo "== an emulated 4-node, 2-package machine (ccnuma-vm; the first run installs QEMU's kit)"
build/tools/ccnuma-vm --nodes 4 --cores-per-node 2 --sockets 2 --copy build/tools/ccnuma-info -- \
  build/tools/ccnuma-run --bind 2,scatter,4,subcompact --verify -- build/tools/ccnuma-info
echo
echo "== the golden rule on the same machine: std::vector vs ccnuma::vector, page by page"
build/tools/ccnuma-vm --nodes 4 --cores-per-node 2 --sockets 2 --copy build/examples/02_vector_placement/vector_placement -- \
  build/tools/ccnuma-run --quiet --bind 8,scatter -- build/examples/02_vector_placement/vector_placement 16
