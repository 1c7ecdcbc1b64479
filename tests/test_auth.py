"""``rpcline serve`` as an OAuth 2.1 resource server (issue 40): ``rpcline.auth``.

A real authorization server runs on loopback (tests/auth_server.py: the MCP SDK's own
authorization-server components, JWTs signed with keys it publishes as JWKS, and RFC 7662
introspection). Each adversarial case is refused with the status the MCP specification
(2026-07-28, Authorization) gives: 401 with the challenge, 403 ``insufficient_scope``, 503
with ``Retry-After`` while the issuer cannot be reached.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("jwt", reason="PyJWT (the auth extra) is not installed")
pytest.importorskip("httpx", reason="httpx (the auth extra) is not installed")
pytest.importorskip("uvicorn", reason="uvicorn (the serve extra) is not installed")
pytest.importorskip("mcp.server.auth", reason="the MCP SDK's auth components are missing")

from auth_server import INTROSPECTOR, AuthServer, public_jwk
from cryptography.hazmat.primitives import serialization

from rpcline.auth import IDENTITY, Identity, ResourceServer

BASE = "http://127.0.0.1:8000"
RESOURCE = BASE + "/mcp"


@pytest.fixture(scope="module")
def issuer() -> Iterator[AuthServer]:
    with AuthServer() as server:
        yield server


class Inner:
    """The app behind: answers 200 and keeps the scopes it was handed."""

    def __init__(self) -> None:
        self.scopes: list[dict[str, Any]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.scopes.append(scope)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


class Log(list[str]):
    def __call__(self, line: str) -> None:
        self.append(line)


def gateway(issuer: AuthServer | str, **options: Any) -> tuple[ResourceServer, Inner]:
    inner = Inner()
    url = issuer if isinstance(issuer, str) else issuer.issuer
    options.setdefault("refetch_interval", 0.3)
    options.setdefault("retry_after", 0.3)
    return ResourceServer(inner, url, BASE, **options), inner


async def ask(app: ResourceServer, path: str = "/mcp", token: str | None = None,
              headers: list[tuple[bytes, bytes]] | None = None,
              method: str = "POST") -> tuple[int, dict[str, str], bytes]:
    sent: list[dict[str, Any]] = []
    given = list(headers or [])
    if token is not None:
        given.append((b"authorization", b"Bearer " + token.encode()))

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    await app({"type": "http", "method": method, "path": path, "root_path": "",
               "headers": [(b"host", b"127.0.0.1:8000"), *given]}, receive, send)
    start = sent[0]
    return (start["status"], {k.decode(): v.decode() for k, v in start["headers"]},
            b"".join(m.get("body", b"") for m in sent[1:]))


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def challenge(headers: dict[str, str]) -> dict[str, str]:
    value = headers["www-authenticate"]
    assert value.startswith("Bearer ")
    return dict(re.findall(r'(\w+)="([^"]*)"', value))


def assert_refused(answer: tuple[int, dict[str, str], bytes], inner: Inner, words: str,
                   status: int = 401) -> None:
    got, headers, body = answer
    assert got == status, body
    said = challenge(headers)
    assert words in said["error_description"], said
    assert said["resource_metadata"] == BASE + "/.well-known/oauth-protected-resource/mcp"
    assert json.loads(body)["error"] == said["error"]
    assert not inner.scopes  # nothing reached the app


# --- discovery -------------------------------------------------------------------------------

@pytest.mark.anyio
async def test_the_metadata_names_each_endpoint_and_the_sdk_reads_it(
        issuer: AuthServer) -> None:
    from mcp.shared.auth import ProtectedResourceMetadata

    app, _ = gateway(issuer, scopes=["mcp"])
    for path, resource in (("", BASE), ("/mcp", RESOURCE),
                           ("/servers/github/mcp", BASE + "/servers/github/mcp")):
        status, headers, body = await ask(app, "/.well-known/oauth-protected-resource" + path,
                                          method="GET")
        assert status == 200 and headers["content-type"] == "application/json"
        metadata = ProtectedResourceMetadata.model_validate_json(body)
        assert str(metadata.resource) == resource
        assert [str(url) for url in metadata.authorization_servers] == [issuer.issuer]
        assert metadata.scopes_supported == ["mcp"]
        assert metadata.bearer_methods_supported == ["header"]
    await app.aclose()


@pytest.mark.anyio
async def test_no_token_is_401_with_the_challenge_on_every_path_and_method(
        issuer: AuthServer) -> None:
    app, inner = gateway(issuer, scopes=["mcp", "tools"])
    for path in ("/mcp", "/servers/a/mcp", "/healthz", "/readyz", "/nowhere"):
        for method in ("POST", "GET", "DELETE"):
            status, headers, _ = await ask(app, path, method=method)
            assert status == 401
            said = challenge(headers)
            assert said["error"] == "invalid_token"
            assert said["resource_metadata"] == \
                f"{BASE}/.well-known/oauth-protected-resource{path}"
            assert said["scope"] == "mcp tools"
    assert not inner.scopes
    await app.aclose()


@pytest.mark.anyio
async def test_public_paths_pass_without_a_token(issuer: AuthServer) -> None:
    app, _ = gateway(issuer, public=("/healthz",))
    assert (await ask(app, "/healthz", method="GET"))[0] == 200
    assert (await ask(app, "/readyz", method="GET"))[0] == 401
    await app.aclose()


# --- a valid token -----------------------------------------------------------------------------

@pytest.mark.anyio
async def test_a_valid_token_reaches_the_app_as_an_identity_without_its_header(
        issuer: AuthServer) -> None:
    log = Log()
    app, inner = gateway(issuer, scopes=["mcp"], log=log)
    token = issuer.mint(sub="alice", client_id="c1", scope="mcp admin", aud=RESOURCE)
    status, _, body = await ask(app, token=token)
    assert status == 200, body
    (seen,) = inner.scopes
    assert all(key != b"authorization" for key, _ in seen["headers"])
    assert token not in repr(seen)
    identity = seen[IDENTITY]
    assert isinstance(identity, Identity)
    assert (identity.subject, identity.client_id, identity.scopes, identity.issuer) == \
        ("alice", "c1", frozenset({"mcp", "admin"}), issuer.issuer)
    assert token not in "".join(log)
    await app.aclose()


@pytest.mark.anyio
async def test_an_es256_issuer_and_an_audience_for_all_endpoints() -> None:
    with AuthServer(alg="ES256") as es:
        app, _ = gateway(es, audience=BASE)
        token = es.mint(sub="bob", aud=BASE)
        assert (await ask(app, "/servers/x/mcp", token=token))[0] == 200
        assert (await ask(app, "/mcp", token=token))[0] == 200
        _, _, body = await ask(app, "/.well-known/oauth-protected-resource/mcp",
                                    method="GET")
        assert json.loads(body)["resource"] == BASE
        await app.aclose()


# --- the adversarial cases ---------------------------------------------------------------------

@pytest.mark.anyio
async def test_alg_none_is_refused(issuer: AuthServer) -> None:
    app, inner = gateway(issuer)
    claims = {"iss": issuer.issuer, "aud": RESOURCE, "sub": "mallory",
              "exp": int(time.time()) + 600}
    for alg in ("none", "None", "NONE"):
        header = {"alg": alg, "typ": "JWT", "kid": issuer.kid}
        token = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}."
        assert_refused(await ask(app, token=token), inner, "algorithm")
    await app.aclose()


@pytest.mark.anyio
async def test_hs256_signed_with_the_public_key_is_refused(issuer: AuthServer) -> None:
    """The classic confusion: the issuer's public key, published, used as an HMAC secret."""
    app, inner = gateway(issuer)
    key = issuer.keys[issuer.kid][0].public_key()
    claims = {"iss": issuer.issuer, "aud": RESOURCE, "sub": "mallory",
              "exp": int(time.time()) + 600}
    secrets = [key.public_bytes(serialization.Encoding.PEM,
                                serialization.PublicFormat.SubjectPublicKeyInfo),
               json.dumps(public_jwk(issuer.keys[issuer.kid][0], issuer.kid, "RS256")).encode()]
    for alg, digest in (("HS256", hashlib.sha256), ("HS512", hashlib.sha512)):
        for secret in secrets:
            signing = (f"{b64(json.dumps({'alg': alg, 'kid': issuer.kid}).encode())}."
                       f"{b64(json.dumps(claims).encode())}")
            mac = hmac.new(secret, signing.encode(), digest).digest()
            assert_refused(await ask(app, token=f"{signing}.{b64(mac)}"), inner, "algorithm")
    await app.aclose()


