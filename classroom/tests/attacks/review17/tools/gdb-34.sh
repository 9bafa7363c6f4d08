#!/bin/bash
# gdb-34.sh WORKER ENVFILE [aslr]: the grader-built worker started (through exact-env) with exactly the environment in
# ENVFILE; on its serving thread at serve's first instruction, gdb calls the submission's tls_modules() and
# sanitizer_in_environment(), and, for comparison, prints the loader's own count (_dl_tls_max_dtv_idx, from ld.so's
# symbols) and the thread's DTV as gdb sees it ($fs_base).
W=$1; ENV=$2; RANDOMIZE=$([ "$3" = aslr ] && echo off || echo on)
sym() { nm "$W" | awk -v pat="$1" '$3 ~ pat {print $3; exit}'; }
SERVE=$(sym '5serveEiiPPcS1_$')
MODS=$(sym '__grading_private_.*tls_modulesEv$'); DETECT=$(sym '__grading_private_.*sanitizer_in_environmentEv$')
cat > /tmp/r17/gdb-34.cmd <<G
set pagination off
set confirm off
set startup-with-shell off
set disable-randomization $RANDOMIZE
set breakpoint pending on
catch exec
run
delete
break '$SERVE'
continue
printf "[serving thread %d] fs_base=%#lx dtv=%#lx dtv[-1].counter=%lu\n", \$_thread, \$fs_base, *(unsigned long*)(\$fs_base+8), *(unsigned long*)(*(unsigned long*)(\$fs_base+8)-16)
info sharedlibrary
printf "the submission's tls_modules() = %ld, sanitizer_in_environment() = %d\n", (long)'$MODS'(), (int)'$DETECT'()
kill
quit
G
LD_LIBRARY_PATH= gdb -q -batch -x /tmp/r17/gdb-34.cmd --args /tmp/r17/exact-env "$ENV" "$W" --socket 3 2>&1 | grep -v "^\[New Thread\|^\[Thread\|libthread_db\|^Using host\|warning: Error disabling"
