"""The scrubber: every form of every secret replaced by its marker, nothing else touched."""

from __future__ import annotations

import base64
import json
import logging
import uuid
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given, settings, strategies as st

from bughunt.models import AgentMode, AgentVersion, BugReport
from gateway.secrets import MIN_LENGTH, Scrubber, base64_inner, encoded_forms
from tests.leaks import assert_no_leak, base64_forms, leaks

VALUE = "sk-Live/42+Key=Q&z é"
MARK = "[secret:TOKEN]"


def scrubbed(text: str, value: str = VALUE) -> str:
    out = Scrubber({"TOKEN": value}).scrub(text)
    assert_no_leak(value, out)
    return out


def encodings(value: str) -> dict[str, str]:
    data = value.encode()
    forms = {
        "raw": value,
        "upper": value.upper(),
        "lower": value.lower(),
        "swapcase": value.swapcase(),
        "quote": quote(value, safe=""),
        "quote-slash": quote(value),
        "quote-lower": quote(value, safe="").lower(),
        "quote_plus": quote_plus(value),
        "json": json.dumps(value)[1:-1],
        "json-utf8": json.dumps(value, ensure_ascii=False)[1:-1],
        "hex": data.hex(),
        "HEX": data.hex().upper(),
    }
    for prefix in (b"", b"x", b"xy", b"xyz", b"wxyz"):
        for suffix in (b"", b"\n", b"!!"):
            stream = prefix + data + suffix
            forms[f"b64-{len(prefix)}-{len(suffix)}"] = base64.b64encode(stream).decode()
            forms[f"b64url-{len(prefix)}-{len(suffix)}"] = base64.urlsafe_b64encode(stream).decode()
    return forms


@pytest.mark.parametrize("kind", sorted(encodings(VALUE)))
def test_every_encoding_is_scrubbed(kind: str) -> None:
    """The value raw, case-changed, URL-, JSON-, hex- or base64-encoded (any alignment) goes."""
    form = encodings(VALUE)[kind]
    assert leaks(VALUE, form), "the leak check must see the form before scrubbing"
    out = scrubbed(f"before {form} after")
    assert MARK in out and out.startswith("before ") and out.endswith(" after")


def test_base64_forms_are_the_value_dependent_characters() -> None:
    """The inner characters kept per alignment are exactly those computed independently."""
    for value in (VALUE, "abcdefgh", "0123456789abcdef!"):
        mine = [
            base64_inner(value.encode(), offset, urlsafe=urlsafe)
            for offset in (0, 1, 2)
            for urlsafe in (False, True)
        ]
        assert mine == base64_forms(value)


def test_a_value_embedded_in_json_and_urls_is_scrubbed() -> None:
    """The value inside a JSON document and a query string, as a program would print it."""
    doc = json.dumps({"token": VALUE, "nested": [VALUE.upper()]})
    url = f"https://example.test/cb?token={quote_plus(VALUE)}&x=1"
    out = scrubbed(doc + "\n" + url)
    assert json.loads(out.splitlines()[0]) == {"token": MARK, "nested": [MARK]}
    assert out.splitlines()[1] == f"https://example.test/cb?token={MARK}&x=1"


def test_text_without_secrets_is_unchanged() -> None:
    """Nothing but a secret's forms is touched."""
    text = "pytest: 3 passed in 0.02s; sk-Live/42 is only a prefix"
    assert Scrubber({"TOKEN": VALUE}).scrub(text) == text


def test_short_values_are_not_scrubbed_and_warned_once(caplog: pytest.LogCaptureFixture) -> None:
    """A value under MIN_LENGTH characters stays (too many false hits); its name is logged once."""
    name = f"SHORT_{uuid.uuid4().hex[:6]}"
    value = "x" * (MIN_LENGTH - 1)
    with caplog.at_level(logging.WARNING, logger="bughunt.secrets"):
        first = Scrubber({name: value})
        Scrubber({name: value})
    assert not first and first.scrub(f"a {value} b") == f"a {value} b"
    warnings = [r.getMessage() for r in caplog.records if name in r.getMessage()]
    assert len(warnings) == 1 and value not in warnings[0]
    assert Scrubber({"EIGHT": "y" * MIN_LENGTH}).scrub("y" * MIN_LENGTH) == "[secret:EIGHT]"


def test_multiple_secrets_each_get_their_own_marker() -> None:
    """Two secrets in one text: each occurrence is replaced by its own name's marker."""
    scrubber = Scrubber({"A": "alpha-secret-1", "B": "bravo-secret-2"})
    out = scrubber.scrub("x alpha-secret-1 y YnJhdm8tc2VjcmV0LTI= z")
    assert out.startswith("x [secret:A] y [secret:B]") and out.endswith(" z")


def test_overlapping_secrets_leave_no_piece_of_either() -> None:
    """Secrets that share characters, overlapping in the text, are replaced as one span."""
    a, b = "abcdefgh12", "defgh12345"
    scrubber = Scrubber({"A": a, "B": b})
    out = scrubber.scrub("<abcdefgh12345>")
    assert out == "<[secret:A][secret:B]>"
    assert_no_leak(b, out)