@pytest.mark.anyio
async def test_a_token_signed_with_another_algorithm_than_its_key_allows_is_refused() -> None:
    with AuthServer(alg="ES256") as es:
        app, inner = gateway(es)
        import jwt

        rsa_kid = es.rotate("RS256")  # published with alg RS256
        claims = {"iss": es.issuer, "aud": RESOURCE, "exp": int(time.time()) + 600}
        for alg in ("PS256", "RS512"):  # the right key, an algorithm it does not name
            token = jwt.encode(claims, es.keys[rsa_kid][0], algorithm=alg,
                               headers={"kid": rsa_kid})
            assert_refused(await ask(app, token=token), inner, "algorithm")
        # an EC key's token claiming RS256
        token = jwt.encode(claims, es.keys[rsa_kid][0], algorithm="RS256",
                           headers={"kid": "key-1-ES256"})
        assert_refused(await ask(app, token=token), inner, "algorithm")
        await app.aclose()


@pytest.mark.anyio
async def test_expired_and_not_yet_valid_tokens_are_refused_beyond_the_skew(
        issuer: AuthServer) -> None:
    app, inner = gateway(issuer)
    now = int(time.time())
    assert_refused(await ask(app, token=issuer.mint(aud=RESOURCE, exp=now - 120)), inner,
                   "expired")
    assert_refused(await ask(app, token=issuer.mint(aud=RESOURCE, nbf=now + 300)), inner,
                   "not valid yet")
    assert_refused(await ask(app, token=issuer.mint(aud=RESOURCE, exp=None)), inner,
                   "lacks a required claim")
    # within the clock skew both pass
    assert (await ask(app, token=issuer.mint(aud=RESOURCE, exp=now - 5)))[0] == 200
    assert (await ask(app, token=issuer.mint(aud=RESOURCE, nbf=now + 5)))[0] == 200
    await app.aclose()


