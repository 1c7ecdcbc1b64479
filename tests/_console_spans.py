"""The spans OpenTelemetry's console exporter wrote among other stderr lines (its JSON
objects, each over many lines), for the tests of ``--otel`` with
``OTEL_TRACES_EXPORTER=console``."""

from __future__ import annotations

import json
from typing import Any


def console_spans(text: str) -> list[dict[str, Any]]:
    """Every JSON object in ``text`` that has a span's ``name`` and ``kind``."""
    decoder, found, at = json.JSONDecoder(), [], text.find("{")
    while at >= 0:
        try:
            span, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            at = text.find("{", at + 1)
            continue
        if isinstance(span, dict) and "name" in span and "kind" in span:
            found.append(span)
        at = text.find("{", end)
    return found
