#!/usr/bin/env bash
# The install test (ctest canopy_install, label install): installs the current
# build into a temporary prefix with `cmake --install`, checks what is there
# (the versioned libcanopy.so, libcanopy.a, headers, CMake package, canopy.pc)
# and what libcanopy.so exports (the C API and the C++ API of include/, none
# of fmt, nlohmann_json or src/ internals), then builds the two consumers of
# this directory (c_consumer: the C API; cxx_consumer: the C++ API and the
# runtime's templates) outside the tree and runs them against the installed
# library only (no LD_LIBRARY_PATH):
#   - with CMake find_package(canopy): C and C++ on canopy::canopy, C++ on
#     canopy::canopy_static;
#   - with pkg-config: C and C++ dynamically (`pkg-config --libs`), and both
#     statically (`pkg-config --static --libs`) from a copy of the prefix
#     moved elsewhere (${pcfiledir} relocation) that holds only libcanopy.a.
# Each run must print the placement the installed CLI computes for the same
# input. Usage: check_install.sh BUILD_DIR [CC CXX]
set -euo pipefail

build=$(cd "$1" && pwd)
cc=${2:-cc}
cxx=${3:-c++}
here=$(cd "$(dirname "$0")" && pwd)
unset LD_LIBRARY_PATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH
work=$(mktemp -d "${TMPDIR:-/tmp}/canopy-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
failures=0
fail() { echo "check_install: FAIL: $*" >&2; failures=$((failures + 1)); }
step() { echo "check_install: $*"; }

# A command that stops the script (set -e) says which and where: this test
# has failed now and then under a loaded parallel ctest with no other output.
trap 'echo "check_install: FAIL: line $LINENO: $BASH_COMMAND exited with $?" >&2' ERR
if ! cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1; then
  echo "check_install: FAIL: cmake --install $build --prefix $prefix:" >&2
  tail -20 "$work/install.log" >&2
  exit 1
fi
step "installed into $prefix"

# ---- the installed files -------------------------------------------------
libdir=$(dirname "$(find "$prefix" -name canopy.pc -path '*/pkgconfig/*' | head -1)")
libdir=$(dirname "$libdir")
version=$(sed -n 's/^Version: //p' "$libdir/pkgconfig/canopy.pc")
major=${version%%.*}
for f in "$libdir/libcanopy.so.$version" "$libdir/libcanopy.a" "$libdir/cmake/canopy/canopyConfig.cmake" \
         "$libdir/cmake/canopy/canopyTargets.cmake" "$libdir/cmake/canopy/canopyStaticTargets.cmake" \
         "$prefix/include/canopy.h" "$prefix/include/canopy/runtime.hpp" "$prefix/bin/canopy"; do
  [ -e "$f" ] || fail "$f is not installed"
done
[ "$(readlink "$libdir/libcanopy.so.$major")" = "libcanopy.so.$version" ] || fail "libcanopy.so.$major -> libcanopy.so.$version missing"
[ "$(readlink "$libdir/libcanopy.so")" = "libcanopy.so.$major" ] || fail "libcanopy.so -> libcanopy.so.$major missing"
soname=$(readelf -d "$libdir/libcanopy.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libcanopy.so.$major" ] || fail "SONAME is '$soname', expected libcanopy.so.$major"
step "libcanopy.so.$version (SONAME $soname), libcanopy.a, headers, CMake package and canopy.pc are there"

# ---- what libcanopy.so exports -------------------------------------------
nm -D --defined-only "$libdir/libcanopy.so" | awk '{print $NF}' | sort -u >"$work/exported.mangled"
c++filt <"$work/exported.mangled" >"$work/exported"
# Every C function the public C headers declare (canopy_omp.h is static inline).
sed -n 's/^[a-z][a-z_ ]*[ *]\(canopy_[a-z0-9_]*\)(.*/\1/p' "$prefix"/include/canopy*.h | grep -v '^canopy_omp_' |
  sort -u >"$work/c_api"
[ -s "$work/c_api" ] || fail "no C function found in the installed headers"
missing_c=$(comm -23 "$work/c_api" "$work/exported.mangled")
[ -z "$missing_c" ] || fail "C API functions not exported: $(echo $missing_c)"
# C++ API: a function, a static member, a thread_local the templates read,
# a detail:: function they call, and the exception type.
for sym in 'canopy::map_tasks(' 'canopy::Topology::from_synthetic(' 'canopy::detail::tls_worker' \
           'canopy::detail::enter_runtime(' 'typeinfo for canopy::Error'; do
  grep -qF "$sym" "$work/exported" || fail "'$sym' is not exported"
done
# Nothing of fmt, nlohmann_json or the src/ internals (namespaces and classes
# that only src/ declares).
leaked=$(grep -E 'fmt::|nlohmann::|canopy::(cmap|grouping|policy|matrix_detail|data_impl|capi|formats)::|canopy::Topology::Hwloc|canopy::detail::flow::Flow\b|RuntimeCore::' \
  "$work/exported" || true)
[ -z "$leaked" ] || fail "internal symbols exported: $(echo "$leaked" | head -5)"
# Anything else exported must be canopy's or the C++ standard library's
# (std:: templates instantiated in the library keep libstdc++'s default
# visibility so that they stay one copy per process).
# Read on the mangled names: 6canopy is namespace canopy (anywhere, e.g. in
# a template argument), _ZSt / _ZNSt / _ZNKSt / _ZTISt ... are std:: names.
other=$(grep -vE '^canopy_|6canopy|^_Z(Z|T[ISV]|GV|TH|TW)?N?K?St' "$work/exported.mangled" | c++filt || true)
[ -z "$other" ] || fail "unexpected exported symbols: $(echo "$other" | head -5)"
[ "$failures" -ne 0 ] || step "libcanopy.so exports $(wc -l <"$work/exported") symbols: all $(wc -l <"$work/c_api") C API" \
  "functions, the C++ API, nothing of fmt, nlohmann_json or the src/ internals"

# ---- the installed CLI ---------------------------------------------------
input="pack:2 core:2 pu:2"
# The consumers' matrix: heavy pairs (0,5) (1,6) (2,7) (3,4) and a light ring.
printf '# tasks 8\n0 5 100\n1 6 100\n2 7 100\n3 4 100\n' >"$work/pairs.edges"
for t in 0 1 2 3 4 5 6 7; do echo "$t $(((t + 1) % 8)) 1" >>"$work/pairs.edges"; done
# loads_installed BINARY: BINARY loads libcanopy.so.MAJOR from the prefix.
loads_installed() {
  local found
  found=$(ldd "$1" | awk '$1 == "libcanopy.so.'"$major"'" {print $3}')
  [ -n "$found" ] && [ "$found" -ef "$libdir/libcanopy.so.$major" ]
}
loads_installed "$prefix/bin/canopy" ||
  fail "the installed CLI does not load $libdir/libcanopy.so.$major: $(ldd "$prefix/bin/canopy" | grep canopy)"
expected=$("$prefix/bin/canopy" map --input "$input" --matrix "$work/pairs.edges" --format edgelist --policy treematch \
  --of omp-places 2>"$work/cli.err") || fail "installed CLI: $(cat "$work/cli.err")"
step "installed CLI (RPATH \$ORIGIN): OMP_PLACES=$expected"

# ---- the consumers -------------------------------------------------------
# check_run NAME BINARY LINK: runs BINARY, checks its placement against the
# CLI's and where it takes libcanopy from (LINK: shared or static).
check_run() {
  local name=$1 bin=$2 link=$3 out
  if ! out=$("$bin" 2>&1); then
    fail "$name exited with an error: $out"
    return
  fi
  echo "$out" | grep -qxF "${name%%[ -]*}: OMP_PLACES=$expected" ||
    fail "$name: placement differs from the CLI's ($expected): $out"
  echo "$out" | grep -q "pairs sharing a core: 4/4" || fail "$name: pairs not on one core: $out"
  if [ "$link" = shared ]; then
    loads_installed "$bin" ||
      fail "$name does not load the installed libcanopy.so: $(ldd "$bin" | grep canopy || echo none)"
  elif readelf -d "$bin" | grep -q 'NEEDED.*libcanopy'; then
    fail "$name should link libcanopy.a but needs libcanopy.so"
  fi
  step "$name: ok ($link)"
}

generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
# cmake_consumer NAME DIR [CMAKE ARGS...]
cmake_consumer() {
  local name=$1 dir=$2
  shift 2
  if ! cmake -S "$here/$dir" -B "$work/$name" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
       -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" "$@" \
       >"$work/$name.log" 2>&1 ||
     ! cmake --build "$work/$name" >>"$work/$name.log" 2>&1; then
    fail "$name: CMake build failed:"
    tail -20 "$work/$name.log" >&2
    return 1
  fi
}
cmake_consumer "c_consumer-cmake" c_consumer && check_run "c_consumer (CMake)" "$work/c_consumer-cmake/c_consumer" shared
cmake_consumer "cxx_consumer-cmake" cxx_consumer &&
  check_run "cxx_consumer (CMake)" "$work/cxx_consumer-cmake/cxx_consumer" shared
cmake_consumer "cxx_consumer-cmake-static" cxx_consumer -DCONSUMER_STATIC=ON &&
  check_run "cxx_consumer (CMake, canopy::canopy_static)" "$work/cxx_consumer-cmake-static/cxx_consumer" static

# pkg_consumer NAME COMPILER SOURCE PKG_CONFIG_DIR [--static] [EXTRA FLAGS...]
pkg_consumer() {
  local name=$1 compiler=$2 src=$3 pcdir=$4
  shift 4
  local static=() flags
  if [ "${1:-}" = --static ]; then static=(--static); shift; fi
  flags=$(PKG_CONFIG_PATH=$pcdir pkg-config "${static[@]}" --cflags --libs canopy) ||
    { fail "$name: pkg-config ${static[*]} failed"; return 1; }
  # shellcheck disable=SC2086 # flags are words
  if ! "$compiler" "$here/$src" -o "$work/$name" "$@" $flags >"$work/$name.log" 2>&1; then
    fail "$name: $compiler $src $* $flags failed:"
    tail -20 "$work/$name.log" >&2
    return 1
  fi
}
pcdir=$libdir/pkgconfig
rpath=-Wl,-rpath,$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=libdir canopy)
pkg_consumer c-pkg "$cc" c_consumer/main.c "$pcdir" -std=c99 -pedantic -Werror "$rpath" &&
  check_run "c_consumer (pkg-config)" "$work/c-pkg" shared