@pytest.mark.anyio
async def test_a_token_naming_another_issuer_is_refused(issuer: AuthServer) -> None:
    app, inner = gateway(issuer)
    for iss in ("http://evil.example", issuer.issuer + "/other", None):
        assert_refused(await ask(app, token=issuer.mint(aud=RESOURCE, iss=iss)), inner,
                       "issuer" if iss else "required claim")
    # and a token of another real issuer, under a kid this issuer also has: its signature
    # does not verify with this issuer's key
    with AuthServer() as other:
        assert other.kid == issuer.kid
        assert_refused(await ask(app, token=other.mint(aud=RESOURCE)), inner, "signature")
    await app.aclose()


@pytest.mark.anyio
async def test_a_token_for_another_resource_is_refused_the_confused_deputy(
        issuer: AuthServer) -> None:
    app, inner = gateway(issuer)
    for aud in ("http://127.0.0.1:9000/mcp", BASE, BASE + "/servers/a/mcp",
                [BASE + "/servers/a/mcp", "http://other/mcp"], None):
        assert_refused(await ask(app, token=issuer.mint(aud=aud)), inner,
                       "this resource" if aud else "required claim")
    # a token for one named server does not open another
    token = issuer.mint(aud=BASE + "/servers/a/mcp")
    assert (await ask(app, "/servers/a/mcp", token=token))[0] == 200
    assert (await ask(app, "/servers/b/mcp", token=token))[0] == 401
    await app.aclose()


@pytest.mark.anyio
async def test_a_missing_scope_is_403_insufficient_scope_naming_it(issuer: AuthServer) -> None:
    app, inner = gateway(issuer, scopes=["mcp", "tools"])
    answer = await ask(app, token=issuer.mint(aud=RESOURCE, scope="mcp other"))
    assert_refused(answer, inner, "Required scope: tools", status=403)
    said = challenge(answer[1])
    assert said["error"] == "insufficient_scope" and said["scope"] == "mcp tools"
    assert (await ask(app, token=issuer.mint(aud=RESOURCE, scp=["tools", "mcp"])))[0] == 200
    await app.aclose()


