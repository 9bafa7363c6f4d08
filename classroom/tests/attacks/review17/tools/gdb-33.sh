#!/bin/bash
# gdb-33.sh WORKER ENVFILE [aslr]: the grader-built worker started (through exact-env) with exactly the environment in
# ENVFILE (NUL-separated), stopped on its serving thread just after serve's prologue (serve's pushes done: the
# state of that thread's stack above serve's frame for the whole life of serve), where gdb calls the worker's own
# forget_starting_environment(argc, argv, envp) (serve's argc, argv, envp are still in esi, r12, r13 there), then
# the submission's detector from that frame, as a launcher called from serve would run it.
W=$1; ENV=$2; RANDOMIZE=$([ "$3" = aslr ] && echo off || echo on)  # gdb turns ASLR off unless told
sym() { nm "$W" | awk -v pat="$1" '$3 ~ pat {print $3; exit}'; }
SERVE=$(sym '5serveEiiPPcS1_$'); FORGET=$(sym 'forget_starting_environmentEiPPcS1_$')
VARS=$(sym '__grading_private_.*starting_variablesEv$'); DETECT=$(sym '__grading_private_.*sanitizer_in_environmentEv$')
TL=$(sym '__grading_private_.*top_of_this_threads_mappingE$')
OFF=$(objdump -d --no-show-raw-insn "$W" --disassemble="$SERVE" | awk '/sub +\$0x[0-9a-f]+,%rsp/ {print $1; exit}' | tr -d ':')
BASE=$(nm "$W" | awk -v s="$SERVE" '$3==s {print $1}')
AFTER=$(( 0x$OFF - 0x$BASE + 7 ))   # the instruction after `sub $N,%rsp`
cat > /tmp/r17/gdb-33.cmd <<G
set pagination off
set confirm off
set startup-with-shell off
set disable-randomization $RANDOMIZE
set breakpoint pending on
catch exec
run
delete
break *('$SERVE'+$AFTER)
continue
printf "[serve, after its prologue, thread %d] rsp=%#lx argc=%d argv=%#lx envp=%#lx\n", \$_thread, \$rsp, (int)\$esi, \$r12, \$r13
printf "saved rbx (serve's first push, the caller _M_run's rbx) at %#lx: %#lx\n", \$rsp+0x298, *(unsigned long*)(\$rsp+0x298)
printf "the main thread's stack pointer (thread 1, in join): \n"
thread 1
printf "  main thread rsp=%#lx\n", \$rsp
thread 2
printf "&thread_local of the submission (this thread): %#lx\n", (unsigned long)&'$TL'
call (void)'$FORGET'((int)\$esi, (char**)\$r12, (char**)\$r13)
printf "after the worker's forget_starting_environment: argv[0]=%#lx envp[0]=%#lx environ[0]=%s\n", ((unsigned long*)\$r12)[0], ((unsigned long*)\$r13)[0], ((char**)environ)[0]
printf "the submission's starting_variables() = %ld, sanitizer_in_environment() = %d\n", (long)'$VARS'(), (int)'$DETECT'()
kill
quit
G
LD_LIBRARY_PATH= gdb -q -batch -x /tmp/r17/gdb-33.cmd --args /tmp/r17/exact-env "$ENV" "$W" --socket 3 2>&1 | grep -v "^\[New Thread\|^\[Thread\|libthread_db\|^Using host\|warning: Error disabling"
