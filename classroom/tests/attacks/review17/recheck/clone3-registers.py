import gdb
def ex(c): return gdb.execute(c, to_string=True)
for c in ['set pagination off','set confirm off','set startup-with-shell off','set breakpoint pending on']: ex(c)
ex('catch exec'); ex('run'); ex('delete')
NS='_ZN37_GLOBAL__N__20075cf7_9_worker_cu_main'
ex("break *'%s'" % (NS+'6set_upEiiPPcS1_Ri')); ex('continue')
fake=int(gdb.parse_and_eval('(unsigned long)malloc(256)')); sret=int(gdb.parse_and_eval('$rdi')); ex('set var *(unsigned long*)%d=%d'%(sret,fake)); ex('return')
ex('delete'); ex('break clone3'); ex('continue')
print(ex('bt'))
for r in ['rsp','rbx','rbp','r12','r13','r14','r15']: print(r, hex(int(gdb.parse_and_eval('$'+r))&0xffffffffffffffff))
f=gdb.newest_frame()
while f is not None:
    print('frame %s sp=%#x'%(f.name(), int(f.read_register('rsp'))&0xffffffffffffffff)); f=f.older()
print(ex('x/2i $pc'))
ex('kill')