def test_the_longest_form_wins_where_one_secret_contains_another() -> None:
    """A secret inside a longer one: the longer is replaced whole."""
    scrubber = Scrubber({"SHORTER": "inner-secret", "LONGER": "outer-inner-secret-x"})
    assert scrubber.scrub("[outer-inner-secret-x]") == "[[secret:LONGER]]"
    assert scrubber.scrub("[inner-secret]") == "[[secret:SHORTER]]"


def test_adjacent_occurrences_are_each_replaced() -> None:
    """The value twice in a row is two markers."""
    assert scrubbed(VALUE + VALUE) == MARK + MARK


def test_scrub_bytes_replaces_the_utf8_forms() -> None:
    """Bytes (undecodable ones too) are scrubbed of the value's UTF-8 forms, ASCII case folded."""
    scrubber = Scrubber({"TOKEN": "plain-ascii-token"})
    data = b"\xff\xfe PLAIN-ASCII-TOKEN " + base64.b64encode(b"plain-ascii-token") + b"\x80"
    out = scrubber.scrub_bytes(data)
    assert out.startswith(b"\xff\xfe [secret:TOKEN] [secret:TOKEN]") and out.endswith(b"\x80")
    assert_no_leak("plain-ascii-token", out)


def test_scrub_json_walks_keys_values_and_keeps_other_scalars() -> None:
    """Nested dicts and lists: every string (keys too) scrubbed, numbers and None kept."""
    items: list[object] = [VALUE, 1, None, {"k": quote(VALUE)}]
    data: dict[str, object] = {"a": items, VALUE: True}
    out = Scrubber({"TOKEN": VALUE}).scrub_json(data)
    assert out == {"a": [MARK, 1, None, {"k": MARK}], MARK: True}
    assert items[0] == VALUE and VALUE in data  # the input is not changed


def test_scrub_model_scrubs_every_text_field_and_keeps_enums() -> None:
    """A report: every text field and list item scrubbed; an unchanged model is returned as is."""
    report = BugReport(
        case_id="c1",
        agent_version="a",
        title=f"leak {VALUE}",
        summary=base64.b64encode(VALUE.encode()).decode(),
        steps=[quote_plus(VALUE)],
        expected=VALUE.encode().hex(),
        actual=json.dumps(VALUE),
        root_cause=VALUE.upper(),
        repro_test=f"TOKEN = {VALUE!r}\n",
    )
    scrubber = Scrubber({"TOKEN": VALUE})
    out = scrubber.scrub_model(report)
    assert_no_leak(VALUE, out)
    assert out.title == f"leak {MARK}" and out.case_id == "c1"
    assert scrubber.scrub_model(out) is out
    agent = AgentVersion(name="a", family="f", mode=AgentMode.REPLAY, reports="r")
    assert scrubber.scrub_model(agent).mode is AgentMode.REPLAY


def test_the_repr_never_shows_a_value() -> None:
    """A scrubber in a log line or traceback names its secrets, never their values."""
    scrubber = Scrubber({"TOKEN": VALUE})
    assert VALUE not in repr(scrubber) and "TOKEN" in repr(scrubber)
    assert_no_leak(VALUE, repr(scrubber))


def test_including_adds_secrets_and_keeps_the_old_ones() -> None:
    """A run's scrubber plus one agent's secrets scrubs both; nothing new gives the same object."""
    run = Scrubber({"A": "alpha-secret-1"})
    assert run.including({"A": "alpha-secret-1"}) is run
    both = run.including({"B": "bravo-secret-2"})
    assert both.scrub("alpha-secret-1 bravo-secret-2") == "[secret:A] [secret:B]"
    assert both.names == ("A", "B")


def test_encoded_forms_are_split_by_case_sensitivity() -> None:
    """Base64 forms are matched exactly (their case carries bits), the rest in any case."""
    folded, exact = encoded_forms(VALUE)
    assert VALUE in folded and VALUE.encode().hex() in folded
    assert all(form in base64_forms(VALUE) for form in exact)
    lowered = base64.b64encode(VALUE.encode()).decode().lower()
    assert Scrubber({"TOKEN": VALUE}).scrub(lowered) == lowered


_CHARS = st.characters(codec="utf-8", exclude_categories=["Cs"])
_TEXT = st.text(_CHARS, max_size=40)


@settings(max_examples=200, deadline=None)
@given(
    value=st.text(_CHARS, min_size=MIN_LENGTH, max_size=40),
    before=_TEXT,
    after=_TEXT,
    kind=st.sampled_from(sorted(encodings("placeholder"))),
)
def test_no_form_survives_in_any_surrounding_text(
    value: str, before: str, after: str, kind: str
) -> None:
    """Property: any value, any encoding, any text around it: no form of the value is left."""
    out = Scrubber({"TOKEN": value}).scrub(before + encodings(value)[kind] + after)
    assert not leaks(value, out)
