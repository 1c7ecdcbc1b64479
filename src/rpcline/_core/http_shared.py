"""What the HTTP ladder's core (``http_c``) and its twin (``http_py``) share: the routing
headers, the statuses and the reasons (the SDK's messages, so logs read alike).

It imports only ``shared``, so either implementation takes these without loading the other.
"""

from __future__ import annotations

from typing import Final

from rpcline._core.shared import CAPABILITIES_KEY, VERSION_KEY

__all__ = (
    "ACCEPTED",
    "BAD_REQUEST",
    "DUPLICATED",
    "METHOD_HEADER",
    "METHOD_MISMATCH",
    "MISSING_META",
    "NAME_BEARING",
    "NAME_HEADER",
    "NAME_MISMATCH",
    "NO_META",
    "OK",
    "POSTED_RESPONSE",
    "ROUTING_HEADERS",
    "UNSUPPORTED",
    "VERSIONS",
    "VERSION_HEADER",
    "VERSION_MISMATCH",
    "VERSION_NOT_STRING",
)

VERSIONS: Final = ("2026-07-28",)
VERSION_HEADER: Final = "mcp-protocol-version"
METHOD_HEADER: Final = "mcp-method"
NAME_HEADER: Final = "mcp-name"
ROUTING_HEADERS: Final = frozenset({VERSION_HEADER, METHOD_HEADER, NAME_HEADER})
# The params member that Mcp-Name mirrors, by method.
NAME_BEARING: Final = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
}

# Reasons (the SDK's messages, so logs read alike); both implementations use these texts.
POSTED_RESPONSE: Final = "a client must not send responses"
NO_META: Final = (f"params._meta must be an object carrying the required {VERSION_KEY!r} and "
                  f"{CAPABILITIES_KEY!r} envelope keys")  # fmt: skip
MISSING_META: Final = "params._meta is missing the required envelope key(s): {}"
DUPLICATED: Final = "{} header appears more than once"
VERSION_MISMATCH: Final = (f"{VERSION_HEADER} header does not match the request envelope's "
                           "protocol version")  # fmt: skip
METHOD_MISMATCH: Final = (
    f"{METHOD_HEADER} header does not match the request body's method"
)
NAME_MISMATCH: Final = (
    f"{NAME_HEADER} header does not match the request body's {{!r}} parameter"
)
VERSION_NOT_STRING: Final = "the protocol-version envelope value must be a string"
UNSUPPORTED: Final = "protocol version {!r} is not supported"

OK, ACCEPTED, BAD_REQUEST = 200, 202, 400
