#!/usr/bin/env python3
"""Runs GCC 12's own libgomp test suite against an OpenMP runtime (issue 11).

The tests come from Debian's gcc-12-source package (/usr/src/gcc-12/*.tar.*,
installed by scripts/setup.sh): only libgomp/testsuite/ and the two headers
some tests include are extracted, into <build>/gomp-suite/src (never into the
repository). Every test of libgomp.c, libgomp.c-c++-common, libgomp.c++ and
libgomp.fortran is read for its DejaGnu directives the way libgomp's .exp
files would (see plan_test); the `dg-do run` ones are compiled once (cached
by a hash of sources, options and compiler version) and each binary runs
with LD_LIBRARY_PATH set to --runtime-dir, which must hold the runtime as
libgomp.so.1; a test that fails there runs again on the system libgomp (the
baseline), and a failure the baseline shares is not the runtime's: the test
is not judged. (Running the baseline only for failures halves the runs: the
system libgomp's runs took three times canopy's CPU.) Listed exceptions
(tests/omp/gomp_suite_exceptions.txt, at most 2% of the judged tests) may
fail. The last lines are the summary:

  gomp-suite: N passed, M failed, K skipped (judged: B of T run tests; F failures rerun on the system libgomp, G of them fail there too)

where T counts the run tests found (C-and-C++ tests twice), B those judged
on the runtime, K = T - B (unsupported here, or failing on the system
libgomp too), and N + M = B. The exit status is 1 if a non-excepted test
failed or the exceptions exceed 2%, 2 on bad input.

Simplifications against DejaGnu, all deliberate: only the run result counts
(dg-final scans, dg-warning/dg-error and excess-error checks are compile-
time checks of GCC, not of the runtime); Fortran tests run at one torture
option set (-O2) instead of gfortran-dg-runtest's six, to keep CI time down;
effective targets come from the EFFECTIVE_TARGETS table below.
"""
import argparse
import concurrent.futures
import fnmatch
import glob
import hashlib
import json
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

SUITE_DIRS = ("libgomp.c", "libgomp.c-c++-common", "libgomp.c++", "libgomp.fortran")
FORTRAN_RE = re.compile(r"\.[fF](|90|95|03|08)$")
TARGET_TRIPLET = "x86_64-pc-linux-gnu"
# libgomp_init's flags (lib/libgomp.exp) plus -fopenmp from each .exp file.
ALWAYS_FLAGS = ["-fopenmp", "-fmessage-length=0", "-fno-diagnostics-show-caret",
                "-fdiagnostics-color=never"]
C_DEFAULT_FLAGS = ["-O2"]        # DEFAULT_CFLAGS of c.exp and c++.exp
FORTRAN_TORTURE_FLAGS = ["-O2"]  # one of gfortran-dg-runtest's six option sets
COMPILERS = {"c": "gcc", "c++": "g++", "fortran": "gfortran"}
EXCEPTION_LIMIT = 0.02
RUNTIME_SLOWDOWN_LIMIT = 4      # the runtime's run may take 4x the baseline's
RUN_SLOTS = threading.Semaphore(1)  # runs one at a time (set by --run-jobs)
SYSTEM_LIBGOMP = "/usr/lib/x86_64-linux-gnu/libgomp.so.1"


def cpu_flags():
    """The CPU feature flags of /proc/cpuinfo (for the *_runtime targets)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def effective_targets():
    """Which DejaGnu effective targets hold on this machine, with the reason.

    Languages (c, c++) are added per test by plan_test. A target that is not
    here and is not a triplet pattern is an error, so that a new one in the
    suite is decided on, not guessed."""
    cpu = cpu_flags()
    return {
        "fopenmp": (True, "gcc -fopenmp works (the suite needs it anyway)"),
        "tls": (True, "x86_64 ELF has thread-local storage"),
        "tls_runtime": (True, "glibc runs TLS programs"),
        "size32plus": (True, "x86_64 has 32-bit+ address space"),
        "lp64": (True, "x86_64 -m64"),
        "ia32": (False, "x86_64 -m64, not 32-bit x86"),
        "sync_int_long": (True, "x86_64 has atomic int and long"),
        "lto": (True, "Debian's gcc-12 is built with LTO"),
        "fpic": (True, "x86_64 supports -fpic"),
        "shared": (True, "shared libraries are supported"),
        "alias": (True, "ELF supports aliases (dg-require-alias)"),
        "fd_truncate": (True, "Linux has ftruncate"),
        "__float128": (True, "x86_64 has __float128 without extra options"),
        "large_long_double": (True, "x86_64 long double is 80-bit"),
        "vect_simd_clones": (True, "x86_64 and binutils assemble avx512f clones"),
        "sse2_runtime": ("sse2" in cpu, "CPU flag sse2 in /proc/cpuinfo"),
        "avx_runtime": ("avx" in cpu, "CPU flag avx in /proc/cpuinfo"),
        "run_expensive_tests": (False, "GCC_TEST_RUN_EXPENSIVE is not set (as in GCC's default runs)"),
        "offload_device": (False, "no offload device: target regions run on the host"),
        "offload_device_nonshared_as": (False, "no offload device"),
        "offload_device_shared_as": (False, "no offload device"),
        "offload_device_nvptx": (False, "no offload device"),
        "offload_device_intel_mic": (False, "no offload device"),
        "offload_device_any_intel_mic": (False, "no offload device"),
        "offload_target_nvptx": (False, "gcc-12 names nvptx as offload target, but no offload "
                                 "compiler (gcc-12-offload-nvptx) is installed: host code only"),
        "offload_target_amdgcn": (False, "as offload_target_nvptx (no gcc-12-offload-amdgcn)"),
        "aarch64_tiny": (False, "not AArch64"),
    }


class SuiteError(Exception):
    """Bad input (test file, exceptions file, option): reported, exit 2."""


# ---------------------------------------------------------------- Tcl words

TCL_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}


class Word(str):
    """One Tcl word; .braced says it was written {like this} (a sub-list)."""
    braced = False


def tcl_backslash(text, i):
    """Tcl's backslash substitution at text[i] == '\\': (replacement, next i)."""
    c = text[i + 1] if i + 1 < len(text) else "\\"
    if c in TCL_ESCAPES:
        return TCL_ESCAPES[c], i + 2
    if c == "x":
        m = re.match(r"[0-9a-fA-F]{1,2}", text[i + 2:])
        if m:
            return chr(int(m.group(0), 16)), i + 2 + len(m.group(0))
    return c, i + 2


