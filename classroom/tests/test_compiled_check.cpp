// The compiled check (classroom/compiled_check.h) on what nvcc really makes from a file,
// compiled here with this build's own flags for the stage (compile_commands.json; one GPU
// architecture of them, to keep CI quick), as the grader does: every stage's reference and every handed-out stub passes it; each class it
// exists for is refused, by the part of it that sees the class (the preprocessed lines,
// the object's symbols, its instructions, the PTX); `allow device-clocks` lets a clock
// through. Host only: it needs nvcc and binutils, no GPU, so it runs on CI.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <regex>
#include <sched.h>
#include <set>
#include <sstream>
#include <thread>

#include "assignment.h"
#include "compiled_check.h"
#include "generator.h"
#include "process.h"

namespace {

using namespace classroom;

const fs::path kRepo = CLASSROOM_REPOSITORY;
const fs::path kBuild = CLASSROOM_BUILD_DIR;

std::string joined(const std::vector<std::string>& problems) {
    std::string out;
    for (const std::string& p : problems) out += p + "\n";
    return out;
}

struct Compiled {
    CompiledFiles files;
    std::string source, error;
    std::set<std::string> symbols;
};

// `text` compiled as stage's kernel.cu with the build's flags for that file (one GPU
// architecture, to keep CI quick), into a folder of its own named `name`.
Compiled compile(const std::string& name, const std::string& text, int stage) {
    Compiled c;
    const fs::path folder = kBuild / "classroom/tests/compiled" / name;
    fs::remove_all(folder);
    const fs::path source = folder / stage_name(stage) / "kernel.cu";
    write_file(source, text);
    c.source = source.string();
    std::string directory;
    std::vector<std::string> command = compile_command(read_file(kBuild / "compile_commands.json"),
                                                       (kRepo / stage_name(stage) / "kernel.cu").string(), directory);
    if (command.empty()) {
        c.error = "no command for " + stage_name(stage) + "/kernel.cu in compile_commands.json";
        return c;
    }
    std::vector<std::string> argv;
    bool arch_kept = false;
    for (const std::string& word : command) {
        const bool arch = word.rfind("--generate-code", 0) == 0 || word.rfind("-gencode", 0) == 0;
        if (arch && arch_kept) continue;
        arch_kept = arch_kept || arch;
        argv.push_back(word == (kRepo / stage_name(stage) / "kernel.cu").string() ? c.source : word);
    }
    argv.insert(argv.begin() + 1, "-I" + (kRepo / stage_name(stage)).string());  // the stage's own headers
    const fs::path keep = folder / "keep";
    fs::create_directories(keep);
    const ProcessResult built = run_process(keeping_command(argv, keep.string()), directory, 600);
    if (built.exit_code != 0) {
        c.error = "nvcc failed:\n" + built.output;
        return c;
    }
    const std::string object = (keep / "kernel.o").string();
    const ProcessResult nm = run_process({"nm", "-u", "-P", object}, "", 120);
    const ProcessResult dis = run_process({"objdump", "-d", "--no-show-raw-insn", object}, "", 300);
    const ProcessResult tables = run_process({"readelf", "-S", "-s", "-r", "-W", object}, "", 120);
    if (nm.exit_code != 0 || dis.exit_code != 0 || tables.exit_code != 0) {
        c.error = "nm, objdump or readelf failed:\n" + nm.output + dis.output + tables.output;
        return c;
    }
    c.files.undefined_symbols = nm.output;
    c.files.disassembly = dis.output;
    c.files.elf_tables = tables.output;
    c.symbols = symbol_names(nm.output);
    add_kept_files(keep.string(), c.files, [](const std::string& file) { return read_file(file); });
    return c;
}

struct CompileJob {
    std::string name, text;
    int stage;
};

// compile() for each job, up to one job a core at a time. Each nvcc runs on one core, and
// the two tests below compile 15 and 45 files: one after the other they took 105 and 206 s
// of the 445 s of the README's test command on CI's two cores (dcbd9c5). Each job has its
// own folder, and run_process waits for its own child only. The cores are those this process
// may run on (taskset's, as nproc counts them).
std::vector<Compiled> compile_all(const std::vector<CompileJob>& jobs) {
    std::vector<Compiled> compiled(jobs.size());
    std::atomic<std::size_t> next{0};
    const auto work = [&] {
        for (std::size_t i; (i = next++) < jobs.size();) {
            try {
                compiled[i] = compile(jobs[i].name, jobs[i].text, jobs[i].stage);
            } catch (const std::exception& e) {  // a file it could not write or read: the test fails, saying so
                compiled[i].error = jobs[i].name + ": " + e.what();
            }
        }
    };
    cpu_set_t allowed;
    const int cores = sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? CPU_COUNT(&allowed)
                                                                          : int(std::thread::hardware_concurrency());
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < std::min(std::size_t(std::max(cores, 1)), jobs.size()); ++t) threads.emplace_back(work);
    for (std::thread& thread : threads) thread.join();
    return compiled;
}

