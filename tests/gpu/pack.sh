#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# After tests/gpu/run.sh --build OUTDIR: copies into OUTDIR/lib the shared libraries the programs
# in OUTDIR/bin load (prof's own libprof*.so*, OTF2 and what it needs, CUPTI, libcudart, Open MPI,
# ...), so that `tests/gpu/run.sh --run OUTDIR` works on a GPU machine without our Debian packages
# (run.sh puts OUTDIR/lib on LD_LIBRARY_PATH when it exists). Left out: glibc (libc, libm,
# libpthread, libdl, librt, ld-linux), libstdc++ and libgcc_s, and the CUDA driver (libcuda.so*),
# which that machine has. The copies keep their symbols but lose their debug information.
#
#   tests/gpu/pack.sh OUTDIR          (PROF_BUILD: prof's build directory, default <repo>/build)
#
# Prints the size of OUTDIR at the end. mpirun itself is not packed: where the GPU machine has
# none, run.sh skips mpi_cuda.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${PROF_BUILD:-$repo/build}
[ $# = 1 ] || { echo "usage: tests/gpu/pack.sh OUTDIR (after tests/gpu/run.sh --build OUTDIR)" >&2; exit 2; }
out=$1
[ -d "$out/bin" ] || { echo "pack.sh: $out/bin does not exist; run tests/gpu/run.sh --build $out first" >&2; exit 1; }
lib=$out/lib
rm -rf "$lib"
mkdir -p "$lib"

# The libraries that stay behind, by file name.
left_out() {
  case $1 in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libstdc++.so*|libgcc_s.so*|libcuda.so*|linux-vdso*) return 0 ;;
  esac
  return 1
}

copy() {  # copy SONAME PATH: a plain file named after the soname, without debug information
  [ -e "$lib/$1" ] && return 0
  cp -L "$2" "$lib/$1"
  chmod u+w "$lib/$1"
  strip --strip-debug "$lib/$1" 2>/dev/null || true
  echo "$lib/$1" >>"$lib/.new"
}

# prof's libraries: the files once, their sonames and linker names as links.
: >"$lib/.new"
for f in "$build"/lib/libprof*.so*; do
  [ -e "$f" ] || continue
  if [ -L "$f" ]; then
    ln -s "$(readlink "$f")" "$lib/$(basename "$f")"
  else
    copy "$(basename "$f")" "$f"
  fi
done

# Everything ldd resolves for the programs and, transitively, for the copied libraries.
todo="$(ls -d "$out"/bin/* | grep -v '[.]skip$' || true) $(cat "$lib/.new")"
while [ -n "$(echo $todo)" ]; do
  : >"$lib/.new"
  for f in $todo; do
    ldd "$f" 2>/dev/null | while read -r name arrow path rest; do
      [ "$arrow" = "=>" ] || continue
      left_out "$name" && continue
      if [ "$path" = "not" ]; then
        echo "pack.sh: warning: $f needs $name, which ldd does not find here" >&2
        continue
      fi
      copy "$name" "$path"
    done
  done
  todo=$(cat "$lib/.new")
done
rm -f "$lib/.new"

n=$(ls "$lib" | wc -l)
echo "pack.sh: $n libraries in $lib ($(du -sh "$lib" | cut -f1)); $out in all: $(du -sh "$out" | cut -f1)"
echo "pack.sh: on the GPU machine: tests/gpu/run.sh --run $out  (it sets LD_LIBRARY_PATH=$lib)"
