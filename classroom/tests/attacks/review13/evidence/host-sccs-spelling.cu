#sccs "hello\"\n.pushsection .text\nzzlabel:\n.popsection\n#"
__global__ void k(int* p) { *p = 1; }
int main() {}