bool have_compile_commands() { return fs::exists(kBuild / "compile_commands.json"); }

std::vector<std::string> checked(const Compiled& c, int stage, const std::set<std::string>& instructor,
                                 const SourcePolicy& policy = default_source_policy()) {
    return check_compiled(stage_name(stage) + "/kernel.cu", c.source, c.files, stage, policy, instructor);
}

TEST(CompiledCheck, EveryReferenceAndEveryStubPasses) {
    if (!have_compile_commands()) GTEST_SKIP() << "no compile_commands.json in " << kBuild << " (a generator without it)";
    std::vector<CompileJob> jobs;  // each stage's reference, then the stubs of stages 1-7
    for (int stage = 0; stage <= 7; ++stage) {
        jobs.push_back({"reference-" + stage_name(stage), read_file(kRepo / stage_name(stage) / "kernel.cu"), stage});
    }
    for (int stage = 1; stage <= 7; ++stage) {
        const Tree student = make_student_tree(kRepo, Assignment{stage, stage});
        jobs.push_back({"stub-" + stage_name(stage), student.at(stage_name(stage) + "/kernel.cu").text, stage});
    }
    const std::vector<Compiled> compiled = compile_all(jobs);
    std::set<std::string> previous;  // the previous stage's symbols, as the grader has them
    for (int stage = 0; stage <= 7; ++stage) {
        const Compiled& reference = compiled[stage];
        ASSERT_EQ(reference.error, "") << stage_name(stage);
        std::set<std::string> instructor = previous;
        instructor.insert(reference.symbols.begin(), reference.symbols.end());
        // The symbols part on the reference alone, with nothing from the instructor: only the
        // harness's own functions may be missing from the static list.
        for (const std::string& p : checked(reference, stage, {})) {
            EXPECT_NE(p.find("not on the compiled check's allow-list"), std::string::npos) << p;
            EXPECT_TRUE(p.find("chosen") != std::string::npos || p.find("type_name") != std::string::npos ||
                        p.find("type_size") != std::string::npos) << "beyond the harness: " << p;
        }
        EXPECT_EQ(joined(checked(reference, stage, instructor)), "") << "the reference of " << stage_name(stage);
        if (stage >= 1) {
            const Compiled& stub = compiled[7 + stage];
            ASSERT_EQ(stub.error, "") << stage_name(stage);
            EXPECT_EQ(joined(checked(stub, stage, instructor)), "") << "the stub of " << stage_name(stage);
        }
        previous = reference.symbols;
    }
}

struct Attack {
    const char* what;
    std::string code;    // added at the end of reduce4's reference
    const char* reason;  // part of the refusal
};

