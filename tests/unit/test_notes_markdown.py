"""A notes export shows titles and notes as written: no heading, link, list item or raw HTML can be
forged by a lecture title (the instructor's) or a note's text (services/gateway/notes.py)."""

import re

from services.gateway.notes import literal, markdown

ROW = {"lecture_id": "l1", "course_id": "c1", "t_s": 5.0, "lecture_number": 1}


def test_markup_in_a_line_is_escaped():
    assert literal("[login](javascript:alert(1)) <img src=x onerror=alert(1)>") == \
        r"\[login\](javascript:alert(1)) \<img src=x onerror=alert(1)>"
    assert literal("# heading") == r"\# heading" and literal("  - item") == r"  \- item" and literal("===") == r"\==="
    assert literal("1. first") == r"1\. first" and literal("> quoted") == r"\> quoted"
    assert literal("Heapify is O(n), parent >= children, e.g. this") == "Heapify is O(n), parent >= children, e.g. this"


def test_the_export_has_only_its_own_headings_and_links():
    rows = [{**ROW, "lecture_title": "Heaps [Answers](http://evil.example/x) <script>",
             "text": "first\n# Forged heading\n## L9 · Fake\n- [0:05](http://evil.example/p) forged\u2028[x](http://evil)\rlast"}]
    md = markdown("Pub <script>alert(1)</script> [login](javascript:alert(1))", rows, "https://lc.example")
    headings = [ln for ln in md.splitlines() if ln.startswith("#")]
    assert headings == [r"# Pub \<script>alert(1)\</script> \[login\](javascript:alert(1))",
                        r"## L1 · Heaps \[Answers\](http://evil.example/x) \<script>"]
    links = re.findall(r"(?<!\\)\]\(([^)]*)\)", md)
    assert links == ["https://lc.example/courses/c1?lecture=l1&t=5"]
    assert [ln for ln in md.splitlines() if ln.startswith("- ")] == ["- [0:05](https://lc.example/courses/c1?lecture=l1&t=5) first"]
    assert "<" not in md.replace(r"\<", "")
