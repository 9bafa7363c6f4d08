// The compiled check: what the compiler read and made from a submitted kernel.cu, after
// the source check (source_check.h) has read its text. The text can hide a name from a
// text check (a macro of an allowed header, a spelling the list misses); the compiler's
// own files cannot:
//   - the preprocessed host and device passes (nvcc --keep: *.cpp4.ii, *.cpp1.ii): the
//     lines that came from the submitted file, by the line markers, through the names check;
//   - the host object's undefined symbols against an allow-list: the CUDA runtime's launch
//     path, the C++ library's exceptions, strings and streams to stdout and stderr, the C
//     library's memory, formatting and math, and what the instructor's own solutions call
//     (the harness). Threads, timers, fork and exec by any name, loader queries, files, the
//     environment, host clocks: none is on it;
//   - the host object's instructions: no system call, cycle counter or performance counter;
//   - the host object's sections and symbols: nothing that runs before the worker's own
//     first instruction (an entry of .preinit_array, an IFUNC resolver), which installs the
//     worker's filter against exec (worker/exec_filter.h), and nothing that runs before
//     main but nvcc's registration of the kernels (the one .init_array entry; no global
//     object with a constructor, no .fini_array, .ctors or .init);
//   - the PTX: no clock (%clock, %clock64, %globaltimer, nanosleep) unless the assignment
//     allows them (`allow device-clocks` in source_policy.txt).
// The grader compiles the file with the tree's own flags (the build's compile_commands.json)
// as the student's user, and reads the results as root only once every process of that
// user is gone. Defence in depth, like the source check: docs/classroom.md, "The threat model".
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "source_check.h"

namespace classroom {

// What the compiler made, as text.
struct CompiledFiles {
    std::vector<std::pair<std::string, std::string>> preprocessed;  // (file name, text): *.cpp1.ii, *.cpp4.ii
    std::vector<std::pair<std::string, std::string>> ptx;           // (file name, text)
    std::string undefined_symbols;  // `nm -u -P` of the object
    std::string disassembly;        // `objdump -d` of the object
    std::string elf_tables;         // `readelf -S -s -r -W` of the object: its sections, symbols and relocations
};

// One line per problem ("reduce4/kernel.cu: calls 'timer_create' ..."); empty when the
// object may be run. `path`: the file as the student knows it; `compiled_path`: the path
// the compiler was given (its line markers name it); `instructor_symbols`: the undefined
// symbols of the instructor's own objects for the assignment's stages.
std::vector<std::string> check_compiled(const std::string& path, const std::string& compiled_path,
                                        const CompiledFiles& files, int stage, const SourcePolicy& policy,
                                        const std::set<std::string>& instructor_symbols);

// The compiler's kept files in `keep_dir` (the preprocessed *.cpp1.ii and *.cpp4.ii, the
// *.ptx) added to `files`, each read by `read` (the grader's reads only plain files of the
// student's user's).
void add_kept_files(const std::string& keep_dir, CompiledFiles& files,
                    const std::function<std::string(const std::string&)>& read);

// The names in `nm -u -P` output.
std::set<std::string> symbol_names(const std::string& nm_output);
// The allow-list of undefined symbols (names, or patterns ending in '*'), for the tests.
std::vector<std::string> allowed_symbols();

// The compile command of `source` in a build's compile_commands.json, split into words, and
// its directory; empty when the file is not there.
std::vector<std::string> compile_command(const std::string& compile_commands_json, const std::string& source,
                                         std::string& directory);
// The same command writing its object to `keep_dir`/kernel.o and keeping the compiler's
// intermediate files there (nvcc --keep).
std::vector<std::string> keeping_command(std::vector<std::string> argv, const std::string& keep_dir);

}  // namespace classroom
