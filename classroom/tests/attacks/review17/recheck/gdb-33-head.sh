#!/bin/bash
# gdb-33-head.sh WORKER ENVFILE MODE MAINCUDA [aslr]: gdb-33-head.py on the worker started (through exact-env) with exactly ENVFILE.
W=$1; ENV=$2; RANDOMIZE=$([ "$5" = aslr ] && echo off || echo on)
D=$(cd "$(dirname "$0")" && pwd)
LD_LIBRARY_PATH= gdb -q -batch -ex "set disable-randomization $RANDOMIZE" -ex "set \$mode=$3" -ex "set \$maincuda=$4" \
  -x $D/gdb-33-head.py --args /tmp/r17/exact-env "$ENV" "$W" --socket 3 2>&1 |
  grep -v "^\[New Thread\|^\[Thread\|libthread_db\|^Using host\|warning: Error disabling\|^Catchpoint\|^process [0-9]* is executing\|^Breakpoint [0-9]* at"
