"""``rpcline serve``: ``rpcline.bridge.StdioBridge`` under uvicorn (``rpcline[serve]``)."""

from __future__ import annotations

import argparse
import ipaddress
import os
import shutil
import socket
import sys
from typing import Any

from rpcline._cli.shared import (
    HelpFormatter,
    Outcome,
    epilog,
    non_negative_int,
    seconds,
)

DESCRIPTION = """\
Serve COMMAND (a stdio MCP server) over MCP Streamable HTTP at /mcp, to any number of
clients of both protocol eras: 2026-07-28 requests one by one, 2025-era clients in
sessions. Requests are forwarded as bytes to shared copies of COMMAND (one pool per
era), each with an id of the child's own; answers go back with the caller's id. A child
that exits fails its calls with -32000 and is started again. Logs go to stderr.

Many servers: --config FILE (the "mcpServers" JSON of desktop clients and mcp-proxy) or
--named-server NAME 'COMMAND ARGS' serves each at /servers/NAME/mcp, started at once;
SIGHUP reads the config again. GET /healthz says the process serves, GET /readyz (200 or
503) whether every server is.

Beyond loopback: --auth-issuer makes it an OAuth 2.1 resource server, as the MCP
specification asks (docs/auth.md): resource metadata at /.well-known/oauth-protected-resource,
401 with the challenge, access tokens checked for this server's audience and never passed
to a child, 503 while the authorization server cannot be reached. The layers, outermost
first: CORS, then the token check, then /metrics, then the servers.

Observability (docs/observability.md): --otel makes OpenTelemetry spans (a SERVER span per
call, a CLIENT span toward the child, by the MCP semantic conventions; the trace context
passed to the child in params._meta) and metrics, exported as the OTEL_* variables say;
--metrics serves the same metrics as Prometheus text at /metrics."""

STATUS = """\
2  uvicorn is not installed, the command cannot be run, or the command line is wrong
3  it cannot listen on HOST:PORT (the port in use, say)
130, 143  stopped by SIGINT (Ctrl-C) or SIGTERM, as a shell reports a process they ended
(on SIGINT or SIGTERM it takes no new request, ends the GET streams, gives the calls in
flight --shutdown-grace seconds, fails the rest with -32000, stops its children, then ends
by that signal, as uvicorn does; a second signal stops it at once, its children killed)"""

LOOPBACK = ("127.0.0.1", "localhost", "::1")
HEALTH = ("/healthz", "/readyz")
CLIENT_ID_VAR, SECRET_VAR = "RPCLINE_AUTH_CLIENT_ID", "RPCLINE_AUTH_CLIENT_SECRET"
LOG_LEVELS = ("error", "warning", "info", "debug")
ISOLATION = ("shared", "session", "identity")  # own_children.MODES
STARTUP_FAILURE = 3  # uvicorn's status when it could not start (uvicorn.run's)