// Whether this compiler puts the registration function's call of atexit (its relocation in
// .rela.text.startup) `offset` bytes into the function, as review13/25 assumes: readelf's
// "  NN: VALUE SIZE FUNC LOCAL DEFAULT NDX _ZL24__sti____cudaRegisterAllv" and, under
// "Relocation section '.rela.text.startup'", "OFFSET INFO R_X86_64_PLT32 VALUE atexit - 4".
bool atexit_call_at(const Compiled& c, unsigned long offset) {
    static const std::regex function(R"(^\s*\d+:\s+([0-9a-f]+)\s+\d+\s+FUNC\s.*\s_ZL24__sti____cudaRegisterAllv$)");
    static const std::regex call(R"(^([0-9a-f]+)\s+[0-9a-f]+\s+R_X86_64_PLT32\s+[0-9a-f]+\s+atexit\b)");
    std::istringstream lines(c.files.elf_tables);
    long start = -1;
    bool in_startup = false;
    std::vector<unsigned long> calls;
    for (std::string line; std::getline(lines, line);) {
        std::smatch m;
        if (std::regex_search(line, m, function)) start = static_cast<long>(std::stoul(m.str(1), nullptr, 16));
        if (line.rfind("Relocation section", 0) == 0) in_startup = line.find("'.rela.text.startup'") != std::string::npos;
        if (in_startup && std::regex_search(line, m, call)) calls.push_back(std::stoul(m.str(1), nullptr, 16));
    }
    return start >= 0 && std::find(calls.begin(), calls.end(), static_cast<unsigned long>(start) + offset) != calls.end();
}

