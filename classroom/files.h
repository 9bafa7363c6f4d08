// Small file-system helpers for the generator and the grader.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace classroom {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path);             // throws std::runtime_error naming the path
void write_file(const fs::path& path, const std::string& text);  // creates the folders; throws likewise
// Writes only when the content differs, so that an unchanged file keeps its time stamp
// and an incremental build does not recompile it.
void write_if_changed(const fs::path& path, const std::string& text);
// Every regular file under `root`, as paths relative to it with '/' separators, sorted:
// what git would track, without asking git (build folders, .git and caches left out).
std::vector<std::string> list_files(const fs::path& root);
bool is_text(const std::string& data);  // no NUL byte in the first 8 kB
bool starts_with(const std::string& s, const std::string& prefix);
bool ends_with(const std::string& s, const std::string& suffix);

}  // namespace classroom
