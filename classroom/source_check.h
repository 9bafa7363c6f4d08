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
//   allow device-clocks         (clock64, %globaltimer, __nanosleep in kernels)
//   allow-symbol cudaEvent*     (a symbol the compiled object may use: compiled_check.h)
//   check off                   (no source check and no compiled check; the kit's own tests use it)
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace classroom {

struct SourcePolicy {
    bool enabled = true;
    std::set<std::string> includes;   // "stages.h", "<cstdint>": as written between the delimiters
    std::set<std::string> forbidden;  // names; "name*" forbids every name that starts so
    std::set<std::string> allowed;    // names taken off the forbidden list ("device-clocks": the clocks)
    std::set<std::string> symbols;    // symbols the compiled object may also use (compiled_check.h)
};

// `allow device-clocks`: clock, clock64, __nanosleep and %globaltimer in kernels.
inline constexpr const char* kDeviceClocks = "device-clocks";

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

// Whether the policy forbids a name ("name*" entries forbid a prefix).
bool forbidden_by(const std::string& name, const SourcePolicy& policy);

// The names part of check_source on code that is already preprocessed (the compiled check
// reads the lines the compiler took from the submitted file): `lines` are (line number in
// the submitted file, text). `made_by_macros`: forbidden names that the allowed headers'
// macros write into the lines that use them (__attribute__ from __global__), not checked.
// Also refused there: a literal inside an attribute, whatever macro wrote the attribute.
std::vector<std::string> check_names(const std::string& path, const std::vector<std::pair<int, std::string>>& lines,
                                     int stage, const SourcePolicy& policy, const std::set<std::string>& made_by_macros);

}  // namespace classroom
