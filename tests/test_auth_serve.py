"""``rpcline serve --auth-issuer`` end to end (issue 40): a real authorization server on
loopback (tests/auth_server.py), the gateway as a process, and stdio children that log every
line they get, so that the token is seen never to reach them. Then the official SDK's OAuth
client performs the whole flow against the gateway, in both eras and with both validations:
401, resource metadata, authorization-server discovery, dynamic client registration,
authorization with PKCE, the token, then tools through the gateway.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson
import pytest

pytest.importorskip("jwt", reason="PyJWT (the auth extra) is not installed")
httpx = pytest.importorskip("httpx", reason="httpx (the auth extra) is not installed")
pytest.importorskip("uvicorn", reason="uvicorn (the serve extra) is not installed")
pytest.importorskip("mcp.client.auth", reason="the MCP SDK's OAuth client is missing")
pytestmark = pytest.mark.real_parts

from auth_server import INTROSPECTOR, AuthServer
from test_bridge import call_tool
from test_serve_servers import HEADERS, INIT, Serve

HERE = Path(__file__).parent
PEER = f"{sys.executable} {HERE / 'bridge_peer.py'}"
SDK_SERVER = [sys.executable, str(HERE / "sdk_server.py")]


def bearer(token: str, headers: dict[str, str] | None = None) -> dict[str, str]:
    return {**(headers or HEADERS), "Authorization": f"Bearer {token}"}


def test_the_token_never_reaches_a_child_in_either_era(tmp_path: Path) -> None:
    log = tmp_path / "peer.log"
    with AuthServer() as issuer:
        serve = Serve("--auth-issuer", issuer.issuer, "--auth-scope", "mcp",
                      "--named-server", "peer", PEER, "--env", f"PEER_LOG={log}",
                      "--pass-environment", "--log-level", "info")
        try:
            url = serve.url
            # no token: 401 and the challenge, on the MCP path and on health
            for path in ("/servers/peer/mcp", "/healthz", "/readyz"):
                refused = serve.post(path, INIT)
                assert refused.status_code == 401
                assert (f'resource_metadata="{url}/.well-known/oauth-protected-resource{path}"'
                        in refused.headers["www-authenticate"])
            metadata = httpx.get(f"{url}/.well-known/oauth-protected-resource/servers/peer/mcp")
            assert metadata.json()["resource"] == f"{url}/servers/peer/mcp"
            assert metadata.json()["authorization_servers"] == [issuer.issuer]

            token = issuer.mint(sub="alice", client_id="c1", scope="mcp",
                                aud=f"{url}/servers/peer/mcp")
            # a token for the endpoint at /mcp does not open /servers/peer/mcp
            other = issuer.mint(sub="alice", scope="mcp", aud=f"{url}/mcp")
            assert serve.post("/servers/peer/mcp", INIT, bearer(other)).status_code == 401
            assert serve.post("/servers/peer/mcp", INIT,
                              bearer(issuer.mint(aud=f"{url}/servers/peer/mcp"))
                              ).status_code == 403  # no scope

            # 2025 era: a session, a call in it
            opened = serve.post("/servers/peer/mcp", INIT, bearer(token))
            assert opened.status_code == 200, opened.text
            session = {"Mcp-Session-Id": opened.headers["mcp-session-id"]}
            body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                 "params": {"name": "environment", "arguments": {
                                     "names": ["PEER_LOG"]}}})
            legacy = serve.post("/servers/peer/mcp", body, bearer(token, {**HEADERS, **session}))
            assert legacy.status_code == 200, legacy.text
            # the session is alice's: another caller's valid token does not open it
            bob = issuer.mint(sub="bob", client_id="c1", scope="mcp",
                              aud=f"{url}/servers/peer/mcp")
            stolen = serve.post("/servers/peer/mcp", body, bearer(bob, {**HEADERS, **session}))
            assert stolen.status_code == 404, stolen.text
            ended = httpx.delete(f"{url}/servers/peer/mcp", headers=bearer(bob, session))
            assert ended.status_code == 404
            again = serve.post("/servers/peer/mcp", body, bearer(token, {**HEADERS, **session}))
            assert again.status_code == 200, again.text
            # 2026-07-28: one request
            body, headers = call_tool(2, "environment", {"names": ["PEER_LOG"]})
            modern = serve.post("/servers/peer/mcp", body, bearer(token, headers))
            assert modern.status_code == 200, modern.text
            pids = {legacy.json()["result"]["pid"], modern.json()["result"]["pid"]}
            # health is a resource of its own: a token for it (or --health-public)
            assert httpx.get(f"{url}/readyz", headers=bearer(token)).status_code == 401
            health = issuer.mint(sub="monitor", scope="mcp", aud=f"{url}/readyz")
            assert httpx.get(f"{url}/readyz", headers=bearer(health)).status_code == 200
        finally:
            serve.close()
    secret_parts = [token, *token.split(".")]
    received = log.read_text()
    assert '"environment"' in received  # the child did get the calls
    assert "authorization" not in received.lower()
    for part in secret_parts:
        assert part not in received
        assert all(part not in line for line in serve.lines)
    for pid in pids:  # gone now; their environment was read while they ran (below)
        assert isinstance(pid, int)


def test_a_childs_environment_never_holds_the_token(tmp_path: Path) -> None:
    if not Path("/proc/self/environ").exists():
        pytest.skip("reads /proc/PID/environ")
    with AuthServer() as issuer:
        serve = Serve("--auth-issuer", issuer.issuer, "--pass-environment", "--", *PEER.split())
        try:
            token = issuer.mint(sub="alice", aud=f"{serve.url}/mcp")
            body, headers = call_tool(1, "environment", {"names": []})
            answered = serve.post("/mcp", body, bearer(token, headers))
            assert answered.status_code == 200, answered.text
            environ = Path(f"/proc/{answered.json()['result']['pid']}/environ").read_bytes()
            assert environ  # the child's, read while it runs
            for part in (token, *token.split(".")):
                assert part.encode() not in environ
        finally:
            serve.close()


@pytest.mark.parametrize("options, said", [
    (["--token-env", "HOME"], "exclude each other"),
    (["--host", "0.0.0.0", "--allow-host", "x:*", "--allow-origin", "http://x"],
     "--auth-audience"),
    (["--auth-introspection-url", "http://127.0.0.1:1/introspect"], "RPCLINE_AUTH_CLIENT_ID"),
    (["--auth-scope", "two words"], "scope"),
])
def test_auth_options_that_cannot_be_served_are_usage_errors(options: list[str],
                                                             said: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RPCLINE_AUTH_")}
    done = subprocess.run([sys.executable, "-m", "rpcline", "serve", "--port", "0",
                           "--auth-issuer", "http://127.0.0.1:1", *options, "--", *PEER.split()],
                          capture_output=True, text=True, timeout=60, env=env, check=False)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr


# --- the SDK's OAuth client, the whole flow -------------------------------------------------------

class Memory:
    """The SDK's TokenStorage, in memory."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client_info: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client_info

    async def set_client_info(self, client_info: Any) -> None:
        self.client_info = client_info