TEST(CompiledCheck, RefusesWhatTheTextCannotShow) {
    if (!have_compile_commands()) GTEST_SKIP() << "no compile_commands.json in " << kBuild;
    const std::string reference = read_file(kRepo / "reduce4/kernel.cu");
    const std::vector<Attack> attacks = {
        {"a thread", "#include <thread>\nstatic void spin() {}\nstatic int started = (std::thread(spin).detach(), 0);",
         "std::thread"},
        {"a thread from a timer", "#include <csignal>\n#include <ctime>\n"
         "static int t = [] { sigevent e{}; timer_t id; return timer_create(CLOCK_MONOTONIC, &e, &id); }();",
         "'timer_create'"},
        {"the loader's list of libraries (the sanitizer's among them)",
         "extern \"C\" int dl_iterate_phdr(int (*)(void*, unsigned long, void*), void*);\n"
         "static int libraries = dl_iterate_phdr([](void*, unsigned long, void*) { return 0; }, nullptr);",
         "'dl_iterate_phdr'"},
        {"an internal name of the C library's",
         "extern \"C\" char* __libc_secure_getenv(const char*);\nstatic char* seen = __libc_secure_getenv(\"CUDA_INJECTION64_PATH\");",
         "__libc_secure_getenv"},
        {"a raw system call", "extern \"C\" long syscall(long, ...);\nstatic long pid = syscall(39);", "'syscall'"},
        {"a host cycle counter", "static unsigned long long t0 = __builtin_ia32_rdtsc();", "the instruction 'rdtsc'"},
        {"a host clock", "#include <chrono>\nstatic auto t0 = std::chrono::steady_clock::now();", "steady_clock"},
        {"a device clock", "__global__ void timed(long long* t) { *t = clock64(); }", "'%clock64'"},
        {"the global timer", "__global__ void timed(unsigned long long* t) { asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(*t)); }",
         "'%globaltimer'"},
        {"a device sleep", "__global__ void nap() { __nanosleep(1000); }", "'nanosleep'"},
        {"a launch's number in its context",
         "__global__ void which(unsigned long long* g) { asm volatile(\"mov.u64 %0, %%gridid;\" : \"=l\"(*g)); }", "'%gridid'"},
        {"the SM a block runs on", "__global__ void where(unsigned* s) { asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(*s)); }",
         "'%smid'"},
        {"fork, in the preprocessed lines and the symbols", "extern \"C\" int fork();\nstatic int child = fork();",
         "after preprocessing, 'fork'"},
        {"fork by symbol", "extern \"C\" int fork();\nstatic int child = fork();", "uses 'fork'"},
        // A name no line of the file spells: only the preprocessed lines show it.
        {"a name built by token pasting", "#define JOIN(a, b) a##b\nextern \"C\" int JOIN(fo, rk)();\n"
         "static int child = JOIN(fo, rk)();", "after preprocessing, 'fork'"},
        // Runtime calls outside the launcher's list: timing by events, memory the judge needs.
        {"CUDA events", "static float elapsed = [] { cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);\n"
         "    float ms = 0; cudaEventElapsedTime(&ms, a, b); return ms; }();", "cudaEventElapsedTime"},
        // review19/39: a setting the recorder does not see changes how many blocks fit on an SM.
        {"a kernel's cache configuration", "__global__ void probe() {}\n"
         "static cudaError_t set = cudaFuncSetCacheConfig(probe, cudaFuncCachePreferL1);", "cudaFuncSetCacheConfig"},
        {"an array allocation", "static cudaArray_t array = [] { cudaArray_t a = nullptr;\n"
         "    cudaChannelFormatDesc d = cudaCreateChannelDesc<int>(); cudaMallocArray(&a, &d, 1 << 20); return a; }();",
         "cudaMallocArray"},
        // Code that runs before the worker's filter against exec (worker/exec_filter.h).
        {"an entry of .preinit_array", "static void early() {}\n"
         "__attribute__((used, section(\".preinit_array\"))) static void (*run_early)() = early;",
         "a .preinit_array entry"},
        // A definition under a library's name, which the loader prefers in the whole worker
        // (review9/18: the sanitizer's getenv answered by the submission).
        {"a function with C linkage", "extern \"C\" char* getenv(const char*) noexcept { return nullptr; }",
         "defines 'getenv' (FUNC, GLOBAL)"},
        {"a symbol version on a function of the submission's",
         "__attribute__((used, symver(\"getenv@@GLIBC_2.2.5\"))) char* reduce4_setting(const char*) { return nullptr; }",
         "defines 'getenv@@GLIBC_2.2.5'"},
        // review10/19: an untyped alias, written into the assembly through a section name.
        {"an untyped alias from a section attribute's string",
         "__attribute__((used, section(\".rodata.reduce4\\n\\t.globl getenv\\n\\t.set getenv, .\\n"
         "\\t.type getenv, @notype\\n\\t.section .rodata.reduce4b\"))) static const char marker[] = \"x\";",
         "defines 'getenv' (NOTYPE, GLOBAL)"},
        {"a data name of the C library's", "extern \"C\" { char** environ = nullptr; }", "defines 'environ'"},
        // review11/21: a pointer of its own in .init_array, called with envp before main, before
        // the worker's first CUDA call (when the sanitizer's library reads its settings).
        {"a pointer placed in .init_array", "static void early(int, char**, char**) {}\n"
         "__attribute__((used, section(\".init_array\"))) static void (*run_early)(int, char**, char**) = early;",
         "more than one entry in .init_array"},
        {"an .init_array entry with a priority", "static void early() {}\n"
         "__attribute__((used, section(\".init_array.00100\"))) static void (*run_early)() = early;",
         "a section '.init_array.00100'"},
        {"a global object built at start-up", "#include <string>\n"
         "namespace reduce4_settings { std::string built = std::string(\"a\") + \"b\"; }",
         "more than one entry in .init_array"},
        // review12/22: a function with C linkage that nvcc's stub would call by its name, and
        // a C++ function under one of nvcc's registration names.
        {"a static function with a plain name", "extern \"C\" { __attribute__((used)) static int plain_helper() { return 1; } }",
         "a symbol with a plain name, 'plain_helper'"},
        {"a C++ function under a registration name", "__attribute__((used)) static void __cudaRegisterVar(int) {}",
         "a name of nvcc's registration machinery"},
        // review12/23: a section name with a space, which a one-word reading would skip.
        {"a section whose name has a space", "static void early() {}\n"
         "__attribute__((used, section(\"\\\".init_array.1 x\\\",\\\"aw\\\"#\"))) static void (*run_early)() = early;",
         "a section whose name the check cannot read"},
        // review13/24 and 25: assembly of the submission's own, through #ident: a local label
        // under a name nvcc's registration function calls, a second relocation at the place
        // of one of its calls, and the directive itself in the preprocessed lines.
        {"an ident directive", "#ident \"reduce4\"", "a directive line ('#ident"},
        {"a label with a plain name", "asm(\".pushsection .text\\nplain_label:\\n\\tret\\n.popsection\");",
         "a symbol with a plain name, 'plain_label' (NOTYPE, LOCAL)"},
        {"a second relocation at a call", "asm(\".pushsection .text\\n1:\\tcall free\\n\\t.reloc 1b+1, R_X86_64_PLT32, "
                                          "malloc-4\\n.popsection\");",
         "two relocations at one place"},
        // review14/26: a section's string through CUDA's __location__ macro, in the reserved
        // spelling; the preprocessed text shows the attribute and its string.
        {"a string in an attribute", "__location__(__section__(\".data.reduce4\")) int reduce4_marker = 1;",
         "a string in an attribute"},
        {"a weak reference that takes nvcc's call of atexit",
         "namespace reduce4_settings { int late(void (*)()) { return 0; } }\n"
         "asm(\".weakref atexit, _ZN16reduce4_settings4lateEPFvvE\");",
         "a call from nvcc's registration function to '_ZN16reduce4_settings4lateEPFvvE'"},
        {"a string behind a prefixed character literal",
         "static const wchar_t reduce4_quote = L'\"';\n[[deprecated(\"x\")]] static int reduce4_old = 1;",
         "a string in an attribute"},
        {"a string in a C++ attribute", "[[deprecated(\"x\")]] static int reduce4_old = 1;", "a string in an attribute"},
        {"a .fini_array entry", "static void late() {}\n"
         "__attribute__((used, section(\".fini_array\"))) static void (*run_late)() = late;",
         "a section '.fini_array'"},
        {"an IFUNC resolver", "static int one_early() { return 1; }\n"
         "extern \"C\" decltype(&one_early) pick_early() { return one_early; }\n"
         "extern \"C\" int picked() __attribute__((ifunc(\"pick_early\")));\nstatic int got = picked();",
         "an IFUNC symbol"},
    };
    // The thirteenth and fourteenth reviews' attacks themselves: the door (a directive, a
    // string in an attribute) and behind it each rule its assembly meets.
    const std::vector<std::pair<std::string, std::vector<std::string>>> reviewed = {
        {"24-ident-directive-writes-assembly-that-captures-nvccs-atexit.cu",
         {"a directive line ('#ident", "a symbol with a plain name, 'atexit'"}},
        // The file's .reloc sits at 0xde of the registration function, where GCC 12.2 puts
        // the tail call of atexit: there it is also a second relocation at one place (expected
        // below where the file's object has nvcc's call of atexit there). GCC 13.3 (the lent H200s') lays
        // the function out otherwise and 0xde is no relocation's place; both report the call to
        // the file's function, and the attack above ("a second relocation at a call") checks
        // the place rule on any compiler.
        {"25-ident-directive-adds-a-relocation-that-retargets-nvccs-atexit.cu",
         {"a directive line ('#ident",
          "a call from nvcc's registration function to '_ZN16reduce4_settings11at_start_upEPFvvE'"}},
        {"26-location-macro-section-string-weakrefs-nvccs-atexit.cu",
         {"a string in an attribute", "a call from nvcc's registration function"}},
        {"27-align-macro-with-unbalanced-argument-adds-a-section-string.cu",
         {"a string in an attribute", "a call from nvcc's registration function"}},
        {"29-device-variable-address-operator-runs-in-nvccs-registration.cu", {"after preprocessing, 'operator&'"}},
    };
    // All compiled at once: the reference, the attacks, the reviewed files, and an assignment
    // that allows clocks in kernels (last).
    std::vector<CompileJob> jobs = {{"plain-reduce4", reference, 4}};  // not "reference-": the test above has that folder
    for (const Attack& a : attacks) {
        jobs.push_back({std::string("attack-") + std::to_string(&a - attacks.data()), reference + "\n" + a.code + "\n", 4});
    }
    for (const auto& [file, reasons] : reviewed) {
        jobs.push_back({"reviewed-" + file.substr(0, 2), read_file(kRepo / "classroom/tests/attacks" / file), 4});
    }
    jobs.push_back({"allowed-clock", reference + "\n__global__ void timed(long long* t) { *t = clock64(); }\n", 4});
    const std::vector<Compiled> compiled = compile_all(jobs);
    const Compiled& plain = compiled.front();
    ASSERT_EQ(plain.error, "");
    const std::set<std::string> instructor = plain.symbols;
    for (const Attack& a : attacks) {
        const Compiled& c = compiled[1 + (&a - attacks.data())];
        ASSERT_EQ(c.error, "") << a.what;
        const std::string problems = joined(checked(c, 4, instructor));
        EXPECT_NE(problems.find(a.reason), std::string::npos) << a.what << ":\n" << problems;
    }
    for (std::size_t r = 0; r < reviewed.size(); ++r) {
        const auto& [file, reasons] = reviewed[r];
        const Compiled& c = compiled[1 + attacks.size() + r];
        ASSERT_EQ(c.error, "") << file;
        const std::string problems = joined(checked(c, 4, instructor));
        for (const std::string& reason : reasons) EXPECT_NE(problems.find(reason), std::string::npos) << file << ":\n" << problems;
        if (file.rfind("25-", 0) == 0 && atexit_call_at(c, 0xde)) {
            EXPECT_NE(problems.find("two relocations at one place"), std::string::npos) << file << ":\n" << problems;
        }
    }
    const Compiled& clocked = compiled.back();
    ASSERT_EQ(clocked.error, "");
    EXPECT_EQ(joined(checked(clocked, 4, instructor, read_source_policy("allow device-clocks"))), "");
}

