# What the autograder's image needs, checked before anything is built. setup.sh sources this
# file and runs check_requirements first; run_autograder sources it for put_cuda_on_path.
# check_requirements installs what a package registry can give (CMake from PyPI, GoogleTest
# from apt) and otherwise stops at the first thing missing with one line saying what it is
# and how to get it, and a non-zero status. To check an image by hand:
#   bash -c 'source requirements.sh && check_requirements'
#
# The GPU and the host's NVIDIA driver cannot be installed from here: the runner provides
# them. An image is often built without a GPU, so a missing one is a warning, not a failure.

minimum_cmake=3.24  # the project's and the grader's cmake_minimum_required

# nvcc is often installed but not on PATH (NVIDIA's images put it in /usr/local/cuda/bin);
# CUDA_HOME names a toolkit installed elsewhere.
put_cuda_on_path() {
    command -v nvcc >/dev/null || export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
}

# The one line a failed check prints; returns non-zero so that the check stops there.
requirement_missing() {
    echo "setup.sh: $*" >&2
    return 1
}

# check_program NAME WHAT HOW: NAME must be on PATH; WHAT says what it is, HOW how to get it.
check_program() {
    command -v "$1" >/dev/null || requirement_missing "$1 ($2) not found on PATH: $3"
}

# version_at_least 3.22.1 3.24: is the first version at least the second?
version_at_least() {
    local -a have want
    IFS=. read -ra have <<<"$1"
    IFS=. read -ra want <<<"$2"
    local i part_have part_want
    for i in 0 1 2; do
        part_have=${have[i]:-0} part_want=${want[i]:-0}
        part_have=${part_have%%[!0-9]*} part_want=${part_want%%[!0-9]*}  # "0-rc1" -> "0"
        ((${part_have:-0} > ${part_want:-0})) && return 0
        ((${part_have:-0} < ${part_want:-0})) && return 1
    done
    return 0
}

# The version of the cmake on PATH ("3.22.1"), or nothing when there is none.
cmake_version() {
    local first_line
    first_line=$(cmake --version 2>/dev/null) || return 0
    first_line=${first_line%%$'\n'*}  # "cmake version 3.22.1"
    echo "${first_line##* }"
}

# The student tree is C++20 (CMakeLists.txt: cxx_std_20), the grader C++17: the compiler
# CMake will pick must take C++20.
check_cxx20_compiler() {
    local compiler=${CXX:-}
    if [[ -z $compiler ]]; then
        compiler=$(command -v c++ || command -v g++ || command -v clang++) ||
            { requirement_missing "no C++ compiler (c++, g++ or clang++): install one with C++20 support (Ubuntu: apt-get install -y g++)"; return; }
    fi
    printf '#if __cplusplus < 202002L\n#error not C++20\n#endif\nint main() {}\n' |
        "$compiler" -std=c++20 -fsyntax-only -x c++ - >/dev/null 2>&1 ||
        requirement_missing "$compiler does not compile C++20 (the student tree needs it): install g++ 10 or newer (Ubuntu: apt-get install -y g++)"
}

# CMake 3.24 or newer; an older or missing one is replaced by PyPI's cmake wheel where pip exists.
ensure_cmake() {
    local found
    found=$(cmake_version)
    version_at_least "${found:-0}" "$minimum_cmake" && return 0
    local what="CMake $minimum_cmake+ is needed, ${found:+cmake on PATH is }${found:-no cmake on PATH}"
    python3 -m pip --version >/dev/null 2>&1 ||
        { requirement_missing "$what and python3 has no pip to install it: apt-get install -y python3-pip, or install CMake from cmake.org/download"; return; }
    echo "setup.sh: $what: installing PyPI's cmake with pip"
    # The image is built for this alone: where the distribution marks its Python as
    # externally managed (Debian 12, Ubuntu 24.04) pip may still install; older pips ignore it.
    PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install "cmake>=$minimum_cmake" ||
        { requirement_missing "$what and pip could not install it (pip's output is above): install CMake from cmake.org/download"; return; }
    hash -r
    found=$(cmake_version)
    version_at_least "${found:-0}" "$minimum_cmake" ||
        requirement_missing "pip installed cmake, but the cmake on PATH is still ${found:-missing}: put pip's scripts folder ($(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')) first on PATH"
}

# find_package(GTest) exactly as the student tree's tests/CMakeLists.txt calls it, in a scratch project.
googletest_found() {
    local probe status
    probe=$(mktemp -d) || return
    printf '%s\n' "cmake_minimum_required(VERSION $minimum_cmake)" "project(googletest_probe LANGUAGES CXX)" \
        "find_package(GTest CONFIG QUIET)" "if(NOT GTest_FOUND)" "  find_package(GTest MODULE REQUIRED)" "endif()" \
        >"$probe/CMakeLists.txt"
    cmake -S "$probe" -B "$probe/build" >/dev/null 2>&1 && status=0 || status=$?
    rm -rf "$probe"
    return "$status"
}

# GoogleTest, for the student tree's tests; installed with apt-get where it exists.
ensure_googletest() {
    googletest_found && return 0
    command -v apt-get >/dev/null ||
        { requirement_missing "GoogleTest not found by find_package(GTest) and there is no apt-get to install it: install GoogleTest (libgtest-dev, or github.com/google/googletest built and installed)"; return; }
    echo "setup.sh: GoogleTest not found: installing libgtest-dev with apt-get"
    { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y libgtest-dev; } ||
        { requirement_missing "GoogleTest not found and apt-get could not install libgtest-dev (its output is above)"; return; }
    googletest_found ||
        requirement_missing "apt-get installed libgtest-dev, but find_package(GTest) still fails: install GoogleTest's CMake package"
}

# The GPU comes with the runner, not the image: one warning line when none is visible.
warn_without_gpu() {
    nvidia-smi >/dev/null 2>&1 ||
        echo "setup.sh: warning: nvidia-smi sees no GPU: grading needs the runner's GPU and the host's NVIDIA driver; building for ${CUDAARCHS:-the default list of common GPUs} (classroom generate --cuda-archs)" >&2
}

check_requirements() {
    put_cuda_on_path
    check_cxx20_compiler || return
    check_program nm "binutils: the compiled check lists the student's object with it" "apt-get install -y binutils" || return
    check_program objdump "binutils: the compiled check reads the student's object with it" "apt-get install -y binutils" || return
    check_program readelf "binutils: the compiled check reads the student's object's sections with it" "apt-get install -y binutils" || return
    check_program nvcc "the CUDA Toolkit's compiler; not in ${CUDA_HOME:-/usr/local/cuda}/bin either" \
        "build the image from NVIDIA's CUDA devel image or install the toolkit (developer.nvidia.com/cuda-downloads); set CUDA_HOME if it is elsewhere" || return
    check_program compute-sanitizer "the CUDA Toolkit's sanitizer: the grader's memcheck and racecheck runs" \
        "install the whole CUDA Toolkit (NVIDIA's cuda-toolkit package), not nvcc alone" || return
    ensure_cmake || return
    ensure_googletest || return
    warn_without_gpu
    local nvcc_release=unknown
    [[ $(nvcc --version 2>/dev/null) =~ release\ ([0-9.]+) ]] && nvcc_release=${BASH_REMATCH[1]}
    echo "setup.sh: requirements met: CMake $(cmake_version), nvcc $nvcc_release ($(command -v nvcc)), compute-sanitizer, a C++20 compiler, nm, objdump, readelf, GoogleTest"
}