async def sdk_session(url: str, mode: str) -> tuple[str | None, list[str], str]:
    """The SDK's client at ``url`` with its OAuth provider; the user consents at once: the
    redirect handler follows the authorization URL and hands the code back."""
    import httpx2
    import mcp
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
    from pydantic import AnyUrl

    redirected: list[AuthorizationCodeResult] = []

    async def redirect(authorization_url: str) -> None:
        async with httpx2.AsyncClient() as browser:
            answer = await browser.get(authorization_url, follow_redirects=False)
        assert answer.status_code in (302, 303, 307), answer.text
        query = parse_qs(urlsplit(answer.headers["location"]).query)
        redirected.append(AuthorizationCodeResult(code=query["code"][0],
                                                  state=query.get("state", [None])[0]))

    async def callback() -> AuthorizationCodeResult:
        return redirected.pop()

    provider = OAuthClientProvider(
        server_url=url, client_metadata=OAuthClientMetadata(
            redirect_uris=[AnyUrl("http://127.0.0.1:9/callback")], client_name="rpcline-test",
            grant_types=["authorization_code", "refresh_token"], response_types=["code"]),
        storage=Memory(), redirect_handler=redirect, callback_handler=callback)
    async with httpx2.AsyncClient(auth=provider, timeout=30) as http, \
            mcp.Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        tools = await client.list_tools()
        echoed = await client.call_tool("echo", {"text": "through the gateway"})
        text = echoed.content[0].text  # type: ignore[union-attr]
        return client.protocol_version, [tool.name for tool in tools.tools], text