def add_parser(commands: Any, positive: Any) -> None:
    serve = commands.add_parser(
        "serve", help="serve a stdio MCP server to many Streamable HTTP clients, both eras",
        description=DESCRIPTION, formatter_class=HelpFormatter,
        epilog=epilog(STATUS, "rpcline serve -- python -m my_mcp_server",
                      "rpcline serve --config ~/.config/Claude/claude_desktop_config.json",
                      "rpcline serve --named-server time 'uvx mcp-server-time'",
                      "rpcline serve --auth-issuer https://auth.example.com --auth-scope mcp "
                      "--config mcp.json",
                      "OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 rpcline serve --otel "
                      "--metrics --config mcp.json",
                      "rpcline serve --port 9000 --children 4 --request-timeout 60 -- "
                      "python -m my_mcp_server"),
    )
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to bind (one not loopback needs --allow-host and "
                            "--allow-origin)")
    serve.add_argument("--port", type=int, default=8000, help="port to bind")
    serve.add_argument("--children", type=positive, default=1, metavar="N",
                       help="copies of COMMAND per protocol era, the calls spread over them "
                            "")
    serve.add_argument("--request-timeout", type=seconds, default=None, metavar="S",
                       help="seconds a call may take, from its arrival to its answer, "
                            "before -32000 and a cancellation (default: none)")
    serve.add_argument("--shutdown-grace", type=seconds, default=None, metavar="S",
                       help="on SIGINT or SIGTERM, seconds the calls in flight have to be "
                            "answered before -32000 (default: 5)")
    serve.add_argument("--allow-host", action="append", metavar="HOST",
                       help="a Host header to accept (host:port, host:* for any port); "
                            "repeatable; given, the list replaces the default (localhost's: "
                            "127.0.0.1:*, localhost:*, [::1]:*)")
    serve.add_argument("--allow-origin", action="append", metavar="ORIGIN",
                       help="an Origin header to accept; repeatable; given, the list "
                            "replaces the default (localhost's, http://127.0.0.1:* and the "
                            "like)")
    serve.add_argument("--cors-origin", action="append", type=_cors_origin, metavar="ORIGIN",
                       help="let browser pages at ORIGIN call it (CORS: preflights answered, "
                            "Mcp-Session-Id readable); scheme://host[:port], host:* for any "
                            "port, not '*'; repeatable; each is added to the Origin allow-list "
                            "(--allow-origin's, or the localhost default)")
    serve.add_argument("--token-env", metavar="VAR",
                       help="require 'Authorization: Bearer TOKEN', TOKEN read from the "
                            "environment variable VAR")
    serve.add_argument("--auth-issuer", metavar="URL",
                       help="serve as an OAuth 2.1 resource server (the MCP specification's "
                            "Authorization, docs/auth.md): every request needs an access token "
                            "of this authorization server, a JWT checked against its JWKS "
                            "(found by RFC 8414 or OpenID discovery) unless "
                            "--auth-introspection-url; 401 with the resource metadata "
                            "challenge otherwise, 503 while the issuer cannot be reached. Not "
                            "with --token-env. Needs the auth extra")
    serve.add_argument("--auth-audience", metavar="URL",
                       help="the audience every token must carry, and the resource the "
                            "metadata names (the gateway's public URL, e.g. "
                            "https://mcp.example.com); default: each endpoint's own URL as "
                            "bound, http://HOST:PORT/mcp and /servers/NAME/mcp; required when "
                            "HOST is not loopback")
    serve.add_argument("--auth-scope", action="append", metavar="SCOPE",
                       help="a scope every token must carry (403 insufficient_scope without "
                            "it); repeatable")
    serve.add_argument("--auth-introspection-url", metavar="URL",
                       help="judge tokens by RFC 7662 introspection at URL (answers kept until "
                            "the token expires), authenticating with RPCLINE_AUTH_CLIENT_ID and "
                            "RPCLINE_AUTH_CLIENT_SECRET")
    serve.add_argument("--session-key-env", metavar="VAR",
                       help="sign session ids with the key in the environment variable VAR: "
                            "instances sharing it take each other's sessions (scale-out)")
    serve.add_argument("--config", "--named-server-config", metavar="FILE",
                       help='servers by name: {"mcpServers": {"NAME": {"command": ..., '
                            '"args": [...], "env": {...}, "cwd": ...}}} ("disabled": true or '
                            '"enabled": false skips one); each at /servers/NAME/mcp')
    serve.add_argument("--named-server", nargs=2, action="append",
                       metavar=("NAME", "'COMMAND ARGS'"),
                       help="one more server by name, its command line split as a shell "
                            "would; repeatable (mcp-proxy's flag)")
    serve.add_argument("--env", action="append", metavar="VAR[=VALUE]",
                       help="an environment variable to pass to every server (VAR=VALUE: "
                            "with that value); repeatable. Only PATH, HOME, LANG, LC_ALL, "
                            "TMPDIR and SYSTEMROOT pass otherwise: not a proxy's (--env "
                            "HTTPS_PROXY --env NO_PROXY), not a secret")
    serve.add_argument("--pass-environment", action="store_true",
                       help="pass this process's whole environment to every server "
                            "(mcp-proxy's flag; a config entry's env still wins)")
    serve.add_argument("--cwd", metavar="DIR",
                       help="the folder COMMAND runs in (a config entry has its own cwd)")
    serve.add_argument("--health-public", action="store_true",
                       help="answer /healthz and /readyz without the bearer token "
                            "(--token-env) or access token (--auth-issuer); they never show a "
                            "command or an environment")
    serve.add_argument("--max-line-bytes", type=positive, default=None, metavar="N",
                       help="longest line either way, per child (default: 64 MiB)")
    serve.add_argument("--max-pending", type=positive, default=None, metavar="N",
                       help="calls in flight per child (default: 10000)")
    serve.add_argument("--max-sessions", type=positive, default=10_000, metavar="N",
                       help="2025-era sessions open at once; one more ends the least "
                            "recently used idle one")
    serve.add_argument("--max-in-flight-per-client", type=positive, default=None, metavar="N",
                       help="calls one client may have in flight (a 2025 session; a "
                            "2026-07-28 request's bearer token, else its address); one more "
                            "is answered 429 with Retry-After (default: no bound)")
    serve.add_argument("--max-waiting", type=non_negative_int, default=None, metavar="N",
                       help="calls that may wait for a server to start or take input; one "
                            "more is answered 503 with Retry-After (default: no bound)")
    serve.add_argument("--isolation", choices=ISOLATION, default="shared",
                       help="who shares a child: every client (shared, the default); nobody: "
                            "a child for each 2025-era session, started at its initialize, "
                            "which it gets as the client sent it, and asks the client back "
                            "(sampling, elicitation, roots) (session); one caller: a child "
                            "for each caller an access token names, needs --auth-issuer "
                            "(identity). A --config entry's \"isolation\" is that server's. "
                            "docs/serve.md, \"Isolation\"")
    serve.add_argument("--max-children", type=positive, default=None, metavar="N",
                       help="with --isolation session or identity: children of one's own at "
                            "once; a new session past it is answered 503 with Retry-After "
                            "(default: no bound but --max-sessions)")
    serve.add_argument("--session-idle-timeout", type=seconds, default=None, metavar="S",
                       help="with --isolation session or identity: a child sent nothing for "
                            "S seconds stops, and its sessions end (default: 600; 0: never)")
    serve.add_argument("--prestart", type=non_negative_int, default=None, metavar="N",
                       help="with --isolation session or identity: N children started ahead, "
                            "each handed to the next new session (default: 0)")
    serve.add_argument("--child-stderr", type=_stderr_choice, default="prefix",
                       metavar="{inherit,prefix,discard,file:PATH}",
                       help="where the children's stderr goes: this one's, each line "
                            "prefixed with [NAME ERA-N PID] (default), as it is (inherit), "
                            "nowhere, or appended to a file")
    serve.add_argument("--log-level", choices=LOG_LEVELS, default="warning",
                       help="info (or debug) adds one line per HTTP request: client, method "
                            "and path, status, MCP method and name, time taken; never a "
                            "token or a body (default: warning: child starts, exits and "
                            "faults, and the summary at shutdown)")
    serve.add_argument("--otel", action="store_true",
                       help="OpenTelemetry traces and metrics of every call by the MCP "
                            "semantic conventions, the W3C trace context passed to the child "
                            "in params._meta; exporters from OTEL_TRACES_EXPORTER and "
                            "OTEL_METRICS_EXPORTER (otlp, the default: OTLP over HTTP to "
                            "OTEL_EXPORTER_OTLP_ENDPOINT; console; none), the service from "
                            "OTEL_SERVICE_NAME. Needs the otel extra")
    serve.add_argument("--metrics", action="store_true",
                       help="serve the metrics (call durations, calls in flight, refusals, "
                            "bytes) as Prometheus text at GET /metrics, behind the token "
                            "unless --health-public. Needs the metrics extra")
    serve.add_argument("--log-format", choices=("text", "json"), default="text",
                       help="json: every line written to stderr (the gateway's, uvicorn's, "
                            "the children's under --child-stderr prefix) as one JSON object: "
                            "time, source, message, and trace_id and span_id while a call is "
                            "traced (--otel) (default: text)")
    serve.add_argument("--record", metavar="PREFIX",
                       help="write PREFIX.ERA-N.client.jsonl and .server.jsonl: every byte "
                            "each child was sent and wrote")
    serve.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARG...]",
                       help="the server to start and its arguments, after --")
    serve.set_defaults(run=run)


