#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder's image (as root, in
# /autograder/source).
#
# What the image needs, checked first (requirements.sh, before anything is built): CMake
# 3.24+ (installed from PyPI with pip when older or missing), GoogleTest (installed with
# apt-get when missing), the CUDA Toolkit (nvcc, compute-sanitizer), a C++ compiler that
# takes C++20 (the grader is built as C++17, tool.cmake, but the student tree needs C++20,
# its CMakeLists.txt's cxx_std_20) and binutils (nm, objdump, readelf: the compiled check). What
# cannot be installed stops this script with one line saying how to get it.
# The runner must provide the GPU and the host's NVIDIA driver (in a container, the host
# provides the driver); the image is often built without a GPU, so a missing one is only a
# warning, and settings.sh's CUDA architectures (classroom generate --cuda-archs) say what
# to build for (docs/classroom.md, "Gradescope").
#
# It builds everything the grader trusts from the autograder alone, then removes what a
# student's code must never read: the solutions, the hidden cases (judge/cases.cpp) and the
# grader's sources. Submissions are built and run as the unprivileged user below.
set -euo pipefail
cd /autograder/source
source ./settings.sh  # the instructor's settings, from classroom generate
[[ -z $cuda_architectures ]] || export CUDAARCHS="$cuda_architectures"
source ./requirements.sh
check_requirements || exit 1
student_user=classroom-student

# The grader itself: host C++ only.
cmake -S tool -B /autograder/classroom-build -DCMAKE_BUILD_TYPE=Release
cmake --build /autograder/classroom-build --parallel

# The user the student's build and code run as: no home, no shell, no rights here.
id -u "$student_user" >/dev/null 2>&1 ||
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$student_user"

# The judge and the workers of the instructor's solutions. CUDAARCHS (settings.sh) names
# the runner's GPU when the image is built without one.
/autograder/classroom-build/classroom prepare --autograder /autograder/source --trusted /autograder/trusted

# The handed-out tree, built once now as the student's user, so that grading a submission
# recompiles only the files it changes.
# /autograder/work itself stays root's (the judge's logs live in it); the student's user
# owns only the tree, the worker's sources and the build.
mkdir -p /autograder/work/tree /autograder/work/worker /autograder/work/build
chmod 755 /autograder/work
cp -a student_tree/. /autograder/work/tree/
cp -a worker/. /autograder/work/worker/
workers=$(sed -n 's/^set(GRADED_STAGES \(.*\))$/\1/p' worker/assignment.cmake | tr ' ' ';')
chown -R "$student_user": /autograder/work/tree /autograder/work/worker /autograder/work/build
runuser -u "$student_user" -- cmake -S /autograder/work/tree -B /autograder/work/build -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DREDUCTION_WORKER_DIR=/autograder/work/worker "-DGRADING_WORKERS=$workers"
runuser -u "$student_user" -- cmake --build /autograder/work/build --parallel --target gpu_tests \
      $(for s in ${workers//;/ }; do echo "grade_worker_$s"; done)

# Nothing of the grader's may be read by the student's user: remove the sources it no
# longer needs, and close the rest to everyone but root.
rm -rf /autograder/source/solution /autograder/source/judge /autograder/source/tool /autograder/trusted/reference-tree
chmod 700 /autograder/source /autograder/trusted /autograder/classroom-build
mkdir -p /autograder/results
chmod 755 /autograder/results
