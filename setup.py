"""Build the Cython core, unless RPCLINE_NO_EXTENSIONS is set or this is not CPython.

RPCLINE_DEBUG_BUILD=1 builds it with -O0 -g3 and Cython's runtime checks; RPCLINE_NO_SIMD=1
without SSE2 and AVX2, so that CI tests the portable scanner that ARM and other machines run.

Everything else (metadata, package data) lives in pyproject.toml.
"""

import glob
import os
import platform

from setuptools import Extension, setup

NO_EXTENSIONS = bool(os.environ.get("RPCLINE_NO_EXTENSIONS"))
DEBUG_BUILD = bool(os.environ.get("RPCLINE_DEBUG_BUILD"))
NO_SIMD = bool(os.environ.get("RPCLINE_NO_SIMD"))
# These builds keep their generated C and objects apart (see extensions()).
KINDS = [kind for kind, on in (("debug", DEBUG_BUILD), ("no-simd", NO_SIMD)) if on]
BUILD_BASE = "build/" + "-".join(KINDS) if KINDS else None


def extensions():
    if NO_EXTENSIONS or platform.python_implementation() != "CPython":
        return []
    from Cython.Build import cythonize

    if DEBUG_BUILD:  # -O0 -g, assertions and Cython's runtime checks on
        compile_args, macros = ["-O0", "-g3", "-UNDEBUG"], []
        directives = {"boundscheck": True, "wraparound": True}
    else:
        # The release flags live here, not in CFLAGS: on Linux and macOS a CFLAGS in the
        # environment *replaces* Python's own flags (-O3 among them: a wheel built with
        # CFLAGS=-g0 was an -O0 build, route 26x slower), while these come last on gcc's and
        # clang's command line and win over whatever CFLAGS says. -g0: Python's flags carry
        # -g, which would ship ~600 KB of DWARF in every module. So a wheel, an sdist that pip
        # compiles and an in-place build all get the same optimised code.
        compile_args, macros = ["-O3", "-g0"], [("NDEBUG", None)]
        directives = {"boundscheck": False, "wraparound": False}
    if os.name == "nt":
        # MSVC ignores CFLAGS and these gcc flags; setuptools compiles with /O2 (optimised,
        # no debug info) unless told otherwise, which is the release build already.
        compile_args = []
    if NO_SIMD:
        macros.append(("RPCLINE_NO_SIMD", None))
    modules = [
        Extension(
            f"rpcline._core.{name}",
            [f"src/rpcline/_core/{name}.pyx"],
            include_dirs=["src/rpcline/_core"],  # scan.h, wherever the generated C is written
            depends=glob.glob("src/rpcline/_core/*.h"),  # a changed header rebuilds the modules
            extra_compile_args=compile_args,
            define_macros=macros,
        )
        for name in ("message_c", "scan_c", "route_c", "stream_c", "sse_c", "http_c")
    ]
    # A debug or no-SIMD build keeps its generated C and objects in its own BUILD_BASE:
    # cythonize and build_ext reuse what is newer than the sources and know nothing of these
    # settings, so a tree that held a release build would otherwise yield a release binary.
    return cythonize(modules, compiler_directives={"language_level": 3, **directives},
                     **({"build_dir": BUILD_BASE} if BUILD_BASE else {}))


setup(ext_modules=extensions(),
      options={"build": {"build_base": BUILD_BASE}} if BUILD_BASE else {})