def run(args: argparse.Namespace, outcome: Outcome) -> int:
    del outcome
    if args.log_format == "json":
        from rpcline._cli import log_json

        log_json.install()
    from rpcline._cli.serve_apps import servers
    from rpcline._gateway.servers_config import ConfigError

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    try:
        specs = servers(args, _stderr)
    except ConfigError as error:
        return _usage(str(error))
    if not command and not specs:
        return _usage("no server command (rpcline serve -- COMMAND [ARG...], or --config "
                      "FILE, or --named-server NAME 'COMMAND ARGS')")
    if command and shutil.which(command[0]) is None:  # the children's PATH is this one's
        return _usage(f"cannot run {command[0]}: no such executable"
                      + ("" if os.sep in command[0] else " on PATH"))
    hosts, origins, cors = args.allow_host, args.allow_origin, args.cors_origin or []
    if not _loopback(args.host) and (hosts is None or origins is None):
        return _usage(f"binding {args.host} serves other machines: name the Host and Origin "
                      "headers to accept with --allow-host and --allow-origin")
    refused = _isolation_refused(args, {spec.isolation for spec in specs.values()})
    if refused:
        return _usage(refused)
    if args.auth_issuer is not None:
        refused = _auth_refused(args)
        if refused:
            return _usage(refused)
    secrets = {}
    for option, var in (("token", args.token_env), ("session-key", args.session_key_env)):
        if var is not None:
            secrets[option] = os.environ.get(var)
            if not secrets[option]:
                return _usage(f"--{option}-env {var}: that variable is not set or empty")
    if args.otel or args.metrics:
        from rpcline._cli import serve_otel

        refused = serve_otel.refused(args.otel, args.metrics)
        if refused:
            return _usage(refused)
    try:
        import uvicorn
    except ImportError:
        return _usage("uvicorn is not installed: pip install '.[serve]' in a clone of "
                      "rpcline, or pip install 'rpcline[serve]' from a release")
    from rpcline import bridge
    from rpcline._cli.serve_apps import Apps
    from rpcline._cli.serve_server import Server

    observed = None
    if args.otel or args.metrics:
        observed = serve_otel.setup(args.otel, args.metrics)
    apps = Apps(args, secrets, _stderr, hooks=None if observed is None else observed.hooks)
    app = apps.router(command, specs)
    try:
        listener = _listen(args.host, args.port)
    except OSError as error:
        _stderr(f"cannot listen on {args.host}:{args.port}: {error.strerror or error}")
        return STARTUP_FAILURE
    port = listener.getsockname()[1]
    host = f"[{args.host}]" if ":" in args.host else args.host
    # The stack, outermost first, each layer once: Cors (a preflight carries no token, and a
    # 401 must be readable by the page too), then the resource server (no request reaches a
    # bridge without a valid access token, and none reaches it with one), then /metrics
    # (--metrics; the token guards it as it guards the health endpoints), then the router.
    guarded: Any = app
    if observed is not None and observed.metrics_app is not None:
        from rpcline._gateway.metrics_endpoint import MetricsEndpoint

        guarded = MetricsEndpoint(app, observed.metrics_app, token=secrets.get("token"),
                                  public=args.health_public)
    if args.auth_issuer is not None:
        from rpcline.auth import ResourceServer

        guarded = ResourceServer(
            guarded, args.auth_issuer, f"http://{host}:{port}", audience=args.auth_audience,
            scopes=args.auth_scope or (), scopes_for=apps.scopes_for,
            introspection_url=args.auth_introspection_url,
            client_id=os.environ.get(CLIENT_ID_VAR), client_secret=os.environ.get(SECRET_VAR),
            public=(*HEALTH, "/metrics") if args.health_public else (), log=_stderr)
    served = bridge.Cors(guarded, cors) if cors else guarded
    if command:
        _stderr(f"listening on http://{host}:{port}/mcp for {' '.join(command)}")
    for name, spec in specs.items():
        _stderr(f"listening on http://{host}:{port}/servers/{name}/mcp for {name} "
                f"({os.path.basename(spec.command[0])})")
    # uvicorn's own access log would repeat the bridge's, without the MCP method.
    server = Server(uvicorn.Config(served, host=args.host, port=port,
                                   log_level=args.log_level, access_log=False,
                                   lifespan="on"), app,
                    reload=None if args.config is None else lambda: apps.reload(app),
                    on_stop=None if observed is None else observed.shutdown)
    server.run(sockets=[listener])  # as uvicorn.run does, with the bridge's stop
    if server.stopped_by is not None:
        # uvicorn raised the signal again after its shutdown, which ends the process by it;
        # here only where it was ignored (a background job of a script): say it all the same.
        return 128 + server.stopped_by
    return 0 if server.started else STARTUP_FAILURE


