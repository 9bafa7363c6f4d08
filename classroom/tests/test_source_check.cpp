// The source check (classroom/source_check.h): every reference and every handed-out stub
// passes it; each class of the threat model is refused, with its line, in the forms a
// student would try; what only looks like a forbidden name (a comment, a string, a longer
// identifier) is not; and the instructor's policy file widens and narrows it.
#include <gtest/gtest.h>

#include "assignment.h"
#include "generator.h"
#include "source_check.h"

namespace {

using namespace classroom;

const fs::path kRepo = CLASSROOM_REPOSITORY;

std::vector<std::string> check(const std::string& text, const SourcePolicy& policy = default_source_policy()) {
    return check_source("reduce4/kernel.cu", text, 4, {"legacy_last_warp.cuh"}, policy);
}

std::string joined(const std::vector<std::string>& problems) {
    std::string out;
    for (const std::string& p : problems) out += p + "\n";
    return out;
}

// A correct-looking kernel file with `line` put in as line 3.
std::string with_line(const std::string& line) {
    return "#include \"stages.h\"\n\n" + line + "\n\ntemplate <typename T>\n__global__ void k(const T* in, T* out) {}\n";
}

TEST(SourceCheck, EveryReferenceAndEveryStubPasses) {
    for (int stage = 1; stage <= 7; ++stage) {
        const Tree solution = solution_stage(kRepo, stage);
        const std::string kernel = stage_name(stage) + "/kernel.cu";
        std::set<std::string> headers;
        for (const auto& [path, file] : solution) {
            if (path != kernel && path.rfind(stage_name(stage) + "/", 0) == 0) headers.insert(path.substr(8));
        }
        EXPECT_EQ(joined(check_source(kernel, solution.at(kernel).text, stage, headers, default_source_policy())), "")
            << "the reference of " << stage_name(stage);
        const Tree student = make_student_tree(kRepo, Assignment{stage, stage});
        EXPECT_EQ(joined(check_source(kernel, student.at(kernel).text, stage, headers, default_source_policy())), "")
            << "the stub of " << stage_name(stage);
    }
}

struct Attack {
    const char* what;
    std::string line;
    const char* reason;  // part of the one line the student is shown
};

TEST(SourceCheck, RefusesEveryClassOfTheThreatModel) {
    const std::vector<Attack> attacks = {
        // (1) ending the process, its status or its output
        {"an exit before main", "static const int quit_early = (std::_Exit(0), 0);", "'_Exit'"},
        {"exit", "static int e = (exit(0), 0);", "'exit'"},
        {"an exit handler", "static int h = atexit([] { _exit(0); });", "'atexit'"},
        {"a constructor by attribute", "__attribute__((constructor)) static void early() {}", "'__attribute__'"},
        {"a constructor by C++ attribute", "[[gnu::constructor]] static void early() {}", "'constructor'"},
        {"a second process", "static int f = fork();", "'fork'"},
        {"a shell", "static int s = std::system(\"true\");", "'system'"},
        // (2) reading the grader's files
        {"the solution by path", "#include \"/autograder/source/solution/reduce4/kernel.cu\"", "not on the allow-list"},
        {"another stage's file", "#include \"../reduce3/kernel.cu\"", "not on the allow-list"},
        {"an include through a macro", "#define SOLUTION \"kernel.cu\"\n#include SOLUTION", "not a macro"},
        {"include_next", "#include_next <cstdio>", "#include_next"},
        {"the assembler's file inclusion", "asm(\".incbin \\\"/etc/passwd\\\"\");", ".incbin"},
        {"a file read", "static FILE* f = fopen(\"x\", \"r\");", "'fopen'"},
        {"a stream", "#include <fstream>\nstatic std::ifstream in(\"x\");", "'ifstream'"},
        {"the environment", "static const char* s = getenv(\"CLASSROOM_SEED\");", "'getenv'"},
        {"a library loaded by hand", "static void* h = dlopen(\"libcuda.so\", 2);", "'dlopen'"},
        // (3) somebody else's reduction
        {"CUB", "#include <cub/cub.cuh>\nvoid f() { cub::DeviceReduce::Sum(0, 0, 0, 0, 0); }", "'cub'"},
        {"Thrust", "#include <thrust/reduce.h>", "not on the allow-list"},
        {"cooperative groups' reduce", "auto s = cg::reduce(tile, v, cg::plus<int>());", "'cg::reduce'"},
        {"std::reduce", "auto s = std::reduce(a, b);", "'std::reduce'"},
        {"another stage's launcher", "auto f = reduce3_stage.sum_int;", "another stage"},
        // (4) memoizing: the host sees the input only through a copy
        {"a copy to the host", "void f(int* h, const int* d) { cudaMemcpy(h, d, 4, cudaMemcpyDeviceToHost); }",
         "'cudaMemcpy'"},
        {"a synchronization", "void f() { cudaDeviceSynchronize(); }", "'cudaDeviceSynchronize'"},
        // hiding a name from this check
        {"a line splice", "static int q = (_Ex\\\nit(0), 0);", "'_Exit'"},
        {"token pasting", "#define CAT(a, b) a##b\nstatic int q = (CAT(_Ex, it)(0), 0);", "token pasting"},
        {"a digraph", "%:include \"/autograder/x\"", "digraph"},
        {"a universal character name", "static int q = (\\u005FExit(0), 0);", "universal character name"},
        {"a trigraph", "?" "?=include \"x\"", "trigraph"},
        {"a pragma", "#pragma GCC poison x", "#pragma GCC"},
        // found by reviewing the check as an attacker would
        {"a function renamed by assembly", "extern \"C\" int run(const char*) __asm__(\"system\");", "'__asm__'"},
        {"a raw system call", "void f() { asm volatile(\"syscall\"); }", "'asm'"},
        {"a split .incbin", "asm(\".inc\" \"bin \\\"/etc/passwd\\\"\");", "'asm'"},
        {"a C11 thread", "static int t = thrd_create(0, 0, 0);", "'thrd_create'"},
        {"the environment by its symbol", "extern \"C\" char** __environ;", "'__environ'"},
        {"host memory mapped into the device", "void f(void* p) { cudaHostRegister(p, 4, 0); }", "'cudaHostRegister'"},
        {"memory of its own", "void f(void** p) { cudaMallocAsync(p, 4, 0); }", "'cudaMallocAsync'"},
        {"a wait by polling", "void f() { while (cudaStreamQuery(0)) {} }", "'cudaStreamQuery'"},
        // issue 29: what the second attack got past the check
        {"a splice with spaces before the newline", "#inc\\  \nlude \"/autograder/source/solution/reduce4/kernel.cu\"",
         "not on the allow-list"},
        {"a name split by a splice with a tab", "static int q = (_Ex\\\t\nit(0), 0);", "'_Exit'"},
        {"a thread from a timer", "static int t = timer_create(0, 0, 0);", "'timer_create'"},
        {"the C library's internal fork", "extern \"C\" int __fork();", "'__fork'"},
        {"the loader's list of libraries", "static int n = dl_iterate_phdr(0, 0);", "'dl_iterate_phdr'"},
        {"the auxiliary vector", "static unsigned long a = getauxval(3);", "'getauxval'"},
        {"a host cycle counter", "static unsigned long long t = __builtin_ia32_rdtsc();", "'__builtin_ia32_rdtsc'"},
        {"a device clock", "__device__ long long f() { return clock64(); }", "'clock64'"},
        {"a device sleep", "__device__ void f() { __nanosleep(100); }", "'__nanosleep'"},
        {"a file probe by the preprocessor", "#if __has_include(\"/autograder/source/solution/reduce4/kernel.cu\")\n#endif",
         "'__has_include'"},
        {"a line marker", "#line 1 \"stages.h\"", "a line marker"},
        // review9-11: nvcc's attribute macro, and attributes that place code or names
        {"nvcc's attribute macro", "__annotate__(used) static int kept;", "'__annotate__'"},
        {"a section by C++ attribute", "[[gnu::section(\".init_array\")]] static void (*early)() = nullptr;", "'section'"},
        {"a symbol version", "[[gnu::symver(\"getenv@@GLIBC_2.2.5\")]] void mine();", "'symver'"},
        {"an alias", "[[gnu::alias(\"mine\")]] void other();", "'gnu::alias'"},
        // review12: other spellings of the attributes, and nvcc's registration names
        {"a reserved spelling of a GNU attribute", "[[gnu::__section__(\".init_array\")]] static void (*e)() = nullptr;", "__section__'"},
        {"the reserved namespace", "[[__gnu__::__used__]] static int kept;", "'__gnu__'"},
        {"a using prefix", "[[using gnu: used]] static int kept;", "'using gnu'"},
        {"the short attribute keyword", "__attribute((used)) static int kept;", "'__attribute'"},
        {"a registration function of nvcc's", "extern \"C\" { static void __cudaRegisterVar(void**, char*, char*, const char*, int, unsigned long, int, int) {} }",
         "'__cudaRegisterVar'"},
        {"a GNU line marker", "# 1 \"stages.h\"", "a line marker"},
        // review13: directives the compiler passes on to the assembly, unescaped
        {"an ident directive", "#ident \"x\\\"\\n.globl getenv#\"", "#ident is not allowed"},
        {"an sccs directive", "#sccs \"x\"", "#sccs is not allowed"},
        {"an assertion", "#assert machine(x86)", "#assert is not allowed"},
        {"a directive behind a comment", "/* */ # ident \"x\"", "#ident is not allowed"},
        // review14: CUDA's other attribute macro, and a forbidden name's reserved spelling
        {"CUDA's location macro", "__location__(used) static int kept;", "'__location__'"},
        {"a reserved spelling", "static int __section__ = 0;", "'__section__'"},
        // review15/29: an address-of operator, which nvcc's registration calls before main
        {"an address-of operator", "struct Taken { __host__ __device__ Taken* operator & () { return this; } };",
         "'operator&' is not allowed"},
    };
    for (const Attack& a : attacks) {
        const std::string problems = joined(check(with_line(a.line)));
        EXPECT_NE(problems.find(a.reason), std::string::npos) << a.what << ": " << problems;
        // On its line: the third, or the fourth where the attack takes two lines.
        const bool on_line = problems.find("reduce4/kernel.cu:3:") != std::string::npos ||
                             (a.line.find('\n') != std::string::npos && problems.find("reduce4/kernel.cu:4:") != std::string::npos);
        EXPECT_TRUE(on_line) << a.what << ": " << problems;
    }
}

// Where the check's reading of the text and the compiler's could part, everything after
// the split would go unchecked: a character literal the check took for a digit separator,
// a raw string it saw inside a number.
TEST(SourceCheck, ReadsLiteralsAsTheCompilerDoes) {
    const std::vector<std::pair<std::string, std::string>> desyncs = {
        {"#define IGNORE(...)\nIGNORE(0'/*')\nstatic int x = system(\"id\");\n// */", "'system'"},
        {"#define IGNORE(...)\nIGNORE(1e+R\"(\")\nstatic int x = system(\"id\");\n// )\"", "'system'"},
        {"#define IGNORE(...)\nIGNORE(0x1p-R\"(\")\n#include </autograder/source/solution/reduce4/kernel.cu>\n// )\"",
         "not on the allow-list"},
    };
    for (const auto& [text, reason] : desyncs) {
        const std::string problems = joined(check(with_line(text)));
        EXPECT_NE(problems.find(reason), std::string::npos) << text << "\n" << problems;
    }
    // Still literals, still separators: nothing to report.
    EXPECT_EQ(joined(check(with_line("constexpr long kBig = 0x1'0000'0000, kSmall = 1'0;\n"
                                     "static const char* kText = u8\"exit\";\nstatic const char kC = 'x';\n"
                                     "constexpr double kE = 1e+5, kP = 0x1p-3;"))),
              "");
}

// The attack review's 05: a 400,000-character identifier overflowed the stack of the
// std::regex that read names, and the grader died (no grade). A line that long is refused;
// the same length spliced over many lines, as a name and as a directive, is read by hand.
TEST(SourceCheck, SurvivesHugeNamesAndLines) {
    const std::string long_line = "int " + std::string(400000, 'x') + ";";
    EXPECT_NE(joined(check(with_line(long_line))).find("a line longer than"), std::string::npos);
    std::string spliced_name = "int ", spliced_directive = "#define Q ";
    for (int i = 0; i < 200; ++i) {
        spliced_name += std::string(900, 'x') + "\\\n";
        spliced_directive += std::string(900, 'y') + "\\\n";
    }
    EXPECT_EQ(joined(check(with_line(spliced_name + ";\n" + spliced_directive + "\n"))), "");
    EXPECT_NE(joined(check(with_line(spliced_name + "\nexit(0);"))).find("'exit'"), std::string::npos);
}

TEST(SourceCheck, AcceptsWhatOnlyLooksForbidden) {
    const std::string text = with_line(
        "// We never call exit(), fork() or cudaMemcpy here; /* nor cub:: */\n"
        "/* a block comment: #include \"/autograder/x\" */\n"
        "constexpr std::size_t kMany = 1'000'000;      // a digit separator, not a character\n"
        "static const char* kNote = \"exit and fork are words\";\n"
        "static const char* kRaw = R\"x(fopen \"quoted\" getenv)x\";\n"
        "__device__ int exit_count = 0, forked = 0;     // longer names\n"
        "static const unsigned* gnu = nullptr;           // a variable named gnu, not the attribute namespace\n"
        "#include \"legacy_last_warp.cuh\"              // the stage's own header\n"
        "#include <cstdint>\n"
        "#pragma unroll");
    EXPECT_EQ(joined(check(text)), "");
}

TEST(SourceCheck, ThePolicyFileWidensAndNarrows) {
    const std::string copy = with_line("void f(int* h, const int* d) { cudaMemcpy(h, d, 4, cudaMemcpyDeviceToHost); }");
    EXPECT_FALSE(check(copy).empty());
    EXPECT_EQ(joined(check(copy, read_source_policy("allow cudaMemcpy\nallow cudaMemcpyDeviceToHost\n"))), "");
    const std::string cub = with_line("#include <cub/block/block_reduce.cuh>");
    EXPECT_EQ(joined(check(cub, read_source_policy("# CUB's block reduction is the lesson\nallow-include <cub/block/block_reduce.cuh>"))), "");
    const std::string atomics = with_line("__device__ void f(int* p) { atomicAdd(p, 1); }");
    EXPECT_EQ(joined(check(atomics)), "");
    EXPECT_NE(joined(check(atomics, read_source_policy("forbid atomicAdd"))).find("'atomicAdd'"), std::string::npos);
    EXPECT_EQ(joined(check(with_line("static int q = (std::_Exit(0), 0);"), read_source_policy("check off"))), "");
    const std::string clocks = with_line("__device__ long long f() { __nanosleep(10); return clock64(); }");
    EXPECT_FALSE(check(clocks).empty());
    EXPECT_EQ(joined(check(clocks, read_source_policy("allow device-clocks"))), "");
    EXPECT_EQ(read_source_policy("allow-symbol cudaEvent*").symbols, std::set<std::string>{"cudaEvent*"});
    EXPECT_THROW(read_source_policy("permit exit"), std::invalid_argument);
    EXPECT_THROW(read_source_policy("allow two words"), std::invalid_argument);
    // The template every autograder gets changes nothing, and names the whole default list.
    const SourcePolicy from_template = read_source_policy(source_policy_template());
    const SourcePolicy defaults = default_source_policy();
    EXPECT_EQ(from_template.forbidden, defaults.forbidden);
    EXPECT_EQ(from_template.includes, defaults.includes);
    EXPECT_TRUE(from_template.enabled);
    for (const std::string& name : defaults.forbidden) {
        EXPECT_NE(source_policy_template().find(" " + name), std::string::npos) << name;
    }
}

}  // namespace

