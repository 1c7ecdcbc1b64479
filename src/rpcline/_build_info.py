"""Which build of rpcline is loaded: what every benchmark prints beside its figures.

A figure means something only for the build it was taken on. Measured from a source tree
without an in-place build, or with ``RPCLINE_NO_EXTENSIONS`` set, the benchmarks would time
the pure-Python twin while reporting on the core; measured on a build the compiler did not
optimise, they would report a slowness no user installs. So each benchmark prints
``describe()`` and asks ``core_measurable()`` before giving a verdict on a core target.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import import_module

import rpcline


@dataclass(frozen=True)
class Build:
    implementation: str  # "cython" or "python"
    optimized: bool | None  # None: the compiler does not say (MSVC), or no extension
    simd_paths: tuple[str, ...]  # block scans this build can run here; () for the twin
    simd_path: str | None  # the one in use
    location: str  # the folder the package was imported from

    def __str__(self) -> str:
        if self.implementation == "python":
            why = "RPCLINE_NO_EXTENSIONS is set" if os.environ.get(
                "RPCLINE_NO_EXTENSIONS") else "no extension was built"
            build = f"the pure-Python twin ({why})"
        else:
            optimisation = {True: "optimised", False: "NOT optimised",
                            None: "optimisation unknown"}[self.optimized]
            build = (f"the Cython core, {optimisation}, block scan {self.simd_path} "
                     f"(of {', '.join(self.simd_paths)})")
        return f"rpcline {rpcline.__version__}: {build}, from {self.location}"


def build() -> Build:
    """The build ``import rpcline`` loaded."""
    location = os.path.dirname(rpcline.__file__ or "")
    if rpcline.IMPLEMENTATION != "cython":
        return Build("python", None, (), None, location)
    scan = import_module("rpcline._core.scan_c")
    return Build("cython", scan.OPTIMIZED, tuple(scan.SIMD_PATHS), scan.simd_path(), location)


def describe() -> str:
    """One line: the version, the implementation, the build and where it was loaded from."""
    return str(build())


def core_measurable() -> str | None:
    """None when figures of this build may be judged against the core's targets; else why not."""
    current = build()
    if current.implementation != "cython":
        return "the pure-Python twin ran, not the Cython core: no core target is judged"
    if current.optimized is False:
        return "the Cython core was built without optimisation: no core target is judged"
    return None


def verdict(met: bool) -> str:
    """A core target's verdict for this build: "met", "NOT met", or why none is given."""
    unfit = core_measurable()
    if unfit:
        return f"not judged ({unfit.split(':')[0]})"
    return "met" if met else "NOT met"
