"""``parse_arguments`` policy (issue 2, rule 4; taxonomy D02, D03, D05, D07, D08, appendix 4)."""

from __future__ import annotations

import json
import re

import pytest

from reference_impl import ArgumentsError, parse_arguments


def _offsets_in(message: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", message)]


# -- no arguments ---------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", " ", "\n", "\t", " \r\n\t ", "   \n\n"])
def test_empty_or_whitespace_means_no_arguments(text: str) -> None:
    result = parse_arguments(text)
    assert result == {}
    assert isinstance(result, dict)


# -- valid objects --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "{}",
        '{"city": "Paris"}',
        '  {"city": "Paris"}  \n',
        '{"a": [1, 2, {"b": null}], "c": true, "d": false, "e": -1.5e-3, "f": ""}',
        '{"nested": {"deeper": {"deepest": [[], {}]}}}',
        '{"quote": "\\"", "backslash": "\\\\", "slash": "\\/", "u": "\\u00e9\\u4e2d"}',
        '{"dup": 1, "dup": 2}',
        '{"\\u0000": "nul key"}',
    ],
)
def test_valid_object_parses_like_json_loads(text: str) -> None:
    result = parse_arguments(text)
    assert isinstance(result, dict)
    assert result == json.loads(text)


def test_literal_control_characters_inside_strings_are_accepted_and_preserved() -> None:
    # D07: raw tabs/newlines inside string values (models emit them); strict JSON rejects them.
    text = '{"old_string": "\t\t// Check\nif x", "cr": "a\rb", "nul": "\x00", "us": "\x1f"}'
    result = parse_arguments(text)
    assert result == {"old_string": "\t\t// Check\nif x", "cr": "a\rb", "nul": "\x00", "us": "\x1f"}


@pytest.mark.parametrize(
    "value",
    [
        2**53 + 1,
        2**63,
        -(2**64) - 1,
        10**30 + 7,
        int("9" * 300),
        -int("1" + "0" * 1000),
    ],
)
def test_big_ints_are_preserved_exactly(value: int) -> None:
    result = parse_arguments(f'{{"n": {value}}}')
    assert isinstance(result, dict)
    assert result["n"] == value
    assert type(result["n"]) is int


def test_huge_ints_beyond_pythons_str_conversion_limit_are_preserved() -> None:
    # A valid JSON object is a valid argument object; a 5000-digit integer is valid JSON.
    # Python's default int-string limit (4300 digits) must not turn it into "invalid JSON".
    value = 7 * (10**5000 - 1) // 9  # 5000 sevens, built without str -> int conversion
    result = parse_arguments('{"n": ' + "7" * 5000 + "}")
    assert isinstance(result, dict), f"valid JSON rejected: {result}"
    assert result["n"] == value


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1.5}',
        '{"a": 0.1}',
        '{"a": 1e-300}',
        '{"a": 1.7976931348623157e308}',
        '{"a": -0.0}',
        '{"a": 12345678901234567890.5}',
    ],
)
def test_floats_decode_like_json_loads(text: str) -> None:
    result = parse_arguments(text)
    assert isinstance(result, dict)
    assert repr(result["a"]) == repr(json.loads(text)["a"])


def test_number_overflowing_to_infinity_is_never_a_silent_infinity() -> None:
    # NaN/Infinity are rejected because no schema accepts them; 1e400 must not sneak in as inf.
    result = parse_arguments('{"a": 1e400}')
    if isinstance(result, dict):
        assert result["a"] not in (float("inf"), float("-inf")), "1e400 silently became Infinity"
    else:
        assert isinstance(result, ArgumentsError)


@pytest.mark.parametrize(
    "escape",
    [
        "\\ud83d\\ude00",  # U+1F600 as a surrogate pair
        "\\uD834\\uDD1E",  # U+1D11E, upper-case hex
        "\\ud800",  # lone high surrogate
        "\\udc00",  # lone low surrogate
        "\\ud83d\\u0041",  # high surrogate followed by a non-surrogate
        "\\u2028\\u2029\\ufeff",
        "x\\ud83d\\ude00y\\ud83d",
    ],
)
def test_surrogate_pair_escapes_decode_like_json_loads(escape: str) -> None:
    text = '{"s": "' + escape + '", "' + escape + '": 1}'
    result = parse_arguments(text)
    assert isinstance(result, dict)
    assert result == json.loads(text)


def test_astral_characters_raw_and_escaped_agree() -> None:
    raw = parse_arguments('{"s": "\U0001f600"}')
    escaped = parse_arguments('{"s": "\\ud83d\\ude00"}')
    assert raw == escaped == {"s": "\U0001f600"}


def test_moderately_deep_nesting_parses() -> None:
    depth = 200
    text = '{"a":' * depth + "[" * depth + "1" + "]" * depth + "}" * depth
    result = parse_arguments(text)
    assert isinstance(result, dict)
    assert result == json.loads(text)


@pytest.mark.parametrize("depth", [1_000, 10_000, 200_000])
@pytest.mark.parametrize("opener,closer", [("[", "]"), ('{"a":', "}")])
def test_very_deep_nesting_does_not_crash(depth: int, opener: str, closer: str) -> None:
    text = "{" + '"x":' + opener * depth + "1" + closer * depth + "}"
    result = parse_arguments(text)  # must return, never raise RecursionError/MemoryError
    assert isinstance(result, (dict, ArgumentsError))
    truncated = parse_arguments("{" + '"x":' + opener * depth)
    assert isinstance(truncated, ArgumentsError)


