#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder's image (as root, in
# /autograder/source). The image must already have what the course's GPU runner provides:
# the NVIDIA driver, the CUDA Toolkit (nvcc, compute-sanitizer), CMake 3.24+, a C++17
# compiler and GoogleTest (docs/classroom.md, "Gradescope").
set -euo pipefail
cd /autograder/source
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"

# The grader itself: host C++ only.
cmake -S tool -B /autograder/classroom-build -DCMAKE_BUILD_TYPE=Release
cmake --build /autograder/classroom-build --parallel

# Build the handed-out tree once now, so that grading a submission recompiles only the
# files it changes. CUDAARCHS names the runner's GPU when the image is built without one.
mkdir -p /autograder/work/tree
cp -a student_tree/. /autograder/work/tree/
cmake -S /autograder/work/tree -B /autograder/work/build -DCMAKE_BUILD_TYPE=Release \
      -DREDUCTION_GRADING_DIR=/autograder/source/grading
cmake --build /autograder/work/build --parallel
