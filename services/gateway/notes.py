"""Notes pinned to moments: how a note is answered (the JSON models :class:`Note`, :class:`NoteList`,
declared on the views of ``routes/notes.py`` beside ``responses.py``'s) and exported as Markdown
(:func:`markdown`), each note a link that opens the course page at its moment
(``/courses/{course_id}?lecture={lecture_id}&t={seconds}``, the page's deep link).

A note row is what ``notes_store`` returns (``notes_store.COLUMNS``). Times are seconds.
"""

from __future__ import annotations

import re
from datetime import datetime

from lecturecopilot.labels import citation_label, clock

from .responses import Answer


class Note(Answer):
    """A note: its text at ``t_s`` seconds of a lecture, the chip label (``L2 · 4:05``) and the
    page link that opens that moment."""

    id: str
    lecture_id: str
    course_id: str
    lecture_number: int
    t_s: float
    label: str
    text: str
    link: str
    created_at: datetime
    updated_at: datetime


class NoteList(Answer):
    """The caller's notes of a lecture, in time order."""

    lecture_id: str
    notes: list[Note]


def page_link(course_id, lecture_id, t_s: float) -> str:
    """The course page opened at a moment: ``/courses/{cid}?lecture={lid}&t={seconds}`` (tenths)."""
    return f"/courses/{course_id}?lecture={lecture_id}&t={round(float(t_s), 1):g}"


def note_json(row: dict) -> dict:
    """A note row as :class:`Note`."""
    return {"id": str(row["id"]), "lecture_id": str(row["lecture_id"]), "course_id": str(row["course_id"]),
            "lecture_number": row["lecture_number"], "t_s": row["t_s"],
            "label": citation_label(row["lecture_number"], row["t_s"]), "text": row["text"],
            "link": page_link(row["course_id"], row["lecture_id"], row["t_s"]),
            "created_at": row["created_at"].isoformat(), "updated_at": row["updated_at"].isoformat()}


_INLINE = re.compile(r"([\\`*_\[\]<&~|])")  # links, images, code, emphasis, raw HTML, entities, tables
_LINE_START = re.compile(r"^(\s*|\s*\d+(?=[.)]))([#>+=.)-])")  # headings, quotes, list items, setext lines, "1."


def literal(text: str) -> str:
    """One line of ``text`` as Markdown that shows it as written: the characters that make links,
    images, code, emphasis, raw HTML or entities, and what opens a heading, quote or list item at the
    line's start, backslash-escaped (CommonMark, "Backslash escapes"), so a title or a note can forge
    no heading, link, list item or HTML in an export. ``O(n)`` and ``a >= b`` stay as they are."""
    return _LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), _INLINE.sub(r"\\\1", text))


def _item(row: dict, base: str) -> str:
    """One note as a Markdown list item: ``- [4:05](link) text``, further lines indented under it,
    every line :func:`literal` (``str.splitlines``: CR, U+2028 and U+2029 end a line too)."""
    lines = [literal(ln) for ln in row["text"].splitlines()] or [""]
    link = base + page_link(row["course_id"], row["lecture_id"], row["t_s"])
    return "\n".join([f"- [{clock(row['t_s'])}]({link}) {lines[0]}", *(f"  {ln}" if ln else "" for ln in lines[1:])])


def markdown(title: str, rows: list[dict], base: str) -> str:
    """The notes ``rows`` (in lecture, then time order) as a Markdown document headed ``title``:
    a section per lecture (``## L2 · Heaps``), a list item per note whose time links to the page at
    that moment; ``base`` (the server's public URL, may be "") goes before each link's path."""
    out = [f"# {literal(' '.join(title.split()))}"]
    if not rows:
        out += ["", "No notes yet."]
    lecture = None
    for row in rows:
        if row["lecture_id"] != lecture:
            lecture = row["lecture_id"]
            out += ["", f"## L{row['lecture_number']} · {literal(' '.join(row['lecture_title'].split()))}", ""]
        out.append(_item(row, base))
    return "\n".join(out) + "\n"
