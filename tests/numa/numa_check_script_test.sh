#!/usr/bin/env bash
# tests/numa/numa_check_script_test.sh: what scripts/numa-check.sh does when
# the NUMA VMs are unavailable, with fake numavm scripts (no VM boots; under
# a second). `make numa-check` runs the script with --prepare
# --skip-unavailable: without numavm, or when `numavm --prepare` fails, it
# skips with a message; with CI set and numavm there, a failing --prepare is
# a failure naming the reason; a VM that does not start (numavm exit 125)
# fails everywhere. Run by ctest (canopy_numa_check_script); prints one line
# per case and exits 1 if any case went wrong.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
script=$root/scripts/numa-check.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/cache/kernel" && echo kernel > "$tmp/cache/kernel/vmlinux"
export NUMAVM_CACHE=$tmp/cache

# fake NAME PREPARE_EXIT RUN_EXIT: a numavm whose --prepare and runs print a
# line naming themselves and exit with these codes.
fake() {
  cat > "$tmp/$1" <<FAKE
#!/bin/sh
if [ "\$1" = --prepare ]; then echo "fake numavm: prepare says $2" >&2; exit $2; fi
echo "fake numavm: run says $3" >&2
exit $3
FAKE
  chmod +x "$tmp/$1"
}
fake prepare_fails 1 0
fake boot_fails 0 125
fake check_fails 0 1
fake all_pass 0 0

failures=0
# expect CASE NUMAVM CI WANT_EXIT PATTERN...: runs the script as make does
# and checks its exit status and that its output has every pattern.
expect() {
  local name=$1 numavm=$2 ci=$3 want=$4
  shift 4
  local out rc=0
  out=$(NUMAVM=$numavm CI=$ci bash "$script" --prepare --skip-unavailable --binary /bin/true --nodes 2 2>&1) || rc=$?
  local ok=1
  [[ $rc == "$want" ]] || ok=0
  for pattern in "$@"; do
    grep -qF -- "$pattern" <<< "$out" || { ok=0; echo "  missing: $pattern"; }
  done
  if [[ $ok == 1 ]]; then
    echo "ok   $name (exit $rc)"
  else
    echo "FAIL $name: exit $rc, expected $want; output:"
    sed 's/^/  | /' <<< "$out"
    failures=$((failures + 1))
  fi
}

expect "no numavm, outside CI: skipped" "$tmp/none" "" 0 "numa-check: skipped: numavm not found at $tmp/none"
expect "no numavm, CI set: skipped (nothing to run)" "$tmp/none" true 0 "numa-check: skipped: numavm not found"
expect "--prepare fails, outside CI: skipped" "$tmp/prepare_fails" "" 0 \
  "fake numavm: prepare says 1" "numa-check: skipped: numavm --prepare failed (exit 1"
expect "--prepare fails, CI=false: skipped" "$tmp/prepare_fails" false 0 "numa-check: skipped: numavm --prepare failed"
expect "--prepare fails, CI set: FAILED with the reason" "$tmp/prepare_fails" true 1 \
  "fake numavm: prepare says 1" "numa-check: FAILED: numavm --prepare failed (exit 1" "CI is set ('true')"
expect "VM does not start, CI set: FAILED" "$tmp/boot_fails" 1 1 \
  "fake numavm: run says 125" "FAILED: the VM did not start or numavm failed (exit 125" "numa-check: FAILED"
expect "VM does not start, outside CI: FAILED" "$tmp/boot_fails" "" 1 "the VM did not start"
expect "a check fails: FAILED" "$tmp/check_fails" "" 1 "== 2 nodes: FAILED (exit 1) =="
expect "all pass" "$tmp/all_pass" true 0 "== 2 nodes: passed" "numa-check: passed on node counts: 2"

if [[ $failures != 0 ]]; then
  echo "$failures case(s) failed"
  exit 1
fi
echo "all cases passed"
