set -u
cd "$(dirname "$0")"
g++ -O1 -o exp exp.cpp && /usr/local/cuda/bin/nvcc -o prog prog.cu || exit 1
for m in none fork execveat-deny raw-execveat; do
  echo "== $m"; /usr/local/cuda/bin/compute-sanitizer --tool memcheck --target-processes all ./exp $m ./prog 2>&1 | tail -3
done
