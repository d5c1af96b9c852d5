"""The scrubber sees through layered encodings: its folded views (docs/sandbox.md#secrets).

Each encoding here is built independently of ``gateway.secrets`` and is one
the plain forms alone miss: every byte percent-encoded, URL-encoding twice,
base64 wrapped at 76 characters, JSON inside JSON. After scrubbing, the
output is decoded again here the same ways and checked for every form.
"""

from __future__ import annotations

import base64
import json
import re
import textwrap
from collections.abc import Callable
from urllib.parse import quote, unquote

import pytest
from hypothesis import given, settings, strategies as st

from gateway.secrets import MAX_DEPTH, Scrubber
from tests.leaks import leaks

VALUE = "sk-proj/Q7x+m2=Zt9vK4wLp8RbN"
MARK = "[secret:TOKEN]"


def every_byte(text: str) -> str:
    """Percent-encoding of every byte, unreserved characters (``-``, letters) too."""
    return "".join(f"%{b:02X}" for b in text.encode())


def every_byte_lower(text: str) -> str:
    return "".join(f"%{b:02x}" for b in text.encode())


def twice(text: str) -> str:
    return quote(quote(text, safe=""), safe="")


def wrapped_b64(text: str) -> str:
    """MIME-style base64: 76 characters a line, CRLF between lines."""
    encoded = base64.b64encode(b"Authorization: Bearer " + b"x" * 16 + text.encode()).decode()
    return "\r\n".join(textwrap.wrap(encoded, 76))


def wrapped_b64_lf(text: str) -> str:
    encoded = base64.b64encode(b"x" * 50 + text.encode() + b"!").decode()
    return "\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76))


def json_in_json(text: str) -> str:
    return json.dumps(json.dumps({"key": text}))


def json_unicode(text: str) -> str:
    """Every character as ``\\uXXXX`` (astral ones as their UTF-16 surrogate pair)."""
    units = text.encode("utf-16-be")
    return "".join(f"\\u{units[i] << 8 | units[i + 1]:04x}" for i in range(0, len(units), 2))


def b64_in_json(text: str) -> str:
    """Wrapped base64 as a JSON string: the line breaks are ``\\n`` escapes."""
    return json.dumps({"blob": wrapped_b64_lf(text)})


def hex_wrapped(text: str) -> str:
    data = text.encode().hex()
    return "\n".join(data[i : i + 16] for i in range(0, len(data), 16))


ENCODINGS: dict[str, Callable[[str], str]] = {
    "every-byte": every_byte,
    "every-byte-lower": every_byte_lower,
    "url-twice": twice,
    "url-thrice-every-byte": lambda t: every_byte(every_byte(every_byte(t))),
    "b64-76-crlf": wrapped_b64,
    "b64-76-lf": wrapped_b64_lf,
    "json-in-json": json_in_json,
    "json-unicode": json_unicode,
    "b64-in-json": b64_in_json,
    "hex-wrapped": hex_wrapped,
    "json-of-every-byte": lambda t: json.dumps(every_byte(t)),
    "every-byte-of-json-unicode": lambda t: every_byte(json_unicode(t)),
}


def unfolded(text: str) -> list[str]:
    """``text`` decoded here, level by level (percent, JSON), each also without whitespace."""
    seen = [text]
    for _ in range(MAX_DEPTH):
        text = unquote(text)
        text = re.sub(
            r"\\u([0-9a-fA-F]{4})|\\n|\\\"",
            lambda m: chr(int(m.group(1), 16)) if m.group(1) else {"\\n": "\n"}.get(m.group(), '"'),
            text,
        )
        seen.append(text)
    return seen + [re.sub(r"\s", "", view) for view in seen]


def no_leak(value: str, text: str) -> bool:
    return not any(leaks(value, view) for view in unfolded(text))


@pytest.mark.parametrize("kind", sorted(ENCODINGS))
def test_layered_and_wrapped_encodings_are_scrubbed(kind: str) -> None:
    """Each disguise the plain forms miss is found in a folded view and replaced in the text."""
    form = ENCODINGS[kind](VALUE)
    assert not no_leak(VALUE, form), "the check here must see the value through the encoding"
    out = Scrubber({"TOKEN": VALUE}).scrub(f"before {form} after")
    assert MARK in out and out.startswith("before ") and out.endswith(" after")
    assert no_leak(VALUE, out), out


@pytest.mark.parametrize("kind", sorted(ENCODINGS))
def test_scrub_bytes_sees_the_same_views(kind: str) -> None:
    """The gateway scrubs answers as bytes: the folded views apply there too."""
    form = ENCODINGS[kind](VALUE).encode()
    out = Scrubber({"TOKEN": VALUE}).scrub_bytes(b"\xff " + form + b" \x80")
    assert MARK.encode() in out and out.startswith(b"\xff ") and out.endswith(b" \x80")
    assert no_leak(VALUE, out.decode("utf-8", "replace"))


def test_text_with_escapes_but_no_secret_is_unchanged() -> None:
    """Decoding is only a way of looking: text without a secret comes back byte for byte."""
    text = 'GET /a%20b%2Fc?q=%252D "line\\nnext" \\u00e9 QUJD\nREVG 100% done \\\\ C:\\new'
    assert Scrubber({"TOKEN": VALUE}).scrub(text) == text
    assert (
        Scrubber({"TOKEN": VALUE}).scrub_bytes(text.encode() + b"\xfe") == text.encode() + b"\xfe"
    )


def test_only_the_span_of_the_disguised_value_is_replaced() -> None:
    """Percent-escapes around the value stay; the escapes spelling the value go, as one marker."""
    text = "q=%41%42" + every_byte(VALUE) + "%43&r=1"
    assert Scrubber({"TOKEN": VALUE}).scrub(text) == f"q=%41%42{MARK}%43&r=1"


def test_a_short_value_in_wrapped_text_is_still_not_scrubbed() -> None:
    """The minimum length holds in the folded views too (no marker inside ordinary words)."""
    assert Scrubber({"S": "abc"}).scrub("a\nb\nc %61%62%63") == "a\nb\nc %61%62%63"


_LAYERS: dict[str, Callable[[str], str]] = {
    "quote": lambda t: quote(t, safe=""),
    "every-byte": every_byte,
    "json": lambda t: json.dumps(t)[1:-1],
    "json-unicode": json_unicode,
    "b64-wrapped": lambda t: "\n".join(textwrap.wrap(base64.b64encode(t.encode()).decode(), 76)),
}


@settings(max_examples=150, deadline=None)
@given(
    value=st.text(
        st.characters(codec="utf-8", exclude_categories=["Cs", "Cc", "Zs", "Zl", "Zp"]),
        min_size=8,
        max_size=30,
    ),
    layers=st.lists(st.sampled_from(sorted(_LAYERS)), min_size=1, max_size=3),
    before=st.text(max_size=20),
    after=st.text(max_size=20),
)
def test_no_stack_of_encodings_leaves_the_value(
    value: str, layers: list[str], before: str, after: str
) -> None:
    """Property: up to three layers, in any order, base64 first if at all: the value is gone.

    Base64 is matched, not decoded: base64 of an already encoded value is out of reach.
    """
    if "b64-wrapped" in layers:
        layers = ["b64-wrapped"] + [name for name in layers if name != "b64-wrapped"]
    form = value
    for name in layers:
        form = _LAYERS[name](form)
    out = Scrubber({"TOKEN": value}).scrub(before + " " + form + " " + after)
    assert "[secret:TOKEN]" in out
