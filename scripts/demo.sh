#!/usr/bin/env bash
# `make demo`: what canopy does, in under a minute, on the embedded default:
# this machine, a bundled 12-NUMA-node x 8-core x 2-PU synthetic machine and
# bundled communication matrices from the benchmark suite.
set -euo pipefail
canopy=${1:-build/bin/canopy}
here=$(cd "$(dirname "$0")/.." && pwd)
data="$here/data/matrices"
out="$here/build/demo"
mkdir -p "$out"
big="pack:12 numa:1 core:8 pu:2"   # SMP12E5-like: 12 packages of one NUMA node x 8 cores x 2 PUs
section() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

section "1. This machine (the PUs this process may use)"
"$canopy" topology

section "2. A bigger machine: '$big' (synthetic)"
"$canopy" topology --input "$big" | sed -n 1,16p  # reads all its input: no SIGPIPE for canopy
"$canopy" topology --input "$big" --of svg -o "$out/smp12.svg"
echo "(picture: $out/smp12.svg)"

matrix="$data/stencil2d_192_permuted.mtx"
section "3. A communication matrix: 2D stencil, 192 tasks, ids permuted"
"$canopy" matrix --matrix "$matrix"
"$canopy" matrix --matrix "$matrix" --svg "$out/matrix.svg" >/dev/null
echo "(heat map: $out/matrix.svg)"

section "4. Every policy on it, on '$big': cost table"
"$canopy" compare --input "$big" --matrix "$matrix"

section "5. The chosen placement"
"$canopy" map --input "$big" --matrix "$matrix" --svg "$out/placement.svg" --of table | sed -n 1,16p  # reads all its input: no SIGPIPE for canopy
echo "...   (picture: $out/placement.svg)"

section "6. Fewer tasks than PUs: a 28-task pipeline, spread (default) and packed"
pipe="$data/pipeline_28.mtx"
"$canopy" map --input "$big" --matrix "$pipe" --of omp-places
"$canopy" map --input "$big" --matrix "$pipe" --pack --of omp-places

section "7. Launch an OpenMP program with it, on this machine"
threads=$("$canopy" topology --of json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["cores"]))')
echo "\$ $canopy run -n $threads --report -- ./my_openmp_program"
example="$here/build/bin/example_omp_where"
if [ -x "$example" ]; then
  "$canopy" run -n "$threads" --report -- "$example"
fi
echo
echo "Next: '$canopy --help', docs/cli.md, and 'make bench-mapping' for the full policy comparison."
