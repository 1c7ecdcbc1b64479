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
