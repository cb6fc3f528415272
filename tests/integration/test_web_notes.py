"""Notes pinned to moments in a real browser (Debian's chromium driven by Playwright, issue 33 item 3):
a signed-in student adds notes at the player's current moment, sees them beside the transcript in
time order, chooses one to play its moment, edits and deletes one, and opens a link of the Markdown
export, which opens the page at that moment; a visitor is asked to sign in. Desktop and phone width;
``LC_SCREENSHOTS=<dir>`` keeps the pictures (``notes-desktop.png``, ``notes-phone.png``)."""

from __future__ import annotations

import re

import pytest

from .test_web_browser import DESKTOP, PHONE, _browser_sign_in, _heap_vtt, browser, shots_dir  # noqa: F401 (browser: a fixture)
from .test_web_practice import UNNAMED

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def course(stack, synth_video):
    """A course with one video lecture whose transcript is the heap captions."""
    res, _ = synth_video
    course_id = stack.create_course("Data structures (notes)")
    lecture = stack.upload_ready(course_id, res.path, title="Heaps", number=1, captions_vtt=_heap_vtt(res.duration_s))
    return {"id": course_id, "lecture": lecture, "duration": res.duration_s}


def _at(page, t: float) -> None:
    """Pauses the player at ``t`` seconds and waits until the add button names that moment."""
    page.evaluate(f"() => {{ const p = document.querySelector('#player'); p.pause(); p.currentTime = {t}; }}")
    page.wait_for_function(f"() => Math.abs(document.querySelector('#player').currentTime - {t}) < 0.5", timeout=10_000)
    page.wait_for_function(f"() => document.querySelector('#note-add').textContent === 'Add note at 0:{int(t):02d}'",
                           timeout=10_000)


def _add(page, text: str, n_after: int) -> None:
    page.fill("#note-text", text)
    page.click("#note-add")
    page.wait_for_function(f"() => document.querySelectorAll('#notes-list li').length === {n_after}", timeout=10_000)


def _notes(page) -> list[str]:
    """Each listed note as "<time> <text>" (its text's line breaks as they show)."""
    return page.evaluate("""[...document.querySelectorAll('#notes-list li .note-seek')]
        .map(b => `${b.querySelector('.t').innerText} ${b.querySelector('.note-text').innerText}`)""")


def _open_course(page, stack, course) -> None:
    page.goto(f"{stack.base}/courses/{course['id']}?lecture={course['lecture']}")
    page.wait_for_selector("#transcript li")
    page.wait_for_function("() => document.querySelector('#player').readyState >= 1", timeout=20_000)


def test_a_student_keeps_notes_at_moments_in_the_browser(stack, smtp_sink, course, browser, tmp_path):
    ctx = browser.new_context(viewport=DESKTOP, device_scale_factor=1)
    page = ctx.new_page()
    blocked: list[str] = []
    page.on("console", lambda m: blocked.append(m.text) if m.type == "error" and "Content Security Policy" in m.text else None)
    # a visitor is asked to sign in; no form
    _open_course(page, stack, course)
    assert page.is_visible("#notes-signin") and not page.is_visible("#note-form")
    _browser_sign_in(stack, smtp_sink, page, "notes-browser@example.edu")
    _open_course(page, stack, course)
    assert page.is_visible("#note-form") and page.inner_text("#note-status") == "No notes on this lecture yet."
    # two notes at two moments, added out of order: listed in time order beside the transcript
    _at(page, 9)
    _add(page, "The largest key sits at the root.", 1)
    _at(page, 3)
    _add(page, "Priority queues:\nbuilt on binary heaps", 2)
    assert _notes(page) == ["0:03 Priority queues:\nbuilt on binary heaps", "0:09 The largest key sits at the root."]
    assert page.inner_text("#note-status") == "Note added at 0:03."
    # choosing a note plays its moment and marks the transcript line
    page.click("#notes-list li:nth-child(2) .note-seek")
    page.wait_for_function("() => Math.abs(document.querySelector('#player').currentTime - 9) < 1.0", timeout=10_000)
    page.wait_for_selector("#transcript li.cited", timeout=10_000)
    page.evaluate("document.querySelector('#player').pause()")
    # edit the first note
    page.click("#notes-list li:nth-child(1) .note-actions button:text-is('Edit')")
    page.fill("#notes-list li:nth-child(1) textarea", "Priority queues are built on heaps.")
    page.click("#notes-list li:nth-child(1) button:has-text('Save')")
    page.wait_for_function("() => document.querySelector('#note-status').textContent === 'Note saved.'", timeout=10_000)
    assert _notes(page)[0] == "0:03 Priority queues are built on heaps."
    # typing freezes the note's moment where the player was: the video plays on, the note stays at 0:06
    _at(page, 6)
    page.fill("#note-text", "To be deleted")
    page.evaluate("document.querySelector('#player').play()")
    page.wait_for_function("() => document.querySelector('#player').currentTime >= 8", timeout=10_000)
    page.evaluate("document.querySelector('#player').pause()")
    assert page.inner_text("#note-add") == "Add note at 0:06"
    page.click("#note-add")
    page.wait_for_function("() => document.querySelectorAll('#notes-list li').length === 3", timeout=10_000)
    assert _notes(page)[1] == "0:06 To be deleted"
    out = shots_dir(tmp_path)
    page.query_selector(".notes").scroll_into_view_if_needed()
    assert page.evaluate(UNNAMED) == []
    page.screenshot(path=str(out / "notes-desktop.png"), full_page=True)
    page.set_viewport_size(PHONE)
    page.wait_for_timeout(300)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    page.query_selector(".notes").scroll_into_view_if_needed()
    page.screenshot(path=str(out / "notes-phone.png"), full_page=True)
    page.set_viewport_size(DESKTOP)
    # delete, confirmed in the dialog
    page.click("#notes-list li:nth-child(2) .note-actions button.danger")
    page.wait_for_selector("dialog#confirm[open]")
    page.click("#confirm-ok")
    page.wait_for_function("() => document.querySelectorAll('#notes-list li').length === 2", timeout=10_000)
    assert "To be deleted" not in page.inner_text("#notes-list")
    # the course's Markdown export: each moment a link that opens the page there
    md = page.evaluate("async () => (await fetch(document.querySelector('#notes-md-course').href)).text()")
    links = re.findall(r"\]\((\S+)\) (.*)", md)
    assert [text for _, text in links] == ["Priority queues are built on heaps.", "The largest key sits at the root."]
    page.goto(links[1][0])
    page.wait_for_function("() => Math.abs(document.querySelector('#player').currentTime - 9) < 1.0", timeout=20_000)
    page.wait_for_selector("#transcript li.cited", timeout=10_000)
    assert len(_notes(page)) == 2
    ctx.close()
    assert not blocked, blocked
    assert all((out / f"notes-{n}.png").stat().st_size > 10_000 for n in ("desktop", "phone"))
