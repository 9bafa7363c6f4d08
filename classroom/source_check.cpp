#include "source_check.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace classroom {

namespace {

// What no reduction kernel or launcher needs, by the threat model's classes.
const char* const kForbidden[] = {
    // (1) ending the process or taking over its exit
    "exit", "_exit", "_Exit", "quick_exit", "abort", "atexit", "at_quick_exit", "on_exit", "terminate",
    "set_terminate", "longjmp", "setjmp",
    // (1, 5) other processes, signals, threads that outlive a call
    "fork", "vfork", "clone", "execl", "execlp", "execle", "execv", "execvp", "execvpe", "execve", "fexecve",
    "posix_spawn", "posix_spawnp", "system", "popen", "daemon", "setsid", "setpgid", "kill", "killpg", "raise",
    "signal", "sigaction", "ptrace", "prctl", "pthread_create", "std::thread", "std::jthread", "std::async",
    "std::system", "std::exit", "std::quick_exit", "std::abort",
    // (2, 5) files, the environment, sockets, dynamic loading, raw system calls
    "fopen", "fopen64", "freopen", "fdopen", "open", "open64", "openat", "creat", "unlink", "unlinkat", "remove",
    "rename", "renameat", "mkdir", "rmdir", "chdir", "chmod", "chown", "symlink", "truncate", "ftruncate", "opendir",
    "readdir", "scandir", "mmap", "mprotect", "memfd_create", "ifstream", "ofstream", "fstream", "filebuf",
    "std::filesystem", "getenv", "secure_getenv", "setenv", "putenv", "unsetenv", "clearenv", "environ", "socket",
    "connect", "bind", "dlopen", "dlmopen", "dlsym", "dlvsym", "syscall", "setuid", "setgid", "seteuid",
    "setreuid", "__attribute__", "constructor", "destructor", "init_priority", "_Pragma", "thrd_create", "_Fork",
    "execveat", "openat64", "openat2", "creat64", "symlinkat", "linkat", "renameat2", "mkdirat", "mknod", "mknodat",
    "__environ", "_environ", "fchownat", "fchmodat",
    // attributes by other spellings: nvcc's own macro for __attribute__ (attacks 18, 19 and
    // 21 placed code and symbols with it), and the attributes that place code or names
    // where the loader runs or binds them, in the C++ spelling [[gnu::...]] too
    "__annotate__", "section", "symver", "ifunc", "weakref", "gnu::alias",
    // every other spelling of a GNU attribute (review12/23: [[gnu::__section__]],
    // [[__gnu__::section]], [[using gnu: ...]], __attribute((...))), and the names of nvcc's
    // registration machinery, which a declaration of the submission's could capture
    // (review12/22: a static extern "C" __cudaRegisterVar that nvcc's own stub then called)
    "gnu::*", "__gnu__", "__attribute", "__declspec", "__cuda*", "__sti*", "__nv_cuda*", "__fatbin*",
    // CUDA's other macro for __attribute__ (review14/26 placed a section with it), beside
    // __annotate__; a forbidden name's reserved spelling __name__ is forbidden with it
    // (forbidden_name: __section__, __constructor__, __symver__, ...)
    "__location__",
    // (5, 9) timers that call back on a thread, loader and auxiliary-vector queries, the C
    // library's internal names, host clocks (the compiled check refuses them by symbol too)
    "timer_create", "timer_settime", "dl_iterate_phdr", "dladdr", "dladdr1", "dlinfo", "getauxval", "__libc_*",
    "__gthread*", "__fork", "__clone*", "__open*", "__rdtsc", "_rdtsc", "__builtin_ia32_rd*", "__builtin_readcyclecounter",
    // (9) clocks in device code: a kernel that times itself can tell the sanitizer's slow
    // run from the others (`allow device-clocks` where an assignment needs them)
    "clock", "clock64", "__nanosleep", "globaltimer",
    // (2) the preprocessor's own file queries
    "__has_include", "__has_include_next", "__has_embed",
    // a file that compiles differently from one minute to the next (the compiled check
    // compiles it again)
    "__TIME__", "__DATE__", "__TIMESTAMP__",
    // host assembly can rename any function (__asm__("system")), make a raw system call or
    // include a file (.incbin); a stage's kernels need none: `allow asm` where one does
    "asm", "__asm__", "__asm",
    // the stage contract: kernel launches only, no copies to the host, no synchronization,
    // no memory of its own beyond the workspace the harness hands it
    "cudaMemcpy*", "cudaIpc*", "cudaMallocHost", "cudaHostAlloc", "cudaMallocManaged", "cudaMalloc", "cudaFree",
    "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaDeviceReset", "cudaSetDevice",
    "cudaLaunchHostFunc", "cudaStreamAddCallback", "cudaGraph*", "cuMem*", "cuIpc*", "cuLaunch*", "cuModule*",
    "cuCtx*", "cudaGetDriverEntryPoint*", "cudaHostRegister", "cudaHostGetDevicePointer", "cudaMallocAsync",
    "cudaMallocFromPoolAsync", "cudaMallocPitch", "cudaMalloc3D", "cudaStreamQuery", "cudaEventQuery", "cuStream*",
    "cuEvent*", "cuGetProcAddress*",
    // (8) timing by events (the sanitizer's run is the slow one), and allocations that
    // could starve the judge of memory
    "cudaEvent*", "cudaMallocArray", "cudaMalloc3DArray", "cudaMallocMipmappedArray", "cudaMemPool*",
    // (3) somebody else's reduction
    "cub", "thrust", "hipcub", "DeviceReduce", "BlockReduce", "WarpReduce", "cg::reduce",
    "cooperative_groups::reduce", "std::reduce", "std::accumulate", "std::transform_reduce",
};

const char* const kIncludes[] = {
    "stages.h", "stage.h", "<cuda/atomic>", "<cstdint>", "<cstddef>", "<cstdio>", "<climits>", "<cfloat>",
    "<cmath>", "<limits>", "<type_traits>", "<utility>", "<algorithm>", "<cuda_runtime.h>", "<cuda_fp16.h>",
    "<cooperative_groups.h>",
};

bool forbidden_name(const std::string& name, const SourcePolicy& policy) {
    if (policy.allowed.count(name)) return false;
    if (policy.forbidden.count(name)) return true;
    // GCC takes every attribute by its reserved spelling too: __section__ is section.
    if (name.size() > 4 && name.compare(0, 2, "__") == 0 && name.compare(name.size() - 2, 2, "__") == 0 &&
        forbidden_name(name.substr(2, name.size() - 4), policy)) {
        return true;
    }
    for (const std::string& f : policy.forbidden) {
        if (!f.empty() && f.back() == '*' && name.compare(0, f.size() - 1, f, 0, f.size() - 1) == 0 &&
            !policy.allowed.count(f)) {
            return true;
        }
    }
    return false;
}

constexpr std::size_t kMaxLine = 1000;

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The file after translation phases 1-3, roughly: lines spliced, comments blanked, and,
// in `code`, the contents of string and character literals blanked too; `with_strings`
// keeps them (for #include). Both keep every newline, so line numbers hold.
struct Lexed {
    std::string code, with_strings;
    std::vector<std::pair<int, std::string>> literals;  // (line, contents)
    std::vector<int> line_of;                            // a character of `code` -> its line
    std::string problem;                                 // an unterminated comment or literal
};

Lexed lex(const std::string& text) {
    // Phase 2: splice lines ending in a backslash, remembering each character's line.
    std::string spliced;
    std::vector<int> line_of;
    int line = 1;
    for (std::size_t i = 0; i < text.size(); ++i) {
        // GCC splices a backslash followed by spaces or tabs and a newline too (with a warning).
        std::size_t end = i + 1;
        while (text[i] == '\\' && end < text.size() && (text[end] == ' ' || text[end] == '\t' || text[end] == '\f' ||
                                                         text[end] == '\v' || text[end] == '\r')) {
            ++end;
        }
        if (text[i] == '\\' && end < text.size() && text[end] == '\n') {
            i = end;
            ++line;
            continue;
        }
        spliced += text[i];
        line_of.push_back(line);
        if (text[i] == '\n') ++line;
    }
    Lexed out;
    out.line_of = line_of;
    out.code = spliced;
    out.with_strings = spliced;
    const std::size_t size = spliced.size();
    std::size_t i = 0;
    auto blank = [&](std::size_t from, std::size_t to, bool in_both) {
        for (std::size_t k = from; k < to && k < size; ++k) {
            if (spliced[k] == '\n') continue;
            out.code[k] = ' ';
            if (in_both) out.with_strings[k] = ' ';
        }
    };
    // Forward, token by token, as the compiler reads it: a pp-number (which takes in
    // 1e+5, 0x1p-3 and digit separators) can never start a literal or a raw string.
    auto literal = [&](std::size_t quote) -> std::size_t {  // an ordinary "..." or '...'; returns the end
        const char q = spliced[quote];
        std::size_t end = quote + 1;
        for (; end < size && spliced[end] != q && spliced[end] != '\n'; ++end) {
            if (spliced[end] == '\\') ++end;
        }
        if (end >= size || spliced[end] != q) {
            out.problem = "a literal that never ends";
            return size;
        }
        out.literals.push_back({line_of[quote], spliced.substr(quote + 1, end - quote - 1)});
        blank(quote + 1, end, false);
        return end + 1;
    };
    while (i < size && out.problem.empty()) {
        const char c = spliced[i];
        if (c == '/' && i + 1 < size && spliced[i + 1] == '/') {
            const std::size_t end = spliced.find('\n', i);
            blank(i, end == std::string::npos ? size : end, true);
            i = end == std::string::npos ? size : end;
        } else if (c == '/' && i + 1 < size && spliced[i + 1] == '*') {
            const std::size_t end = spliced.find("*/", i + 2);
            if (end == std::string::npos) {
                out.problem = "a comment that never ends";
                blank(i, size, true);
                break;
            }
            blank(i, end + 2, true);
            i = end + 2;
        } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                   (c == '.' && i + 1 < size && std::isdigit(static_cast<unsigned char>(spliced[i + 1])))) {
            std::size_t end = i + 1;
            while (end < size) {
                const char d = spliced[end];
                if (ident_char(d) || d == '.') {
                    ++end;
                } else if ((d == '+' || d == '-') && std::string("eEpP").find(spliced[end - 1]) != std::string::npos) {
                    ++end;
                } else if (d == '\'' && end + 1 < size && ident_char(spliced[end + 1])) {
                    end += 2;  // a digit separator
                } else {
                    break;
                }
            }
            i = end;
        } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            std::size_t end = i;
            while (end < size && ident_char(spliced[end])) ++end;
            const std::string word = spliced.substr(i, end - i);
            const bool raw = end < size && spliced[end] == '"' &&
                             (word == "R" || word == "u8R" || word == "uR" || word == "UR" || word == "LR");
            if (!raw) {
                i = end;  // an encoding prefix (u8"...") leaves the quote to the next turn
                continue;
            }
            const std::size_t body = end + 1;
            const std::size_t paren = spliced.find('(', body);
            if (paren == std::string::npos) {
                out.problem = "a raw string literal without its '('";
                break;
            }
            const std::string close = ")" + spliced.substr(body, paren - body) + "\"";
            const std::size_t stop = spliced.find(close, paren + 1);
            if (stop == std::string::npos) {
                out.problem = "a raw string literal that never ends";
                break;
            }
            out.literals.push_back({line_of[end], spliced.substr(paren + 1, stop - paren - 1)});
            blank(body, stop + close.size() - 1, false);
            i = stop + close.size();
        } else if (c == '"' || c == '\'') {
            i = literal(i);
        } else {
            ++i;
        }
    }
    return out;
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    const auto e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Names, with one level of qualification (std::thread, cg::reduce), in code whose comments
// and literals are blanked; `line_at` maps a position to the line reported.
template <typename LineAt, typename Report>
void check_names_in(const std::string& code, LineAt line_at, int stage, const SourcePolicy& policy, Report report) {
    // Read by hand, not by std::regex, whose matcher recurses once per character and so
    // overflows the stack on a long enough identifier (the attack review's 05).
    std::string previous, before_previous;
    for (std::size_t at = 0; at < code.size();) {
        std::size_t end = at;
        if (std::isalpha(static_cast<unsigned char>(code[at])) || code[at] == '_') {
            while (end < code.size() && ident_char(code[end])) ++end;
        } else if (code.compare(at, 2, "::") == 0) {
            end = at + 2;
        } else {
            ++at;
            continue;
        }
        const std::string t = code.substr(at, end - at);
        if (t == "operator") {
            // An operator& of the submission's: nvcc's registration function takes the address
            // of every __device__ variable with a unary &, before main, and a class's own
            // operator& runs there, inlined (review15/29 rewrote the environment from one).
            // A reduction needs neither & nor && of its own.
            std::size_t k = end;
            while (k < code.size() && std::isspace(static_cast<unsigned char>(code[k]))) ++k;
            if (k < code.size() && code[k] == '&' && (k + 1 >= code.size() || code[k + 1] != '=')) {
                report(line_at(at), "'operator&' is not allowed: nvcc's registration of __device__ variables, before "
                                    "main, would call a class's own address-of operator");
            }
        }
        const std::size_t position = at;
        at = end;
        if (t != "::") {
            const int number = line_at(position);
            const std::string qualified =
                previous == "::" && !before_previous.empty() && before_previous != "::" ? before_previous + "::" + t : "";
            if (forbidden_name(t, policy)) {
                report(number, "'" + t + "' is not allowed in a submission (source_policy.txt)");
            } else if (t == "gnu" && previous == "using" && forbidden_name("gnu::*", policy)) {
                // [[using gnu: section(...)]]: the attribute namespace without "::"
                report(number, "'using gnu' (GNU attributes) is not allowed in a submission (source_policy.txt)");
            } else if (!qualified.empty() && forbidden_name(qualified, policy)) {
                report(number, "'" + qualified + "' is not allowed in a submission (source_policy.txt)");
            }
            if (t.size() == 13 && t.compare(0, 6, "reduce") == 0 && std::isdigit(static_cast<unsigned char>(t[6])) &&
                t.compare(7, 6, "_stage") == 0 && t[6] - '0' != stage) {
                report(number, "'" + t + "' is another stage: write this stage's own code");
            }
        }
        before_previous = previous;
        previous = t;
    }
}

}  // namespace

