"""The fuzz oracle (tests/_oracle.py) on every input kept in fuzz/: the seed corpus, the
inputs long runs added to it, and every crash or disagreement the fuzzer ever found
(fuzz/regressions/). This replays them without atheris, on every run of the suite."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from _http_oracle import check_http
from _oracle import check
from _sse_oracle import check_raising_sse, check_sse

FUZZ = Path(__file__).resolve().parents[1] / "fuzz"
SEEDS = sorted((FUZZ / "corpus").iterdir()) if (FUZZ / "corpus").is_dir() else []
SSE_SEEDS = sorted((FUZZ / "corpus-sse").iterdir()) if (FUZZ / "corpus-sse").is_dir() else []
REGRESSIONS = sorted(p for p in (FUZZ / "regressions").glob("*") if p.name != "README.md")

# The wheel's tests run from a copy of tests/ alone (cibuildwheel's test-sources): there
# is no fuzz/ beside them, and the checkout's own run covers these inputs.
pytestmark = pytest.mark.skipif(not FUZZ.is_dir(), reason="no fuzz/ folder beside tests/")


@pytest.fixture(scope="module")
def modules(c_module, py_module):
    stream = importlib.import_module
    return ((c_module, stream("rpcline._core.stream_c")),
            (py_module, stream("rpcline._core.stream_py")))


@pytest.fixture(scope="module")
def http_modules():
    return (importlib.import_module("rpcline._core.http_c"),
            importlib.import_module("rpcline._core.http_py"))


@pytest.mark.c_extension
def test_the_seed_corpus_is_there():
    assert len(SEEDS) >= 40, f"fuzz/corpus/ holds {len(SEEDS)} inputs"


@pytest.mark.c_extension
def test_every_corpus_input_passes_the_oracle(modules, http_modules):
    failures = []
    for path in SEEDS:
        try:
            check(path.read_bytes(), *modules)
            check_http(path.read_bytes(), *http_modules)
        except AssertionError as error:
            failures.append(f"{path.name}: {error}")
    assert not failures, "\n".join(failures[:5])


@pytest.mark.c_extension
def test_every_sse_corpus_input_passes_the_sse_oracle(c_module, py_module):
    """The SSE target's inputs (fuzz/fuzz_sse.py): whole and cut, core and twin, agree."""
    assert len(SSE_SEEDS) >= 10, f"fuzz/corpus-sse/ holds {len(SSE_SEEDS)} inputs"
    for path in SSE_SEEDS:
        check_sse(path.read_bytes(), c_module, py_module)
        check_raising_sse(path.read_bytes(), c_module, py_module)


# With no findings kept, say so in words rather than "got empty parameter set".
FINDINGS = [pytest.param(p, id=p.name) for p in REGRESSIONS] or [pytest.param(
    None, id="none", marks=pytest.mark.skip(reason="fuzz/regressions/ holds no finding to replay"))]


@pytest.mark.c_extension
@pytest.mark.parametrize("path", FINDINGS)
def test_every_fuzzer_finding_stays_fixed(modules, http_modules, path):
    check(path.read_bytes(), *modules)
    check_http(path.read_bytes(), *http_modules)


def test_the_oracle_catches_a_disagreement(py_module):
    """A twin that answers differently must be reported, not pass quietly."""
    stream = importlib.import_module("rpcline._core.stream_py")

    class Wrong:
        @staticmethod
        def parse(line):
            result = py_module.parse(line)
            return py_module.Refused(None, py_module.ParseError("no")) if result.id == 1 else result

    with pytest.raises(AssertionError, match="Cython vs Python"):
        check(b'{"jsonrpc":"2.0","id":1,"method":"m"}', (Wrong, stream), (py_module, stream))
