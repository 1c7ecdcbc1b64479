"""The version, the one place it is written: pyproject.toml reads it from here at build time.

A literal, so that ``import rpcline`` reads it without ``importlib.metadata``, which
cost about 29 ms of a 47 ms import.
"""

__version__ = "0.1.0"
