// Submissions made from the instructor's own files, for the grading tests on a GPU:
// test_grading.cpp grades them in process, test_gradescope.cpp through Gradescope's own
// scripts as root. Each builder returns a whole kernel.cu.
#pragma once

#include <string>

#include "files.h"

namespace classroom_fixtures {

using classroom::fs::path;

// "" when a GPU is there, else why the test skips.
std::string gpu_missing();
std::string replace_all(std::string text, const std::string& from, const std::string& to);
// The kernel name a stage registers ("first_add_during_load" for reduce3).
std::string kernel_name(const std::string& kernel_cu, int stage);
// A file with the headers of its own folder pasted in: a submission is its kernel.cu alone.
std::string inline_local_includes(std::string text, const path& folder);
// `dir` holding only <stage>/kernel.cu = `kernel`.
path submission_with(const path& dir, int stage, const std::string& kernel);

// The reference with `extra` put in before its Stage record.
std::string before_stage(const std::string& kernel, int stage, const std::string& extra);
// The reference's launcher replaced in the Stage record by `launcher` (defined in
// `definition`, where ORIGINAL names the replaced one), for int, float and double.
std::string with_launcher(const std::string& kernel, int stage, const std::string& launcher, const std::string& definition);
// The stub with its launcher replaced by a call of another stage's (`other`: "reduce3").
std::string borrowing(const std::string& stub, int stage, const std::string& other);
// The previous stage's reference, renamed to hand in as `stage`'s kernel.cu: correct, but
// not this stage's speed (it deserves everything but the performance points).
std::string previous_stage_in_place(const path& solutions, int stage);
// `previous_code` with something that keeps the GPU busy while its worker waits between
// requests: `how` is "thread", "timer" or "daemon" (threat model, class 8).
std::string sabotage(const std::string& previous_code, int stage, const std::string& how);

// reduce4's reference with the pre-Volta last warp (right sums on this GPU, a data race),
// and with a last warp by shuffles (a correct alternative). `repo`: the repository.
std::string racy_last_warp(const std::string& reference, const path& repo);
std::string shuffle_last_warp(const std::string& reference, const path& repo);

}  // namespace classroom_fixtures