// The worker links the submission's object with every name it defines renamed but its
// record (classroom/worker/private_symbols.cmake): review11/20 defined std::future_category(),
// which libstdc++'s own initializer then called. An object that defines such a name, a weak
// one, and the record, through the script: only the record keeps its name, and what the
// object calls keeps its own.
TEST(PrivateSymbols, OnlyTheRecordKeepsItsName) {
    const fs::path folder = kBuild / "classroom/tests/private_symbols";
    fs::remove_all(folder);
    fs::create_directories(folder);
    // As a kernel.cu's object has them: a name of the C++ library's, a weak inline function,
    // a class whose destructor's COMDAT group (named by a local "..D5Ev" symbol) the harness
    // has too, and the record.
    const std::string shared_header =
        "struct Error { virtual ~Error() {} int code = 3; };\n"
        "inline int shared_helper(int x) { return x + 1; }\n"
        "struct Stage { int (*f)(int); };\n";
    write_file(folder / "shared.h", shared_header);
    write_file(folder / "kernel.cpp",
               "#include <system_error>\n#include \"shared.h\"\n"
               "namespace std { const error_category& future_category() noexcept { return std::generic_category(); } }\n"
               "static int throws(int x) { if (x > 100) throw Error(); return shared_helper(x); }\n"
               "extern const Stage reduce4_stage = {throws};\n");
    // The harness's side: the same class and inline function, and a call through the record.
    write_file(folder / "main.cpp",
               "#include \"shared.h\"\nextern const Stage reduce4_stage;\n"
               "int main() { int r = reduce4_stage.f(1) + shared_helper(0);\n"
               "  try { reduce4_stage.f(1000); } catch (const Error& e) { r += e.code; }\n"
               "  return r == 6 ? 0 : 1; }\n");
    const std::string object = (folder / "kernel.cu.o").string(), archive = (folder / "libreduce4_kernel.a").string();
    ASSERT_EQ(run_process({"c++", "-c", "-O0", (folder / "kernel.cpp").string(), "-o", object}, "", 120).exit_code, 0);
    ASSERT_EQ(run_process({"ar", "qc", archive, object}, "", 60).exit_code, 0);
    const std::string out = (folder / "reduce4_private.o").string();
    auto privatize = [&](const std::string& from) {  // as classroom/worker/CMakeLists.txt runs it
        return run_process({"cmake", "-DNM=nm", "-DOBJCOPY=objcopy", "-DAR=ar", "-DREADELF=readelf", "-DARCHIVE=" + from,
                            "-DRECORD=reduce4_stage", "-DOUT=" + out, "-P",
                            (kRepo / "classroom/worker/private_symbols.cmake").string()},
                           "", 120);
    };
    const ProcessResult script = privatize(archive);
    ASSERT_EQ(script.exit_code, 0) << script.output;
    const std::set<std::string> before = symbol_names(run_process({"nm", "-g", "--defined-only", "-P", object}, "", 60).output);
    const std::set<std::string> after = symbol_names(run_process({"nm", "-g", "--defined-only", "-P", out}, "", 60).output);
    ASSERT_TRUE(before.count("_ZSt15future_categoryv")) << "the test object should define it";
    ASSERT_TRUE(before.count("_Z13shared_helperi"));
    ASSERT_TRUE(before.count("_ZTV5Error"));
    for (const std::string& name : before) {
        if (name == "reduce4_stage") EXPECT_TRUE(after.count(name));
        else EXPECT_TRUE(after.count("__grading_private_" + name) && !after.count(name)) << name;
    }
    EXPECT_EQ(symbol_names(run_process({"nm", "-u", "-P", object}, "", 60).output),
              symbol_names(run_process({"nm", "-u", "-P", out}, "", 60).output))
        << "what the object calls keeps its names";
    const std::string groups = run_process({"readelf", "-g", "-W", out}, "", 60).output;
    EXPECT_EQ(groups.find("[_ZN5ErrorD5Ev]"), std::string::npos) << groups;
    EXPECT_NE(groups.find("[__grading_private__ZN5ErrorD5Ev]"), std::string::npos) << groups;
    // Linked with a program that has the same COMDAT groups, before and after it: it links,
    // calls through the record, and catches the object's exception by its type.
    const std::string program = (folder / "program").string();
    const ProcessResult linked = run_process({"c++", "-I", folder.string(), (folder / "main.cpp").string(), out, "-o", program}, "", 120);
    ASSERT_EQ(linked.exit_code, 0) << linked.output;
    EXPECT_EQ(run_process({program}, "", 60).exit_code, 0);
    // An archive without the record is refused, not linked.
    write_file(folder / "other.cpp", "int other_name() { return 1; }\n");
    const std::string other = (folder / "other.o").string(), other_archive = (folder / "libother.a").string();
    ASSERT_EQ(run_process({"c++", "-c", (folder / "other.cpp").string(), "-o", other}, "", 120).exit_code, 0);
    ASSERT_EQ(run_process({"ar", "qc", other_archive, other}, "", 60).exit_code, 0);
    const ProcessResult refused = privatize(other_archive);
    EXPECT_NE(refused.exit_code, 0);
    EXPECT_NE(refused.output.find("does not define reduce4_stage"), std::string::npos) << refused.output;
}

