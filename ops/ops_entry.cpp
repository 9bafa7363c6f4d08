// Linked into reduce7 and reduce_all (as a source, not through a library: nothing calls into
// this file, and a linker drops unreferenced library members): their --op runs reduce_ops,
// the program beside them in bin/, on the same command line (common/operator_program.h).
// The operator kernels are reduce_ops' alone, so building the lesson's executables never
// waits for them; the command line is checked here, so that a bad one is one line and exit
// status 2 also where reduce_ops is not built.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <system_error>

#include "operator_program.h"
#include "ops_options.h"  // parse_ops_options, op_choices

namespace {

namespace fs = std::filesystem;

// "build/release": where `cmake --build` builds what is missing from this program's bin/.
std::string build_dir_of(const fs::path& bin) {
    std::error_code error;
    const fs::path relative = fs::relative(bin.parent_path(), error);
    const bool inside = !error && !relative.empty() && *relative.begin() != "..";
    return (inside ? relative : bin.parent_path()).string();
}

int run_reduce_ops(const std::string& name, const std::vector<std::string>& args) {
    try {
        if (ops::parse_ops_options(args).help) {
            std::cout << ops::ops_usage_text();
            return 0;
        }
    } catch (const UsageError& e) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
        return 2;
    }
    std::error_code error;
    const fs::path bin = fs::read_symlink("/proc/self/exe", error).parent_path();
    const fs::path program = bin / "reduce_ops";
    if (error || ::access(program.c_str(), X_OK) != 0) {
        std::fprintf(stderr, "%s: --op runs reduce_ops, which is not built: cmake --build %s --target reduce_ops\n",
                     name.c_str(), error ? "build/release" : build_dir_of(bin).c_str());
        return 3;
    }
    // reduce_ops names itself after argv[0]: its error lines start with this program's name.
    std::vector<char*> argv{const_cast<char*>(name.c_str())};
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    ::execv(program.c_str(), argv.data());
    std::fprintf(stderr, "%s: cannot run %s: %s\n", name.c_str(), program.c_str(), std::strerror(errno));
    return 3;
}

std::vector<std::string> op_type_names() {
    std::vector<std::string> names;
    for (const ops::OpType type : ops::kAllTypes) names.emplace_back(ops::op_type_name(type));
    return names;
}

[[maybe_unused]] const bool registered =
    (register_operator_program(OperatorProgram{
         &run_reduce_ops,
         "  --op OP           " + ops::op_choices() + ": instead of the\n"
         "                    stages, reduce7's kernel for that operator beside CUB's (runs reduce_ops,\n"
         "                    from the same bin/; with --op, --type also takes int64, half, bfloat16;\n"
         "                    see reduce_ops --help)\n",
         op_type_names()}),
     true);

}  // namespace
