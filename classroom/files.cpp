#include "files.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace classroom {

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path.string());
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void write_file(const fs::path& path, const std::string& text) {
    if (path.has_parent_path()) fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();  // a full disk may refuse only the last bytes, on the flush
    if (!out) throw std::runtime_error("cannot write " + path.string());
}

void write_if_changed(const fs::path& path, const std::string& text) {
    std::error_code error;
    if (fs::is_regular_file(path, error) && read_file(path) == text) return;
    write_file(path, text);
}

std::vector<std::string> list_files(const fs::path& root) {
    // Not entered: build folders, git's folder and caches. Besides not being sources, they
    // may be changing under the walk (a test building an assignment tree while another
    // lists the repository), and a file that vanishes mid-walk must not stop it.
    static const std::set<std::string> skipped = {".git", "build", ".deps", ".whl", "__pycache__"};
    std::vector<std::string> files;
    std::error_code error;
    if (!fs::exists(root, error)) return files;
    for (auto it = fs::recursive_directory_iterator(root, error); !error && it != fs::recursive_directory_iterator();
         it.increment(error)) {
        std::error_code kind_error;
        if (it->is_directory(kind_error)) {
            if (skipped.count(it->path().filename().string())) it.disable_recursion_pending();
        } else if (it->is_regular_file(kind_error)) {
            files.push_back(fs::relative(it->path(), root).generic_string());
        }
    }
    if (error) throw std::runtime_error("cannot list " + root.string() + ": " + error.message());
    std::sort(files.begin(), files.end());
    return files;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_text(const std::string& data) { return data.find('\0', 0) == std::string::npos || data.find('\0') > 8192; }

}  // namespace classroom
