"""The environment of a test program in a sanitizer build: the sanitizer's
runtime must be loaded first into a program that was not built with it
(clang's programs on canopy's sanitized runtime). CMake names it in
CANOPY_TEST_SANITIZER_PRELOAD, and only the programs get it: preloaded into
Python itself it would crash."""
import os

SANITIZER = os.environ.get("CANOPY_TEST_SANITIZER_PRELOAD", "")


def with_sanitizer(env):
    """env with the sanitizer's runtime first in LD_PRELOAD (when there is one)."""
    if SANITIZER:
        env["LD_PRELOAD"] = " ".join(p for p in (SANITIZER, env.get("LD_PRELOAD", "")) if p)
    return env
