"""Unit tests of scripts/gomp_suite.py, the runner of GCC's libgomp test suite:
the DejaGnu directive parser (Tcl words, selectors, option lists), how a
test is planned per language, the exceptions file and how one run is
judged (exit status, dg-shouldfail, dg-output, timeout of a process group).
Run: python3 tests/omp/gomp_suite_test.py (ctest: gomp_suite_parser)."""
import os
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import gomp_suite as g  # noqa: E402

TARGETS = {"yes": (True, ""), "no": (False, ""), "alias": (True, "")}


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text, mode=0o644):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)
        return path

    def plan(self, text, lang="c", name="t.c"):
        return g.plan_test(self.write(name, text), "libgomp.c/" + name, lang, TARGETS)


class TclWordsTest(unittest.TestCase):
    def test_quoted_braced_and_bare_words(self):
        words = g.tcl_words(r'run "a\nb \[x\]" { target { a && b } } bare\ word')
        self.assertEqual(words, ["run", "a\nb [x]", " target { a && b } ", "bare word"])
        self.assertEqual([w.braced for w in words], [False, False, True, False])

    def test_tcl_escapes_of_dg_output(self):
        # As in libgomp.c-c++-common/struct-elem-5.c: \\\[ is a literal \[ for the regexp.
        (word,) = g.tcl_words(r'"device \\\[\[0-9\]+..\[0-9\]+\\\) s(\n|\r)"')
        self.assertEqual(word, "device \\[[0-9]+..[0-9]+\\) s(\n|\r)")

    def test_errors_name_the_place(self):
        with self.assertRaisesRegex(g.SuiteError, "f.c:3: unterminated"):
            g.tcl_words('"open', "f.c:3")
        with self.assertRaisesRegex(g.SuiteError, "unbalanced"):
            g.tcl_words("{ a { b }", "f.c:3")
        with self.assertRaisesRegex(g.SuiteError, "substitution"):
            g.tcl_words('"[exec rm]"', "f.c:3")


class SelectorTest(unittest.TestCase):
    def ev(self, text):
        return g.eval_expression(g.tcl_words(text), TARGETS, "here")

    def test_expressions(self):
        self.assertTrue(self.ev("yes"))
        self.assertFalse(self.ev("! yes"))
        self.assertTrue(self.ev("no || yes"))
        self.assertFalse(self.ev("yes && no"))
        self.assertTrue(self.ev("{ yes && no } || { ! no }"))
        self.assertFalse(self.ev("lp64 && { ! lp64 }".replace("lp64", "yes")))
        self.assertTrue(self.ev("no || yes && yes"))

    def test_triplet_patterns_and_lists(self):
        self.assertTrue(self.ev("*-*-linux* *-*-freebsd*"))
        self.assertTrue(self.ev("i?86-*-* x86_64-*-*"))
        self.assertFalse(self.ev("alpha*-*-*"))
        self.assertFalse(self.ev("skip-all-targets"))

    def test_unknown_target_is_an_error(self):
        with self.assertRaisesRegex(g.SuiteError, "here: unknown effective target 'vect_foo'"):
            self.ev("vect_foo")

    def test_flag_lists(self):
        self.assertTrue(g.flags_match('"*"', ["-O0"]))
        self.assertTrue(g.flags_match('"-O0" "-O2"', ["-fopenmp", "-O2"]))
        self.assertFalse(g.flags_match('"-O0" "-O2"', ["-fopenmp", "-O3"]))
        self.assertFalse(g.flags_match("", ["-O2"]))