# -- errors: never {} -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,kind",
    [
        ("[]", "array"),
        ("[1, 2]", "array"),
        ('"x"', "string"),
        ('"{\\"city\\": \\"Paris\\"}"', "string"),  # D06 double-encoded: not silently unwrapped
        ("3", "number"),
        ("-0.5", "number"),
        ("null", "null"),
        ("true", "boolean"),
        ("false", "boolean"),
    ],
)
def test_non_object_json_is_an_error_naming_the_type(text: str, kind: str) -> None:
    result = parse_arguments(text)
    assert isinstance(result, ArgumentsError), result
    assert "object" in result.message
    assert kind in result.message
    assert result.offset == 0
    assert str(result) == result.message


def test_non_object_offset_skips_leading_whitespace() -> None:
    result = parse_arguments("  \n [1]")
    assert isinstance(result, ArgumentsError)
    assert result.offset == 4


@pytest.mark.parametrize(
    "text,offset",
    [
        ('{"entity":"A"}{"entity":"B"}', 14),
        ('{"a": 1} {"b": 2}', 9),
        ('{"a": 1}\n\n{"b": 2}', 10),
        ("{}{}", 2),
        ('{"a": 1}]', 8),  # D09: an extra bracket after a complete object
        ('{"a": 1} x', 9),
        ('{"a": 1} 2', 9),
    ],
)
def test_trailing_data_after_the_object_is_an_error_at_its_offset(text: str, offset: int) -> None:
    result = parse_arguments(text)
    assert isinstance(result, ArgumentsError), result
    assert "trailing" in result.message.lower()
    assert result.offset == offset
    assert offset in _offsets_in(result.message)


@pytest.mark.parametrize(
    "text,offset",
    [
        ('{"a" 1}', 5),  # missing colon
        ('{"a": 1,}', 8),  # trailing comma
        ("{'a': 1}", 1),  # single quotes
        ('{"a": tru}', 6),
        ('{"a": 01}', 7),
        ("{a: 1}", 1),
        ('{"a": 1 "b": 2}', 8),
        ('{"a": "\\x"}', 7),  # invalid escape
        ("{,}", 1),
    ],
)
def test_invalid_json_is_an_error_at_the_decoders_offset(text: str, offset: int) -> None:
    with pytest.raises(json.JSONDecodeError) as reference:
        json.loads(text, strict=False)
    assert reference.value.pos == offset  # the test's own expectation agrees with json
    result = parse_arguments(text)
    assert isinstance(result, ArgumentsError), result
    assert result.offset == offset
    assert offset in _offsets_in(result.message)


@pytest.mark.parametrize(
    "text",
    [
        '{"surface_type": "card", "data": ',
        '{"a": [1, 2',
        '{"a"',
        "{",
        '{"a": {"b": 1}',
        '{"to": "alice", "amount": 100, "conf',
    ],
)
def test_truncated_json_is_an_error_never_empty(text: str) -> None:
    # D03/D04: a cut stream is never repaired and never becomes {}.
    result = parse_arguments(text)
    assert isinstance(result, ArgumentsError), result
    assert 0 <= result.offset <= len(text)
    assert _offsets_in(result.message), "the message must say at which offset"


@pytest.mark.parametrize(
    "text,offset",
    [
        ('{"a": [1, 2', 11),
        ('{"a"', 4),
        ('{"a": {"b": 1}', 14),
    ],
)
def test_truncation_at_the_end_is_reported_as_truncation_at_the_end(text: str, offset: int) -> None:
    result = parse_arguments(text)
    assert isinstance(result, ArgumentsError)
    assert "truncated" in result.message
    assert result.offset == offset


def test_documented_truncation_example_matches_the_docstring() -> None:
    # parse_arguments' own doctest: '{"city": "Pa' -> "truncated arguments: ... (at offset 12 of 12)".
    result = parse_arguments('{"city": "Pa')
    assert isinstance(result, ArgumentsError)
    assert str(result) == ("truncated arguments: the JSON ends before the object is complete (at offset 12 of 12)")


@pytest.mark.parametrize(
    "text,token,offset",
    [
        ('{"a": NaN}', "NaN", 6),
        ('{"a": Infinity}', "Infinity", 6),
        ('{"a": -Infinity}', "Infinity", 6),
        ('{"a": [1, NaN]}', "NaN", 10),
        ('  {"x": 1, "y": NaN}', "NaN", 16),
    ],
)
def test_nan_and_infinity_are_rejected_with_their_offset(text: str, token: str, offset: int) -> None:
    result = parse_arguments(text)
    assert isinstance(result, ArgumentsError), result
    assert token in result.message
    assert result.offset == offset, f"offset {result.offset} does not point at {token} (at {offset})"
    assert offset in _offsets_in(result.message), f"message does not say where: {result.message!r}"


@pytest.mark.parametrize("text", ["nul", '{"a":1}\x00', "\ufeff{}", '{"a": 1}garbage', "}", "]"])
def test_garbage_is_an_error_not_empty(text: str) -> None:
    result = parse_arguments(text)
    assert isinstance(result, ArgumentsError), result
    assert result != {}
