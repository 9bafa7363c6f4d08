# gdb-33-head.py: attack 33's detector against the grader-built worker of 47aa962 (set-up on the main thread).
# gdb -q -batch -x gdb-33-head.py with convenience variables set by gdb-33-head.sh:
#   $mode: 0 = serve's cudaSetDevice skipped (eax=0, no CUDA code on the serving thread),
#          1 = it runs against the stub libcuda (fails; eax forced to 0 after it)
#   $maincuda: 1 = set_up's cudaSetDevice(0)/cudaFree(0) called on the main thread (they fail on the stub)
# The worker's set_up needs a judge (a Setup message, a memfd) and a GPU: it is replaced at its entry by what it does
# on success that matters here: forget_starting_environment(argc, argv, envp) on the main thread, *device = 0, and a
# non-null heap pointer as the SharedInput (serve only passes it on until a request comes).
import gdb, struct, re
def ex(c, s=True): return gdb.execute(c, to_string=s)
def reg(r): return int(gdb.parse_and_eval('$' + r)) & 0xffffffffffffffff
def conv(n): return int(gdb.parse_and_eval('$' + n))
for c in ['set pagination off', 'set confirm off', 'set startup-with-shell off', 'set breakpoint pending on',
          'set print thread-events off']:
    ex(c)
mode, maincuda = conv('mode'), conv('maincuda')
ex('catch exec'); ex('run'); ex('delete')
NS = '_ZN37_GLOBAL__N__20075cf7_9_worker_cu_main'
SETUP, SERVE, FORGET = NS + '6set_upEiiPPcS1_Ri', NS + '5serveEiPKNS_11SharedInputEi', NS + '27forget_starting_environmentEiPPcS1_'
VARS = '__grading_private__ZN16reduce4_settings18starting_variablesEv'
DETECT = '__grading_private__ZN16reduce4_settings24sanitizer_in_environmentEv'
TL = '__grading_private__ZN16reduce4_settings27top_of_this_threads_mappingE'
serve = int(gdb.parse_and_eval("(unsigned long)&'%s'" % SERVE))
ex("break *'%s'" % SETUP); ex('continue')
sret, argc, argv, envp, devp = reg('rdi'), reg('rdx') & 0xffffffff, reg('rcx'), reg('r8'), reg('r9')
print('[set_up entry, thread %d] argc=%d argv=%#x envp=%#x' % (conv('_thread'), argc, argv, envp))
if maincuda:
    print('  main thread: cudaSetDevice(0) = %s, cudaFree(0) = %s' % (
        gdb.parse_and_eval("(int)cudaSetDevice(0)"), gdb.parse_and_eval("(int)cudaFree((void*)0)")))
ex("call (void)'%s'(%d, (char**)%d, (char**)%d)" % (FORGET, argc, argv, envp))
fake = int(gdb.parse_and_eval('(unsigned long)malloc(256)'))
ex('set var *(unsigned long*)%d = %d' % (sret, fake)); ex('set var *(int*)%d = 0' % devp)
ex('return')
print('  set_up replaced: forget_starting_environment done, argv[0]=%#x envp[0]=%#x environ[0]=%s, fake SharedInput %#x' % (
    int(gdb.parse_and_eval('((unsigned long*)%d)[0]' % argv)), int(gdb.parse_and_eval('((unsigned long*)%d)[0]' % envp)),
    gdb.parse_and_eval('((char**)environ)[0]').format_string(), fake))
ex('delete'); ex('break *%d' % (serve + 0x1b)); ex('continue')   # serve's call of cudaSetDevice
if mode == 0:
    ex('set var $pc = %d' % (serve + 0x20)); ex('set var $eax = 0')
else:
    ex('nexti'); print('  serving thread: cudaSetDevice(device) returned %d (stub), forced to 0' % (reg('rax') & 0xffffffff)); ex('set var $eax = 0')
