// Running a program with a time limit, its output captured (the grader's build and tests).
#pragma once

#include <string>
#include <vector>

namespace classroom {

struct ProcessResult {
    int exit_code = -1;       // the program's exit status; -1 if it did not exit by itself
    bool timed_out = false;   // killed, with its whole process group, at the time limit
    bool started = false;     // false when the program could not be run at all
    std::string output;       // stdout and stderr, interleaved as written (RunSpec::most_output of it)
    bool output_cut = false;  // the output was longer: `output` holds its first and last halves
    double seconds = 0;
};

// Runs argv[0] (looked up in PATH) with the arguments, in `directory` (empty: here).
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& directory, int timeout_seconds);

// The same, with more control. `run_as`: a user name the program runs as (only when this
// process is root; "" keeps ours). `extra_env`: "NAME=value" added to the environment.
struct RunSpec {
    std::string directory;
    int timeout_seconds = 600;
    std::string run_as;
    std::vector<std::string> extra_env;
    // The most of its output read back into memory: past it, the first and last halves,
    // with a line that says how much was left out (a submission that prints without end
    // then costs the grader no more than this).
    std::size_t most_output = std::size_t{4} << 20;
};
ProcessResult run_process(const std::vector<std::string>& argv, const RunSpec& spec);

// Makes this process the reaper of every orphan among its descendants (Linux's child
// subreaper), so that a process a step leaves behind, even one that started a session of
// its own, stays this process's child and can be ended.
void become_subreaper();
// Ends every leftover: each orphan this process adopted (become_subreaper), and, when this
// process is root and `user` is given, every process of that user, waiting until none is
// alive. Returns "" when none is, else what went wrong (the grading is then not trusted).
std::string kill_leftovers(const std::string& user);
// Whether enough of `user`'s task slots are free for a grading (student_user.h,
// kTasksAGradingNeeds): false when processes of the same user id elsewhere on the host hold
// them. Root only; true otherwise.
bool task_slots_free(const std::string& user);
// Removes what `user` left in the machine's shared writable folders (/tmp, /var/tmp,
// /dev/shm, /run/lock, /dev/mqueue) and its System V shared memory, semaphores and message
// queues, so that no step hands data to a later one through them (root only, after
// kill_leftovers; a no-op otherwise). Returns how many went.
int remove_files_of(const std::string& user);
// Hands a folder and everything in it to `user` (root only; a no-op otherwise).
void give_to(const std::string& path, const std::string& user);
// uid and gid of a user; false when there is no such user.
bool user_ids(const std::string& user, unsigned& uid, unsigned& gid);

// argv[0] found in PATH, or "" (for a clear message before trying to run it).
std::string find_program(const std::string& name);

}  // namespace classroom