class PlanTest(TempDirTest):
    def test_defaults(self):
        p = self.plan("int main () { return 0; }\n")
        self.assertTrue(p.counts())
        self.assertIsNone(p.skip)
        self.assertEqual(p.flags()[-1], "-O2")
        self.assertIn("-fopenmp", p.flags())

    def test_actions(self):
        self.assertFalse(self.plan("/* { dg-do compile } */\n").counts())
        self.assertFalse(self.plan("/* { dg-do link } */\n").counts())
        self.assertTrue(self.plan("/* { dg-do run } */\n").counts())
        p = self.plan("/* { dg-do run { target no } } */\n")
        self.assertTrue(p.counts())
        self.assertIn("t.c:1", p.skip)

    def test_options_per_language(self):
        text = ('/* { dg-options "-O0" { target c } } */\n'
                '/* { dg-additional-options "-std=c99 -DX=\\"a b\\"" { target c } } */\n'
                '/* { dg-additional-options "-mavx" { target yes } } */\n')
        c = self.plan(text, "c")
        cxx = self.plan(text, "c++")
        self.assertEqual(c.flags()[len(g.ALWAYS_FLAGS):], ["-O0", "-std=c99", "-DX=a b", "-mavx"])
        self.assertEqual(cxx.flags()[len(g.ALWAYS_FLAGS):], ["-O2", "-mavx"])

    def test_fortran_torture_flags_and_skip_if(self):
        text = '! { dg-skip-if "" { ! yes } { "*" } { "-O0" "-O2" } }\n! { dg-options "-std=legacy" }\n'
        f = self.plan(text, "fortran", "t.f90")
        self.assertIsNone(f.skip)  # excluded at -O2: runs
        self.assertEqual(f.flags()[len(g.ALWAYS_FLAGS):], ["-O2", "-std=legacy"])
        f = self.plan('! { dg-skip-if "" { ! no } { "*" } { "-O3" } }\n', "fortran", "u.f90")
        self.assertIn("dg-skip-if", f.skip)

    def test_requirements_env_output_and_shouldfail(self):
        p = self.plan('/* { dg-require-effective-target no } */\n')
        self.assertIn("needs effective target no", p.skip)
        p = self.plan('/* { dg-require-effective-target no { target no } } */\n'
                      '/* { dg-set-target-env-var OMP_PLACES "{6,7}:4" } */\n'
                      '/* { dg-shouldfail "error directive" } */\n'
                      '/* { dg-output "a(\\n|\\r)" } */\n/* { dg-output "b" } */\n'
                      '/* { dg-final { scan-tree-dump "x" "original" } } */\n')
        self.assertIsNone(p.skip)
        self.assertEqual(p.env, {"OMP_PLACES": "{6,7}:4"})
        self.assertTrue(p.shouldfail)
        self.assertTrue(g.output_regexp(p).search("xa\nb"))
        self.assertFalse(g.output_regexp(p).search("ab"))

    def test_additional_sources_are_relative_to_the_test(self):
        os.mkdir(os.path.join(self.dir, "sub"))
        p = g.plan_test(self.write("sub/t.c", "/* { dg-additional-sources \"../a.c b.c\" } */\n"),
                        "libgomp.c/sub/t.c", "c", TARGETS)
        self.assertEqual(p.sources, [os.path.join(self.dir, "a.c"), os.path.join(self.dir, "sub", "b.c")])

    def test_unknown_directive_is_an_error(self):
        with self.assertRaisesRegex(g.SuiteError, "libgomp.c/t.c:2: unknown directive dg-frobnicate"):
            self.plan("\n/* { dg-frobnicate 1 } */\n")


class CacheKeyTest(TempDirTest):
    def test_key_follows_sources_includes_and_options(self):
        suite = os.path.join(self.dir, "libgomp", "testsuite")
        os.makedirs(os.path.join(suite, "libgomp.c"))
        self.write("libgomp/config.h", "#define A 1\n")
        self.write("libgomp/testsuite/libgomp.c/h.h", "int x;\n")
        path = self.write("libgomp/testsuite/libgomp.c/t.c", '#include "h.h"\n#include "config.h"\n')
        plan = g.Plan("libgomp.c/t.c", path, "c")
        versions = {"c": "gcc 12"}

        def key(cmd=("gcc", "-O2")):
            return g.cache_key(plan, list(cmd), versions, suite)
        first = key()
        self.assertEqual(first, key())
        self.assertNotEqual(first, key(("gcc", "-O0")))
        self.write("libgomp/testsuite/libgomp.c/h.h", "int y;\n")
        second = key()
        self.assertNotEqual(first, second)
        self.write("libgomp/config.h", "#define A 2\n")
        self.assertNotEqual(second, key())


class ExceptionsTest(TempDirTest):
    def plans(self):
        plans = []
        for tid in ("libgomp.c/a.c", "libgomp.c-c++-common/b.c as c", "libgomp.c-c++-common/b.c as c++"):
            plans.append(g.Plan(tid, "", "c"))
        return plans

    def test_lines(self):
        path = self.write("x.txt", "# comment\n\nlibgomp.c/a.c needs offloading\n"
                                   "libgomp.c-c++-common/b.c as c++ C++ only reason\n")
        self.assertEqual(g.read_exceptions(path, self.plans()),
                         {"libgomp.c/a.c": "needs offloading", "libgomp.c-c++-common/b.c as c++": "C++ only reason"})
        path = self.write("y.txt", "libgomp.c-c++-common/b.c both\n")
        self.assertEqual(len(g.read_exceptions(path, self.plans())), 2)

    def test_bad_lines(self):
        with self.assertRaisesRegex(g.SuiteError, "x.txt:1: 'libgomp.c/zz.c' is not a test"):
            g.read_exceptions(self.write("x.txt", "libgomp.c/zz.c why\n"), self.plans())
        with self.assertRaisesRegex(g.SuiteError, "x.txt:1: .* has no reason"):
            g.read_exceptions(self.write("x.txt", "libgomp.c/a.c\n"), self.plans())


