#!/usr/bin/env bash
# How many 16-byte global loads a kernel really has in flight before it first waits:
# reads the SASS (cuobjdump -sass) of one kernel and counts the LDG.E.128 it issues
# before the first instruction that reads a register one of them writes, and the most
# such loads outstanding at any point of the function (peak_in_flight).
#
#   scripts/count_loads_before_use.sh BINARY KERNEL-SUBSTRING [--arch sm_90] [--all] [--show]
#   scripts/count_loads_before_use.sh build/release/bin/reduce7 'shuffle_vector_single_pass<256u, 4, int, 8>('
#
# BINARY may also be a file ending in .sass that holds `cuobjdump -sass` output (--arch is
# then the dump's): dumping a binary of many kernels takes seconds, so a caller that counts
# several kernels (tests/loads_in_flight.sh) dumps it once.
#
# Why it matters: the source of reduce7 --loads 8 issues 8 loads, then adds. But ptxas
# schedules the machine code, not the source: it may hoist an add above the later loads
# (to reuse the first load's registers and keep the register count, so the occupancy,
# high). The warp then stalls on that add until the first load returns, and the later
# loads are not even issued until then: the bytes in flight are what the SASS issues
# before the first use, not what the source says. Every counted load is in flight
# at once, since a load does not wait for anything but its address.
#
# The count starts at the kernel's first LDG.E.128 (for reduce7 and the probe: the first
# load of the tile loop; the head and tail use 4-byte LDG.E) and stops at the first
# instruction, a load included, whose source operands name a register that a counted
# load writes (a 16-byte load writes 4 registers, R4 = R4..R7). A branch also stops it
# (what follows may be another path). --all repeats the count from every later
# LDG.E.128 that starts a new group (after a use), one line each, so an unrolled loop
# shows every group. --show prints the instructions counted and the first use.
#
# KERNEL-SUBSTRING is matched against the demangled "Function :" names, as c++filt
# writes them ("shuffle_vector_single_pass<256u, 4, int, 8>("); the first match is read.
# Needs cuobjdump (CUDA Toolkit; also the PyPI wheel nvidia-cuda-cuobjdump, with
# nvidia-cuda-nvdisasm beside it on PATH) and c++filt or cu++filt.
set -euo pipefail
usage() { echo "usage: scripts/count_loads_before_use.sh BINARY KERNEL-SUBSTRING [--arch sm_NN] [--all] [--show]" >&2; exit 2; }
[[ $# -ge 2 ]] || usage
binary=$1
want=$2
shift 2
arch=()
all=0
show=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --arch) arch=(--gpu-architecture "${2:?--arch needs a value}"); shift 2 ;;
        --all) all=1; shift ;;
        --show) show=1; shift ;;
        *) usage ;;
    esac
done
[[ -f $binary ]] || { echo "count_loads_before_use.sh: $binary not found: build first" >&2; exit 3; }
if [[ $binary == *.sass ]]; then
    sass() { cat "$binary"; }
else
    command -v cuobjdump >/dev/null || { echo "count_loads_before_use.sh: cuobjdump not found (CUDA Toolkit, or pip's nvidia-cuda-cuobjdump)" >&2; exit 3; }
    sass() { cuobjdump -sass "${arch[@]}" "$binary"; }
fi
demangle="cat"
command -v cu++filt >/dev/null && demangle=cu++filt
command -v c++filt >/dev/null && demangle=c++filt

sass | $demangle | awk -v want="$want" -v all="$all" -v show="$show" '
    # The registers an operand list reads: "R4", "R4.reuse", "-R5", "|R6|", "[R28.64+0x10]".
    # A ".64" operand is a register pair (R28.64 = R28, R29). Not "UR12" (a uniform
    # register) nor "SR_TID" (a special one): an R after no letter.
    function names(text, regs,    m, r) {
        text = " " text
        while (match(text, /[^A-Z_]R[0-9]+(\.64)?/)) {
            m = substr(text, RSTART + 1, RLENGTH - 1)
            r = substr(m, 2) + 0
            regs[r] = 1
            if (m ~ /\.64$/) regs[r + 1] = 1
            text = substr(text, RSTART + RLENGTH)
        }
    }
    function report(why) {
        printf "%s\tbefore_first_use=%d\t%s\n", name, count, why
        ++groups
    }
    finished { next }   # read to the end: leaving early would kill cuobjdump (SIGPIPE)
    /Function : / {
        if (found) { finished = 1; next }
        if (index($0, want) > 0) { found = 1; name = $0; sub(/^[[:space:]]*Function : /, "", name) }
        next
    }
    !found { next }
    # An instruction line: "/*03d0*/   @!P0 LDG.E.128 R4, desc[UR12][R28.64] ;"
    /\/\*[0-9a-f]+\*\/[[:space:]]+[@A-Z]/ {
        line = $0
        sub(/^[[:space:]]*\/\*[0-9a-f]+\*\/[[:space:]]+/, "", line)
        sub(/[[:space:]]*;.*$/, "", line)
        text = line
        sub(/^@!?U?P[T0-9]+[[:space:]]+/, "", text)      # the predicate guard
        op = text; sub(/[[:space:]].*$/, "", op)
        operands = text; sub(/^[^[:space:]]+[[:space:]]*/, "", operands)
        # Stores, branches and compares into predicates write no general register first:
        # all their operands are read.
        dest = ""; sources = operands
        if (op !~ /^(ST|RED|ATOM|BRA|BRX|JMP|EXIT|RET|CALL|BAR|ISETP|FSETP|DSETP|UISETP|PLOP3|WARPSYNC|NOP)/ && index(operands, ",")) {
            dest = substr(operands, 1, index(operands, ",") - 1)
            sources = substr(operands, index(operands, ",") + 1)
        }
        is_wide_load = op ~ /^LDG\.E.*\.128/
        delete used; names(sources, used)
        # In flight across the whole function: a load counts from its issue to the first
        # instruction that reads one of its registers.
        for (r in used) if (r in owner) {
            id = owner[r]
            for (k = 0; k < 4; ++k) delete owner[first_reg[id] + k]
            --in_flight
        }
        if (counting) {
            hit = 0
            for (r in used) if (r in pending) { hit = 1; break }
            if (hit || op ~ /^(BRA|BRX|JMP|EXIT|RET|CALL)/) {
                report(hit ? "first use: " line : "stopped at branch: " line)
                if (show) print "  -> " line
                counting = 0
                if (!all) stop_groups = 1
            }
        }
        if (is_wide_load) {
            r = substr(dest, 2) + 0
            ++loads; first_reg[loads] = r
            for (k = 0; k < 4; ++k) owner[r + k] = loads
            if (++in_flight > peak) peak = in_flight
            if (!counting && !stop_groups) { counting = 1; count = 0; delete pending }
            if (counting) {
                ++count
                for (k = 0; k < 4; ++k) pending[r + k] = 1
                if (show) print "  " line
            }
        }
    }
    END {
        if (!found) { print "count_loads_before_use.sh: no kernel whose name contains \"" want "\"" > "/dev/stderr"; exit 3 }
        if (!loads) { print "count_loads_before_use.sh: " name ": no LDG.E.128 (16-byte global load)" > "/dev/stderr"; exit 4 }
        if (counting) report("no use before the end of the function")
        printf "%s\tpeak_in_flight=%d\tLDG.E.128 in the function: %d\n", name, peak, loads
    }'