def tcl_words(text, where="?"):
    """Splits a Tcl list into Words: "quoted" (with backslash substitution),
    {braced} (verbatim, nested) and bare words."""
    words, i, n = [], 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        if text[i] == "{":
            depth, j = 1, i + 1
            while j < n and depth:
                if text[j] == "\\":
                    j += 2
                    continue
                depth += {"{": 1, "}": -1}.get(text[j], 0)
                j += 1
            if depth:
                raise SuiteError(f"{where}: unbalanced '{{' in {text!r}")
            w = Word(text[i + 1:j - 1])
            w.braced = True
            words.append(w)
            i = j
        elif text[i] == '"':
            out, j = [], i + 1
            while j < n and text[j] != '"':
                if text[j] == "\\":
                    s, j = tcl_backslash(text, j)
                    out.append(s)
                elif text[j] in "[$":
                    raise SuiteError(f"{where}: Tcl substitution '{text[j]}' is not supported in {text!r}")
                else:
                    out.append(text[j])
                    j += 1
            if j >= n:
                raise SuiteError(f"{where}: unterminated '\"' in {text!r}")
            words.append(Word("".join(out)))
            i = j + 1
        else:
            out, j = [], i
            while j < n and not text[j].isspace():
                if text[j] == "\\":
                    s, j = tcl_backslash(text, j)
                    out.append(s)
                else:
                    out.append(text[j])
                    j += 1
            words.append(Word("".join(out)))
            i = j
    return words


# ------------------------------------------------------------ directives

DIRECTIVE_RE = re.compile(r"\{[ \t]+(dg-[-a-z]+)([ \t].*)?[ \t]+\}")


def parse_directives(path, display=None):
    """[(line number, directive name, [Word args])] of a test file, found as
    DejaGnu finds them: `{ dg-NAME args }` on one line. DISPLAY names the
    file in messages (default: PATH)."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            m = DIRECTIVE_RE.search(line)
            if m:
                where = f"{display or path}:{lineno}"
                out.append((lineno, m.group(1), tcl_words(m.group(2) or "", where)))
    return out


# ------------------------------------------------------------- selectors

def eval_operand(word, targets, where):
    """One selector operand: a sub-expression, an effective target or a
    target-triplet pattern."""
    if word.braced:
        return eval_expression(tcl_words(word, where), targets, where)
    if word in targets:
        return targets[word][0]
    if "-" in word or "*" in word or "?" in word:
        return fnmatch.fnmatchcase(TARGET_TRIPLET, word)
    raise SuiteError(f"{where}: unknown effective target '{word}' (add it to EFFECTIVE_TARGETS)")


def eval_expression(words, targets, where):
    """A selector: either an expression with !, && and || (no precedence
    mixing in the suite; && binds tighter as in Tcl) or a list of
    alternatives (true if any holds)."""
    if not any(w in ("!", "&&", "||") and not w.braced for w in words):
        return any(eval_operand(w, targets, where) for w in words)
    pos = 0

    def unary():
        nonlocal pos
        if pos >= len(words):
            raise SuiteError(f"{where}: selector ends early: {' '.join(words)!r}")
        w = words[pos]
        pos += 1
        if w == "!" and not w.braced:
            return not unary()
        return eval_operand(w, targets, where)

    def conj():
        nonlocal pos
        value = unary()
        while pos < len(words) and words[pos] == "&&":
            pos += 1
            value = unary() and value
        return value

    value = conj()
    while pos < len(words) and words[pos] == "||":
        pos += 1
        value = conj() or value
    if pos != len(words):
        raise SuiteError(f"{where}: unexpected '{words[pos]}' in selector {' '.join(words)!r}")
    return value


def selector_holds(word, targets, where):
    """A `{ target SEL }` argument (or `{ xfail SEL }`): (kind, holds)."""
    words = tcl_words(word, where)
    if not words or words[0] not in ("target", "xfail"):
        raise SuiteError(f"{where}: expected '{{ target ... }}' or '{{ xfail ... }}', got {word!r}")
    return words[0], eval_expression(words[1:], targets, where)


def flags_match(patterns, flags):
    """DejaGnu's include/exclude option lists: does any pattern match?"""
    for p in tcl_words(patterns):
        if p == "*" or any(fnmatch.fnmatchcase(f, p) for f in flags) or f" {p} " in f" {' '.join(flags)} ":
            return True
    return False


