"""Reading a JSON input at the boundary: strict parsing and a schema, with every
refusal naming the file, the JSON path of the field and the constraint.

JSON as Python reads it takes ``NaN`` and ``Infinity`` and integers of any length
(converting one over 4,300 digits raises a bare ``ValueError``); jsonschema cannot say
"finite". :func:`parse_json` keeps those literals as markers and :func:`check` refuses
them, and anything the schema refuses, by path (``otherData.ctas[3].unit``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any

from kda_sim.errors import InvalidInput, TraceFormatError

if TYPE_CHECKING:  # imported where a test refuses: a valid input never needs it (Schema)
    from jsonschema import Draft202012Validator

INT_DIGITS = 18  # an integer in a trace: ns times and byte counts fit in 18 digits
# a JSON field naming a kernel (a trace's header, a costs file): a registered kernel's
# name, never a path (no separators, no ".py"): an input file must not choose code to run
KERNEL_NAME: dict[str, Any] = {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$"}


class Refused:
    """A JSON literal no input of ours holds (NaN, Infinity, an over-long integer),
    kept by the parser until :func:`check` names its field."""

    def __init__(self, why: str) -> None:
        self.why = why


def _parse_constant(name: str) -> Refused:
    return Refused(f"{name} is not a number JSON allows")


def json_hooks(int_digits: int) -> dict[str, Any]:
    """``json.loads`` hooks that keep NaN, Infinity and integers of more than
    ``int_digits`` digits as :class:`Refused` markers (over 4,300 digits an integer would
    not even convert), for the check that names their field."""

    def parse_int(text: str) -> int | Refused:
        digits = len(text.lstrip("-"))
        if digits > int_digits:
            return Refused(f"an integer of {digits} digits (at most {int_digits})")
        return int(text)

    return {"parse_constant": _parse_constant, "parse_int": parse_int}


_HOOKS = json_hooks(INT_DIGITS)


def parse_json(raw: str | bytes, where: str) -> Any:
    """``raw`` decoded; bad bytes, bad JSON and deep nesting refused naming ``where``."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        return json.loads(text, **_HOOKS)
    except UnicodeDecodeError as e:
        raise TraceFormatError("not a text file (binary data?)", where=where) from e
    except json.JSONDecodeError as e:
        raise TraceFormatError(f"not JSON: {e.msg} at line {e.lineno}", where=where) from e
    except RecursionError as e:
        raise TraceFormatError("JSON nested too deeply", where=where) from e
    except ValueError as e:  # a float literal too long to convert, and the like
        raise TraceFormatError(f"not JSON: {e}", where=where) from e


def json_path(parts: Any) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


def refuse_non_finite(
    v: Any,
    where: str,
    *,
    int_digits: int = INT_DIGITS,
    error: type[InvalidInput] = TraceFormatError,
) -> None:
    """Refuse (``error``, naming the JSON path) the first NaN, infinity or integer of more
    than ``int_digits`` digits in ``v``, and every :class:`Refused` marker the parse left."""
    # iterative: a deep document must not exhaust the stack here either
    stack: list[tuple[Any, list[Any]]] = [(v, [])]
    while stack:
        x, at = stack.pop()
        why = None
        if isinstance(x, Refused):
            why = x.why
        elif isinstance(x, float) and not math.isfinite(x):
            why = f"{x} is not a finite number"
        elif isinstance(x, int) and not isinstance(x, bool) and abs(x) >= 10**int_digits:
            why = f"an integer of {len(str(abs(x)))} digits (at most {int_digits})"
        if why is not None:
            raise error(f"{json_path(at)}: {why}", what=json_path(at), where=where)
        if isinstance(x, dict):
            stack.extend((y, [*at, k]) for k, y in reversed(list(x.items())))
        elif isinstance(x, list | tuple):
            stack.extend((y, [*at, i]) for i, y in reversed(list(enumerate(x))))


_TYPES: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
}
_IGNORED = {"$schema", "title", "description", "then"}
Test = Callable[[Any], bool]


_ABSENT = object()  # a key not in an object (None is a JSON value)


def _never(v: Any) -> bool:
    return False


def _compile_key(key: str, want: Any, schema: dict[str, Any]) -> Test:
    """One keyword as a test; an unknown one fails (jsonschema then decides)."""
    if key == "type":
        return _TYPES[want]
    if key == "properties":
        subs = [(name, compile_schema(sub)) for name, sub in want.items()]

        def props(v: Any) -> bool:
            # a loop, not all() over a generator: a trace's 6,000 events pass here
            if isinstance(v, dict):
                for n, t in subs:
                    if n in v and not t(v[n]):
                        return False
            return True

        return props
    if key == "required":
        return lambda v: not isinstance(v, dict) or all(r in v for r in want)
    if key == "additionalProperties":
        if "patternProperties" in schema:  # not used by our schemas: jsonschema decides
            return _never
        known = frozenset(schema.get("properties", ()))
        if want is False:
            return lambda v: not isinstance(v, dict) or known.issuperset(v)
        extra = compile_schema(want)
        return lambda v: (
            not isinstance(v, dict) or all(extra(x) for k, x in v.items() if k not in known)
        )
    if key == "items":
        t = compile_schema(want)
        return lambda v: not isinstance(v, list) or all(map(t, v))
    if key == "prefixItems":  # the first items, each its own schema; a shorter list holds
        ts = [compile_schema(sub) for sub in want]
        return lambda v: not isinstance(v, list) or all(t(x) for t, x in zip(ts, v, strict=False))
    if key == "allOf" and (switch := _switch(want)) is not None:
        return switch
    if key in ("anyOf", "allOf"):
        ts = [compile_schema(sub) for sub in want]
        join = any if key == "anyOf" else all
        return lambda v: join(t(v) for t in ts)
    if key == "if":
        cond, then = compile_schema(want), compile_schema(schema.get("then", {}))
        return lambda v: not cond(v) or then(v)
    if key == "const":
        return lambda v: type(v) is type(want) and v == want
    if key in ("minimum", "maximum"):
        num = _TYPES["number"]
        if key == "minimum":
            return lambda v: not num(v) or v >= want
        return lambda v: not num(v) or v <= want
    if key in ("minLength", "maxLength", "minItems", "maxItems"):
        lo = key.startswith("min")
        return lambda v: not isinstance(v, str | list) or (len(v) >= want if lo else len(v) <= want)
    if key == "pattern":
        rx = re.compile(want)
        return lambda v: not isinstance(v, str) or rx.search(v) is not None
    return _never