SourcePolicy default_source_policy() {
    SourcePolicy p;
    p.forbidden.insert(std::begin(kForbidden), std::end(kForbidden));
    p.includes.insert(std::begin(kIncludes), std::end(kIncludes));
    return p;
}

SourcePolicy read_source_policy(const std::string& text) {
    SourcePolicy p = default_source_policy();
    std::istringstream in(text);
    int number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        line = trim(line.substr(0, line.find('#') == 0 ? 0 : std::string::npos));
        if (line.empty()) continue;
        std::istringstream words(line);
        std::string verb, what, extra;
        words >> verb >> what >> extra;
        if (what.empty() || !extra.empty()) {
            throw std::invalid_argument("source_policy.txt:" + std::to_string(number) + ": expected '<verb> <one word>'");
        }
        if (verb == "allow-include") {
            p.includes.insert(what);
        } else if (verb == "allow" && what == kDeviceClocks) {
            p.allowed.insert(what);
            for (const char* clock_name : {"clock", "clock64", "__nanosleep", "globaltimer"}) p.allowed.insert(clock_name);
        } else if (verb == "allow") {
            p.allowed.insert(what);
        } else if (verb == "allow-symbol") {
            p.symbols.insert(what);
        } else if (verb == "forbid") {
            p.forbidden.insert(what);
            p.allowed.erase(what);
        } else if (verb == "check" && (what == "off" || what == "on")) {
            p.enabled = what == "on";
        } else {
            throw std::invalid_argument("source_policy.txt:" + std::to_string(number) + ": unknown '" + verb + " " + what +
                                        "' (allow-include, allow, allow-symbol, forbid, check on|off)");
        }
    }
    return p;
}