# ------------------------------------------------------------------ plan

class Plan:
    """What to do with one test in one language."""

    def __init__(self, test_id, path, lang):
        self.test_id, self.path, self.lang = test_id, path, lang
        self.action = "run"          # run | compile | link | preprocess | assemble
        self.skip = None             # reason it is not run here
        self.options = None          # dg-options (None: the defaults)
        self.extra_options = []
        self.sources = []            # dg-additional-sources, absolute
        self.env = {}
        self.output = []             # dg-output regexps, concatenated
        self.shouldfail = False
        self.timeout_factor = 1.0
        self.timeout = None

    def flags(self):
        default = FORTRAN_TORTURE_FLAGS if self.lang == "fortran" else C_DEFAULT_FLAGS
        options = self.options if self.options is not None else ([] if self.lang == "fortran" else default)
        torture = FORTRAN_TORTURE_FLAGS if self.lang == "fortran" else []
        return ALWAYS_FLAGS + torture + options + self.extra_options

    def counts(self):
        return self.action == "run"


def optional_selector(args, index, targets, where):
    """True when args[index] is absent or its `{ target SEL }` holds."""
    if len(args) <= index:
        return True
    kind, holds = selector_holds(args[index], targets, where)
    return holds if kind == "target" else True


def skip_like(args, targets, where, flags):
    """dg-skip-if / dg-xfail-if / dg-xfail-run-if / dg-shouldfail arguments:
    "comment" { selector } { include flags } { exclude flags }."""
    if len(args) < 2:
        return True
    sel = tcl_words(args[1], where)
    if sel and sel[0] in ("target", "xfail"):
        sel = sel[1:]
    if not eval_expression(sel, targets, where):
        return False
    include = args[2] if len(args) > 2 else "*"
    exclude = args[3] if len(args) > 3 else ""
    return flags_match(include, flags) and not flags_match(exclude, flags)


IGNORED = {"dg-final", "dg-warning", "dg-error", "dg-bogus", "dg-message", "dg-prune-output",
           "dg-excess-errors", "dg-note", "dg-line"}


def plan_test(path, test_id, lang, targets):
    """Reads a test's directives into a Plan, as libgomp's .exp files would
    for LANG (default action "run", set in lib/libgomp.exp)."""
    targets = dict(targets)
    targets["c"] = (lang == "c", "compiled as C")
    targets["c++"] = (lang == "c++", "compiled as C++")
    plan = Plan(test_id, path, lang)
    display = test_id.split(" as ")[0]
    later = []
    for lineno, name, args in parse_directives(path, display):
        where = f"{display}:{lineno}"
        if name == "dg-do":
            if not args:
                raise SuiteError(f"{where}: dg-do without an action")
            plan.action = str(args[0])
            if len(args) > 1:
                kind, holds = selector_holds(args[1], targets, where)
                if kind == "target" and not holds:
                    plan.skip = plan.skip or f"dg-do {args[0]} target does not hold ({where})"
                if kind == "xfail" and holds:
                    plan.skip = plan.skip or f"expected to fail here ({where})"
        elif name == "dg-options":
            if optional_selector(args, 1, targets, where):
                plan.options = shlex.split(args[0]) if args else []
        elif name == "dg-additional-options":
            if optional_selector(args, 1, targets, where):
                plan.extra_options += shlex.split(args[0]) if args else []
        elif name == "dg-additional-sources":
            if optional_selector(args, 1, targets, where):
                base = os.path.dirname(path)
                plan.sources += [os.path.normpath(os.path.join(base, s)) for s in args[0].split()]
        elif name == "dg-require-effective-target":
            if not args:
                raise SuiteError(f"{where}: dg-require-effective-target without a target")
            if optional_selector(args, 1, targets, where) and not eval_operand(Word(args[0]), targets, where):
                plan.skip = plan.skip or f"needs effective target {args[0]} ({where})"
        elif name == "dg-require-alias":
            if not targets["alias"][0]:
                plan.skip = plan.skip or f"needs alias support ({where})"
        elif name == "dg-add-options":
            if not args or args[0] != "__float128":
                raise SuiteError(f"{where}: dg-add-options {' '.join(args)!r} is not known here")
        elif name == "dg-set-target-env-var":
            if len(args) != 2:
                raise SuiteError(f"{where}: dg-set-target-env-var needs NAME VALUE")
            plan.env[str(args[0])] = str(args[1])
        elif name == "dg-output":
            if optional_selector(args, 1, targets, where):
                plan.output.append(args[0] if args else "")
        elif name == "dg-timeout":
            if optional_selector(args, 1, targets, where):
                plan.timeout = float(args[0])
        elif name == "dg-timeout-factor":
            if optional_selector(args, 1, targets, where):
                plan.timeout_factor = float(args[0])
        elif name in ("dg-skip-if", "dg-xfail-if", "dg-xfail-run-if", "dg-shouldfail"):
            later.append((where, name, args))
        elif name not in IGNORED:
            raise SuiteError(f"{where}: unknown directive {name}")
    # These depend on the final options, so they come last.
    for where, name, args in later:
        if skip_like(args, targets, where, plan.flags()):
            if name == "dg-skip-if":
                plan.skip = plan.skip or f"dg-skip-if holds ({where})"
            elif name in ("dg-xfail-if", "dg-xfail-run-if"):
                plan.skip = plan.skip or f"{name}: expected to fail here ({where})"
            else:
                plan.shouldfail = True
    return plan


