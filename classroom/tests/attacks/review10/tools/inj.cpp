// GCC copies a section attribute's string into its assembly unescaped: g++ -S -O2 inj.cpp
char* my_setting(const char* name) { return (char*)name; }
__attribute__((used, section(".rodata.x\n\t.globl getenv\n\t.set getenv, _Z10my_settingPKc\n\t.type getenv, @notype\n\t.section .rodata.y"))) const char marker[1] = {0};
