#!/usr/bin/env bash
# Host test of mpirun_probe.sh, with fake mpiruns on the PATH: one that starts anything, one
# that refuses (as Open MPI does as root) unless both of Open MPI's variables are set, one that
# refuses whatever it is told, and one whose --help says nothing about root. Needs no GPU and
# no MPI, so it runs in CI too.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/mpirun_probe.sh"
folder=$(mktemp -d)
trap 'rm -rf "$folder"' EXIT
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

# fake NAME BODY: an mpirun in $folder/NAME whose body is BODY (it runs `"$@"` past -np N).
fake() {
    mkdir -p "$folder/$1"
    printf '#!/usr/bin/env bash\n%s\n' "$2" >"$folder/$1/mpirun"
    chmod +x "$folder/$1/mpirun"
}
fake accepts 'shift 2; exec "$@"'
fake refuses_root 'if [[ ${OMPI_ALLOW_RUN_AS_ROOT:-} == 1 && ${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-} == 1 ]]; then shift 2; exec "$@"; fi
echo "mpirun has detected an attempt to run as root." >&2; exit 1'
fake refuses_everything 'echo "mpirun: no slots available" >&2; exit 1'
fake silent_help 'if [[ $1 == --help ]]; then echo "usage: mpirun [OPTION]... [PROGRAM]..."; exit 0; fi
if [[ -z ${OMPI_ALLOW_RUN_AS_ROOT:-} ]]; then echo "refused: root" >&2; exit 1; fi; shift 2; exec "$@"'

probe_with() { PATH="$folder/$1:$PATH" mpirun_probe; }

if ! said=$(probe_with accepts); then fail "accepts: the probe failed: $said"; fi
probe_with accepts >/dev/null
((${#mpirun_env[@]} == 0)) || fail "accepts: asked for ${mpirun_env[*]}, which it does not need"

for name in refuses_root silent_help; do
    if ! said=$(probe_with $name); then fail "$name: the probe failed: $said"; fi
    probe_with $name >/dev/null
    [[ " ${mpirun_env[*]} " == *" OMPI_ALLOW_RUN_AS_ROOT=1 "* && " ${mpirun_env[*]} " == *" OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "* ]] ||
        fail "$name: did not find Open MPI's two variables (got: ${mpirun_env[*]:-none})"
    # And what it found starts the processes.
    PATH="$folder/$name:$PATH" env "${mpirun_env[@]}" mpirun -np 2 true || fail "$name: mpirun with ${mpirun_env[*]} still refused"
done

if said=$(probe_with refuses_everything); then
    fail "refuses_everything: the probe succeeded"
else
    [[ $said == *"no slots available"* ]] || fail "refuses_everything: the failure does not say what mpirun said: $said"
fi

if ((failures)); then exit 1; fi
echo "ok: mpirun_probe decides by what mpirun does (4 fake mpiruns)"