def output_regexp(plan):
    """The dg-output patterns as one Python regexp (Tcl ARE: '.' matches
    newlines, ^/$ anchor the whole output)."""
    if not plan.output:
        return None
    return re.compile("".join(plan.output), re.DOTALL)


# ------------------------------------------------------------- discovery

def discover(src_root, targets):
    """All Plans of the four directories, C-and-C++ tests once per language,
    in the order and with the file patterns of the .exp files."""
    plans = []
    for d in SUITE_DIRS:
        root = os.path.join(src_root, d)
        if not os.path.isdir(root):
            raise SuiteError(f"{root}: test directory missing (extraction failed?)")
        for dirpath, _, files in os.walk(root):
            for name in sorted(files):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, src_root)
                if d == "libgomp.c" and name.endswith(".c"):
                    plans.append(plan_test(path, rel, "c", targets))
                elif d == "libgomp.c++" and name.endswith(".C"):
                    plans.append(plan_test(path, rel, "c++", targets))
                elif d == "libgomp.c-c++-common" and name.endswith(".c"):
                    for lang in ("c", "c++"):
                        plans.append(plan_test(path, f"{rel} as {lang}", lang, targets))
                elif d == "libgomp.fortran" and FORTRAN_RE.search(name):
                    plans.append(plan_test(path, rel, "fortran", targets))
    plans.sort(key=lambda p: p.test_id)
    return plans


def extract_suite(cache):
    """Extracts libgomp/testsuite (and the headers its tests include) from
    the gcc-12 source tarball into CACHE/src once; returns the testsuite dir."""
    tarballs = sorted(glob.glob("/usr/src/gcc-12/gcc-12*.tar.*"))
    if not tarballs:
        raise SuiteError("/usr/src/gcc-12/gcc-12*.tar.*: not found (install gcc-12-source: make setup)")
    tarball = tarballs[0]
    src = os.path.join(cache, "src")
    st = os.stat(tarball)
    stamp_text = f"{tarball} {st.st_size} {int(st.st_mtime)}\n"
    stamp = os.path.join(src, ".extracted")
    if not (os.path.exists(stamp) and open(stamp).read() == stamp_text):
        os.makedirs(src, exist_ok=True)
        subprocess.run(["tar", "-xf", tarball, "-C", src, "--wildcards", "*/libgomp/testsuite/*",
                        "*/libgomp/libgomp_g.h", "*/include/gomp-constants.h"], check=True)
        with open(stamp, "w") as f:
            f.write(stamp_text)
    found = glob.glob(os.path.join(src, "*", "libgomp", "testsuite"))
    if len(found) != 1:
        raise SuiteError(f"{src}: expected one */libgomp/testsuite, found {found}")
    write_config_h(found[0])
    return found[0]


# ----------------------------------------------------- compile and run

def compiler_version(lang):
    return subprocess.run([COMPILERS[lang], "--version"], capture_output=True, text=True).stdout.splitlines()[0]


