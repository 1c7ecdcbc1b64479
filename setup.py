"""Build the Cython core, unless RPCLINE_NO_EXTENSIONS is set or this is not CPython.

Everything else (metadata, package data) lives in pyproject.toml.
"""

import os
import platform

from setuptools import Extension, setup

NO_EXTENSIONS = bool(os.environ.get("RPCLINE_NO_EXTENSIONS"))
DEBUG_BUILD = bool(os.environ.get("RPCLINE_DEBUG_BUILD"))


def extensions():
    if NO_EXTENSIONS or platform.python_implementation() != "CPython":
        return []
    from Cython.Build import cythonize

    if DEBUG_BUILD:  # -O0 -g, assertions and Cython's runtime checks on
        compile_args, macros = ["-O0", "-g3", "-UNDEBUG"], []
        directives = {"boundscheck": True, "wraparound": True}
    else:
        compile_args, macros = [], [("NDEBUG", None)]
        directives = {"boundscheck": False, "wraparound": False}
    if os.name == "nt":
        compile_args = []
    modules = [
        Extension(
            f"rpcline.{name}",
            [f"src/rpcline/{name}.pyx"],
            include_dirs=["src/rpcline"],  # _scan.h, wherever the generated C is written
            extra_compile_args=compile_args,
            define_macros=macros,
        )
        for name in ("_message_c", "_scan_c", "_route_c", "_stream_c", "_sse_c", "_http_c")
    ]
    # A debug build keeps its generated C and objects in build/debug: cythonize and build_ext
    # reuse what is newer than the sources and know nothing of these settings, so a tree
    # that held a release build would otherwise yield a release binary (and vice versa).
    return cythonize(modules, compiler_directives={"language_level": 3, **directives},
                     **({"build_dir": DEBUG_BASE} if DEBUG_BUILD else {}))


DEBUG_BASE = "build/debug"
setup(ext_modules=extensions(),
      options={"build": {"build_base": DEBUG_BASE}} if DEBUG_BUILD else {})