// Every runtime call the allow-list lets a submission make either goes through the recorder
// (private_symbols.cmake renames it) or sets nothing going on the GPU and changes nothing a
// kernel can see: the replay under the sanitizer repeats only what is recorded (review19/39:
// cudaFuncSetCacheConfig, allowed and unrecorded, changed how many blocks fit on an SM).
// A runtime name added to the allow-list must be put in one of the two lists below.
TEST(CompiledCheck, EveryRuntimeCallItAllowsIsRecordedOrChangesNothing) {
    const std::string cmake = read_file(kRepo / "classroom/worker/private_symbols.cmake");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(cmake, m, std::regex(R"(foreach\(name (__cudaLaunchKernel[^)]*)\))")));
    std::set<std::string> recorded;
    std::istringstream names(m[1].str());
    for (std::string name; names >> name;) recorded.insert(name);
    EXPECT_TRUE(recorded.count("cudaLaunchKernel") && recorded.count("cudaMemsetAsync") && recorded.count("cudaFuncSetAttribute"));
    const std::set<std::string> changes_nothing = {
        // queries and errors
        "cudaGetLastError", "cudaPeekAtLastError", "cudaGetErrorString", "cudaGetErrorName", "cudaGetDevice",
        "cudaGetDeviceCount", "cudaDeviceGetAttribute", "cudaGetDeviceProperties*", "cudaFuncGetAttributes",
        "cudaOccupancy*", "cudaMemGetInfo", "cudaDriverGetVersion", "cudaRuntimeGetVersion",
        // nvcc's registration of the kernels and its launch stubs' configuration
        "__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd", "__cudaUnregisterFatBinary", "__cudaRegisterFunction",
        "__cudaRegisterVar", "__cudaInitModule", "__cudaGetKernel", "__cudaPushCallConfiguration",
        "__cudaPopCallConfiguration"};
    for (const std::string& name : allowed_symbols()) {
        if (name.rfind("cuda", 0) != 0 && name.rfind("__cuda", 0) != 0) continue;
        EXPECT_TRUE(recorded.count(name) || changes_nothing.count(name))
            << name << " is allowed, not recorded, and not known to change nothing";
    }
}

