"""A real OAuth 2.1 authorization server for the auth tests, run on loopback in a thread.

Built from the MCP SDK's own authorization-server components (``create_auth_routes``: RFC
8414 metadata, dynamic client registration, the authorization endpoint with PKCE, the token
endpoint and their checks) with a provider that approves every authorization request as the
user ``alice`` (the test is the user) and issues JWT access tokens (RFC 9068) signed with an
RS256 or ES256 key it publishes as its JWKS. It adds what the SDK leaves to a deployment:
``jwks_uri`` and an RFC 7662 introspection endpoint (HTTP Basic client authentication) in
its metadata. ``mint`` signs any claims with its keys, for the adversarial tests.
"""

from __future__ import annotations

import base64
import secrets
import socket
import threading
import time
import uuid
from typing import Any, Self

import jwt
import uvicorn
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

SCOPES = ["mcp", "admin"]
INTROSPECTOR = ("rpcline-gateway", "gateway-secret")  # the gateway's own client credentials


def new_key(alg: str) -> Any:
    if alg.startswith("RS"):
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return ec.generate_private_key(ec.SECP256R1())


def public_jwk(key: Any, kid: str, alg: str) -> dict[str, Any]:
    algorithm = jwt.get_algorithm_by_name(alg)
    jwk: dict[str, Any] = algorithm.to_jwk(key.public_key(), as_dict=True)  # type: ignore[call-overload]
    return {**jwk, "kid": kid, "use": "sig", "alg": alg}


class Provider:
    """The SDK's OAuthAuthorizationServerProvider, approving every request as ``alice``."""

    def __init__(self, server: AuthServer) -> None:
        self.server = server
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull,
                        params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(32)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300,
            client_id=client.client_id, code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource, subject="alice")
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull,
                                      authorization_code: str) -> AuthorizationCode | None:
        found = self.codes.get(authorization_code)
        return found if found is not None and found.client_id == client.client_id else None

    async def exchange_authorization_code(self, client: OAuthClientInformationFull,
                                          authorization_code: AuthorizationCode) -> OAuthToken:
        del self.codes[authorization_code.code]
        if authorization_code.resource is None:
            raise TokenError("invalid_target", "name the resource (RFC 8707)")
        scope = " ".join(authorization_code.scopes)
        token = self.server.mint(sub=authorization_code.subject, client_id=client.client_id,
                                 scope=scope, aud=authorization_code.resource)
        self.server.issued.append(token)
        return OAuthToken(access_token=token, token_type="Bearer", expires_in=3600, scope=scope)

    async def load_refresh_token(self, client: OAuthClientInformationFull,
                                 refresh_token: str) -> RefreshToken | None:
        return None

    async def exchange_refresh_token(self, client: OAuthClientInformationFull,
                                     refresh_token: RefreshToken, scopes: list[str]) -> OAuthToken:
        raise TokenError("invalid_grant", "no refresh tokens here")

    async def load_access_token(self, token: str) -> AccessToken | None:
        return None

    async def revoke_token(self, token: Any) -> None:
        return None


class AuthServer:
    """The authorization server at ``issuer`` (``http://127.0.0.1:PORT``); ``start`` and
    ``stop`` it (again on the same port: an issuer that goes down and comes back)."""

    def __init__(self, port: int = 0, alg: str = "RS256") -> None:
        probe = socket.socket()
        probe.bind(("127.0.0.1", port))
        self.port = probe.getsockname()[1]
        probe.close()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.alg = alg
        self.keys: dict[str, tuple[Any, str]] = {}  # kid -> (private key, alg)
        self.published: list[str] = []  # the kids the JWKS shows
        self.kid = self.rotate(alg)
        self.jwks_fetches = 0
        self.introspections = 0
        self.issued: list[str] = []
        self.provider = Provider(self)
        self.app = self._app()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def rotate(self, alg: str | None = None) -> str:
        """A new signing key, published (the old ones stay published); its kid."""
        alg = alg or self.alg
        kid = f"key-{len(self.keys) + 1}-{alg}"
        self.keys[kid] = (new_key(alg), alg)
        self.published.append(kid)
        self.kid = kid
        return kid

    def mint(self, kid: str | None = None, headers: dict[str, Any] | None = None,
             **claims: Any) -> str:
        """A JWT of ``claims`` (iss, iat, exp in an hour and jti added unless given; a claim
        given as None is left out) signed with the key ``kid`` (the newest by default)."""
        kid = kid or self.kid
        key, alg = self.keys[kid]
        now = int(time.time())
        body = {"iss": self.issuer, "iat": now, "exp": now + 3600, "jti": uuid.uuid4().hex,
                **claims}
        body = {name: value for name, value in body.items() if value is not None}
        return jwt.encode(body, key, algorithm=alg, headers={"kid": kid, "typ": "at+jwt",
                                                              **(headers or {})})

    # --- the app --------------------------------------------------------------------------------

    def _app(self) -> Starlette:
        issuer = AnyHttpUrl(self.issuer)
        routes = [route for route in create_auth_routes(
            self.provider,  # type: ignore[arg-type]  # no identity-assertion grant here
            issuer, client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=SCOPES, default_scopes=["mcp"]))
            if getattr(route, "path", "") != "/.well-known/oauth-authorization-server"]
        return Starlette(routes=[
            Route("/.well-known/oauth-authorization-server", self._metadata),
            Route("/jwks", self._jwks), Route("/introspect", self._introspect, methods=["POST"]),
            *routes])

    async def _metadata(self, request: Request) -> JSONResponse:
        base = self.issuer
        return JSONResponse({
            "issuer": base, "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token", "registration_endpoint": f"{base}/register",
            "jwks_uri": f"{base}/jwks", "introspection_endpoint": f"{base}/introspect",
            "scopes_supported": SCOPES, "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": ["client_secret_post",
                                                      "client_secret_basic"],
            "code_challenge_methods_supported": ["S256"]})

    async def _jwks(self, request: Request) -> JSONResponse:
        self.jwks_fetches += 1
        return JSONResponse({"keys": [public_jwk(self.keys[kid][0], kid, self.keys[kid][1])
                                      for kid in self.published]})

    async def _introspect(self, request: Request) -> JSONResponse:
        """RFC 7662: the gateway authenticates; a token this server signed and that has not
        expired is active, with its claims."""
        self.introspections += 1
        expected = "Basic " + base64.b64encode(":".join(INTROSPECTOR).encode()).decode()
        if request.headers.get("authorization") != expected:
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        token = str((await request.form()).get("token", ""))
        try:
            kid = str(jwt.get_unverified_header(token).get("kid"))
            key, alg = self.keys[kid]
            claims = jwt.decode(token, key.public_key(), algorithms=[alg],
                                options={"verify_aud": False}, issuer=self.issuer)
        except (jwt.InvalidTokenError, KeyError):
            return JSONResponse({"active": False})
        return JSONResponse({"active": True, "token_type": "Bearer", **claims})

    # --- serving --------------------------------------------------------------------------------

    def start(self) -> Self:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        server = uvicorn.Server(uvicorn.Config(self.app, log_level="warning", lifespan="off"))
        self._server = server
        self._thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]},
                                        daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline, "the authorization server did not start"
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(10)
            self._server = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
