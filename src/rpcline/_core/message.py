"""The card's nine rules (``parse``) and the result types: ``message_c`` or its twin."""

from __future__ import annotations

from rpcline._core import IMPLEMENTATION

TYPE_CHECKING = False  # typing's, without importing typing (see rpcline/__init__.py)
if TYPE_CHECKING:
    from typing import TypeAlias

__all__ = ("ClientResponse", "Incoming", "InvalidParams", "InvalidRequest", "Notification",
           "ParseError", "ProtocolError", "Refused", "Request", "error_response", "id_json",
           "parse")  # fmt: skip

if TYPE_CHECKING or IMPLEMENTATION == "python":
    from rpcline._core.message_py import (ClientResponse, InvalidParams, InvalidRequest,
                                          Notification, ParseError, ProtocolError, Refused,
                                          Request, error_response, id_json, parse)
else:
    from rpcline._core.message_c import (ClientResponse, InvalidParams, InvalidRequest,
                                         Notification, ParseError, ProtocolError, Refused,
                                         Request, error_response, id_json, parse)

# The union of the classes in use, so isinstance() accepts what parse returns.
Incoming: TypeAlias = Request | Notification | ClientResponse | Refused