@pytest.mark.parametrize("validation", ["jwt", "introspection"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_sdks_oauth_client_reaches_tools_through_the_gateway(mode: str,
                                                                  validation: str) -> None:
    import anyio

    with AuthServer() as issuer:
        options = ["--auth-issuer", issuer.issuer, "--auth-scope", "mcp"]
        env = dict(os.environ)
        if validation == "introspection":
            options += ["--auth-introspection-url", issuer.issuer + "/introspect"]
            env["RPCLINE_AUTH_CLIENT_ID"], env["RPCLINE_AUTH_CLIENT_SECRET"] = INTROSPECTOR
        serve = Serve(*options, "--", *SDK_SERVER, env=env)
        try:
            version, tools, text = anyio.run(sdk_session, f"{serve.url}/mcp", mode)
        finally:
            serve.close()
        assert "echo" in tools and text == "through the gateway"
        assert (version == "2026-07-28") == (mode == "auto"), version
        assert len(issuer.provider.clients) == 1  # registered dynamically, once
        (token,) = issuer.issued  # one token, issued for this endpoint
        assert all(token not in line for line in serve.lines)
        if validation == "introspection":
            assert issuer.introspections >= 1
        else:
            assert issuer.jwks_fetches == 1 and issuer.introspections == 0


def test_a_named_server_s_own_scopes_are_asked_of_its_tokens_only(tmp_path: Path) -> None:
    # A config entry's "scopes": required for that server beyond --auth-scope's, in its
    # metadata and its challenge too; and --metrics under the resource server still served.
    from test_serve_servers import peer, write_config

    config = write_config(tmp_path / "mcp.json", {"git": peer(scopes=["git:write"]),
                                                  "time": peer()})
    with AuthServer() as issuer:
        serve = Serve("--auth-issuer", issuer.issuer, "--auth-scope", "mcp", "--config",
                      config, "--metrics", "--health-public")
        try:
            url = serve.url

            def token(path: str, scope: str) -> dict[str, str]:
                return bearer(issuer.mint(sub="alice", scope=scope, aud=f"{url}{path}"))

            assert serve.post("/servers/time/mcp", INIT,
                              token("/servers/time/mcp", "mcp")).status_code == 200
            short = serve.post("/servers/git/mcp", INIT, token("/servers/git/mcp", "mcp"))
            assert short.status_code == 403
            assert 'error="insufficient_scope"' in short.headers["www-authenticate"]
            assert 'scope="mcp git:write"' in short.headers["www-authenticate"]
            assert serve.post("/servers/git/mcp", INIT,
                              token("/servers/git/mcp", "mcp git:write")).status_code == 200
            metadata = httpx.get(f"{url}/.well-known/oauth-protected-resource/servers/git/mcp")
            assert metadata.json()["scopes_supported"] == ["mcp", "git:write"]
            other = httpx.get(f"{url}/.well-known/oauth-protected-resource/servers/time/mcp")
            assert other.json()["scopes_supported"] == ["mcp"]
            metrics = httpx.get(f"{url}/metrics", timeout=30)  # public by --health-public
            assert metrics.status_code == 200 and "# TYPE " in metrics.text  # not the router's
        finally:
            serve.close()
