# Nsight Systems for the scripts: where nsys is, and the report where nsys could not write one.
#
#   source scripts/lib/nsys.sh
#   nsys=$(find_nsys)                   # "" when there is none
#   import_qdstrm "$nsys" build/NAME    # build/NAME.nsys-rep from build/NAME.qdstrm, if needed

# nsys from PATH, else from an Nsight Systems install, else the copy that Nsight Compute
# carries for its own use (the only one on the lent H100s).
find_nsys() {
    command -v nsys || ls /opt/nvidia/nsight-systems*/bin/nsys /usr/local/cuda/bin/nsys \
        /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | head -1 || true
}

# Where `nsys profile` left only a .qdstrm it could not import (the Nsight Systems inside
# Nsight Compute on the lent H100s lacks libdw.so.1), its own QdstrmImporter makes the
# report, with NSYS_EXTRA_LIBS on the library path. Its log: BASE_import.log.
import_qdstrm() {
    local nsys=$1 base=$2 importer
    [[ ! -f $base.nsys-rep && -f $base.qdstrm ]] || return 0
    importer=$(ls "$(dirname "$nsys")"/../*/QdstrmImporter /opt/nvidia/nsight-*/*/host/*/QdstrmImporter 2>/dev/null | head -1 || true)
    [[ -n $importer ]] || return 0
    LD_LIBRARY_PATH=${NSYS_EXTRA_LIBS:+$NSYS_EXTRA_LIBS:}${LD_LIBRARY_PATH:-} \
        "$importer" -i "$base.qdstrm" >"${base}_import.log" 2>&1 || true
}