std::string source_policy_template() {
    std::string t =
        "# What a submitted kernel.cu may contain (classroom/source_check.h; docs/classroom.md).\n"
        "# The grader refuses a submission that breaks it, with the line and the reason, before\n"
        "# building anything. One rule a line:\n"
        "#   allow-include <header>     allow-include \"name.h\"\n"
        "#   allow NAME                 take a name off the forbidden list\n"
        "#   allow device-clocks        clock64, %globaltimer and __nanosleep in kernels (by name\n"
        "#                              and in the compiled PTX)\n"
        "#   allow-symbol PATTERN       a symbol the compiled kernel.cu may call (NAME* a prefix)\n"
        "#   forbid NAME                forbid one more name (NAME* forbids a prefix)\n"
        "#   check off                  neither the source check nor the compiled check (the judge\n"
        "#                              still decides every point)\n"
        "#\n# Allowed includes by default:";
    for (const char* inc : kIncludes) t += std::string(" ") + inc;
    t += ", and the headers of the stage's own folder.\n# Forbidden names by default:";
    int column = 100;
    for (const char* name : kForbidden) {
        if (column > 80) {
            t += "\n#  ";
            column = 3;
        }
        t += std::string(" ") + name;
        column += static_cast<int>(std::string(name).size()) + 1;
    }
    return t + "\n";
}