def compile_schema(schema: dict[str, Any]) -> Test:
    """A test that is True only where ``schema`` holds, for the keywords our schemas
    use (False for a failure or a keyword it does not know: jsonschema then decides
    and says why). jsonschema walks a 6,000-event trace in seconds; this in a tenth."""
    tests = [_compile_key(k, w, schema) for k, w in schema.items() if k not in _IGNORED]
    if len(tests) == 1:
        return tests[0]

    def every(v: Any) -> bool:
        # a loop, not all() over a generator (a fifth of a trace's check)
        for t in tests:  # noqa: SIM110
            if not t(v):
                return False
        return True

    return every


def _switch(members: list[Any]) -> Test | None:
    """An ``allOf`` of ``{"if": {"properties": {K: {"const": c}}, "required": [K]},
    "then": S}`` members (one key K, distinct constants of one type: a record's kind, as
    a timeline's events are told apart by ``cat``) as one look-up of ``v[K]``: the member
    whose ``if`` holds is the only one whose ``then`` can fail, where the ``allOf`` tried
    every ``if`` on every event. None where ``members`` are not all of that form."""
    cases: dict[Any, Test] = {}
    keys, kinds = set(), set()
    for m in members:
        cond = m.get("if") if isinstance(m, dict) and set(m) == {"if", "then"} else None
        if not isinstance(cond, dict) or set(cond) != {"properties", "required"}:
            return None
        props, req = cond["properties"], cond["required"]
        if not (isinstance(props, dict) and len(props) == 1 and req == list(props)):
            return None
        ((k, want),) = props.items()
        if not (isinstance(want, dict) and set(want) == {"const"}):
            return None
        c = want["const"]
        if not isinstance(c, str | int | float | bool) or c in cases:
            return None
        keys.add(k)
        kinds.add(type(c))
        cases[c] = compile_schema(m["then"])
    if len(keys) != 1 or len(kinds) != 1:
        return None
    (k,), (kind,) = keys, kinds
    thens = list(cases.values())

    def switch(v: Any) -> bool:
        if not isinstance(v, dict):  # every ``if`` holds of a non-object: every ``then``
            return all(t(v) for t in thens)
        x = v.get(k, _ABSENT)
        if type(x) is not kind:  # no ``if`` holds (absent, or no constant's type)
            return True
        t = cases.get(x)
        return t is None or t(v)

    return switch


def _all_finite(v: Any) -> bool:
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, float):
            if not math.isfinite(x):
                return False
        elif isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, Refused) or (
            isinstance(x, int) and not isinstance(x, bool) and abs(x) >= 10**INT_DIGITS
        ):
            return False
    return True


class Schema:
    """A jsonschema with its fast test: checked by the test, explained by jsonschema.
    jsonschema (about 50 ms of imports, with attrs and referencing) is imported, and the
    schema checked and compiled by it, only when the test refuses an input: a valid
    profile, costs file or trace never needs it."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self.test = compile_schema(schema)

    @cached_property
    def validator(self) -> Draft202012Validator:
        """jsonschema's validator of the schema, which says why an input is refused."""
        from jsonschema import Draft202012Validator

        Draft202012Validator.check_schema(self.schema)
        return Draft202012Validator(self.schema)

    def first_error(self, data: Any) -> Any:
        """jsonschema's error of ``data`` that comes first by JSON path (None: it
        holds); the fast test answers a valid ``data`` without jsonschema."""
        if self.test(data):
            return None
        return min(
            self.validator.iter_errors(data),
            key=lambda e: list(map(str, e.absolute_path)),
            default=None,
        )


def check(data: Any, schema: Schema, where: str) -> None:
    """Refuse ``data`` if it holds a non-finite number or breaks the schema, naming the
    bad field by its JSON path and the constraint."""
    if _all_finite(data) and schema.test(data):
        return
    refuse_non_finite(data, where)
    err = next(iter(schema.validator.iter_errors(data)), None)
    if err is not None:
        # the deepest error of the first branch says most (a oneOf's own message
        # names only the whole record)
        best = min(
            [err, *(err.context or [])],
            key=lambda e: -len(e.absolute_path),
        )
        path = json_path(best.absolute_path)
        raise TraceFormatError(f"{path}: {best.message}", what=path, where=where)
