// --op: reduce7 and reduce_all hand a command line that has --op to another program, for
// other operators and element types. ops/ops_entry.cpp registers it where it is linked in
// (reduce7 and reduce_all, when the tree has ops/); a classroom tree has none.
#pragma once

#include <string>
#include <vector>

struct OperatorProgram {
    // Runs it on the command line after argv[0]; its error lines start with `name`.
    int (*run)(const std::string& name, const std::vector<std::string>& args) = nullptr;
    std::string help;                // its --help lines for --op
    std::vector<std::string> types;  // what its --type takes, for the error of a stage given one of them
};

// With one registered, run_program (stage_main.h) gives it every command line that has --op.
void register_operator_program(OperatorProgram program);
