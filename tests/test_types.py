"""The result and error types: immutable values with match support, readable reprs,
type-aware equality, hashes where the fields allow, pickling; plus ``id_json`` and
``error_response``."""

from __future__ import annotations

import copy
import json
import pickle
from contextlib import suppress

import orjson
import pytest
from _support import BAD_ID, BATCHING, ERRORS, describe, typed

FIELDS = {
    "Request": ("id", "method", "params"),
    "Notification": ("method", "params"),
    "ClientResponse": ("id", "body"),
    "Refused": ("id", "error"),
    "ParseError": ("reason",),
    "InvalidRequest": ("reason",),
    "InvalidParams": ("reason",),
}
RESULT_KINDS = ("Request", "Notification", "ClientResponse", "Refused")
ERROR_KINDS = ("ParseError", "InvalidRequest", "InvalidParams")


def sample(m, kind: str):
    """One instance of each class, with fields of several types."""
    return {
        "Request": lambda: m.Request("1", "tools/call", {"name": "x", "arguments": {"a": [1]}}),
        "Notification": lambda: m.Notification("notifications/initialized", {"a": None}),
        "ClientResponse": lambda: m.ClientResponse(
            7, {"jsonrpc": "2.0", "id": 7, "result": {"ok": True}}
        ),
        "Refused": lambda: m.Refused(3, m.InvalidParams("params must be an object")),
        "ParseError": lambda: m.ParseError("unexpected end of data"),
        "InvalidRequest": lambda: m.InvalidRequest(BATCHING),
        "InvalidParams": lambda: m.InvalidParams("params must be an object"),
    }[kind]()


def other_args(m, kind: str) -> tuple:
    """Constructor arguments that differ from ``sample`` in every field."""
    return {
        "Request": (2, "other", {"b": 2}),
        "Notification": ("other", {"b": 2}),
        "ClientResponse": ("other", {"b": 2}),
        "Refused": ("other", m.ParseError("other")),
        "ParseError": ("other",),
        "InvalidRequest": ("other",),
        "InvalidParams": ("other",),
    }[kind]


def fields(obj) -> tuple:
    return tuple(typed(getattr(obj, name)) for name in FIELDS[type(obj).__name__])


ALL_KINDS = pytest.mark.parametrize("kind", list(FIELDS))


# --- immutability -----------------------------------------------------------------------


@ALL_KINDS
def test_fields_cannot_be_set_or_deleted(impl, kind):
    obj = sample(impl, kind)
    before = fields(obj)
    for name in FIELDS[kind]:
        with pytest.raises(AttributeError):
            setattr(obj, name, "changed")
        with pytest.raises((AttributeError, TypeError)):
            delattr(obj, name)
    with pytest.raises(AttributeError):
        obj.new_attribute = 1  # no __dict__ to smuggle state into
    assert fields(obj) == before


@ALL_KINDS
def test_calling_init_again_does_not_mutate(impl, kind):
    # An immutable value must not change under a second __init__ call (a hash-table key
    # would be corrupted); raising or ignoring the call are both fine.
    obj = sample(impl, kind)
    before, hash_before = fields(obj), _hash_or_none(obj)
    with suppress(TypeError):
        type(obj).__init__(obj, *other_args(impl, kind))
    assert fields(obj) == before
    assert _hash_or_none(obj) == hash_before


def _hash_or_none(obj):
    try:
        return hash(obj)
    except TypeError:
        return None


# --- __match_args__ and match statements -------------------------------------------------


@ALL_KINDS
def test_match_args(impl, kind):
    assert getattr(impl, kind).__match_args__ == FIELDS[kind]


def classify(m, msg):
    """What a server's dispatch loop does, with a real match statement."""
    match msg:
        case m.Request(id, method, params):
            return ("request", id, method, params)
        case m.Notification(method, params):
            return ("notification", method, params)
        case m.ClientResponse(id, body):
            return ("response", id, body)
        case m.Refused(None, m.ParseError(reason)):
            return ("parse error", reason)
        case m.Refused(id, m.InvalidParams(reason)):
            return ("invalid params", id, reason)
        case m.Refused(id, m.InvalidRequest(reason=reason)):
            return ("invalid request", id, reason)
    return ("no match", msg)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"jsonrpc":"2.0","id":"a","method":"m","params":{"x":1}}',
         ("request", "a", "m", {"x": 1})),
        ('{"jsonrpc":"2.0","method":"n","params":{"x":1}}', ("notification", "n", {"x": 1})),
        ('{"jsonrpc":"2.0","id":4,"result":5}',
         ("response", 4, {"jsonrpc": "2.0", "id": 4, "result": 5})),
        ("{", ("parse error", "unexpected end of data: line 1 column 2 (char 1)")),
        ('{"jsonrpc":"2.0","id":9,"method":"m","params":[]}',
         ("invalid params", 9, "params must be an object")),
        ('{"jsonrpc":"2.0","id":null,"method":"m"}', ("invalid request", None, BAD_ID)),
    ],
)
def test_match_statement(impl, line, expected):
    result = classify(impl, impl.parse(line))
    assert result == expected
    assert [type(v) for v in result] == [type(v) for v in expected]


