// Running a program with a time limit, its output captured (the grader's build and tests).
#pragma once

#include <string>
#include <vector>

namespace classroom {

struct ProcessResult {
    int exit_code = -1;       // the program's exit status; -1 if it did not exit by itself
    bool timed_out = false;   // killed, with its whole process group, at the time limit
    bool started = false;     // false when the program could not be run at all
    std::string output;       // stdout and stderr, interleaved as written
    double seconds = 0;
};

// Runs argv[0] (looked up in PATH) with the arguments, in `directory` (empty: here).
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& directory, int timeout_seconds);

// argv[0] found in PATH, or "" (for a clear message before trying to run it).
std::string find_program(const std::string& name);

}  // namespace classroom
