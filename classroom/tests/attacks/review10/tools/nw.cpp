#include <cstdlib>
#include <new>
#include <string>
static int calls_before_main = 0; static bool in_main = false;
void* operator new(std::size_t n) { if (!in_main) ++calls_before_main; return std::malloc(n ? n : 1); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
int main() { in_main = true; std::string s(100, 'x'); return calls_before_main; }
