"""What checking the caller costs: rpcline serve with no token, a static token, and OAuth.

    python benchmarks/serve_auth.py [--rounds 5] [--seconds 3] [--clients 16]

In interleaved rounds, the same minimal child (benchmarks/fast_child.py) behind ``rpcline
serve`` with no check ("open"), ``--token-env`` (one static bearer token), and
``--auth-issuer`` against a real authorization server on loopback (tests/auth_server.py,
JWTs signed RS256, the JWKS fetched once and cached): "jwt", and the same issuer's RFC 7662
introspection ("introspection", its answers cached). Every client carries one valid token,
so after the first request a validated token is found in the gateway's cache. For each era:
throughput and the gateway's CPU per call, medians, as ratios to "open" (target for OAuth
with a cached JWKS: CPU a call <= 1.3x ``--token-env``'s... and the open gateway's).
Needs the auth and interop extras (PyJWT, the MCP SDK for the authorization server).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import serve
from _serve_variants import Variant, measure, options, table

from rpcline._build_info import describe

sys.path.insert(0, str(serve.ROOT / "tests"))
from auth_server import INTROSPECTOR, AuthServer  # noqa: E402

CHILD = serve.CHILDREN["fast"]
TOKEN = "rpcline-bench-static-token"


def gateway(name: str, *flags: str) -> serve.Gateway:
    return serve.Gateway(name, serve.PYTHON, ("2025", "2026"), lambda port, child: [
        serve.PYTHON, "-m", "rpcline", "serve", "--port", str(port), *flags, "--", *child])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options(parser)
    args = parser.parse_args()
    print(f"measuring {describe()}")
    os.environ["RPCLINE_BENCH_TOKEN"] = TOKEN
    os.environ["RPCLINE_AUTH_CLIENT_ID"], os.environ["RPCLINE_AUTH_CLIENT_SECRET"] = INTROSPECTOR
    with AuthServer() as issuer:
        def minted(port: int) -> str:
            return "Bearer " + issuer.mint(sub="bench", client_id="bench", scope="mcp",
                                           aud=f"http://127.0.0.1:{port}/mcp")

        variants = {
            "open": Variant(gateway("open")),
            "--token-env": Variant(gateway("token", "--token-env", "RPCLINE_BENCH_TOKEN"),
                                   authorization=lambda port: f"Bearer {TOKEN}"),
            "--auth-issuer (jwt)": Variant(gateway("jwt", "--auth-issuer", issuer.issuer,
                                                   "--auth-scope", "mcp"),
                                           authorization=minted),
            "--auth-issuer (introspection)": Variant(gateway(
                "introspection", "--auth-issuer", issuer.issuer, "--auth-scope", "mcp",
                "--auth-introspection-url", f"{issuer.issuer}/introspect"),
                authorization=minted),
        }
        runs = measure(variants, args, CHILD)
    print(f"the same fast child behind each, {args.clients} clients, {args.rounds} interleaved "
          "rounds, medians; ratios to the open gateway")
    table(runs, list(variants))
    print(f"(JWKS fetches by all the jwt gateways together: {issuer.jwks_fetches}; "
          f"introspections: {issuer.introspections})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
