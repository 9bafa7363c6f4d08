# shellcheck shell=bash
# Sourced by the scripts that measure this tree beside a changed copy of it
# (lib/ab_variant.sh, alternate_rounds.sh): the copy is made and built one way in both, and
# the tree itself is never changed.
#
#   copy_tree DEST     this tree's files into DEST (emptied first): what git tracks and the
#                      untracked files it does not ignore, so no build folder or .git travels;
#                      outside a git checkout, everything but build/ and .git/
#   build_copy DEST TARGET ...
#                      DEST configured with the release preset and TARGETs built there
#                      (build_targets, lib/measure.sh), its output on stdout and stderr
# shellcheck source=scripts/lib/measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"  # build_targets (it defines functions only)
copy_tree() {
    local dest=$1
    rm -rf "$dest" && mkdir -p "$dest" || return
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -C "$dest" -xf -
    else
        tar --exclude=./build --exclude=./.git -cf - . | tar -C "$dest" -xf -
    fi
}

build_copy() {
    local dest=$1
    shift
    (cd "$dest" && build_targets build/release "$@")
}