ex('delete'); ex('break *%d' % (serve + 0x58)); ex('continue')  # the loop's head, before the first recv
t2 = conv('_thread'); rsp = reg('rsp')
maps = []
for line in ex('info proc mappings').splitlines():
    m = re.match(r'\s*0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x[0-9a-f]+\s*(\S*)\s*(.*)', line)
    if m: maps.append((int(m.group(1), 16), int(m.group(2), 16), m.group(4).strip()))
def mapping(a):
    for lo, hi, name in maps:
        if lo <= a < hi: return (lo, hi, name)
    return None
slo, shi, _ = [m for m in maps if m[2] == '[stack]'][0]
tlo, thi, _ = mapping(rsp)
top = int(gdb.parse_and_eval("(unsigned long)&'%s'" % TL))
print('[serve loop head, thread %d] rsp=%#x, its mapping %#x-%#x, &thread_local %#x (top - rsp = %#x)' % (t2, rsp, tlo, thi, top, top - rsp))
print('  main thread stack [stack] %#x-%#x' % (slo, shi))
frames = []; f = gdb.newest_frame()
while f is not None:
    frames.append((int(f.read_register('rsp')) & 0xffffffffffffffff, f.name() or '??', int(f.pc()))); f = f.older()
ex('thread 1'); m_rsp = reg('rsp'); mframes = []; f = gdb.newest_frame()
while f is not None:
    mframes.append((int(f.read_register('rsp')) & 0xffffffffffffffff, f.name() or '??')); f = f.older()
ex('thread %d' % t2)
print('  main thread rsp=%#x; its frames: %s' % (m_rsp, ', '.join('%s@%#x' % (n, s) for s, n in mframes)))
print('  serving thread frames: %s' % ', '.join('%s@%#x' % (n, s) for s, n, _ in frames))
v = int(gdb.parse_and_eval("(long)'%s'()" % VARS)); d = int(gdb.parse_and_eval("(int)'%s'()" % DETECT))
print('  DETECTOR from serve\'s loop: starting_variables() = %d, sanitizer_in_environment() = %d' % (v, d))
inf = gdb.selected_inferior()
def sym(a):
    s = ex('info symbol %d' % a).strip()
    return '' if s.startswith('No symbol') else s
def frame_of(a):
    own = None
    for s, n, _ in frames:
        if a >= s: own = n
    return own or 'below rsp'
def target(p):
    if p >= m_rsp:
        own = None
        for s, n in mframes:
            if p >= s: own = n
        return 'main-stack top-%#x, live (in %s\'s frame or above)' % (shi - p, own)
    return 'main-stack top-%#x, %#x below the main thread\'s rsp (dead area)' % (shi - p, m_rsp - p)
def scan(lo, hi, label):
    mem = bytes(inf.read_memory(lo, hi - lo)); n = 0
    for i in range(0, len(mem), 8):
        w = struct.unpack_from('<Q', mem, i)[0]
        if slo <= w < shi:
            a = lo + i; n += 1
            near = []
            for j in range(-6, 7):
                if 0 <= i + 8 * j < len(mem):
                    x = struct.unpack_from('<Q', mem, i + 8 * j)[0]
                    s = sym(x) if (x >> 40) in (0x55, 0x56, 0x7f) and not (slo <= x < shi) and not (tlo <= x < thi) else ''
                    if s: near.append('%+d:%s' % (j, s.split(' in ')[0]))
            print('  %s %#x (rsp%+#x, frame %s): %#x  -> %s; return addresses near: %s' % (
                label, a, a - rsp, frame_of(a), w, target(w), '; '.join(near) or '-'))
    return n
print('--- words in [rsp, mapping top) pointing into the main thread\'s stack:')
n1 = scan(rsp, thi, 'ABOVE')
print('  count above rsp: %d (all of them below &thread_local, inside the detector\'s scan)' % n1)
print('--- the same below rsp (residue of what ran deeper on this thread; a launcher\'s frames would lie here):')
n2 = scan(tlo, rsp, 'BELOW')
print('  count below rsp: %d' % n2)
ex('kill')