TEST(CompiledCheck, ReadsLineMarkersCommandsAndSymbols) {
    CompiledFiles files;
    files.preprocessed = {{"x.cpp4.ii", "# 1 \"/t/reduce4/kernel.cu\"\nint a;\n# 1 \"/usr/include/unistd.h\" 1 3\n"
                                        "extern int fork();\n# 7 \"/t/reduce4/kernel.cu\" 2\nint b = fork();\n"}};
    const std::string problems = joined(check_compiled("reduce4/kernel.cu", "/t/reduce4/kernel.cu", files, 4,
                                                       default_source_policy(), {}));
    EXPECT_NE(problems.find("reduce4/kernel.cu:7: after preprocessing, 'fork'"), std::string::npos) << problems;
    EXPECT_EQ(problems.find("reduce4/kernel.cu:1:"), std::string::npos) << "a header's line is not the file's: " << problems;
    // A file the markers never name cannot be checked, and says so.
    EXPECT_NE(joined(check_compiled("reduce4/kernel.cu", "/elsewhere/kernel.cu", files, 4, default_source_policy(), {}))
                  .find("no line of /elsewhere/kernel.cu"),
              std::string::npos);
    std::string directory;
    const auto words = compile_command(
        "[\n{\n  \"directory\": \"/b\",\n  \"command\": \"/usr/bin/nvcc -DX=\\\"a b\\\" \\\"--generate-code=arch=compute_90,"
        "code=[compute_90,sm_90]\\\" -c /t/k.cu -o k.o\",\n  \"file\": \"/t/k.cu\"\n}\n]",
        "/t/k.cu", directory);
    EXPECT_EQ(directory, "/b");
    EXPECT_EQ(words, (std::vector<std::string>{"/usr/bin/nvcc", "-DX=a b", "--generate-code=arch=compute_90,code=[compute_90,sm_90]",
                                               "-c", "/t/k.cu", "-o", "k.o"}));
    const auto kept = keeping_command(words, "/keep");
    EXPECT_EQ(std::count(kept.begin(), kept.end(), "k.o"), 0);
    EXPECT_NE(std::find(kept.begin(), kept.end(), "--keep"), kept.end());
    EXPECT_EQ(symbol_names("fork U\n_Z3fooi U\n\nmemcpy U  \n"), (std::set<std::string>{"_Z3fooi", "fork", "memcpy"}));
}

}  // namespace
