"""What the documents promise a first reader: terms defined where they first appear, and
install commands that work today."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

pytestmark = pytest.mark.skipif(not (ROOT / "docs").is_dir(), reason="needs a clone's docs")


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda path: path.name)
def test_the_card_is_defined_and_linked_where_it_first_appears(path: Path):
    text = path.read_text()
    first = re.search(r"\bcard\b", text)
    if first is None:
        return
    # The paragraph (or list item) holding the first mention says what the card is.
    start = max(text.rfind("\n\n", 0, first.start()), text.rfind("\n- ", 0, first.start()))
    after = first.end()
    if text[start:first.start()].lstrip().startswith("#"):  # a heading: its first paragraph
        after = text.find("\n\n", first.end()) + 2
    end = min(i for i in (text.find("\n\n", after), text.find("\n- ", after), len(text))
              if i >= 0)
    paragraph = " ".join(text[start:end].split())
    assert "module specification" in paragraph, paragraph
    if path.name != "rules.md":
        assert "rules.md" in paragraph, paragraph


def test_installation_says_from_a_clone_until_there_is_a_release():
    text = (ROOT / "docs" / "installation.md").read_text()
    first_command = text.split("```sh\n", 1)[1].split("```", 1)[0]
    assert "pip install rpcline" not in first_command  # no release on PyPI yet
    assert "clone" in text.split("```sh\n", 1)[0]


def _prose(path: Path) -> str:
    """A document with its line breaks folded, so a sentence is found across lines."""
    return " ".join(path.read_text().split())


# Sentences once true and now stale, by the document that said them (issue 31).
STALE = [
    ("gateways.md", "Until the `check_request` fix"),  # it landed: 400 -32020
    ("gateways.md", "once `check_request` has its fix"),
]


@pytest.mark.parametrize(("name", "sentence"), STALE)
def test_no_known_stale_sentence(name: str, sentence: str):
    assert sentence.lower() not in _prose(ROOT / "docs" / name).lower()


def test_the_readme_says_what_each_route_figure_measures():
    text = _prose(ROOT / "README.md")
    claim = text[text.index("`rpcline.route(line)` classifies"):text.index("`rpcline proxy` is")]
    # Each figure beside its measure and its corpus: instructions on recorded traffic and
    # on the generated corpus, wall time on the generated corpus, and what bench times.
    assert "instructions" in claim and "wall time" in claim and "rpcline bench" in claim
    assert "recorded SDK traffic" in claim and "generated corpus" in claim
    figures = re.findall(r"0\.\d+x(?: to 0\.\d+x)?", claim)
    assert figures, claim
    measured = _prose(ROOT / "docs" / "performance.md") + _prose(ROOT / "docs" / "gateways.md")
    for figure in figures:  # a ratio the measurements state, not a number of the README's own
        assert figure in measured or figure.replace("x", "") in measured, figure


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_the_readme_tour_runs():
    readme = (ROOT / "README.md").read_text()
    tour = readme[readme.index("## A tour"):readme.index("\n## ", readme.index("## A tour") + 1)]
    blocks = _python_blocks(tour)
    assert blocks
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, "README.md (A tour)", "exec"), namespace)  # noqa: S102
    assert type(namespace["msg"]).__name__ == "Request"


def _sample_counts(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"rpcline sample (\d+)", text)]


def test_suggested_samples_fit_on_a_disk():
    # `rpcline sample 100000000` once stood in `sample --help`: about 108 GB.
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "rpcline", "sample", "--help"],
                          capture_output=True, check=True, text=True, timeout=60)
    counts = _sample_counts(done.stdout)
    for path in DOCUMENTS:
        counts += _sample_counts(" ".join(re.findall(r"```sh\n(.*?)```", path.read_text(),
                                                     flags=re.S)))
    assert counts
    sample = subprocess.run([sys.executable, "-m", "rpcline", "sample", "1000"],
                            capture_output=True, check=True, timeout=60).stdout
    for count in counts:  # by the mean line of a small sample, which large results outgrow
        assert count * len(sample) / 1000 < 100e6, count


def test_benchmark_commands_do_not_measure_the_twin_by_accident():
    # PYTHONPATH=src in a clone imports the sources, which hold no compiled core.
    for path in DOCUMENTS:
        for line in path.read_text().splitlines():
            if "PYTHONPATH=src" in line and "benchmarks/" in line:
                assert "RPCLINE_NO_EXTENSIONS" in line, f"{path.name}: {line}"
    for name in ("gateways.md", "performance.md"):
        assert "pip install -e ." in _prose(ROOT / "docs" / name), name


def test_python_m_build_is_installed_first():
    for path in DOCUMENTS:
        text = path.read_text()
        if "python -m build" in text:
            assert "pip install build" in text[:text.index("python -m build") + 200], path.name