@pytest.mark.anyio
async def test_a_flood_of_unknown_kids_fetches_the_jwks_at_most_once_per_interval() -> None:
    import anyio

    with AuthServer() as fresh:
        app, _ = gateway(fresh, refetch_interval=1.0)
        assert (await ask(app, token=fresh.mint(aud=RESOURCE)))[0] == 200
        assert fresh.jwks_fetches == 1
        with AuthServer() as stranger:  # a real key, just not this issuer's
            def forged(n: int) -> str:
                return stranger.mint(aud=RESOURCE, iss=fresh.issuer,
                                     headers={"kid": f"unknown-{n}"})

            for n in range(50):  # within the interval: no fetch at all
                assert (await ask(app, token=forged(n)))[0] == 401
            assert fresh.jwks_fetches == 1
            await anyio.sleep(1.05)
            began = time.monotonic()
            for n in range(200):  # past it: one fetch, then none for the next second
                assert (await ask(app, token=forged(n)))[0] == 401
            took = time.monotonic() - began
        assert 2 <= fresh.jwks_fetches <= 2 + int(took)
        assert app.keys.fetches == fresh.jwks_fetches
        await app.aclose()


@pytest.mark.anyio
async def test_a_rotated_key_is_accepted_once_the_jwks_is_fetched_again() -> None:
    import anyio

    with AuthServer() as rotating:
        app, _ = gateway(rotating, refetch_interval=0.3)
        assert (await ask(app, token=rotating.mint(aud=RESOURCE)))[0] == 200
        old = rotating.kid
        rotating.rotate()
        rotating.published.remove(old)  # the old key withdrawn
        await anyio.sleep(0.35)
        assert (await ask(app, token=rotating.mint(aud=RESOURCE)))[0] == 200
        assert rotating.jwks_fetches == 2
        # the withdrawn key is gone from the set fetched
        assert (await ask(app, token=rotating.mint(kid=old, aud=RESOURCE)))[0] == 401
        await app.aclose()


@pytest.mark.anyio
async def test_an_issuer_that_is_down_is_503_with_retry_after_then_served_once_up() -> None:
    import anyio

    down = AuthServer()  # its port chosen, nothing listening yet
    log = Log()
    app, inner = gateway(down, retry_after=0.5, log=log)
    token = down.mint(sub="alice", aud=RESOURCE)
    for _ in range(20):
        status, headers, body = await ask(app, token=token)
        assert status == 503 and int(headers["retry-after"]) >= 1
        assert json.loads(body)["error"] == "temporarily_unavailable"
    assert app.keys.fetches == 1  # one try per retry_after, not one per request
    assert any("cannot be reached" in line for line in log)
    assert all(token not in line for line in log)
    with down:
        await anyio.sleep(0.55)
        status, _, _ = await ask(app, token=token)
        assert status == 200
    assert not inner.scopes[0]["headers"] or all(
        key != b"authorization" for key, _ in inner.scopes[0]["headers"])
    await app.aclose()


@pytest.mark.anyio
async def test_oversized_and_malformed_authorization_headers_are_401(
        issuer: AuthServer) -> None:
    app, inner = gateway(issuer)
    token = issuer.mint(aud=RESOURCE)
    bad = [
        [(b"authorization", b"Bearer " + b"a" * (16 * 1024))],
        [(b"authorization", b"Bearer " + token.encode() + b"." + b"x" * (17 * 1024))],
        [(b"authorization", b"Basic dXNlcjpwYXNz")],
        [(b"authorization", b"Bearer")],
        [(b"authorization", b"Bearer ")],
        [(b"authorization", b"Bearer a b")],
        [(b"authorization", b"Bearer \xff\xfe")],
        [(b"authorization", b"Bearer not-a-jwt")],
        [(b"authorization", b"Bearer a.b.c")],
        [(b"authorization", b"Bearer " + token.encode()), (b"authorization", b"Bearer x")],
    ]
    for headers in bad:
        status, answer, _ = await ask(app, headers=headers)
        assert status == 401 and "www-authenticate" in answer, headers[0][1][:40]
    assert not inner.scopes
    await app.aclose()