def test_match_distinguishes_kinds_with_the_same_arity(impl):
    # ClientResponse(id, body) and Refused(id, error) both have two fields.
    match impl.Refused(1, impl.InvalidRequest("x")):
        case impl.ClientResponse(_, _):
            pytest.fail("a Refused matched ClientResponse")
        case impl.Refused(1, impl.InvalidRequest("x")):
            pass
        case _:
            pytest.fail("a Refused did not match itself")


# --- repr --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "text"),
    [
        (lambda m: m.Request(1, "m", {"a": 1}), "Request(id=1, method='m', params={'a': 1})"),
        (lambda m: m.Request("1", "m", {}), "Request(id='1', method='m', params={})"),
        (lambda m: m.Notification("n", {}), "Notification(method='n', params={})"),
        (lambda m: m.ClientResponse(None, {"result": 1}),
         "ClientResponse(id=None, body={'result': 1})"),
        (lambda m: m.Refused(None, m.ParseError("bad")),
         "Refused(id=None, error=ParseError(reason='bad'))"),
        (lambda m: m.Refused("x", m.InvalidParams("p")),
         "Refused(id='x', error=InvalidParams(reason='p'))"),
        (lambda m: m.InvalidRequest("r"), "InvalidRequest(reason='r')"),
    ],
)
def test_repr_is_readable(impl, build, text):
    assert repr(build(impl)) == text


# --- equality and hashing ----------------------------------------------------------------


@ALL_KINDS
def test_equal_fields_are_equal(impl, kind):
    a, b = sample(impl, kind), sample(impl, kind)
    assert a is not b
    assert a == b
    assert not (a != b)


# (1 vs True or 1.0 cannot be built: the constructors refuse what is no id.)
INEQUAL = {
    "Request 1 vs '1'": (lambda m: m.Request(1, "m", {}), lambda m: m.Request("1", "m", {})),
    "Request methods": (lambda m: m.Request(1, "m", {}), lambda m: m.Request(1, "n", {})),
    "Request params": (lambda m: m.Request(1, "m", {}), lambda m: m.Request(1, "m", {"a": 1})),
    "Request vs Notification": (lambda m: m.Request(1, "m", {}),
                                lambda m: m.Notification("m", {})),
    "Notification params": (lambda m: m.Notification("m", {}),
                            lambda m: m.Notification("m", {"a": 1})),
    "ClientResponse 1 vs '1'": (lambda m: m.ClientResponse(1, {}),
                                lambda m: m.ClientResponse("1", {})),
    "ClientResponse None vs 0": (lambda m: m.ClientResponse(None, {}),
                                 lambda m: m.ClientResponse(0, {})),
    "ClientResponse vs Refused": (lambda m: m.ClientResponse(1, {}),
                                  lambda m: m.Refused(1, m.ParseError("x"))),
    "Refused vs Notification": (lambda m: m.Refused(None, m.ParseError("x")),
                                lambda m: m.Notification("m", {})),
    "Refused 1 vs '1'": (lambda m: m.Refused(1, m.ParseError("x")),
                         lambda m: m.Refused("1", m.ParseError("x"))),
    "Refused 0 vs None": (lambda m: m.Refused(0, m.ParseError("x")),
                          lambda m: m.Refused(None, m.ParseError("x"))),
    "Refused error classes": (lambda m: m.Refused(1, m.ParseError("x")),
                              lambda m: m.Refused(1, m.InvalidRequest("x"))),
    "Refused reasons": (lambda m: m.Refused(1, m.ParseError("x")),
                        lambda m: m.Refused(1, m.ParseError("y"))),
    "ParseError vs InvalidRequest": (lambda m: m.ParseError("x"),
                                     lambda m: m.InvalidRequest("x")),
    "InvalidRequest vs InvalidParams": (lambda m: m.InvalidRequest("x"),
                                        lambda m: m.InvalidParams("x")),
}