std::vector<std::string> check_source(const std::string& path, const std::string& text, int stage,
                                      const std::set<std::string>& local_headers, const SourcePolicy& policy) {
    std::vector<std::string> problems;
    if (!policy.enabled) return problems;
    auto report = [&](int line, const std::string& what) {
        if (problems.size() < 20) problems.push_back(path + ":" + std::to_string(line) + ": " + what);
    };
    if (text.size() > 512 * 1024) {
        report(1, "the file is larger than 512 KiB");
        return problems;
    }
    for (unsigned char c : text) {
        if (c == 0) {
            report(1, "the file has a NUL byte: not source text");
            return problems;
        }
    }
    // Long lines are refused before anything reads them: the compiler's messages quote
    // them, and the grader's and the judge's readers of those messages need not be ready
    // for megabytes on a line.
    int line_number = 1;
    for (std::size_t start = 0; start < text.size(); ++line_number) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        if (end - start > kMaxLine) {
            report(line_number, "a line longer than " + std::to_string(kMaxLine) + " characters");
            return problems;
        }
        start = end + 1;
    }
    Lexed lexed = lex(text);
    if (!lexed.problem.empty()) report(1, lexed.problem);
    auto line_at = [&](std::size_t pos) { return pos < lexed.line_of.size() ? lexed.line_of[pos] : 1; };

    // The preprocessor's ways of writing a name without writing it.
    for (const auto& [needle, why] : std::vector<std::pair<std::string, std::string>>{
             {"##", "token pasting (##) can build a forbidden name"},
             {"%:", "a digraph (%:) stands for #"},
             {"??", "a trigraph"},
             {"\\u", "a universal character name in code"},
             {"\\U", "a universal character name in code"}}) {
        for (std::size_t at = lexed.code.find(needle); at != std::string::npos; at = lexed.code.find(needle, at + 1)) {
            if (needle == "??" && (at + 2 >= lexed.code.size() || std::string("=/'()!<>-").find(lexed.code[at + 2]) == std::string::npos)) continue;
            report(line_at(at), why);
            break;
        }
    }

    // Directives: includes from the allow-list only, a few pragmas.
    static const std::set<std::string> kDirectives = {"include", "define", "undef", "if", "ifdef", "ifndef", "elif",
                                                      "elifdef", "elifndef", "else", "endif", "error", "warning",
                                                      "pragma"};
    std::istringstream lines(lexed.with_strings);
    std::size_t offset = 0;
    for (std::string line; std::getline(lines, line); offset += line.size() + 1) {
        // `# name rest`, read by hand (a spliced line can be long: see check_names_in).
        std::size_t at = line.find_first_not_of(" \t\r\f\v");
        if (at == std::string::npos || line[at] != '#') continue;
        at = line.find_first_not_of(" \t\r\f\v", at + 1);
        std::size_t name_end = at == std::string::npos ? line.size() : at;
        while (name_end < line.size() && ident_char(line[name_end])) ++name_end;
        const int number = line_at(offset);
        const std::string name = at == std::string::npos ? "" : line.substr(at, name_end - at);
        const std::string rest = trim(line.substr(name_end));
        if (name == "include" || name == "include_next") {
            // The header's name is not code: <cub/block/block_reduce.cuh> names no call.
            for (std::size_t k = offset; k < offset + line.size() && k < lexed.code.size(); ++k) lexed.code[k] = ' ';
        }
        if (name == "include") {
            std::string target;
            if (rest.size() >= 2 && ((rest.front() == '"' && rest.find('"', 1) == rest.size() - 1) ||
                                     (rest.front() == '<' && rest.find('>') == rest.size() - 1))) {
                target = rest.front() == '"' ? rest.substr(1, rest.size() - 2) : rest;
            }
            const bool local = !target.empty() && rest.front() == '"' && local_headers.count(target);
            if (target.empty()) {
                report(number, "#include must name its header in \"\" or <> (not a macro)");
            } else if (!local && !policy.includes.count(target)) {
                report(number, "#include " + rest + " is not on the allow-list (source_policy.txt)");
            }
        } else if (name == "line" || (!name.empty() && std::isdigit(static_cast<unsigned char>(name[0])))) {
            // The compiled check reads the preprocessed file by its line markers.
            report(number, "#" + name + ": a line marker would tell the compiled check that code came from another file");
        } else if (!name.empty() && !kDirectives.count(name)) {
            // Everything else GCC knows reaches the compiler's output unread by this check:
            // #ident and #sccs write their string into the assembly unescaped (review13/24
            // and 25 wrote assembly of their own through one), #assert, #include_next,
            // #import and #embed reach other files. None is needed by a kernel.cu.
            report(number, "#" + name + " is not allowed (only #include, #define, #undef, the #if family, #error, "
                                        "#warning and a few #pragma)");
        } else if (name == "pragma") {
            std::istringstream words(rest);
            std::string first;
            words >> first;
            if (first != "unroll" && first != "once" && !policy.allowed.count("#pragma " + first)) {
                report(number, "#pragma " + first + " is not allowed");
            }
        }
    }

    check_names_in(lexed.code, line_at, stage, policy, report);

    // Literals that would reach the grader's files or the assembler's file inclusion.
    for (const auto& [number, contents] : lexed.literals) {
        for (const char* needle : {".incbin", ".include", "/autograder", "solution/", "/proc/", "/dev/"}) {
            if (contents.find(needle) != std::string::npos) {
                report(number, std::string("a string with '") + needle + "' in it");
            }
        }
    }
    return problems;
}

