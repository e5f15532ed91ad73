"""Text any JSON reader takes, and files written whole."""

import json
import os


def _write_json(path, data):
    """Writes atomically: the reader never sees half a file."""
    temporary = "%s.%d.tmp" % (path, os.getpid())
    with open(temporary, "w", encoding="utf-8", errors="surrogateescape") as out:
        json.dump(data, out, ensure_ascii=True)
    os.replace(temporary, path)


def _clean(text):
    """A string any JSON reader takes, every character kept readable: a
    lone surrogate (JSON cannot carry one; ranktest's reader refused the
    whole line) becomes text. U+DC80..U+DCFF, which stand for the bytes of
    a file name or message that is not UTF-8 (os.fsdecode, surrogateescape),
    become "\\xNN" as ranktest writes any byte that is not UTF-8; any other
    lone surrogate (a parametrize id made of '\\ud800') its "\\uXXXX"."""
    if not isinstance(text, str):
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    return "".join(
        ("\\x%02x" % (ord(c) - 0xDC00) if "\udc80" <= c <= "\udcff" else "\\u%04x" % ord(c))
        if "\ud800" <= c <= "\udfff" else c for c in text)


def _cleaned(value):
    """`value` with every string in it _clean."""
    if isinstance(value, str):
        return _clean(value)
    if isinstance(value, dict):
        return {_clean(k): _cleaned(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_cleaned(v) for v in value]
    return value


def _raw_bytes_hex(text):
    """The bytes a string with surrogate-escaped bytes stands for, in hex
    (what ranktest passes pytest to find a test whose file name is not
    UTF-8); None where the string is plain UTF-8."""
    if _clean(text) is text:
        return None
    return text.encode("utf-8", "surrogateescape" if all(
        not "\ud800" <= c <= "\udfff" or "\udc80" <= c <= "\udcff" for c in text)
        else "backslashreplace").hex()