@pytest.mark.parametrize(("left", "right"), list(INEQUAL.values()), ids=list(INEQUAL))
def test_type_aware_inequality(impl, left, right):
    a, b = left(impl), right(impl)
    assert a != b and b != a
    assert not (a == b) and not (b == a)


@ALL_KINDS
def test_a_result_is_not_a_tuple_of_its_fields(impl, kind):
    # Equality is between records of the same class only, as in the Cython core.
    obj = sample(impl, kind)
    plain = tuple(getattr(obj, name) for name in FIELDS[kind])
    assert obj != plain and plain != obj
    assert not (obj == plain) and not (plain == obj)
    assert obj != None  # noqa: E711
    assert obj != repr(obj)


def test_refusals_and_errors_hash_by_value(impl):
    e1, e2 = impl.InvalidRequest("r"), impl.InvalidRequest("r")
    assert hash(e1) == hash(e2)
    assert len({e1, e2, impl.ParseError("r")}) == 2
    r1, r2 = impl.Refused(1, e1), impl.Refused(1, e2)
    assert hash(r1) == hash(r2)
    assert len({r1, r2}) == 1
    assert len({r1, impl.Refused("1", e1), impl.Refused(None, e1)}) == 3
    parsed = {impl.parse("[]"), impl.parse("[1]"), impl.parse(b"[ ]")}
    assert parsed == {impl.Refused(None, impl.InvalidRequest(BATCHING))}


@pytest.mark.parametrize("kind", ["Request", "Notification", "ClientResponse"])
def test_results_holding_a_dict_are_unhashable(impl, kind):
    # Their params/body are dicts; a hash would have to ignore them and break with ==.
    with pytest.raises(TypeError):
        hash(sample(impl, kind))


# --- pickle and copy ---------------------------------------------------------------------


@ALL_KINDS
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickle_round_trip(impl, kind, protocol):
    obj = sample(impl, kind)
    back = pickle.loads(pickle.dumps(obj, protocol))
    assert type(back) is type(obj)
    assert back == obj
    assert fields(back) == fields(obj)


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
@pytest.mark.parametrize(
    "line",
    [
        '{"jsonrpc":"2.0","id":"1","method":"m","params":{"a":[1]}}',
        '{"jsonrpc":"2.0","id":1,"method":"m"}',
        '{"jsonrpc":"2.0","method":"m"}',
        '{"jsonrpc":"2.0","result":{}}',
        '{"jsonrpc":"2.0","id":"1","method":"m","params":5}',
        "INFO started",
        "[]",
    ],
)
def test_parsed_results_pickle_with_id_types(impl, line, protocol):
    result = impl.parse(line)
    back = pickle.loads(pickle.dumps(result, protocol))
    assert describe(back) == describe(result)
    assert back == result


@ALL_KINDS
def test_copy_and_deepcopy(impl, kind):
    obj = sample(impl, kind)
    for duplicate in (copy.copy(obj), copy.deepcopy(obj)):
        assert type(duplicate) is type(obj)
        assert duplicate == obj
        assert fields(duplicate) == fields(obj)


# --- ProtocolError -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ERROR_KINDS)
def test_protocol_error_codes_messages_and_to_json(impl, kind):
    cls = getattr(impl, kind)
    code, message = ERRORS[kind]
    assert (cls.code, cls.message) == (code, message)
    error = cls("why it failed")
    assert (error.code, error.message, error.reason) == (code, message, "why it failed")
    assert error.to_json() == {"code": code, "message": message, "data": "why it failed"}
    assert list(error.to_json()) == ["code", "message", "data"]
    assert issubclass(cls, impl.ProtocolError)
    assert isinstance(error, impl.ProtocolError)
    # Values to answer with, not exceptions to raise.
    assert not issubclass(cls, BaseException)


def test_protocol_error_is_abstract(impl):
    with pytest.raises(TypeError):
        impl.ProtocolError("x")
    with pytest.raises(TypeError):
        impl.ProtocolError(reason="x")


def test_error_classes_are_distinct(impl):
    codes = {getattr(impl, kind).code for kind in ERROR_KINDS}
    assert codes == {-32700, -32600, -32602}


# --- id_json -----------------------------------------------------------------------------


class IntSubclass(int):
    pass


class StrSubclass(str):
    pass