# --- introspection --------------------------------------------------------------------------

@pytest.mark.anyio
async def test_introspection_accepts_an_active_token_for_this_resource_and_keeps_the_answer(
        issuer: AuthServer) -> None:
    app, inner = gateway(issuer, introspection_url=issuer.issuer + "/introspect",
                         client_id=INTROSPECTOR[0], client_secret=INTROSPECTOR[1],
                         scopes=["mcp"])
    before = issuer.introspections
    token = issuer.mint(sub="carol", client_id="c9", scope="mcp", aud=RESOURCE)
    for _ in range(5):
        assert (await ask(app, token=token))[0] == 200
    assert issuer.introspections == before + 1  # kept until it expires
    assert inner.scopes[0][IDENTITY].subject == "carol"
    assert_refused(await ask(app, "/mcp", token=issuer.mint(aud="http://other/mcp")),
                   Inner(), "this resource")
    assert (await ask(app, "/mcp", token="opaque-garbage"))[0] == 401
    assert (await ask(app, token=issuer.mint(aud=RESOURCE, scope="x")))[0] == 403
    expired = issuer.mint(aud=RESOURCE, exp=int(time.time()) - 300)
    assert (await ask(app, token=expired))[0] == 401
    await app.aclose()


@pytest.mark.anyio
async def test_introspection_unreachable_or_refusing_the_gateway_is_503(
        issuer: AuthServer) -> None:
    down = AuthServer()
    app, _ = gateway(down, introspection_url=down.issuer + "/introspect",
                     client_id="a", client_secret="b")
    status, headers, _ = await ask(app, token=down.mint(aud=RESOURCE))
    assert status == 503 and "retry-after" in headers
    await app.aclose()
    app, _ = gateway(issuer, introspection_url=issuer.issuer + "/introspect",
                     client_id=INTROSPECTOR[0], client_secret="wrong")
    assert (await ask(app, token=issuer.mint(aud=RESOURCE)))[0] == 503
    await app.aclose()


def test_bad_urls_and_scopes_are_refused_at_once() -> None:
    async def nothing(scope: Any, receive: Any, send: Any) -> None:
        return None

    for options in ({"issuer": "ftp://x"}, {"resource": "http://x/?q"},
                    {"scopes": ["has space"]}, {"scopes": ['quo"te']},
                    {"introspection_url": "http://x/i"}):
        arguments: dict[str, Any] = {"issuer": "http://127.0.0.1:1", "resource": BASE,
                                     **options}
        with pytest.raises(ValueError):
            ResourceServer(nothing, **arguments)


def test_the_bridges_fair_limits_count_by_the_identity_not_the_address() -> None:
    from rpcline._gateway import fair

    def scope(subject: str, client: str = "c") -> dict[str, Any]:
        return {"headers": [], "client": ("10.0.0.1", 1234), IDENTITY: Identity(
            subject=subject, client_id=client, scopes=frozenset(), issuer="http://i")}

    alice, bob = fair.stateless(scope("alice"), True), fair.stateless(scope("bob"), True)
    assert alice.key != bob.key  # one address, two callers
    assert fair.stateless(scope("alice"), False).key == alice.key
    assert fair.stateless(scope("alice", "other-client"), True).key != alice.key
    assert "alice" not in alice.shown


@pytest.mark.anyio
async def test_accepted_tokens_are_kept_unless_told_not_to(issuer: AuthServer) -> None:
    for max_age, asked in ((300.0, 1), (0.0, 3)):
        app, _ = gateway(issuer, introspection_url=issuer.issuer + "/introspect",
                         client_id=INTROSPECTOR[0], client_secret=INTROSPECTOR[1],
                         cache_max_age=max_age)
        token = issuer.mint(sub="dave", aud=RESOURCE)
        before = issuer.introspections
        for _ in range(3):
            assert (await ask(app, token=token))[0] == 200
        assert issuer.introspections - before == asked
        assert len(app.accepted) <= 1  # one token, one entry; none for refusals
        for n in range(20):
            assert (await ask(app, token=f"made-up-{n}"))[0] == 401
        assert len(app.accepted) <= 1
        await app.aclose()