def _isolation_refused(args: argparse.Namespace, configured: set[str | None]) -> str | None:
    """Why the --isolation options cannot be served, or None. ``configured``: the config
    entries' own ``isolation`` (None where an entry says none)."""
    if args.isolation == "identity" and args.auth_issuer is None:
        return ("--isolation identity needs --auth-issuer: a caller is who a checked access "
                "token names (one --token-env token names nobody in particular)")
    if args.isolation != "shared" and args.children != 1:
        return (f"--children {args.children}: only with --isolation shared (a child of "
                "one's own is one process)")
    if {args.isolation, *configured} <= {"shared", None}:
        given = [flag for flag, value in (("--max-children", args.max_children),
                                          ("--session-idle-timeout", args.session_idle_timeout),
                                          ("--prestart", args.prestart)) if value is not None]
        if given:
            return (f"{', '.join(given)}: only with --isolation session or identity (or a "
                    "config entry's \"isolation\")")
    return None


def _auth_refused(args: argparse.Namespace) -> str | None:
    """Why the --auth-* options cannot be served, or None."""
    if args.token_env is not None:
        return ("--token-env and --auth-issuer exclude each other: one static token, or "
                "access tokens of an authorization server")
    if args.auth_audience is None and not _loopback(args.host):
        return (f"--auth-issuer binding {args.host}: name the URL clients reach with "
                "--auth-audience (tokens are checked for it)")
    if args.auth_introspection_url is not None and not (
            os.environ.get(CLIENT_ID_VAR) and os.environ.get(SECRET_VAR)):
        return (f"--auth-introspection-url needs the gateway's client credentials in "
                f"{CLIENT_ID_VAR} and {SECRET_VAR}")
    try:
        import httpx  # noqa: F401
        import jwt  # noqa: F401
    except ImportError as missing:
        return (f"--auth-issuer needs the auth extra ({missing.name} is missing): pip install "
                "'rpcline[auth]'")
    from rpcline._gateway.auth import check

    try:  # as the middleware checks them, before anything starts
        check(scopes=args.auth_scope or (), issuer=args.auth_issuer,
              audience=args.auth_audience, introspection_url=args.auth_introspection_url)
    except ValueError as error:
        return f"--auth-*: {error}"
    return None


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound before the banner says so: a port in use is one line.

    IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted sockets only when their
    protocol says TCP, and without it every keep-alive answer waits for a delayed ACK."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        if os.name != "nt":  # as asyncio's create_server does: rebind past TIME_WAIT
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
        listener.listen(2048)  # uvicorn's backlog
    except OSError:
        listener.close()
        raise
    return listener


def _loopback(host: str) -> bool:
    if host in LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _cors_origin(value: str) -> str:
    from rpcline._gateway.cors import checked_origin

    try:
        return checked_origin(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _stderr_choice(value: str) -> str:
    from rpcline._gateway.child_stderr import check

    try:
        return check(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _stderr(line: str) -> None:
    print(f"rpcline serve: {line}", file=sys.stderr, flush=True)


def _usage(message: str) -> int:
    print(f"rpcline serve: {message}", file=sys.stderr)
    return 2