@pytest.mark.parametrize(
    "value", [0, 1, -1, 2**64 - 1, -(2**63), 10**40, "", "1", "abc\u00e9\U0001f600"],
    ids=repr,
)
def test_id_json_returns_the_exact_object(impl, value):
    assert impl.id_json(value) is value


@pytest.mark.parametrize(
    "value",
    [True, False, 1.0, -0.0, None, IntSubclass(1), StrSubclass("1"), b"1", [1], {"id": 1}],
    ids=repr,
)
def test_id_json_refuses_non_ids(impl, value):
    with pytest.raises(TypeError, match=type(value).__name__):
        impl.id_json(value)


# --- error_response ----------------------------------------------------------------------


IDS = [None, 0, 1, -1, 2**64 - 1, -(2**63), "", "1", 'q"uo\\te \u00e9\u2028\U0001f600\n']


@pytest.mark.parametrize("id", IDS, ids=repr)
@pytest.mark.parametrize("kind", ERROR_KINDS)
def test_error_response(impl, kind, id):
    reason = 'why: "quoted" \\ \u00e9\U0001f600\n\t\x00'
    out = impl.error_response(impl.Refused(id, getattr(impl, kind)(reason)))
    code, message = ERRORS[kind]
    assert type(out) is bytes
    decoded = orjson.loads(out)
    assert decoded == {
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message, "data": reason},
    }
    assert typed(decoded["id"]) == typed(id)
    # Compact: exactly what orjson writes for the same object, with no trailing newline.
    assert out == orjson.dumps(decoded)
    assert not out.endswith(b"\n")


@pytest.mark.parametrize(
    ("line", "id", "code"),
    [
        ("", None, -32700),
        ("INFO hello", None, -32700),
        ("[]", None, -32600),
        ('{"jsonrpc":"2.0","id":null,"method":"m"}', None, -32600),
        ('{"jsonrpc":"1.0","id":"7","method":"m"}', "7", -32600),
        ('{"jsonrpc":"2.0","id":7,"method":"m","params":null}', 7, -32602),
    ],
)
def test_error_response_of_parsed_refusals(impl, as_input, line, id, code):
    result = impl.parse(as_input(line))
    decoded = orjson.loads(impl.error_response(result))
    assert typed(decoded["id"]) == typed(id)
    assert decoded["error"]["code"] == code
    assert decoded["error"]["data"] == result.error.reason


@pytest.mark.parametrize(
    "build",
    [
        lambda m: m.Request(1, "m", {}),
        lambda m: m.Notification("m", {}),
        lambda m: m.ClientResponse(1, {"result": 1}),
        lambda m: m.ParseError("x"),
        lambda m: (None, m.ParseError("x")),
        lambda m: None,
        lambda m: b'{"jsonrpc":"2.0"}',
    ],
    ids=["Request", "Notification", "ClientResponse", "ParseError", "tuple", "None", "bytes"],
)
def test_error_response_of_a_non_refusal_raises(impl, build):
    with pytest.raises(TypeError):
        impl.error_response(build(impl))


@pytest.mark.parametrize("bad_id", [True, 1.5, IntSubclass(3)], ids=repr)
def test_error_response_refuses_to_echo_a_non_id(impl, bad_id):
    # A Refused built by hand with something that is not an id cannot be answered (its
    # constructor refuses it already, see below).
    with pytest.raises(TypeError):
        impl.error_response(impl.Refused(bad_id, impl.InvalidRequest("x")))


# --- constructors refuse what id_json refuses ---------------------------------------------


NON_IDS = [True, False, 1.0, -0.0, 1.5, IntSubclass(1), StrSubclass("1"), b"1", [1], {"id": 1}]
# The classes with an id, and arguments for the rest of their fields.
WITH_ID = {
    "Request": lambda m, id: m.Request(id, "m", {}),
    "ClientResponse": lambda m, id: m.ClientResponse(id, {"result": 1}),
    "Refused": lambda m, id: m.Refused(id, m.InvalidRequest("x")),
}


@pytest.mark.parametrize("value", NON_IDS, ids=repr)
@pytest.mark.parametrize("kind", list(WITH_ID))
def test_constructors_refuse_non_ids_as_id_json_does(impl, kind, value):
    # A result built by hand must hold an id that can be echoed: Request(True, ...) would
    # otherwise be answered with "id": true, or fail far away in error_response.
    with pytest.raises(TypeError) as expected:
        impl.id_json(value)
    with pytest.raises(TypeError) as refused:
        WITH_ID[kind](impl, value)
    assert str(refused.value) == str(expected.value)


