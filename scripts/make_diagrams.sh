#!/usr/bin/env bash
# Redraws docs/img/reduce{0,1,2,3}_tree.svg from the kernels' own tree functions
# (tools/draw_trees.cu). The test diagrams_up_to_date fails until they are redrawn.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build --preset release --target draw_trees
build/release/bin/draw_trees docs/img
