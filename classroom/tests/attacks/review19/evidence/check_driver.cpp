// Review 19's host driver: the source check and the compiled check on one file, as
// classroom/tests/test_compiled_check.cpp's compile() does it (this build's flags, one arch).
#include <cstdio>
#include <filesystem>
#include <set>
#include "compiled_check.h"
#include "source_check.h"
#include "process.h"
#include "files.h"
#include "assignment.h"
using namespace classroom;
namespace fs = std::filesystem;
static const fs::path kRepo = "/work/main", kBuild = "/work/main/build/release";
struct Compiled { CompiledFiles files; std::string source, error; std::set<std::string> symbols; };
Compiled compile(const std::string& name, const std::string& text, int stage) {
    Compiled c;
    const fs::path folder = fs::path("/tmp/r19/compiled") / name;
    fs::remove_all(folder);
    const fs::path source = folder / stage_name(stage) / "kernel.cu";
    write_file(source, text);
    c.source = source.string();
    std::string directory;
    std::vector<std::string> command = compile_command(read_file(kBuild / "compile_commands.json"),
                                                       (kRepo / stage_name(stage) / "kernel.cu").string(), directory);
    if (command.empty()) { c.error = "no command"; return c; }
    std::vector<std::string> argv; bool arch_kept = false;
    for (const std::string& word : command) {
        const bool arch = word.rfind("--generate-code", 0) == 0 || word.rfind("-gencode", 0) == 0;
        if (arch && arch_kept) continue;
        arch_kept = arch_kept || arch;
        argv.push_back(word == (kRepo / stage_name(stage) / "kernel.cu").string() ? c.source : word);
    }
    argv.insert(argv.begin() + 1, "-I" + (kRepo / stage_name(stage)).string());
    const fs::path keep = folder / "keep";
    fs::create_directories(keep);
    const ProcessResult built = run_process(keeping_command(argv, keep.string()), directory, 600);
    if (built.exit_code != 0) { c.error = "nvcc failed:\n" + built.output; return c; }
    const std::string object = (keep / "kernel.o").string();
    const ProcessResult nm = run_process({"nm", "-u", "-P", object}, "", 120);
    const ProcessResult dis = run_process({"objdump", "-d", "--no-show-raw-insn", object}, "", 300);
    const ProcessResult tables = run_process({"readelf", "-S", "-s", "-r", "-W", object}, "", 120);
    c.files.undefined_symbols = nm.output; c.files.disassembly = dis.output; c.files.elf_tables = tables.output;
    c.symbols = symbol_names(nm.output);
    add_kept_files(keep.string(), c.files, [](const std::string& f) { return read_file(f); });
    return c;
}
int main(int argc, char** argv) {
    const std::string file = argv[1];
    const int stage = 4;
    const std::string text = read_file(file);
    std::set<std::string> headers = {"legacy_last_warp.cuh"};
    auto src = check_source("reduce4/kernel.cu", text, stage, headers, default_source_policy());
    std::printf("source check: %zu problems\n", src.size());
    for (auto& p : src) std::printf("  %s\n", p.c_str());
    std::set<std::string> instructor;
    for (int k : {3, 4}) {
        Compiled r = compile("ref" + std::to_string(k), read_file(kRepo / stage_name(k) / "kernel.cu"), k);
        if (!r.error.empty()) { std::printf("ref %d: %s\n", k, r.error.c_str()); return 2; }
        instructor.insert(r.symbols.begin(), r.symbols.end());
    }
    Compiled c = compile("attack", text, stage);
    if (!c.error.empty()) { std::printf("%s\n", c.error.c_str()); return 2; }
    auto comp = check_compiled("reduce4/kernel.cu", c.source, c.files, stage, default_source_policy(), instructor);
    std::printf("compiled check: %zu problems\n", comp.size());
    for (auto& p : comp) std::printf("  %s\n", p.c_str());
    std::printf("undefined cuda symbols:");
    for (auto& s : c.symbols) if (s.find("cuda") != std::string::npos) std::printf(" %s", s.c_str());
    std::printf("\n");
    return src.empty() && comp.empty() ? 0 : 1;
}
