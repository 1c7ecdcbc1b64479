"""The servers a gateway serves by name: the ``mcpServers`` config desktop clients and
mcp-proxy read, and mcp-proxy's ``--named-server NAME 'COMMAND ARGS'``.

``{"mcpServers": {"NAME": {"command": "uvx", "args": ["mcp-server-time"], "env": {...},
"cwd": "/srv"}}}``. ``"disabled": true`` and ``"enabled": false`` both skip an entry (users
write both); an entry for a remote server (``url``, or a ``type`` other than stdio) is
skipped with a note, as a desktop client's config may list them; keys other clients keep
(``timeout``, ``autoApprove``, ...) are left alone. ``"scopes": [...]`` is rpcline's own:
the OAuth scopes a token needs for that server, beyond ``--auth-scope``'s (``rpcline serve
--auth-issuer``); so is ``"isolation"`` (``shared``, ``session`` or ``identity``: who shares
that server's children, where ``--isolation`` says it for every server). Anything else wrong
is a ``ConfigError`` naming the file, the line and the problem, never a traceback.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from rpcline._gateway.own_children import MODES

# A name is one segment of the path /servers/NAME/mcp, written as it is.
NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
STDIO_TYPES: Final = ("stdio", None)
SCOPE: Final = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")  # a scope token (RFC 6749 section 3.3)


class ConfigError(ValueError):
    """A config that cannot be served: one line, ``FILE:LINE: problem``."""


@dataclass(frozen=True)
class ServerSpec:
    """One named stdio server: what to run, with what environment, where.

    ``env`` gives values (the config's ``env``); the process's own variables pass only as
    the gateway's flags say. Two specs are equal when they run the same thing the same way:
    a reload restarts a server whose spec changed and leaves the others alone."""

    name: str
    command: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    scopes: tuple[str, ...] = ()  # what a token needs for this server, beyond every server's
    isolation: str | None = None  # who shares its children; None: as --isolation says

    def __hash__(self) -> int:
        return hash((self.name, self.command, tuple(sorted(self.env.items())), self.cwd,
                     self.scopes, self.isolation))


def named_server(name: str, command_line: str) -> ServerSpec:
    """mcp-proxy's ``--named-server NAME 'COMMAND ARGS'`` (split as a POSIX shell would)."""
    check_name(name, "--named-server")
    try:
        command = tuple(shlex.split(command_line))
    except ValueError as error:
        raise ConfigError(f"--named-server {name}: {error}") from None
    if not command:
        raise ConfigError(f"--named-server {name}: no command")
    return ServerSpec(name, command)


def check_name(name: str, where: str) -> None:
    if not NAME.fullmatch(name):
        raise ConfigError(f"{where}: the server name {name!r} is not a path segment "
                          "(letters, digits, '.', '_' and '-', first a letter or digit, "
                          "at most 64)")


def load(path: str, note: Any = None) -> dict[str, ServerSpec]:
    """The enabled stdio servers of the config file at ``path``, by name. ``note`` (a
    callable) hears of each entry skipped and why."""
    try:
        with open(path, "rb") as file:
            text = file.read()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read it: {error.strerror or error}") from None
    return parse(text, path, note)


def parse(text: bytes, path: str = "<config>", note: Any = None) -> dict[str, ServerSpec]:
    try:
        document = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        raise ConfigError(f"{path}:{error.lineno}:{error.colno}: not JSON: "
                          f"{error.msg}") from None
    if not isinstance(document, dict) or not isinstance(document.get("mcpServers"), dict):
        raise ConfigError(f"{path}:1: no \"mcpServers\" object (the format is "
                          '{"mcpServers": {"NAME": {"command": ..., "args": [...]}}})')
    servers: dict[str, ServerSpec] = {}
    for name, entry in document["mcpServers"].items():
        where = f"{path}:{_line_of(text, name)}"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: server {name!r}: an object is expected")
        if entry.get("disabled") is True or entry.get("enabled") is False:
            continue
        if "url" in entry or entry.get("type", entry.get("transportType")) not in STDIO_TYPES:
            if note is not None:
                note(f"{name}: not a stdio server (it names a url or a type); skipped")
            continue
        check_name(name, where)
        servers[name] = _spec(name, entry, where)
    return servers


def _spec(name: str, entry: dict[str, Any], where: str) -> ServerSpec:
    command, args = entry.get("command"), entry.get("args", [])
    if not isinstance(command, str) or not command:
        raise ConfigError(f"{where}: server {name!r}: \"command\" must be a non-empty string")
    if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
        raise ConfigError(f"{where}: server {name!r}: \"args\" must be a list of strings")
    env = entry.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise ConfigError(f"{where}: server {name!r}: \"env\" must map names to strings")
    cwd = entry.get("cwd")
    if cwd is not None and (not isinstance(cwd, str) or not cwd):
        raise ConfigError(f"{where}: server {name!r}: \"cwd\" must be a non-empty string")
    scopes = entry.get("scopes", [])
    if not isinstance(scopes, list) or not all(
            isinstance(scope, str) and SCOPE.fullmatch(scope) for scope in scopes):
        raise ConfigError(f"{where}: server {name!r}: \"scopes\" must be a list of OAuth "
                          "scope tokens")
    isolation = entry.get("isolation")
    if isolation is not None and isolation not in MODES:
        raise ConfigError(f"{where}: server {name!r}: \"isolation\" must be one of "
                          f"{', '.join(MODES)}")
    return ServerSpec(name, (command, *args), env, cwd, tuple(dict.fromkeys(scopes)),
                      isolation)


def _line_of(text: bytes, name: str) -> int:
    """The line where the key ``name`` is written (its first appearance as a JSON string;
    1 when written with escapes, which no one does in a server's name)."""
    at = text.find(orjson.dumps(name))
    return 1 if at < 0 else text.count(b"\n", 0, at) + 1
