# Sourced by two_processes.sh (and tested by test_mpirun_probe.sh): how to start processes
# with the `mpirun` on the PATH, decided by what it does, not by what its help says.
#
# Open MPI refuses to start anything as root unless told it may (--allow-run-as-root, or
# OMPI_ALLOW_RUN_AS_ROOT=1 with OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1); how much of that its
# --help mentions differs between versions (4.1.6's short help does not), and MPICH has no
# such rule at all. So: start one `true`; if that fails, start it again with Open MPI's two
# variables (which other launchers ignore); if that fails too, nothing can be started.
#
#   mpirun_probe   sets the array mpirun_env to the variables mpirun needs (empty when none)
#                  and returns 0; or prints why mpirun starts nothing and returns 1.
mpirun_probe() {
    mpirun_env=()
    local said
    if said=$(timeout 120 mpirun -np 1 true 2>&1); then
        return 0
    fi
    local allow=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
    if env "${allow[@]}" timeout 120 mpirun -np 1 true >/dev/null 2>&1; then
        mpirun_env=("${allow[@]}")
        echo "mpirun refused to start a process as $(id -un) and started it with ${allow[*]}: running with them"
        return 0
    fi
    echo "mpirun cannot start one process ('mpirun -np 1 true', with and without ${allow[*]}); it said:"
    printf '%s\n' "$said" | sed -n 1,20p
    return 1
}