pkg_consumer cxx-pkg "$cxx" cxx_consumer/main.cpp "$pcdir" -std=c++20 -Werror "$rpath" &&
  check_run "cxx_consumer (pkg-config)" "$work/cxx-pkg" shared

# Static: the prefix copied elsewhere without the shared library (as a
# static-only installation would be), so -lcanopy can only be libcanopy.a
# and the .pc must find its files from its own place.
moved=$work/moved/prefix
mkdir -p "$work/moved"
cp -a "$prefix" "$moved"
rm -f "$moved/${libdir#"$prefix"/}"/libcanopy.so*
movedpc=$moved/${libdir#"$prefix"/}/pkgconfig
[ "$(PKG_CONFIG_PATH=$movedpc pkg-config --variable=includedir canopy)" -ef "$moved/include" ] ||
  fail "canopy.pc is not relocatable: includedir $(PKG_CONFIG_PATH=$movedpc pkg-config --variable=includedir canopy)"
step "moved static-only prefix: pkg-config --static --libs canopy = $(PKG_CONFIG_PATH=$movedpc pkg-config --static --libs canopy)"
pkg_consumer c-pkg-static "$cc" c_consumer/main.c "$movedpc" --static -std=c99 -pedantic -Werror &&
  check_run "c_consumer (pkg-config --static)" "$work/c-pkg-static" static
pkg_consumer cxx-pkg-static "$cxx" cxx_consumer/main.cpp "$movedpc" --static -std=c++20 -Werror &&
  check_run "cxx_consumer (pkg-config --static)" "$work/cxx-pkg-static" static

if [ "$failures" -ne 0 ]; then
  echo "check_install: $failures check(s) failed" >&2
  exit 1
fi
step "all checks passed"
