"""What every ``rpcline`` subcommand shares: the exit status, argument types, help layout.

Exit status, for every command: 2 when a file could not be read or the command line is
wrong, else 1 when ``check`` saw a refusal, else 0. A reader that leaves early (a broken
pipe) changes none of that.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, field


@dataclass
class Outcome:
    """What a run has seen so far; the exit status is decided from it, even mid-run."""

    refused: bool = False  # only check's status depends on it
    # The files skipped: {"file": name, "reason": why} (the reason as stderr gave it).
    unreadable: list[dict[str, str]] = field(default_factory=list)

    def exit_status(self) -> int:
        if self.unreadable:
            return 2
        return 1 if self.refused else 0


# Argument types. argparse names a type function in its message when it raises ValueError
# ("invalid _positive value: '1k'"); ArgumentTypeError's own text is used instead, so each
# type says what it expected and what it got.


def positive_int(text: str) -> int:
    value = _int(text, "a positive integer")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    value = _int(text, "an integer >= 0")
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def integer(text: str) -> int:
    return _int(text, "an integer")


def fraction(text: str) -> float:
    """A float from 0 to 1 inclusive; nan and inf are refused like any other outsider."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 <= value <= 1.0:  # also false for nan
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}")
    return value


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 <= value < math.inf:
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0, got {text!r}")
    return value


def _int(text: str, expected: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Epilogs keep their line breaks (exit codes, examples); every real default is shown.

    A flag's False and an absent option's None are not defaults worth printing.
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default is None or action.default is False:
            return action.help or ""
        return super()._get_help_string(action) or ""


def epilog(status: str, *examples: str) -> str:
    """The text after a subcommand's options: its exit status, then examples."""
    lines = ["exit status:", *(f"  {line}" for line in status.splitlines()), "", "examples:"]
    return "\n".join(lines + [f"  {example}" for example in examples])
