#!/usr/bin/env bash
# scripts/front.py's verdicts on a made-up call whose answers are known (issue 31's tie rule:
# behind by less than the larger of the two rows' min-max spread is a tie). Each case is one
# (type, n, method); the rows are built so that a wrong pick of reduce7's row (another block,
# CUB's row), of the competitor (a resident layout, float's run-to-run atomic layouts) or a
# wrong spread would change the verdict.
#   tests/front/check.sh PYTHON REPO
set -uo pipefail
python=${1:?usage: check.sh PYTHON REPO}
repo=${2:?usage: check.sh PYTHON REPO}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
B=4294967296  # bytes of 2^30 ints: GB/s = B / ms / 1e6
ms() { awk -v b=$B -v g="$1" 'BEGIN { printf "%.6f", b / g / 1e6 }'; }
# reduce7_blocks.csv: reduce7 at 512 (the default); slower rows at 256 and of CUB, which must be ignored
{
  echo "timing,stage,kernel,variant,type,n,bytes,block,runs,median_ms,min_ms,max_ms,gbps,verified"
  # int flushed: reduce7 3200 [3190-3210]; probe one-shot 3205 [3204-3206]: behind by 5 < 20 -> tie
  echo "flushed,reduce7,k,vec=4 finish=packed,int,1073741824,$B,512,100,$(ms 3200),$(ms 3210),$(ms 3190),3200,true"
  echo "flushed,reduce7,k,vec=4 finish=packed,int,1073741824,$B,256,100,$(ms 3100),$(ms 3101),$(ms 3099),3100,true"
  echo "flushed,cub,k,x,int,1073741824,$B,0,100,$(ms 3000),$(ms 3001),$(ms 2999),3000,true"
  # int back-to-back: reduce7 3200 [3199-3201]; probe 3210 [3209-3211]: behind by 10 > 2 -> BEHIND
  echo "back-to-back,reduce7,k,vec=4 finish=packed,int,1073741824,$B,512,10,$(ms 3200),$(ms 3201),$(ms 3199),3200,true"
  # float flushed: reduce7 3150 [3149-3151]; one-shot two-pass 3100; +atomic 3300 and resident 3400 ignored -> ahead
  echo "flushed,reduce7,k,vec=4 finish=last-block,float,1073741824,$B,512,100,$(ms 3150),$(ms 3151),$(ms 3149),3150,true"
} >"$dir/reduce7_blocks.csv"
{
  echo "type,n,layout,method,blocks,threads,runs,median_ms,min_ms,max_ms,gbps,pct_peak,verified"
  echo "int,1073741824,one-shot,flushed,1,1,100,$(ms 3205),$(ms 3206),$(ms 3204),3205,95,yes"
  echo "int,1073741824,resident-dynamic,flushed,1,1,100,$(ms 3500),$(ms 3501),$(ms 3499),3500,95,yes"
  echo "int,1073741824,one-shot,back-to-back,1,1,10,$(ms 3210),$(ms 3211),$(ms 3209),3210,95,yes"
  echo "float,1073741824,one-shot,flushed,1,1,100,$(ms 3100),$(ms 3101),$(ms 3099),3100,95,yes"
  echo "float,1073741824,one-shot+atomic,flushed,1,1,100,$(ms 3300),$(ms 3301),$(ms 3299),3300,95,yes"
  echo "float,1073741824,resident-stride,flushed,1,1,100,$(ms 3400),$(ms 3401),$(ms 3399),3400,95,yes"
} >"$dir/grid_layout.csv"
out=$("$python" "$repo/scripts/front.py" "$dir") || { echo "front.py failed on the made-up call"; exit 1; }
failed=0
expect() {  # expect TYPE METHOD VERDICT OTHER
    local line
    line=$(grep "^$1,2^30,$2," <<<"$out")
    if [[ $line != *",$3" || $line != *",$4,"* ]]; then
        echo "front.py: $1 $2: expected $3 against $4, got: ${line:-no line}"
        failed=1
    fi
}
expect int flushed tie "probe one-shot"
expect int back-to-back BEHIND "probe one-shot"
expect float flushed ahead "probe one-shot"
# A row that was not verified must stop the script, not be counted.
sed -i 's/,3205,95,yes$/,3205,95,no/' "$dir/grid_layout.csv"
if "$python" "$repo/scripts/front.py" "$dir" >/dev/null 2>&1; then
    echo "front.py: accepted a row that was not verified"
    failed=1
fi
(( failed == 0 )) && echo "front.py: every verdict as expected (tie, BEHIND, ahead; an unverified row refused)"
exit $failed