class SummaryTest(unittest.TestCase):
    def summarize(self, states, exceptions, runtime=True, known=None):
        import argparse
        import contextlib
        import io
        plans, results = [], []
        for i, state in enumerate(states):
            tid = f"libgomp.c/t{i}.c"
            plans.append(g.Plan(tid, tid, "c"))
            results.append({"id": tid, "state": state, "why": None, "log": "x.log", "first_lines": ["boom"]})
        args = argparse.Namespace(runtime_dir="/rt" if runtime else None, exceptions="ex.txt",
                                  known_failures="known.txt")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = g.summarize(plans, results, exceptions, args, known)
        return status, out.getvalue()

    def test_summary_line_and_status(self):
        states = ["passed"] * 97 + ["failed", "skipped", "baseline-failed"]
        status, out = self.summarize(states, {})
        self.assertEqual(status, 1)
        self.assertIn("gomp-suite: 97 passed, 1 failed, 2 skipped (judged: 98 of 100 run tests;", out)
        self.assertIn("FAIL: libgomp.c/t97.c (x.log)\n    boom", out)
        status, out = self.summarize(states, {"libgomp.c/t97.c": "why"})
        self.assertEqual(status, 0)
        self.assertIn("excepted failure: libgomp.c/t97.c", out)
        status, out = self.summarize(["passed"] * 100, {"libgomp.c/t0.c": "why"})
        self.assertEqual(status, 0)
        self.assertIn("stale exception: libgomp.c/t0.c", out)

    def test_too_many_exceptions_fail(self):
        states = ["failed"] * 3 + ["passed"] * 97
        status, out = self.summarize(states, {f"libgomp.c/t{i}.c": "why" for i in range(3)})
        self.assertEqual(status, 1)
        self.assertIn("too many exceptions: 3 > 2", out)

    def test_known_failures_do_not_fail_but_the_bar_is_not_met(self):
        states = ["failed"] * 5 + ["passed"] * 95
        known = {f"libgomp.c/t{i}.c": "not done" for i in range(5)}
        status, out = self.summarize(states, {}, known=known)
        self.assertEqual(status, 0)
        self.assertIn("known failure: libgomp.c/t0.c: not done", out)
        self.assertIn("5 of the failures are known", out)
        self.assertIn("bar NOT met: 5 known failures remain", out)
        # A failure outside the list still fails the run; a listed test that passes is named.
        status, out = self.summarize(states, {}, known={f"libgomp.c/t{i}.c": "not done" for i in range(1, 6)})
        self.assertEqual(status, 1)
        self.assertIn("FAIL: libgomp.c/t0.c", out)
        self.assertIn("known failure passes now: libgomp.c/t5.c", out)

    def test_baseline_only_never_fails(self):
        status, out = self.summarize(["baseline-passed", "baseline-failed", "skipped"], {}, runtime=False)
        self.assertEqual(status, 0)
        self.assertIn("baseline only: 1 of 3 run tests passed", out)