def test_only_a_request_needs_an_id(impl):
    with pytest.raises(TypeError, match="NoneType"):
        impl.Request(None, "m", {})
    assert impl.ClientResponse(None, {"result": 1}).id is None
    assert impl.Refused(None, impl.ParseError("x")).id is None


@pytest.mark.parametrize("value", [0, -1, 2**64 - 1, 10**40, "", "1"], ids=repr)
@pytest.mark.parametrize("kind", list(WITH_ID))
def test_constructors_keep_the_exact_id(impl, kind, value):
    assert WITH_ID[kind](impl, value).id is value


def test_client_response_gives_result_and_error_as_the_peer_sent_them(impl):
    answer = impl.parse(b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}')
    assert answer.result == {"tools": []} and answer.error is None
    failure = impl.parse(b'{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}')
    assert failure.error == {"code": -32601, "message": "no"} and failure.result is None
    assert not isinstance(failure.error, impl.ProtocolError)  # the raw member, any JSON value
    assert impl.parse(b'{"jsonrpc":"2.0","id":3,"error":"broken"}').error == "broken"
    assert impl.parse(b'{"jsonrpc":"2.0","id":4,"result":null}').result is None
    assert impl.ClientResponse(None, {"result": 5}).result == 5


# --- construction by hand: the core's refusals, in the same words (issue 31, item 8) -------

HAND_BUILT = [
    ("Refused", (1, "oops"), {}, "Refused() argument 'error' must be ProtocolError, not str"),
    ("Refused", (1,), {}, "Refused() missing required argument: 'error'"),
    ("Request", (1, 2, 3), {}, "Request() argument 'method' must be str, not int"),
    ("Request", (1, "m", [1]), {}, "Request() argument 'params' must be dict, not list"),
    ("Request", (1, "m", {}, 4), {}, "Request() takes 3 arguments (4 given)"),
    ("Request", (), {}, "Request() missing required arguments: 'id', 'method', 'params'"),
    ("Request", (1, "m"), {"id": 1}, "Request() got multiple values for argument 'id'"),
    ("Request", (1, "m", {}), {"x": 1}, "Request() got an unexpected keyword argument 'x'"),
    ("Notification", (1, {}), {}, "Notification() argument 'method' must be str, not int"),
    ("Notification", ("m", None), {},
     "Notification() argument 'params' must be dict, not NoneType"),
    ("ClientResponse", (1, 5), {}, "ClientResponse() argument 'body' must be dict, not int"),
    ("ParseError", (5,), {}, "ParseError() argument 'reason' must be str, not int"),
    ("InvalidParams", (), {}, "InvalidParams() missing required argument: 'reason'"),
]


@pytest.mark.parametrize(("kind", "args", "kwargs", "message"), HAND_BUILT)
def test_constructors_refuse_wrong_arguments_in_the_same_words(impl, kind, args, kwargs, message):
    # The twin once built Refused(1, "oops") (error_response then raised AttributeError)
    # and Request(1, 2, 3); the core named Cython's __init__.
    with pytest.raises(TypeError) as refused:
        getattr(impl, kind)(*args, **kwargs)
    assert str(refused.value) == message


def test_constructors_take_keywords(impl):
    built = impl.Request(params={}, method="m", id=1)
    assert built == impl.Request(1, "m", {})
    assert impl.Refused(error=impl.ParseError(reason="r"), id=None).error.reason == "r"


@pytest.mark.c_extension
def test_a_refusal_holds_an_error_of_its_own_implementation(c_module, py_module):
    with pytest.raises(TypeError, match="must be ProtocolError, not ParseError"):
        py_module.Refused(1, c_module.ParseError("x"))


@pytest.mark.parametrize(
    "line",
    ['{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}}', '{"jsonrpc":"2.0","method":"m"}',
     '{"jsonrpc":"2.0","id":1,"result":{}}', "[]"],
)
def test_results_are_records_not_sequences(impl, line):
    # The core's results are no tuples, so neither are the twin's: json.dumps, len and
    # indexing treat a result alike in both (orjson.dumps refuses both too).
    result = impl.parse(line)
    with pytest.raises(TypeError, match="is not JSON serializable"):
        json.dumps(result)
    with pytest.raises(TypeError):
        len(result)
    with pytest.raises(TypeError):
        result[0]
    with pytest.raises(TypeError):
        iter(result)
    with pytest.raises(orjson.JSONEncodeError):
        orjson.dumps(result)