def local_includes(path, seen, include_dirs):
    """The files PATH includes with "..." (recursively; found next to the
    includer or in INCLUDE_DIRS), for the cache key."""
    if path in seen or not os.path.isfile(path):
        return
    seen.add(path)
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"|^\s*include\s+[\'"]([^\'"]+)[\'"]', text, re.M):
        name = m.group(1) or m.group(2)
        for d in [os.path.dirname(path)] + include_dirs:
            candidate = os.path.normpath(os.path.join(d, name))
            if os.path.isfile(candidate):
                local_includes(candidate, seen, include_dirs)
                break


CONFIG_H = """/* Written by scripts/gomp_suite.py: libgomp.c/affinity-1.c includes the
   config.h of libgomp's build, of which it only uses this one macro; libgomp's
   configure defines it on glibc. */
#define HAVE_PTHREAD_AFFINITY_NP 1
"""


def write_config_h(suite_dir):
    """The config.h some tests include (in the extracted libgomp dir, on -I)."""
    path = os.path.join(os.path.dirname(suite_dir), "config.h")
    if not os.path.exists(path):
        with open(path + f".{os.getpid()}.{threading.get_ident()}", "w") as f:
            f.write(CONFIG_H)
        os.replace(f.name, path)


def include_dirs(suite_dir):
    """libgomp_init's -I directories: libgomp's source dir and GCC's include/."""
    libgomp_dir = os.path.dirname(suite_dir)
    return [libgomp_dir, os.path.join(os.path.dirname(libgomp_dir), "include")]


def compile_command(plan, suite_dir):
    return ([COMPILERS[plan.lang], plan.path] + plan.sources + plan.flags()
            + [f"-I{d}" for d in include_dirs(suite_dir)] + ["-o", "test.exe", "-lm"])


def cache_key(plan, cmd, versions, suite_dir):
    h = hashlib.sha256()
    h.update(versions[plan.lang].encode())
    h.update("\0".join(cmd).encode())
    files = set()
    for p in [plan.path] + plan.sources:
        local_includes(p, files, include_dirs(suite_dir))
    for p in sorted(files):
        h.update(p.encode())
        with open(p, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:20]


def compile_test(plan, suite_dir, cache, versions):
    """Compiles once per cache key; returns (ok, work dir, log text). The
    compile happens in a private directory renamed into place at the end,
    so an interrupted compile or two runners sharing the cache do no harm."""
    cmd = compile_command(plan, suite_dir)
    work = os.path.join(cache, "bin", cache_key(plan, cmd, versions, suite_dir))
    result = os.path.join(work, "compile.json")
    if not os.path.exists(result):
        tmp = f"{work}.tmp{os.getpid()}.{threading.get_ident()}"
        os.makedirs(tmp)
        env = dict(os.environ, LC_ALL="C", LANG="C")
        start = time.monotonic()
        try:
            p = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, env=env, timeout=600, errors="replace")
            ok, out = p.returncode == 0 and os.path.exists(os.path.join(tmp, "test.exe")), p.stdout + p.stderr
        except subprocess.TimeoutExpired:
            ok, out = False, "compile timed out after 600 s"
        log = "$ " + shlex.join(cmd) + "\n" + out
        with open(os.path.join(tmp, "compile.json"), "w") as f:
            json.dump({"ok": ok, "log": log, "seconds": round(time.monotonic() - start, 2)}, f)
        if os.path.isdir(work) and not os.path.exists(result):
            shutil.rmtree(work, ignore_errors=True)  # left by an interrupted older runner
        try:
            os.rename(tmp, work)
        except OSError:  # another runner was first: use its result
            shutil.rmtree(tmp, ignore_errors=True)
    with open(result) as f:
        r = json.load(f)
    return r["ok"], work, r["log"]


