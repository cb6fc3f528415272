"""What text people send may hold: one check for titles, names, file names and comments, wherever
they enter (the gateway's JSON fields, multipart and resumable upload titles, the file names that
become titles, the command line).

Refused everywhere: control characters (Unicode category ``Cc``: NUL, C0, DEL, C1; a multi-line
field keeps tab, line feed and carriage return), unpaired UTF-16 surrogates (``Cs``: no store can
keep them) and the bidirectional embedding, override and isolate controls U+202A–202E and
U+2066–2069, which make shown text read other than it is ("Trojan Source", CVE-2021-42574:
``'Week 1 \\u202e4pm.exe'`` shows as ``Week 1 exe.mp4``). The implicit direction marks U+200E
(LRM), U+200F (RLM) and U+061C (ALM) are allowed: they are what Unicode's bidi algorithm (UAX #9,
§2.6) offers for writing mixed right-to-left text correctly, and they cannot reorder a run of
letters, only the neutral characters next to them.
"""

from __future__ import annotations

import unicodedata

BIDI_CONTROLS = frozenset(map(chr, [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]))
LINE_CONTROLS = frozenset("\t\n\r")  # kept in multi-line fields (comments, messages)
MAX_FILENAME_CHARS = 255  # the usual file-system limit on one name
# Letters that show nothing: the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0) and the blank Braille
# pattern (U+2800), which Unicode gives no White_Space property; a title of them lists as an empty entry
FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


class TextError(ValueError):
    """A string refused by :func:`check_text`; ``code`` is ``invalid_<field>``, the message is for people."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field
        self.code = f"invalid_{field}"


def refused(c: str, *, multiline: bool = False) -> bool:
    """True for a character no text people send may hold (see the module docstring);
    ``multiline`` keeps tab, line feed and carriage return."""
    if c in BIDI_CONTROLS:
        return True
    cat = unicodedata.category(c)
    return cat == "Cs" or (cat == "Cc" and not (multiline and c in LINE_CONTROLS))


def blank(text: str) -> bool:
    """True when ``text`` shows nothing: only white space, invisible format characters (Unicode
    category ``Cf``: zero-width spaces, the byte-order mark) and :data:`FILLERS`."""
    return all(c.isspace() or c in FILLERS or unicodedata.category(c) == "Cf" for c in text)


def _check_chars(text: str, field: str, what: str, multiline: bool = False) -> None:
    if any(refused(c, multiline=multiline) for c in text):
        raise TextError(field, f"{what} contains characters that are not allowed (control characters, "
                               "unpaired surrogates or text-direction controls).")


def check_text(value, field: str, max_chars: int, *, multiline: bool = False) -> str:
    """``value`` cleaned: stripped, and unless ``multiline`` every run of whitespace (line breaks
    included) made one space.

    Raises :class:`TextError` (code ``invalid_<field>``) when ``value`` is not a string, is blank (:func:`blank`),
    holds a refused character (see the module docstring) or is longer than ``max_chars``
    characters after cleaning.
    """
    what = f"'{field}'"
    if not isinstance(value, str) or blank(value):
        raise TextError(field, f"{what} must be a non-empty string.")
    cleaned = value.strip() if multiline else " ".join(value.split())
    _check_chars(cleaned, field, what, multiline)
    if len(cleaned) > max_chars:
        raise TextError(field, f"{what} must be at most {max_chars} characters.")
    return cleaned


def check_filename(value, field: str = "filename") -> str:
    """A plain file name as sent: no folder (``/`` or ``\\``), no refused character (see the module
    docstring; tabs and line breaks are refused too), at most :data:`MAX_FILENAME_CHARS` characters.
    Returns it stripped of surrounding spaces. Raises :class:`TextError` (code ``invalid_<field>``)."""
    what = f"'{field}'"
    if not isinstance(value, str) or blank(value):
        raise TextError(field, f"{what} must be a file name.")
    name = value.strip()
    _check_chars(name, field, what)
    if len(name) > MAX_FILENAME_CHARS or "/" in name or "\\" in name or name in (".", ".."):
        raise TextError(field, f"{what} must be a plain file name (at most {MAX_FILENAME_CHARS} characters, "
                               "no slashes).")
    return name
