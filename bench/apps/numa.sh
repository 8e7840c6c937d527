#!/usr/bin/env bash
# bench/apps/numa.sh: the applications' locality in throw-away QEMU VMs
# with several NUMA nodes (../shared/tools/numavm, as scripts/numa-check.sh):
# in each VM, bench/apps/run.py --locality on the small sizes, every
# configuration (canopy, canopy-auto when this canopy has it, OpenMP close
# and spread) on all the VM's CPUs. Times inside the VM mean nothing (the
# CPUs are emulated); the share of the bytes each task accessed on its own
# node is what this measures.
#
#   bench/apps/numa.sh [--bin DIR] [--nodes "2 4"] [--cpus-per-node 2] [--rounds 1] [--timeout SEC]
#                      [--thp always|madvise|never] [--only lk23,matmul,video] [--configs canopy-auto,...]
#                      [--submit] [--runner apps|btmz] [--markdown]
#
# --runner btmz runs the BT-MZ-like benchmark's runner instead
# (bench/apps/btmz/run.py --size small --locality: its canopy variants and
# OpenMP nested teams); --configs is passed to it, --only and --submit are not
# for it.
#
# This script does not take the numavm lock: run it as
# `flock /tmp/numavm.lock bench/apps/numa.sh ...` where several people share
# the machine (one VM at a time).
# Environment: NUMAVM (path of numavm; default ../shared/tools/numavm/numavm
# beside the repository, else /work/shared/tools/numavm/numavm).
# The guest runs with numa_balancing=disable, so that the kernel does not
# move pages behind the programs' backs (first touch stays first touch).
# --only, --configs and --submit are passed to run.py (fewer programs: a
# shorter VM run). --thp sets the guest's transparent huge pages (default: the guest
# kernel's own, "always"); with "always", moving the pages of a handle that
# shares a huge page with others can fail (mbind MPOL_MF_MOVE|STRICT: EIO).
# Exit: 0 when every VM ran and every program's check passed; 1 otherwise;
# 2 bad usage or numavm missing.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=$root/build/bin
node_counts="2 4"
cpus=2
rounds=1
timeout=1800
markdown=""
thp=""
select=""
runner=apps
while [[ $# -gt 0 ]]; do
  case $1 in
    --bin) bin=$(realpath -m "$2"); shift 2 ;;
    --nodes) node_counts=$2; shift 2 ;;
    --cpus-per-node) cpus=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --markdown) markdown=--markdown; shift ;;
    --thp) thp=$2; shift 2 ;;
    --only | --configs)
      [[ $2 =~ ^[a-z0-9,-]+$ ]] || { echo "bench/apps/numa.sh: $1 '$2': expected names separated by commas" >&2; exit 2; }
      select="$select $1 $2"; shift 2 ;;
    --submit) select="$select --submit"; shift ;;
    --runner) runner=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "bench/apps/numa.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for n in $node_counts $cpus $rounds; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "bench/apps/numa.sh: '$n': expected a positive whole number" >&2; exit 2; }
done
case $thp in "" | always | madvise | never) ;; *) echo "bench/apps/numa.sh: --thp '$thp': expected always, madvise or never" >&2; exit 2 ;; esac
case $runner in
  apps) script=bench/apps/run.py; first=canopy_bench_lk23_canopy ;;
  btmz) script=bench/apps/btmz/run.py; first=canopy_bench_btmz_canopy
        [[ $select =~ --only|--submit ]] && { echo "bench/apps/numa.sh: --only and --submit are not for --runner btmz" >&2; exit 2; } ;;
  *) echo "bench/apps/numa.sh: --runner '$runner': expected apps or btmz" >&2; exit 2 ;;
esac
numavm=${NUMAVM:-$root/../shared/tools/numavm/numavm}
[[ -x $numavm ]] || numavm=/work/shared/tools/numavm/numavm
if [[ ! -x $numavm ]]; then
  echo "bench/apps/numa.sh: numavm not found (set NUMAVM=/path/to/numavm; see ../shared/tools/numavm/README.md)" >&2
  exit 2
fi
[[ -x $bin/$first ]] || { echo "bench/apps/numa.sh: no $first in $bin (build the apps first)" >&2; exit 2; }

status=0
for n in $node_counts; do
  echo "== $n NUMA nodes x $cpus CPUs (numavm, numa_balancing=disable)"
  start=$(date +%s)
  rc=0
  (cd "$root" && "$numavm" --nodes "$n" --cpus-per-node "$cpus" --mem-per-node 512M --timeout "$timeout" \
     --kernel-args numa_balancing=disable -- sh -c \
     "${thp:+echo $thp > /sys/kernel/mm/transparent_hugepage/enabled && }echo \"THP: \$(cat /sys/kernel/mm/transparent_hugepage/enabled)\" &&
      python3 $script --bin '$bin' --size small --locality --rounds $rounds --max-others 1 \
        --threads $((n * cpus)) $markdown $select") || rc=$?
  echo "== $n nodes: exit $rc, $(($(date +%s) - start)) s"
  [[ $rc == 0 ]] || status=1
done
exit $status