def run_env(plan, runtime_dir):
    """The environment of a run: no OMP_*/GOMP_*/KMP_* from outside (so
    OMP_NUM_THREADS is unset), the C locale as libgomp_init sets it, the
    test's dg-set-target-env-var, and the runtime directory first."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "GOMP_", "KMP_"))}
    env.update(LC_ALL="C", LANG="C")
    env.update(plan.env)
    if runtime_dir:
        old = env.get("LD_LIBRARY_PATH")
        env["LD_LIBRARY_PATH"] = runtime_dir + (":" + old if old else "")
    return env


# --wrap: a command the runs on the runtime go through (e.g. `canopy profile
# -q -o /dev/null --`, docs/profile.md): the tests must pass under it as they
# do without it on the system libgomp. The baseline runs are never wrapped:
# a test that failed only under the wrapper must count as a failure, not
# drop out as "failed on the baseline".
WRAP = []


def run_binary(plan, work, runtime_dir, timeout, wrap=()):
    """Runs the test once with TIMEOUT seconds (or its dg-timeout, times
    its dg-timeout-factor), through the command WRAP if given; returns
    (passed, seconds, log text). A hang is killed with its whole process
    group."""
    limit = plan.timeout if plan.timeout else timeout * plan.timeout_factor
    start = time.monotonic()
    p = subprocess.Popen(list(wrap) + [os.path.join(work, "test.exe")], cwd=work, env=run_env(plan, runtime_dir),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=limit)
        status = p.returncode
        why = f"exit status {status}"
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        status, why = None, f"timed out after {limit:g} s (killed)"
    seconds = time.monotonic() - start
    text = out.decode("utf-8", errors="replace")
    if status is None:
        passed = False
    else:
        passed = (status != 0) if plan.shouldfail else (status == 0)
        if not passed:
            why += " (the test must fail)" if plan.shouldfail else ""
        rx = output_regexp(plan)
        if passed and rx and not rx.search(text):
            passed, why = False, why + "; output does not match dg-output"
    return passed, seconds, f"[{why}, {seconds:.2f} s]\n{text}"


# ------------------------------------------------------------ exceptions

def read_exceptions(path, plans):
    """{test id: reason} from the exceptions file: `<path>[ as c|c++] <reason>`;
    a C-and-C++ test without `as` is excepted in both languages."""
    ids = {p.test_id for p in plans}
    out = {}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 1)
            test, rest = parts[0], parts[1] if len(parts) > 1 else ""
            m = re.match(r"as (c|c\+\+)\s+(.*)", rest)
            names = [f"{test} as {m.group(1)}"] if m else [test, f"{test} as c", f"{test} as c++"]
            reason = m.group(2) if m else rest
            names = [n for n in names if n in ids]
            if not names:
                raise SuiteError(f"{path}:{lineno}: '{test}' is not a test of the suite")
            if not reason.strip():
                raise SuiteError(f"{path}:{lineno}: exception for '{test}' has no reason")
            for n in names:
                out[n] = reason.strip()
    return out


# ------------------------------------------------------------------ main

def process(plan, args, suite_dir, cache, versions):
    """Compile and run one plan; returns its result record (and writes its log).
    With a runtime to judge, the test runs on it first and on the system
    libgomp (the baseline) only when it fails there: a failure that the
    system libgomp has too is not the runtime's (the test is skipped), and a
    run that timed out is retried with 4x the baseline's time. Without one
    (--baseline-only), the baseline run alone."""
    rec = {"id": plan.test_id, "lang": plan.lang, "state": "skipped", "why": plan.skip}
    if plan.skip:
        return rec
    ok, work, log = compile_test(plan, suite_dir, cache, versions)
    logs = [log]
    rec["log"] = os.path.join(cache, "logs", plan.test_id.replace("/", "__").replace(" ", "_") + ".log")

    def on_runtime(limit):
        with RUN_SLOTS:
            passed, secs, text = run_binary(plan, work, args.runtime_dir, limit, WRAP)
        logs.append(f"--- {args.runtime_dir}{' through ' + shlex.join(WRAP) if WRAP else ''} " + text)
        rec["runtime_s"] = round(secs, 3)
        rec["state"] = "passed" if passed else "failed"
        rec["first_lines"] = text.splitlines()[:4]
        return passed, "timed out after" in text.splitlines()[0]

    def on_baseline():
        with RUN_SLOTS:
            passed, secs, text = run_binary(plan, work, None, args.baseline_timeout)
        logs.append("--- system libgomp " + text)
        rec["baseline_s"] = round(secs, 3)
        return passed, secs, text

    if not ok:
        rec.update(state="baseline-failed", why="compile failed")
    elif not args.runtime_dir:
        passed, _, text = on_baseline()
        rec.update(state="baseline-passed" if passed else "baseline-failed",
                   why=None if passed else text.splitlines()[0])
    else:
        passed, timed_out = on_runtime(args.timeout)
        if not passed:
            base_passed, base_secs, text = on_baseline()
            if not base_passed:
                rec.update(state="baseline-failed", why=text.splitlines()[0])
            elif timed_out and RUNTIME_SLOWDOWN_LIMIT * base_secs > args.timeout:
                # A hang is judged against the baseline's time, so that a slow
                # or loaded machine does not fail tests that are merely long.
                on_runtime(RUNTIME_SLOWDOWN_LIMIT * base_secs)
    with open(rec["log"], "w") as f:
        f.write("\n".join(logs))
    return rec


def sample_plans(plans, n):
    """Every N-th runnable (not skipped) plan of each suite directory, in
    test id order from the first: the same subset on every run and machine,
    with tests from every directory and language."""
    out = []
    for d in SUITE_DIRS:
        runnable = [p for p in plans if p.test_id.startswith(d + "/") and not p.skip]
        out += runnable[::n]
    return out


def system_runtime_dir(cache):
    """A directory in CACHE whose libgomp.so.1 is the system libgomp."""
    d = os.path.join(cache, "system-libgomp")
    os.makedirs(d, exist_ok=True)
    link = os.path.join(d, "libgomp.so.1")
    if os.path.realpath(link) != os.path.realpath(SYSTEM_LIBGOMP):
        tmp = f"{link}.{os.getpid()}"
        os.symlink(SYSTEM_LIBGOMP, tmp)
        os.replace(tmp, link)
    return d


def check_runtime_dir(runtime_dir, probe):
    """The runtime directory must hold libgomp.so.1, and the dynamic linker
    must pick it from there (checked on one compiled test)."""
    lib = os.path.join(runtime_dir, "libgomp.so.1")
    if not os.path.exists(lib):
        raise SuiteError(f"{lib}: missing (--runtime-dir must hold the runtime as libgomp.so.1)")
    env = dict(os.environ, LD_LIBRARY_PATH=runtime_dir, LD_TRACE_LOADED_OBJECTS="1")
    out = subprocess.run([probe], env=env, capture_output=True, text=True).stdout
    m = re.search(r"libgomp\.so\.1 => (\S+)", out)
    if not m or os.path.realpath(m.group(1)) != os.path.realpath(lib):
        raise SuiteError(f"{runtime_dir}: the tests do not load libgomp.so.1 from there:\n{out}")


def summarize(plans, results, exceptions, args, known=None):
    """Prints the per-directory table, failures and the summary; returns the exit status.
    `known`: {test id: reason} of the failures the runtime is known to have
    while it is unfinished (--known-failures); they do not fail the run, do
    not count against the 2% exception budget, and the summary says the bar
    is not met while there are any."""
    known = known or {}
    by_id = {r["id"]: r for r in results}
    total = len([p for p in plans if p.counts()])
    base = [r for r in results if r["state"] in ("baseline-passed", "passed", "failed")]
    print(f"{'directory':24} {'files':>6} {'run tests':>9} {'unsupported':>11} "
          f"{'judged' if args.runtime_dir else 'baseline ok':>11}"
          + (f" {'runtime ok':>10}" if args.runtime_dir else ""))
    for d in SUITE_DIRS:
        ps = [p for p in plans if p.test_id.startswith(d + "/")]
        rs = [by_id[p.test_id] for p in ps if p.counts()]
        files = len({p.path for p in ps})
        line = (f"{d:24} {files:6} {len(rs):9} {sum(r['state'] == 'skipped' for r in rs):11} "
                f"{sum(r['state'] in ('baseline-passed', 'passed', 'failed') for r in rs):11}")
        if args.runtime_dir:
            line += f" {sum(r['state'] == 'passed' for r in rs):10}"
        print(line)
    if not args.runtime_dir:
        bad = [r for r in results if r["state"] == "baseline-failed"]
        for r in bad:
            print(f"baseline failure: {r['id']}: {r['why']} ({r.get('log', '')})")
        print(f"gomp-suite: baseline only: {len(base)} of {total} run tests passed on the system libgomp "
              f"({len(bad)} failed, {total - len(base) - len(bad)} unsupported here)")
        return 0
    failed = [r for r in results if r["state"] == "failed"]
    passed = [r for r in results if r["state"] == "passed"]
    excepted = [r for r in failed if r["id"] in exceptions]
    known_failed = [r for r in failed if r["id"] in known and r["id"] not in exceptions]
    for r in failed:
        if r["id"] in exceptions:
            print(f"excepted failure: {r['id']} ({r['log']})")
        elif r["id"] in known:
            print(f"known failure: {r['id']}: {known[r['id']]}")
            continue
        else:
            print(f"FAIL: {r['id']} ({r['log']})")
        for line in r["first_lines"]:
            print(f"    {line}")
    stale = [t for t in exceptions if by_id.get(t, {}).get("state") == "passed"]
    for t in stale:
        print(f"stale exception: {t} passes now; remove it from {args.exceptions}")
    limit = int(EXCEPTION_LIMIT * len(base))
    rerun = [r for r in results if "runtime_s" in r and "baseline_s" in r]
    shared = [r for r in rerun if r["state"] == "baseline-failed"]
    print(f"gomp-suite: {len(passed)} passed, {len(failed)} failed, {total - len(base)} skipped "
          f"(judged: {len(base)} of {total} run tests; {len(rerun)} failures rerun on the system libgomp, "
          f"{len(shared)} of them fail there too)")
    for r in shared:
        print(f"    not judged (fails on the system libgomp too): {r['id']}: {r['why']}")
    print(f"gomp-suite: {len(excepted)} of the failures are listed exceptions; {len(exceptions)} exceptions "
          f"listed (limit {limit} = 2% of the judged tests), {len(stale)} stale")
    stale_known = [t for t in known if by_id.get(t, {}).get("state") == "passed"]
    for t in stale_known:
        print(f"known failure passes now: {t}; remove it from {args.known_failures}")
    if known:
        print(f"gomp-suite: {len(known_failed)} of the failures are known (features not done yet, "
              f"{args.known_failures}); {len(stale_known)} known failures pass now")
    if known_failed:
        print(f"gomp-suite: bar NOT met: {len(known_failed)} known failures remain (features not done yet); "
              f"the bar allows only listed exceptions, at most {limit} (2%)")
    status = 0
    if len(failed) > len(excepted) + len(known_failed):
        status = 1
    if len(exceptions) > limit:
        print(f"gomp-suite: too many exceptions: {len(exceptions)} > {limit}")
        status = 1
    return status


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runtime-dir", help="directory holding the runtime as libgomp.so.1")
    ap.add_argument("--baseline-only", action="store_true", help="only compile and run on the system libgomp")
    ap.add_argument("--cache", default="build/gomp-suite", help="cache dir for sources, binaries, logs")
    ap.add_argument("--known-failures", default=None,
                    help="file of failures the unfinished runtime is known to have (same format as the "
                         "exceptions): reported, not fatal, outside the 2%% budget")
    ap.add_argument("--exceptions", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                         "..", "tests", "omp", "gomp_suite_exceptions.txt"))
    ap.add_argument("--only", help="regexp on test ids (e.g. 'libgomp.c/loop' or 'as c\\+\\+$')")
    ap.add_argument("--sample", type=int, default=0, metavar="N",
                    help="run only every N-th runnable test of each directory (in test id order, from the "
                         "first): a fixed, deterministic subset that spans the whole suite")
    ap.add_argument("--system-runtime", action="store_true",
                    help="judge the system libgomp itself as the runtime (a link to it in the cache stands for "
                         "--runtime-dir); with --wrap, checks that the tests pass through the wrapper on libgomp")
    ap.add_argument("--jobs", type=int, default=2, help="compile/run jobs (default 2)")
    ap.add_argument("--run-jobs", type=int, default=1,
                    help="test runs at a time, beside compiles (default 1: tests use all cores)")
    ap.add_argument("--timeout", type=float, default=30.0,
                    help="seconds per run on the runtime, at least (default 30; else 4x the baseline's time)")
    ap.add_argument("--baseline-timeout", type=float, default=300.0,
                    help="seconds per run on the system libgomp (default 300, DejaGnu's)")
    ap.add_argument("--list", action="store_true", help="list the tests and their plan, do nothing else")
    ap.add_argument("--wrap", default="",
                    help="run every test on the runtime through this command (shell words; the baseline "
                         "runs are not wrapped), e.g. 'build/bin/canopy profile -q -o /dev/null --'")
    args = ap.parse_args(argv)
    global WRAP
    WRAP = shlex.split(args.wrap)
    global RUN_SLOTS
    RUN_SLOTS = threading.Semaphore(max(1, args.run_jobs))
    try:
        if args.system_runtime and args.runtime_dir:
            raise SuiteError("--system-runtime and --runtime-dir exclude each other")
        if args.sample < 0:
            raise SuiteError(f"--sample {args.sample}: expected a positive number")
        if not args.baseline_only and not args.list and not args.runtime_dir \
                and not args.system_runtime:
            raise SuiteError("give --runtime-dir DIR (or --baseline-only / --list)")
        if args.baseline_only:
            args.runtime_dir = None
        cache = os.path.abspath(args.cache)
        if args.runtime_dir:
            args.runtime_dir = os.path.abspath(args.runtime_dir)
        if args.system_runtime:
            args.runtime_dir = system_runtime_dir(cache)
        start = time.monotonic()
        suite_dir = extract_suite(cache)
        plans = discover(suite_dir, effective_targets())
        exceptions = read_exceptions(args.exceptions, plans)
        known = read_exceptions(args.known_failures, plans) if args.known_failures else {}
        if args.only:
            plans = [p for p in plans if re.search(args.only, p.test_id)]
        if args.list:
            for p in plans:
                state = p.action if p.action != "run" else ("skip: " + p.skip if p.skip else "run")
                print(f"{p.test_id}\t{state}\t{' '.join(p.flags())}")
            return 0
        plans = [p for p in plans if p.counts()]
        if args.sample > 1:
            plans = sample_plans(plans, args.sample)
        exceptions = {t: r for t, r in exceptions.items() if any(p.test_id == t for p in plans)}
        os.makedirs(os.path.join(cache, "logs"), exist_ok=True)
        versions = {lang: compiler_version(lang) for lang in COMPILERS}
        if args.runtime_dir:
            probe = next(p for p in plans if not p.skip and p.lang == "c")
            ok, work, log = compile_test(probe, suite_dir, cache, versions)
            if not ok:
                raise SuiteError(f"cannot compile {probe.test_id} to probe the runtime dir:\n{log}")
            check_runtime_dir(args.runtime_dir, os.path.join(work, "test.exe"))
        done = [0]
        lock = threading.Lock()

        def one(plan):
            rec = process(plan, args, suite_dir, cache, versions)
            with lock:
                done[0] += 1
                if done[0] % 100 == 0:
                    print(f"gomp-suite: {done[0]} of {len(plans)} tests done after "
                          f"{time.monotonic() - start:.0f} s", flush=True)
            return rec
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(pool.map(one, plans))
        with open(os.path.join(cache, "results.json"), "w") as f:
            json.dump(results, f, indent=1)
        status = summarize(plans, results, exceptions, args, known)
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        print(f"gomp-suite: took {time.monotonic() - start:.0f} s with {args.jobs} jobs, "
              f"{usage.ru_utime + usage.ru_stime:.0f} s CPU in compilers and tests "
              f"(logs in {os.path.join(cache, 'logs')})")
        return status
    except SuiteError as e:
        print(f"gomp-suite: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
