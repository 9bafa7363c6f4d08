// The source check: what a submitted kernel.cu may contain, decided before anything is
// compiled. It refuses, with the file, the line and the reason, what a reduction kernel
// and its launcher never need:
//   - includes outside an allow-list (absolute paths, "..", another stage's files);
//   - process, file, environment, signal and dynamic-loading calls, exit handlers and
//     static constructors by attribute;
//   - host copies and synchronization (the stage contract: kernel launches only);
//   - library reductions (CUB, Thrust, cooperative groups' reduce, std::reduce) and
//     another stage's launcher;
//   - the preprocessor's ways of hiding a name: token pasting, digraphs, trigraphs,
//     universal character names, a macro as an include path.
// It is defence in depth, not the grade's guarantee: the judge never trusts the student's
// process, whatever this check lets through (docs/classroom.md, "The threat model").
//
// An instructor widens or narrows it per assignment in the autograder's source_policy.txt:
//   allow-include <cooperative_groups/reduce.h>
//   allow cudaMemcpy            (a name this check forbids by default)
//   forbid atomicAdd            (one more name)
//   check off                   (no source check at all; the kit's own tests use it)
#pragma once

#include <set>
#include <string>
#include <vector>

namespace classroom {

struct SourcePolicy {
    bool enabled = true;
    std::set<std::string> includes;   // "stages.h", "<cstdint>": as written between the delimiters
    std::set<std::string> forbidden;  // names; "name*" forbids every name that starts so
    std::set<std::string> allowed;    // names taken off the forbidden list
};

SourcePolicy default_source_policy();
// The default policy changed by the lines of a policy file; throws std::invalid_argument
// for a line it does not understand.
SourcePolicy read_source_policy(const std::string& text);
// The text of a policy file that changes nothing, explaining the syntax (classroom generate
// writes it into every autograder).
std::string source_policy_template();

// One line per problem ("reduce4/kernel.cu:12: ..."); empty when the file may be built.
// `stage` is the stage the file belongs to (its own reduceN_stage may be named);
// `local_headers` the headers of that stage's folder in the handed-out tree.
std::vector<std::string> check_source(const std::string& path, const std::string& text, int stage,
                                      const std::set<std::string>& local_headers, const SourcePolicy& policy);

}  // namespace classroom