class LazyBaselineTest(TempDirTest):
    """process(): the system libgomp runs a test only when it failed on the runtime."""
    def process(self, body, timeout=30.0):
        import argparse
        # The script tells the runs apart by LD_LIBRARY_PATH (the runtime's
        # directory first) and leaves a mark for each baseline run.
        self.write("test.exe", "#!/bin/sh\ncase \"$LD_LIBRARY_PATH\" in /rt*) rt=1 ;; *) rt=0; "
                               "echo >> baseline_runs ;; esac\n" + body, 0o755)
        marks = os.path.join(self.dir, "baseline_runs")
        if os.path.exists(marks):
            os.remove(marks)
        saved = g.compile_test
        g.compile_test = lambda plan, suite_dir, cache, versions: (True, self.dir, "compiled")
        g.WRAP = []
        os.makedirs(os.path.join(self.dir, "logs"), exist_ok=True)
        try:
            args = argparse.Namespace(runtime_dir="/rt", timeout=timeout, baseline_timeout=300.0)
            rec = g.process(g.Plan("libgomp.c/t.c", "", "c"), args, self.dir, self.dir, {})
        finally:
            g.compile_test = saved
        if not os.path.exists(marks):
            return rec, 0
        with open(marks) as f:
            return rec, len(f.readlines())

    def test_a_pass_on_the_runtime_needs_no_baseline_run(self):
        rec, baseline_runs = self.process("exit 0\n")
        self.assertEqual((rec["state"], baseline_runs), ("passed", 0))

    def test_a_failure_is_judged_only_when_the_baseline_passes(self):
        rec, baseline_runs = self.process('[ $rt = 1 ] && exit 1\nexit 0\n')
        self.assertEqual((rec["state"], baseline_runs), ("failed", 1))
        self.assertTrue(rec["first_lines"][0].startswith("[exit status 1,"), rec["first_lines"])
        rec, baseline_runs = self.process("exit 1\n")
        self.assertEqual((rec["state"], baseline_runs), ("baseline-failed", 1))

    def test_a_timeout_is_retried_with_four_times_the_baseline_time(self):
        # 0.5 s on the runtime, 0.2 s on the baseline: killed at 0.3 s, then
        # passes within 4 x 0.2 s.
        rec, baseline_runs = self.process('if [ $rt = 1 ]; then sleep 0.5; else sleep 0.2; fi\nexit 0\n',
                                          timeout=0.3)
        self.assertEqual((rec["state"], baseline_runs), ("passed", 1))
        self.assertGreaterEqual(rec["runtime_s"], 0.5)


class RunTest(TempDirTest):
    def run_script(self, body, **plan_attrs):
        self.write("test.exe", "#!/bin/sh\n" + body, 0o755)
        plan = g.Plan("libgomp.c/t.c", "", "c")
        for k, v in plan_attrs.items():
            setattr(plan, k, v)
        return g.run_binary(plan, self.dir, None, 30)

    def test_status_and_shouldfail(self):
        self.assertTrue(self.run_script("exit 0")[0])
        self.assertFalse(self.run_script("exit 1")[0])
        self.assertTrue(self.run_script("exit 1", shouldfail=True)[0])
        self.assertFalse(self.run_script("exit 0", shouldfail=True)[0])

    def test_output_and_env(self):
        os.environ["OMP_NUM_THREADS"] = "7"  # must not reach the test
        self.addCleanup(os.environ.pop, "OMP_NUM_THREADS")
        ok, _, log = self.run_script('echo "$OMP_PLACES" >&2; [ -z "$OMP_NUM_THREADS" ]',
                                     output=["\\{6,7\\}:4(\n|\r)"], env={"OMP_PLACES": "{6,7}:4"})
        self.assertTrue(ok, log)
        self.assertFalse(self.run_script("echo other", output=["wanted"])[0])

    def test_hang_is_killed_with_its_process_group(self):
        start = time.monotonic()
        ok, _, log = self.run_script("sleep 100 & sleep 100\n", timeout=0.5)
        self.assertFalse(ok)
        self.assertIn("timed out", log)
        self.assertLess(time.monotonic() - start, 10)

    def test_wrap_goes_before_the_binary(self):
        self.write("test.exe", "#!/bin/sh\nexit 0\n", 0o755)
        plan = g.Plan("libgomp.c/t.c", "", "c")
        ok, _, log = g.run_binary(plan, self.dir, None, 30, ["sh", "-c", 'echo "wrapped $0"; exit 3'])
        self.assertFalse(ok)
        self.assertIn("wrapped " + os.path.join(self.dir, "test.exe"), log)


class SampleTest(TempDirTest):
    def test_every_nth_runnable_test_of_each_directory(self):
        plans = []
        for d in g.SUITE_DIRS:
            for i in range(7):
                p = g.Plan(f"{d}/t{i}.c", "", "c")
                p.skip = "unsupported" if i == 1 else None
                plans.append(p)
        picked = [p.test_id for p in g.sample_plans(plans, 3)]
        # Runnable: t0 t2 t3 t4 t5 t6 -> every third from the first: t0, t4.
        self.assertEqual(picked, [f"{d}/t{i}.c" for d in g.SUITE_DIRS for i in (0, 4)])
        self.assertEqual(picked, [p.test_id for p in g.sample_plans(plans, 3)])

    def test_system_runtime_dir_links_the_system_libgomp(self):
        d = g.system_runtime_dir(self.dir)
        self.assertEqual(os.path.realpath(os.path.join(d, "libgomp.so.1")), os.path.realpath(g.SYSTEM_LIBGOMP))
        self.assertEqual(g.system_runtime_dir(self.dir), d)  # again: unchanged


if __name__ == "__main__":
    unittest.main()
