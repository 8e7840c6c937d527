#!/usr/bin/env bash
# Regenerates the hwloc XML files of this directory: machines shaped like
# real ones (CPU numbering, cache and memory sizes, NUMA distances), built
# from hwloc synthetic descriptions with hwloc's own tools (lstopo,
# hwloc-calc, hwloc-annotate from Debian's hwloc package), so that tests
# never depend on the machine they run on. Run from anywhere:
#   bash tests/data/topologies/generate.sh
# then review the diff (and the golden files under tests/cli/golden/ that
# use these machines: CANOPY_UPDATE_GOLDEN=1, see tests/cli/README.md).
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# OS indexes listed in logical PU order, from a shell function of the
# logical index.
indexes() {  # count function
  local out="" i
  for ((i = 0; i < $1; i++)); do out+="${out:+,}$($2 "$i")"; done
  echo "$out"
}

# hwloc-annotate's distances file: kind (1 FROM_OS | 4 MEANS_LATENCY), the
# objects, then the matrix row by row, from a function of (i, j).
distances() {  # n function
  local n=$1 i j
  echo "name=NUMALatency"
  echo 5
  echo "$n"
  for ((i = 0; i < n; i++)); do echo "NUMANode:$i"; done
  for ((i = 0; i < n; i++)); do for ((j = 0; j < n; j++)); do $2 "$i" "$j"; done; done
}

# --- two-socket: Broadwell-like 2 x 8 cores x 2 hardware threads -----------
# Linux numbers the first thread of every core first (package 0 cores 0-7,
# package 1 cores 8-15), then their siblings 16-31.
two_socket_os() { local l=$1; echo $(((l % 2) * 16 + (l / 16) * 8 + (l / 2) % 8)); }
two_socket_dist() { if [[ $1 == "$2" ]]; then echo 10; else echo 21; fi; }
lstopo-no-graphics -i "pack:2 [numa(memory=64GiB)] l3:1(size=20MiB) l2:8(size=256KiB) l1d:1(size=32KiB) core:1 pu:2(indexes=$(indexes 32 two_socket_os))" \
  --of xml -f "$tmp/two.xml"
distances 2 two_socket_dist > "$tmp/two.dist"
hwloc-annotate "$tmp/two.xml" two-socket.xml -- none -- distances "$tmp/two.dist"

# --- knl-like: Xeon Phi in SNC-4 flat mode ----------------------------------
# Four quadrants, each with a DDR NUMA node and an MCDRAM NUMA node; 17
# cores x 4 threads per quadrant, then one core removed from quadrants 1 and
# 3 (by restriction, as a disabled core would be): 17, 16, 17, 16 cores.
# NUMA distances as numactl shows them on such a machine.
knl_keep=()
for ((q = 0; q < 4; q++)); do
  cores=17
  ((q % 2 == 1)) && cores=16
  for ((c = 0; c < cores; c++)); do
    for ((t = 0; t < 4; t++)); do knl_keep+=("pu:$((q * 68 + c * 4 + t))"); done
  done
done
knl_syn="pack:1 group:4 [numa(memory=24GiB)] [numa(memory=4GiB)] l2:17(size=1MiB) core:1 pu:4"
knl_set=$(hwloc-calc -i "$knl_syn" "${knl_keep[@]}")
lstopo-no-graphics -i "$knl_syn" --restrict "$knl_set" --of xml -f "$tmp/knl.xml"
# NUMA logical order: quadrant q has DDR 2q and MCDRAM 2q+1.
knl_dist() {
  local a=$1 b=$2
  local qa=$((a / 2)) qb=$((b / 2)) ma=$((a % 2)) mb=$((b % 2))
  if ((a == b)); then echo 10
  elif ((ma == 0 && mb == 0)); then echo 21
  elif ((ma != mb && qa == qb)); then echo 31
  else echo 41
  fi
}
distances 8 knl_dist > "$tmp/knl.dist"
hwloc-annotate "$tmp/knl.xml" knl-like.xml -- none -- distances "$tmp/knl.dist"

# --- hybrid-like: Alder Lake-like 8 P-cores (2 threads, private L2) + 8 -----
# E-cores (1 thread, L2 shared by clusters of 4). Built from 12 L2 x 4 cores
# x 2 threads, restricted to the first core of L2 0-7 (P-cores) and the
# first thread of every core of L2 8-9 (E-cores). OS numbering as Linux has
# it: P-core threads 0-15, E-cores 16-23; the CPU kinds are annotated.
hybrid_os() {
  local l=$1 l2=$(($1 / 8)) core=$((($1 / 2) % 4)) thread=$(($1 % 2))
  if ((l2 < 8 && core == 0)); then echo $((2 * l2 + thread))
  elif ((l2 >= 8 && l2 < 10 && thread == 0)); then echo $((16 + 4 * (l2 - 8) + core))
  else echo $((24 + l)); fi
}
hybrid_keep=()
for ((l2 = 0; l2 < 8; l2++)); do hybrid_keep+=("pu:$((8 * l2))" "pu:$((8 * l2 + 1))"); done
for ((l2 = 8; l2 < 10; l2++)); do for ((c = 0; c < 4; c++)); do hybrid_keep+=("pu:$((8 * l2 + 2 * c))"); done; done
hybrid_syn="pack:1 [numa(memory=32GiB)] l3:1(size=30MiB) l2:12(size=1280KiB) core:4 pu:2(indexes=$(indexes 96 hybrid_os))"
hybrid_set=$(hwloc-calc -i "$hybrid_syn" "${hybrid_keep[@]}")
lstopo-no-graphics -i "$hybrid_syn" --restrict "$hybrid_set" --of xml -f "$tmp/hybrid.xml"
hwloc-annotate "$tmp/hybrid.xml" "$tmp/hybrid2.xml" -- none -- cpukind 0x00ff0000 0 0 CoreType IntelAtom
hwloc-annotate "$tmp/hybrid2.xml" "$tmp/hybrid3.xml" -- none -- cpukind 0x0000ffff 1 0 CoreType IntelCore
# The E-core clusters' shared L2 is bigger than a P-core's private one.
hwloc-annotate "$tmp/hybrid3.xml" hybrid-like.xml -- L2Cache:8 L2Cache:9 -- size 2MiB
echo "wrote two-socket.xml knl-like.xml hybrid-like.xml"
