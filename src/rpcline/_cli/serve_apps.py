"""What ``rpcline serve`` serves: a bridge per server, from the flags and the config, under
one router; and the reload SIGHUP asks for.

The flags give every server its defaults, one ``bridge.Options`` (limits, timeouts, the
environment to pass, the isolation); each bridge gets a copy with its own differences: a
config entry gives its own command, ``env`` values, ``cwd``, ``scopes`` and ``isolation``.
``-- COMMAND`` is served at ``/mcp``, each named server at ``/servers/NAME/mcp``.
"""

from __future__ import annotations

import argparse
import os
import shutil
from collections.abc import Callable, Sequence
from typing import Any

from rpcline import bridge, proxy
from rpcline._gateway.observe import Hooks
from rpcline._gateway.servers_config import ConfigError, ServerSpec, load, named_server


def servers(args: argparse.Namespace, note: Callable[[str], None]) -> dict[str, ServerSpec]:
    """The named servers: the config file's, then ``--named-server``'s (ConfigError)."""
    found = {} if args.config is None else load(args.config, note)
    for name, command_line in args.named_server or ():
        if name in found:
            raise ConfigError(f"--named-server {name}: a server of that name is configured "
                              "already")
        found[name] = named_server(name, command_line)
    for name, spec in found.items():
        if spec.isolation == "identity" and args.auth_issuer is None:
            raise ConfigError(f"{args.config}: server {name!r}: \"isolation\": \"identity\" "
                              "needs --auth-issuer (a caller is who a checked access token "
                              "names)")
    return found


def environment(names: Sequence[str]) -> dict[str, str]:
    """``--env``'s variables: ``VAR`` passes this process's value (when it has one),
    ``VAR=VALUE`` gives one (mcp-proxy's ``-e VAR VALUE``)."""
    env = {}
    for item in names:
        name, given, value = item.partition("=")
        if given:
            env[name] = value
        elif name in os.environ:
            env[name] = os.environ[name]
    return env


def isolation(args: argparse.Namespace, mode: str) -> dict[str, Any]:
    """A bridge's options for isolation ``mode``: ``--children`` in shared mode, the
    options of children of one's own otherwise."""
    if mode == "shared":
        return {"children": args.children}
    idle = 600.0 if args.session_idle_timeout is None else args.session_idle_timeout
    return {"isolation": mode, "max_children": args.max_children,
            "session_idle_timeout": idle or None, "prestart": args.prestart or 0}


class Apps:
    """The bridges of one ``rpcline serve``, built from its flags, and their router."""

    def __init__(self, args: argparse.Namespace, secrets: dict[str, str | None],
                 log: Callable[[str], None], hooks: Hooks | None = None) -> None:
        self.args = args
        self.log = log
        hosts, origins = args.allow_host, args.allow_origin
        self.options = bridge.Options(
            request_timeout=args.request_timeout,
            token=secrets.get("token"), session_key=secrets.get("session-key"),
            allowed_hosts=bridge.LOCALHOST_HOSTS if hosts is None else hosts,
            # An origin allowed for CORS is allowed by the Origin check too.
            allowed_origins=[*(bridge.LOCALHOST_ORIGINS if origins is None else origins),
                             *(args.cors_origin or ())],
            max_line_bytes=args.max_line_bytes or proxy.DEFAULT_MAX_LINE_BYTES,
            max_pending=args.max_pending or proxy.DEFAULT_MAX_PENDING,
            max_sessions=args.max_sessions, pass_environment=args.pass_environment,
            max_in_flight_per_client=args.max_in_flight_per_client, max_waiting=args.max_waiting,
            shutdown_grace=(bridge.DEFAULT_SHUTDOWN_GRACE if args.shutdown_grace is None
                            else args.shutdown_grace),
            child_stderr=args.child_stderr, hooks=hooks,
            access_log=log if args.log_level in ("info", "debug") else None)
        self.env = environment(args.env or ())
        self.specs: dict[str, ServerSpec] = {}

    def router(self, command: Sequence[str], specs: dict[str, ServerSpec]) -> bridge.Router:
        """The router of ``specs`` (each started at once) and of ``command`` at ``/mcp``."""
        default = None
        if command:
            default = bridge.StdioBridge(command, self.options, env=self.env, cwd=self.args.cwd,
                                         record=self.args.record,
                                         **isolation(self.args, self.args.isolation))
        self.specs = specs
        return bridge.Router({name: self._bridge(spec) for name, spec in specs.items()},
                             default, token=self.options.token,
                             health_public=self.args.health_public, warm=bool(specs),
                             log=self.log)

    def _bridge(self, spec: ServerSpec) -> bridge.StdioBridge:
        if shutil.which(spec.command[0]) is None:
            self.log(f"{spec.name}: cannot run {spec.command[0]}: no such executable"
                     + ("" if os.sep in spec.command[0] else " on PATH")
                     + "; /readyz reports it down")
        record = None if self.args.record is None else f"{self.args.record}.{spec.name}"
        mode = spec.isolation or self.args.isolation  # the entry's own, else the flag's
        return bridge.StdioBridge(spec.command, self.options, env={**self.env, **spec.env},
                                  cwd=spec.cwd, name=spec.name, record=record,
                                  **isolation(self.args, mode))

    def scopes_for(self, path: str) -> tuple[str, ...]:
        """The scopes the named server at ``path`` (``/servers/NAME/...``) asks of a token
        beyond ``--auth-scope``'s: its config entry's ``scopes``, as the config now says."""
        name = path.removeprefix("/servers/").partition("/")[0] if path.startswith(
            "/servers/") else None
        spec = None if name is None else self.specs.get(name)
        return () if spec is None else spec.scopes

    def reload(self, router: bridge.Router) -> None:
        """Read the config again (SIGHUP): added servers start, removed ones drain, changed
        ones restart; the others, their sessions with them, are not touched. A config that
        cannot be served is one line, and the running one stays."""
        try:
            specs = servers(self.args, self.log)
        except ConfigError as error:
            self.log(f"reload refused, the running config stays: {error}")
            return
        if router.closing:
            self.log("reload refused: the gateway is stopping")
            return
        kept = {name: server for name, server in router.servers.items()
                if self.specs.get(name) == specs.get(name)}
        fresh = {name: kept.get(name) or self._bridge(spec) for name, spec in specs.items()}
        added, removed, changed = router.replace(fresh)
        self.specs = specs
        self.log(f"reloaded: {_names(added)} added, {_names(removed)} removed, "
                 f"{_names(changed)} restarted, {len(kept)} unchanged")


def _names(names: list[str]) -> str:
    return ", ".join(names) if names else "none"
