#include "compiled_check.h"

#include <cxxabi.h>
#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <sstream>

#include "files.h"

namespace classroom {

namespace {

// What a compiled kernel.cu may call beyond what the instructor's own solutions call.
// Plain C names that the source policy forbids (cudaMemcpy*, cudaMalloc, ...) stay refused.
const char* const kAllowedSymbols[] = {
    // the CUDA runtime: nvcc's registration and launch stubs, and the calls a launcher
    // needs (launches, errors, the device's attributes, occupancy, a memset of its own
    // workspace). Every call that sets GPU work going is one the worker records
    // (worker/recorder.cu). Not "cuda*": events time, array and pool allocations can
    // starve the judge of memory; nor "__cuda*": __cudaGetProcAddress hands out any
    // driver function, an unrecorded launch among them, and __cudaRegisterManagedVar makes
    // a __managed__ variable, which host code writes with no call the recorder sees
    "__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd", "__cudaUnregisterFatBinary", "__cudaRegisterFunction",
    "__cudaRegisterVar", "__cudaInitModule", "__cudaGetKernel", "__cudaLaunchKernel",
    "__cudaLaunchKernel_ptsz", "__cudaPushCallConfiguration", "__cudaPopCallConfiguration", "cudaLaunchKernel",
    "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel", "cudaGetLastError",
    "cudaPeekAtLastError", "cudaGetErrorString", "cudaGetErrorName", "cudaGetDevice", "cudaGetDeviceCount",
    "cudaDeviceGetAttribute", "cudaGetDeviceProperties*", "cudaFuncGetAttributes", "cudaFuncSetAttribute",
    "cudaOccupancy*", "cudaMemsetAsync", "cudaMemset", "cudaMemGetInfo",
    "cudaDriverGetVersion", "cudaRuntimeGetVersion",
    // the C++ runtime: exceptions, guards of function-local statics, new and delete, and
    // nvcc's own registration of the kernels, which unregisters them at exit (atexit)
    "_Unwind_Resume", "__gxx_personality_v0", "__cxa_*", "_ZTVN10__cxxabiv1*", "_ZTIN10__cxxabiv1*", "atexit",
    "__dso_handle", "_GLOBAL_OFFSET_TABLE_", "__stack_chk_fail", "__tls_get_addr", "_Znw*", "_Zna*", "_Zdl*", "_Zda*",
    "_ZSt9terminatev",
    // the C++ library: its exceptions, strings and string streams, streams to stdout/stderr
    "_ZSt*__throw_*", "_ZNSt*_error*", "_ZNKSt*_error*", "_ZNSt16invalid_argument*", "_ZNSt12out_of_range*",
    "_ZNSt12domain_error*", "_ZTISt*", "_ZTSSt*", "_ZTVSt*", "_ZNSt9exception*",
    "_ZNKSt9exception*", "_ZNSt9bad_alloc*", "_ZNSt7__cxx11*", "_ZNKSt7__cxx11*", "_ZSt4cout", "_ZSt4cerr",
    "_ZSt4clog", "_ZNSo*", "_ZNKSo*", "_ZSt16__ostream_insert*", "_ZStlsI*", "_ZSt4endl*", "_ZNSt8ios_base*",
    "_ZNKSt9basic_ios*", "_ZNSt9basic_ios*", "_ZNSt6locale*", "_ZNKSt5ctype*",
    // the C++ library's containers (map, unordered_map, list) and a mutex's lock (no thread)
    "_ZSt*_Rb_tree_*", "_ZNSt8__detail*", "_ZNKSt8__detail*", "pthread_mutex_lock", "pthread_mutex_unlock",
    "pthread_once", "__errno_location",
    // the C library: memory and strings, formatting, printing to stdout and stderr, math
    "memcpy", "memmove", "memset", "memcmp", "strlen", "strcmp", "strncmp", "strchr", "strrchr", "strstr", "strtol",
    "strtoul", "strtoll", "strtoull", "strtod", "strtof", "atoi", "atol", "printf", "fprintf", "snprintf",
    // glibc 2.38 and later name strtol and its kin so under _GNU_SOURCE, which g++ defines
    // (the same functions, reading C23's 0b prefix too): a newer image's reference would
    // otherwise be refused
    "__isoc23_strtol", "__isoc23_strtoul", "__isoc23_strtoll", "__isoc23_strtoull",
    "sprintf", "vsnprintf", "vfprintf", "vprintf", "puts", "fputs", "fputc", "putchar", "fflush", "fwrite", "stdout",
    "stderr", "__printf_chk", "__fprintf_chk", "__snprintf_chk", "__sprintf_chk", "__vsnprintf_chk", "__vfprintf_chk",
    "__memcpy_chk", "__memmove_chk", "__memset_chk", "__strcpy_chk", "__assert_fail", "sqrt*", "cbrt*", "exp", "expf",
    "expl", "exp2*", "expm1*", "log", "logf", "logl", "log2*", "log10*", "log1p*", "pow", "powf", "powl", "fabs*",
    "floor*", "ceil*", "round*", "lround*", "trunc*", "fmod*", "frexp*", "ldexp*", "sin", "sinf", "cos", "cosf",
    "tan", "tanf", "fmin*", "fmax*", "nextafter*", "hypot*", "erf*", "__isnan*", "__isinf*", "__finite*",
    "__fpclassify*",
};

// Forbidden names that the allowed headers' macros write into the lines that use them:
// __global__ and __device__ are __attribute__((global)) and __attribute__((device)).
const std::set<std::string> kMadeByMacros = {"__attribute__"};

// Forbidden names that nvcc's own code calls in every object (the source check still
// refuses them in the text).
const std::set<std::string> kMadeByCompiler = {"atexit"};

bool matches(const std::string& pattern, const std::string& name) {
    return fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
}

std::string demangled(const std::string& name) {
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> text(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
    return status == 0 && text ? std::string(text.get()) + " (" + name + ")" : name;
}

// The lines the compiler took from `file`, by the preprocessor's line markers
// (`# 12 "file" flags` and `#line 12 "file"`): (line number, text).
// Read by hand: a preprocessed line can be as long as the macros a student writes.
bool line_marker(const std::string& line, int& number, std::string& file) {
    std::size_t at = 1;
    if (line.empty() || line[0] != '#') return false;
    if (line.compare(1, 4, "line") == 0) at = 5;
    const std::size_t digits = line.find_first_not_of(' ', at);
    if (digits == std::string::npos || digits == at || !std::isdigit(static_cast<unsigned char>(line[digits]))) return false;
    std::size_t end = digits;
    while (end < line.size() && std::isdigit(static_cast<unsigned char>(line[end])) && end - digits < 9) ++end;
    if (end >= line.size() || line[end] != ' ' || end + 1 >= line.size() || line[end + 1] != '"') return false;
    number = std::stoi(line.substr(digits, end - digits));
    file.clear();
    for (std::size_t i = end + 2; i < line.size(); ++i) {
        if (line[i] == '"') return true;
        if (line[i] == '\\' && i + 1 < line.size()) ++i;
        file += line[i];
    }
    return false;
}

// A symbol the object defines, from a line of `readelf -s -W`:
// "    30: 00000000000002e5    90 FUNC    LOCAL  DEFAULT   17 _ZL24__sti____cudaRegisterAllv".
struct DefinedSymbol {
    std::string value, size, type, bind, section, name;  // section: its index, as readelf prints it
};

// Every symbol the object defines (not an undefined one, not a section's or the file's).
std::vector<DefinedSymbol> defined_symbols(const std::string& tables) {
    std::vector<DefinedSymbol> symbols;
    std::istringstream in(tables);
    for (std::string line; std::getline(in, line);) {
        std::istringstream words(line);
        std::string number, visibility;
        DefinedSymbol s;
        if (!(words >> number >> s.value >> s.size >> s.type >> s.bind >> visibility >> s.section >> s.name)) continue;
        if (number.size() < 2 || !std::isdigit(static_cast<unsigned char>(number[0])) || number.back() != ':' ||
            s.section == "UND" || s.type == "SECTION" || s.type == "FILE") {
            continue;  // another table's line, an undefined symbol, a section's or the file's
        }
        symbols.push_back(std::move(s));
    }
    return symbols;
}

// nvcc's static function that registers the kernels: the one .init_array entry allowed.
constexpr const char* kRegistration = "_ZL24__sti____cudaRegisterAllv";

// What runs before main. The C library calls every entry of the executable's .init_array
// (and .preinit_array, .ctors, .init) before main, with main's argc, argv and envp: code
// there runs before the worker has made its first CUDA call, which is when the sanitizer's
// library reads most of its settings from that very environment (review11/21 pointed one
// entry of envp at NV_COMPUTE_SANITIZER_MAX_RACECHECK_HAZARDS=0 from an .init_array entry of
// its own and racecheck reported nothing). nvcc's object has exactly one entry: its static
// function that registers the kernels with the CUDA runtime. A kernel.cu needs no other: a
// global object with a constructor, or a pointer placed in .init_array by a section
// attribute, is refused. Reads `readelf -S -s -r -W`; returns what is wrong, or "".
std::string startup_problem(const std::string& tables) {
    std::map<std::string, std::string> section_index;  // name -> "[N]" number
    std::string init_array_size;
    int init_arrays = 0;
    std::string problem;
    std::istringstream in(tables);
    std::string line;
    std::vector<std::string> lines;
    while (std::getline(in, line)) lines.push_back(line);
    // Sections: "  [43] .init_array       INIT_ARRAY      0000000000000000 0124e8 000008 08  WA  0   0  8"
    // A name is one word here: a name with a space in it (review12/23 named one
    // ".init_array.1 x" through a section attribute's string, which the linker still put
    // into .init_array) does not match, and a section line that does not match is refused.
    static const std::regex section_line(R"(^\s*\[\s*[1-9]\d*\])");  // [ 0] is the unnamed NULL section
    static const std::regex section(
        R"(^\s*\[\s*(\d+)\]\s+(\S+)\s+([A-Z][A-Z0-9_+x]*)\s+[0-9a-f]{16}\s+[0-9a-f]+\s+([0-9a-f]+)\s)");
    for (const std::string& l : lines) {
        std::smatch m;
        if (!std::regex_search(l, m, section)) {
            if (std::regex_search(l, section_line)) return "a section whose name the check cannot read ('" + l + "')";
            continue;
        }
        const std::string name = m.str(2), type = m.str(3);
        section_index[name] = m.str(1);
        auto starts = [&](const char* prefix) { return name.rfind(prefix, 0) == 0; };
        if (starts(".init_array") || type == "INIT_ARRAY") {
            ++init_arrays;
            if (name != ".init_array") problem = "a section '" + name + "' of start-up code";
            init_array_size = m.str(4);
        } else if (starts(".fini_array") || starts(".ctors") || starts(".dtors") || name == ".init" || name == ".fini" ||
                   type == "FINI_ARRAY" || type == "PREINIT_ARRAY") {
            problem = "a section '" + name + "' of code run before or after main";
        }
    }
    if (!problem.empty()) return problem;
    if (init_arrays == 0) return "";
    if (init_arrays > 1 || std::stoul(init_array_size, nullptr, 16) != 8) {
        return "more than one entry in .init_array (a global object built at start-up, or a pointer put there)";
    }
    // Its one relocation: "0000000000000000  0000003d00000001 R_X86_64_64  0000000000000000 .text.startup + 0"
    static const std::regex relocation(R"(^[0-9a-f]+\s+[0-9a-f]+\s+(R_X86_64_64)\s+[0-9a-f]+\s+(\S+)\s+\+\s+([0-9a-f]+)\s*$)");
    bool in_init = false;
    std::vector<std::pair<std::string, std::string>> targets;  // (symbol, addend)
    for (const std::string& l : lines) {
        if (l.rfind("Relocation section", 0) == 0) {
            in_init = l.find("'.rela.init_array'") != std::string::npos;
            continue;
        }
        std::smatch m;
        if (in_init && std::regex_search(l, m, relocation)) targets.emplace_back(m.str(2), m.str(3));
    }
    if (targets.size() != 1) return "an .init_array entry the check cannot read (" + std::to_string(targets.size()) + " relocations)";
    const auto& [target, addend] = targets.front();
    if (target == kRegistration && std::stoul(addend, nullptr, 16) == 0) return "";
    // Through the section: the function symbol at that offset of that section.
    const auto index = section_index.find(target);
    if (index != section_index.end()) {
        for (const DefinedSymbol& symbol : defined_symbols(tables)) {
            if (symbol.type == "FUNC" && symbol.section == index->second && symbol.name == kRegistration &&
                std::stoul(symbol.value, nullptr, 16) == std::stoul(addend, nullptr, 16)) {
                return "";
            }
        }
    }
    return "an .init_array entry that is not nvcc's registration of the kernels (" + target + " + " + addend + ")";
}

// What nvcc's registration function calls: the runtime's __cudaRegister* functions and
// atexit, nothing else. A call of its that reaches the submission's code runs that code
// before main (review13/24 bound its atexit to a label of the submission's, 25 retargeted it
// by a second relocation, review14/26 by a .weakref alias). "" where it calls only those.
std::string registration_calls_problem(const std::string& tables) {
    const std::vector<DefinedSymbol> symbols = defined_symbols(tables);
    const auto registration = std::find_if(symbols.begin(), symbols.end(),
                                           [](const DefinedSymbol& s) { return s.name == kRegistration; });
    if (registration == symbols.end()) return "";  // no kernels, no registration
    // Its section's name, from "  [41] .text.startup     PROGBITS ...".
    std::string section;
    static const std::regex section_line(R"(^\s*\[\s*(\d+)\]\s+(\S+)\s)");
    std::istringstream in(tables);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    for (const std::string& l : lines) {
        std::smatch m;
        if (std::regex_search(l, m, section_line) && m.str(1) == registration->section) section = m.str(2);
    }
    if (section.empty()) return "nvcc's registration function in a section the check cannot find";
    const unsigned long from = std::stoul(registration->value, nullptr, 16);
    const unsigned long to = from + std::stoul(registration->size);
    // Its relocations: "0000000000000009  0000008d00000004 R_X86_64_PLT32  0000000000000000 atexit - 4".
    static const std::regex entry(R"(^([0-9a-f]+)\s+[0-9a-f]+\s+(R_X86_64_\w+)\s+[0-9a-f]+\s+(\S+))");
    bool in_section = false;
    for (const std::string& l : lines) {
        if (l.rfind("Relocation section", 0) == 0) {
            in_section = l.find("'.rela" + section + "'") != std::string::npos;
            continue;
        }
        std::smatch m;
        if (!in_section || !std::regex_search(l, m, entry)) continue;
        const unsigned long offset = std::stoul(m.str(1), nullptr, 16);
        const std::string type = m.str(2), target = m.str(3);
        const bool call = type == "R_X86_64_PLT32" || type.rfind("R_X86_64_GOTPC", 0) == 0;
        if (offset < from || offset >= to || !call) continue;
        if (target != "atexit" && target.rfind("__cudaRegister", 0) != 0) {
            return "a call from nvcc's registration function to '" + target + "' (" + type +
                   "): it calls only the runtime's registration functions and atexit";
        }
    }
    return "";
}

std::vector<std::pair<int, std::string>> lines_from(const std::string& preprocessed, const std::string& file) {
    std::vector<std::pair<int, std::string>> lines;
    std::istringstream in(preprocessed);
    std::string current;
    int next = 1;
    for (std::string line; std::getline(in, line);) {
        int number = 0;
        std::string named;
        if (line_marker(line, number, named)) {
            current = named;
            next = number;
            continue;
        }
        if (current == file) lines.push_back({next, line});
        ++next;
    }
    return lines;
}

// One JSON string starting at text[at] == '"'; `at` ends past its closing quote.
std::string json_string(const std::string& text, std::size_t& at) {
    std::string out;
    for (++at; at < text.size() && text[at] != '"'; ++at) {
        if (text[at] != '\\' || at + 1 >= text.size()) {
            out += text[at];
            continue;
        }
        const char e = text[++at];
        if (e == 'n') out += '\n';
        else if (e == 't') out += '\t';
        else if (e == 'u' && at + 4 < text.size()) {  // compile commands are ASCII; keep the byte
            out += static_cast<char>(std::stoi(text.substr(at + 1, 4), nullptr, 16));
            at += 4;
        } else out += e;
    }
    ++at;
    return out;
}

// A shell command line as CMake writes it into compile_commands.json, in words.
std::vector<std::string> split_words(const std::string& command) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    char quote = 0;
    for (std::size_t i = 0; i < command.size(); ++i) {
        const char c = command[i];
        if (quote) {
            if (c == quote) quote = 0;
            else if (c == '\\' && quote == '"' && i + 1 < command.size()) word += command[++i];
            else word += c;
        } else if (c == '"' || c == '\'') {
            quote = c;
            in_word = true;
        } else if (c == '\\' && i + 1 < command.size()) {
            word += command[++i];
            in_word = true;
        } else if (c == ' ' || c == '\t' || c == '\n') {
            if (in_word) words.push_back(word);
            word.clear();
            in_word = false;
        } else {
            word += c;
            in_word = true;
        }
    }
    if (in_word) words.push_back(word);
    return words;
}

}  // namespace

std::vector<std::string> allowed_symbols() { return {std::begin(kAllowedSymbols), std::end(kAllowedSymbols)}; }

void add_kept_files(const std::string& keep_dir, CompiledFiles& files,
                    const std::function<std::string(const std::string&)>& read) {
    for (const auto& entry : std::filesystem::directory_iterator(keep_dir)) {
        const std::string name = entry.path().filename().string();
        if (ends_with(name, ".cpp1.ii") || ends_with(name, ".cpp4.ii")) {
            files.preprocessed.push_back({name, read(entry.path().string())});
        } else if (ends_with(name, ".ptx")) {
            files.ptx.push_back({name, read(entry.path().string())});
        }
    }
}

std::set<std::string> symbol_names(const std::string& nm_output) {
    std::set<std::string> names;
    std::istringstream in(nm_output);
    for (std::string line; std::getline(in, line);) {
        std::istringstream words(line);
        std::string name, type;
        if (words >> name >> type && type.size() == 1) names.insert(name);  // POSIX: "name type [value size]"
    }
    return names;
}

std::vector<std::string> check_compiled(const std::string& path, const std::string& compiled_path,
                                        const CompiledFiles& files, int stage, const SourcePolicy& policy,
                                        const std::set<std::string>& instructor_symbols) {
    std::vector<std::string> problems;
    auto report = [&](const std::string& what) {
        if (problems.size() < 20) problems.push_back(path + ": " + what);
    };

    // What the compiler read, host and device passes.
    if (files.preprocessed.empty()) report("the compiler kept no preprocessed file (nvcc --keep): the check cannot read it");
    for (const auto& [name, text] : files.preprocessed) {
        const auto lines = lines_from(text, compiled_path);
        if (lines.empty()) {
            report("no line of " + compiled_path + " in the compiler's " + name + ": the check cannot read it");
            continue;
        }
        for (const std::string& p : check_names(path, lines, stage, policy, kMadeByMacros)) {
            if (problems.size() < 20) problems.push_back(p + " [" + name + "]");
        }
        // A directive the preprocessor passes on to the compiler: #ident (and #sccs, which
        // becomes one) puts its string unescaped into the assembly (review13/24 and 25 wrote
        // their own assembly through it). Only #pragma lines may come from the submission.
        for (const auto& [number, line] : lines) {
            const std::size_t at = line.find_first_not_of(" \t");
            if (at == std::string::npos || line[at] != '#') continue;
            const std::size_t word = line.find_first_not_of(" \t", at + 1);
            if (word == std::string::npos || line.compare(word, 6, "pragma") != 0) {
                report(path + ":" + std::to_string(number) + ": after preprocessing, a directive line ('" +
                       line.substr(at, 40) + "') that the compiler passes on [" + name + "]");
            }
        }
    }

    // What the object calls.
    for (const std::string& name : symbol_names(files.undefined_symbols)) {
        if (instructor_symbols.count(name)) continue;
        const bool plain = name.rfind("_Z", 0) != 0;
        // (nvcc's stub calls the runtime's __cuda* registration functions: forbidden in the
        // submission's text, made by the compiler here, and on the allow-list below.)
        const bool by_nvcc = name.rfind("__cuda", 0) == 0;
        if (plain && forbidden_by(name, policy) && !kMadeByCompiler.count(name) && !by_nvcc) {
            report("the compiled code uses '" + demangled(name) + "', which source_policy.txt forbids");
            continue;
        }
        bool allowed = false;
        for (const char* pattern : kAllowedSymbols) allowed = allowed || matches(pattern, name);
        for (const std::string& pattern : policy.symbols) allowed = allowed || matches(pattern, name);
        if (!allowed) {
            report("the compiled code uses '" + demangled(name) +
                   "', which is not on the compiled check's allow-list (threads, timers, processes, files, the "
                   "environment, the loader and clocks are not; an instructor adds a symbol with allow-symbol in "
                   "source_policy.txt)");
        }
    }

    // Instructions no launcher needs: system calls without the C library, and the host's
    // cycle and performance counters (a clock by another name).
    static const std::regex instruction(R"(\s(syscall|sysenter|int\s+\$0x80|rdtscp?|rdpmc|rdpid)\b)");
    std::istringstream disassembly(files.disassembly);
    for (std::string line; std::getline(disassembly, line);) {
        std::smatch m;
        if (std::regex_search(line, m, instruction)) {
            report("the compiled host code has the instruction '" + m.str(1) + "' (a system call or a clock)");
            break;
        }
    }

    // Code that would run before the worker's filter against exec (worker/exec_filter.h):
    // an entry of .preinit_array, which the loader runs first, or an IFUNC resolver, which
    // it runs while relocating. No launcher needs either.
    if (files.elf_tables.empty()) report("the check could not read the object's sections and symbols (readelf)");
    std::istringstream tables(files.elf_tables);
    for (std::string line; std::getline(tables, line);) {
        if (line.find("PREINIT_ARRAY") != std::string::npos || line.find(".preinit_array") != std::string::npos) {
            report("the object has a .preinit_array entry: code that would run before the worker's first instruction");
            break;
        }
        if (line.find(" IFUNC ") != std::string::npos) {
            report("the object has an IFUNC symbol, whose resolver would run before the worker's first instruction");
            break;
        }
    }

    if (!files.elf_tables.empty()) {
        const std::string calls = registration_calls_problem(files.elf_tables);
        if (!calls.empty()) report("the object has " + calls + ": code of the submission's would run before main");
        const std::string startup = startup_problem(files.elf_tables);
        if (!startup.empty()) {
            report("the object has " + startup + ": code that would run before main, before the worker's first CUDA "
                   "call (a kernel.cu needs no global object with a constructor: build it inside the launcher)");
        }
    }

    // Plain names, and nvcc's registration names, whatever the type and binding. A C++
    // function or variable, static ones too, has a mangled name; a symbol with a plain name
    // is what the object's own calls to that name bind to, before the linker or the loader
    // looks further: review12/22 defined a static extern "C" __cudaRegisterVar, review13/24
    // a local label named atexit in its own assembly, and nvcc's one .init_array entry
    // called each before main. The compiler's plain names are few: its local labels (.L),
    // nvcc's fatbinData, the stage's record and the unwinder's DW.ref references. nvcc's own
    // registration names are the three below.
    {
        static const std::set<std::string> kNvccOwn = {kRegistration, "_ZL26__cudaUnregisterBinaryUtilv",
                                                      "_ZL20__cudaFatCubinHandle"};
        const std::string record = "reduce" + std::to_string(stage) + "_stage";
        for (const auto& [value, size, type, bind, section, name] : defined_symbols(files.elf_tables)) {
            const bool compilers = name.rfind("_Z", 0) == 0 || name.rfind(".L", 0) == 0 || name == "fatbinData" ||
                                   name == record || name == "DW.ref.__gxx_personality_v0" ||
                                   name.rfind("DW.ref._Z", 0) == 0;
            if (!compilers) {
                report("the object defines a symbol with a plain name, '" + name + "' (" + type + ", " + bind +
                       "): C linkage or a label of hand-written assembly, which nvcc's generated code or a library "
                       "could reach by that name; give it C++ linkage");
                continue;
            }
            const std::string readable = demangled(name);
            if ((readable.find("__cuda") != std::string::npos || readable.find("__sti") != std::string::npos) &&
                !kNvccOwn.count(name)) {
                report("the object defines '" + readable + "', a name of nvcc's registration machinery");
            }
        }
    }

    // Names the object defines for the whole process. The worker is an executable, and the
    // loader looks every name up in it first: a definition under a C library's name is what
    // the process's libraries then call, the sanitizer's own among them (review9/18 answered
    // the sanitizer's getenv with a versioned symbol and switched its instrumentation off;
    // review10/19 did it again with an untyped alias written into the assembly through a
    // section attribute's string). So an allow-list, whatever the symbol's type or binding:
    // a kernel.cu defines only C++ names (mangled, "_Z..."), its stage's record
    // ("reduceN_stage") and the compiler's own personality reference.
    for (const auto& [value, size, type, bind, section, name] : defined_symbols(files.elf_tables)) {
        if (bind == "LOCAL") continue;
        const bool allowed = name.find('@') == std::string::npos &&
                             (name.rfind("_Z", 0) == 0 || name == "reduce" + std::to_string(stage) + "_stage" ||
                              name == "DW.ref.__gxx_personality_v0");
        if (!allowed) {
            report("the object defines '" + name + "' (" + type + ", " + bind +
                   "), a name outside C++'s mangled ones, which would take the place of a library's symbol of that "
                   "name in the whole worker: give your own functions and variables C++ linkage, inside a namespace "
                   "or static (a variable at file scope, __device__ ones too, keeps its plain name)");
        }
    }

    // Two relocations at one place: the linker applies both, the later one winning, so a
    // relocation of the submission's own (an assembler's .reloc) could retarget a call the
    // compiler wrote in nvcc's registration function (review13/25 turned its call of atexit
    // into a call of its own function). A compiler writes one relocation per place.
    {
        std::set<std::string> places;
        std::string table;
        std::istringstream lines(files.elf_tables);
        static const std::regex entry(R"(^([0-9a-f]{8,16})\s+[0-9a-f]{8,16}\s+R_)");
        for (std::string line; std::getline(lines, line);) {
            if (line.rfind("Relocation section", 0) == 0) {
                table = line;
                continue;
            }
            std::smatch m;
            if (!table.empty() && std::regex_search(line, m, entry) && !places.insert(table + " " + m.str(1)).second) {
                report("the object has two relocations at one place (" + m.str(1) + " in " + table.substr(0, 80) +
                       "): a relocation written by hand, which could retarget the compiler's code");
                break;
            }
        }
    }

    // Clocks in device code, by the PTX the kernels were made from, and the special registers
    // that say where and in what order a kernel runs rather than what it computes: a launch's
    // number in its context (%gridid: the replay's context makes launches of its own and the
    // sanitizer's), the SM and warp slot, the driver's environment registers and the
    // performance counters (review 18). A reduction needs none of them.
    if (!policy.allowed.count(kDeviceClocks)) {
        static const std::regex clock(
            R"((%clock64|%clock_hi|%clock|%globaltimer(_lo|_hi)?|\bnanosleep|%gridid|%n?smid|%n?warpid|%envreg\d+|%pm\d+(_64)?)\b)");
        for (const auto& [name, text] : files.ptx) {
            std::smatch m;
            if (std::regex_search(text, m, clock)) {
                report("a kernel reads a clock or a scheduling register ('" + m.str(1) + "' in " + name +
                       "): a kernel that times itself, or counts launches, can tell the sanitizer's run from the others "
                       "(allow device-clocks in source_policy.txt where an assignment needs one)");
            }
        }
    }
    return problems;
}

std::vector<std::string> compile_command(const std::string& json, const std::string& source, std::string& directory) {
    // An array of flat objects whose values are strings: {"directory": ..., "command": ..., "file": ...}.
    std::size_t at = 0;
    while ((at = json.find('{', at)) != std::string::npos) {
        std::string key, file, command, dir;
        for (++at; at < json.size() && json[at] != '}';) {
            if (json[at] != '"') {
                ++at;
                continue;
            }
            const std::string name = json_string(json, at);
            at = json.find_first_not_of(" \t\r\n:", at);
            if (at == std::string::npos || json[at] != '"') continue;
            const std::string value = json_string(json, at);
            if (name == "file") file = value;
            else if (name == "command") command = value;
            else if (name == "directory") dir = value;
        }
        if (!command.empty() && (file == source || std::filesystem::weakly_canonical(file) ==
                                                       std::filesystem::weakly_canonical(source))) {
            directory = dir;
            return split_words(command);
        }
    }
    return {};
}

std::vector<std::string> keeping_command(std::vector<std::string> argv, const std::string& keep_dir) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (a == "-o" || a == "-MT" || a == "-MF" || a == "-MQ") {
            ++i;  // the object goes to the keep folder; no dependency file is written
            continue;
        }
        if (a == "-MD" || a == "-MMD") continue;
        out.push_back(a);
    }
    out.insert(out.end(), {"-o", keep_dir + "/kernel.o", "--keep", "--keep-dir", keep_dir});
    return out;
}

}  // namespace classroom