std::vector<std::string> check_names(const std::string& path, const std::vector<std::pair<int, std::string>>& lines,
                                     int stage, const SourcePolicy& policy, const std::set<std::string>& made_by_macros) {
    std::vector<std::string> problems;
    std::set<std::string> seen;
    std::string text;
    std::vector<int> line_of_text_line;
    for (const auto& [number, line] : lines) {
        text += line + "\n";
        line_of_text_line.push_back(number);
    }
    Lexed lexed = lex(text);
    if (!lexed.problem.empty()) problems.push_back(path + ": the preprocessed file has " + lexed.problem);
    auto line_at = [&](std::size_t pos) {
        const int text_line = pos < lexed.line_of.size() ? lexed.line_of[pos] : 1;
        return text_line - 1 < static_cast<int>(line_of_text_line.size()) ? line_of_text_line[text_line - 1] : 0;
    };
    SourcePolicy names = policy;
    for (const std::string& name : made_by_macros) names.forbidden.erase(name);
    auto report = [&](int number, const std::string& what) {
        const std::string problem = path + ":" + std::to_string(number) + ": after preprocessing, " + what;
        if (problems.size() < 20 && seen.insert(problem).second) problems.push_back(problem);
    };
    check_names_in(lexed.code, line_at, stage, names, report);
    // A literal in an attribute: GCC copies an attribute's string (a section's name, an
    // alias's or weakref's target, a symbol version) into the assembly unescaped, so it can
    // write assembly of its own (review10/19, review14/26 and 27, each through a macro the
    // text does not show). No attribute a kernel.cu needs takes one. In `code` every literal
    // keeps its quotes and loses its contents, so a quote between an attribute's brackets is
    // a literal there, and its parentheses cannot miscount them.
    const std::string& code = lexed.code;
    for (std::size_t at = 0; at < code.size(); ++at) {
        std::size_t open = std::string::npos;
        char opener = '(', closer = ')';
        if (code.compare(at, 2, "[[") == 0) {
            open = at, opener = '[', closer = ']';
        } else if (code.compare(at, 13, "__attribute__") == 0 && (at == 0 || !ident_char(code[at - 1])) &&
                   (at + 13 >= code.size() || !ident_char(code[at + 13]))) {
            open = code.find_first_not_of(" \t\n", at + 13);
            if (open == std::string::npos || code[open] != '(') continue;
        } else {
            continue;
        }
        int depth = 0;
        for (std::size_t k = open; k < code.size(); ++k) {
            if (code[k] == '"' || code[k] == '\'') {
                report(line_at(k), "a string in an attribute ('" + trim(code.substr(at, std::min<std::size_t>(k - at + 1, 60))) +
                                       "...'): its string would reach the assembly unescaped");
                return problems;
            }
            if (code[k] == opener) ++depth;
            if (code[k] == closer && --depth == 0) {
                at = k;
                break;
            }
        }
    }
    return problems;
}

bool forbidden_by(const std::string& name, const SourcePolicy& policy) { return forbidden_name(name, policy); }

}  // namespace classroom
