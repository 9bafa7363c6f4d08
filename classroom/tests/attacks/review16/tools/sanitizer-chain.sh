#!/bin/bash
# sanitizer-chain.sh: the environment a worker starts with, (0) when the judge starts it itself and (1) when the
# judge runs it as it does for racecheck: compute-sanitizer --target-processes all ... judge --exec-as nobody WORKER.
# Needs: the judge built by a host grading (/tmp/r16/trusted/judge-build/judge), compute-sanitizer 2025.3.1 from the
# PyPI wheel nvidia-cuda-sanitizer-api 13.0.85 unpacked in /tmp/r16/whl/x with lib/*.so copied into bin/, the
# wheel's missing TreeLauncherSubreaper replaced by TreeLauncherSubreaper.standin (bash: runs its target in place),
# and bin/libsanitizer-collection.so replaced by an empty library (the real one crashes in its constructor against
# this host's stub libcuda, before main; it takes no part in the exec). /tmp/cudastub holds libcuda.so.1 -> the stub.
set -e
T=$(cd "$(dirname "$0")" && pwd)
P=/tmp/r16/probe; mkdir -p $P/out; chmod 777 $P/out; rm -f $P/out/env.*
gcc -static -O2 -o $P/envdump $T/envdump.c
gcc -static -O2 -o $P/penv $T/penv.c
gcc -static -O2 -o /tmp/r16/exact-env $T/exact-env.c
chmod 755 /tmp/r16 $P $P/envdump $P/penv
J=/tmp/r16/trusted/judge-build/judge
S=/tmp/r16/whl/x/nvidia/cu13/bin/compute-sanitizer
E="env -i HOME=/tmp LC_ALL=C PATH=/usr/bin:/bin LD_LIBRARY_PATH=/tmp/cudastub"
echo "# (0) judge --exec-as alone (padded_environment, as for every worker the judge starts itself):"
$E $J --exec-as nobody $P/penv --socket 3 | head -1
$E $J --exec-as nobody $P/envdump --socket 3 >/dev/null
echo "# (1) behind compute-sanitizer $($S --version | grep Version), as judge.cu runs it for racecheck:"
$E timeout 60 $S --tool racecheck --error-exitcode 86 --log-file $P/san.log --target-processes all \
   --racecheck-report analysis $J --exec-as nobody $P/penv --socket 3 | head -1
$E timeout 60 $S --tool racecheck --error-exitcode 86 --log-file $P/san.log --target-processes all \
   --racecheck-report analysis $J --exec-as nobody $P/envdump --socket 3 >/dev/null || true
for f in $P/out/env.0 $P/out/env.1; do python3 -c "
items=[i for i in open('$f','rb').read().split(b'\0') if i]
print('$f:', len(items), 'variables,', sum(len(i)+1 for i in items), 'bytes; GRADING_PAD variables:', sum(i.startswith(b'GRADING_PAD') for i in items))
for i in items:
    if not i.startswith(b'GRADING_PAD'): print('   ', i.decode().split(chr(10))[0][:150])
"; done
echo "# (2) who drops the padding: python3 as the sanitizer's target (in judge --exec-as's place) execs penv with its"
echo "#     environment plus 47 variables: empty GRADING_PAD_<n>=, empty A<n>=, non-empty GRADING_PAD_<n>=x"
for kind in pad plain nonempty; do
  printf '%-9s ' $kind
  $E timeout 60 $S --tool racecheck --log-file $P/san2.log --target-processes all /usr/bin/python3 $T/live-test.py $kind \
     | grep -E '^before|^argc' | sed 's/variables:.*/variables/' | tr '\n' ' '; echo
done
