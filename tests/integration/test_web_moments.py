""""Ask about this moment" in a real browser (Debian's chromium driven by Playwright): pausing the video
shows an "about M:SS" tag in the ask box, a question asked with it sends the player's position as ``at``,
× removes it, and the "Ask about this moment" shortcut (Alt+M) asks about the current second (on a lecture
with captions only, no video, it says why there is no moment instead). At desktop and phone widths; ``LC_SCREENSHOTS=<dir>`` (``make screenshots``) keeps the pictures there."""

from __future__ import annotations

import pytest
import requests

from .test_web_browser import DESKTOP, PHONE, browser, shots_dir  # noqa: F401 (browser: a fixture)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def course(stack, synth_video):
    res, _ = synth_video
    course_id, lecture_id = stack.course_with_video("Algorithms (moments in the browser)", res.path, 1)
    return {"id": course_id, "lecture": lecture_id, "video": res}


def _open(browser, stack, course, viewport):
    ctx = browser.new_context(viewport=viewport)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{stack.base}/courses/{course['id']}")
    page.wait_for_function("() => document.querySelector('#player').readyState >= 1", timeout=20_000)
    return ctx, page, errors


def _asked(page, action) -> dict:
    """The JSON body of the ask request ``action()`` sends, once its answer is shown."""
    n = page.evaluate("document.querySelectorAll('.answer[data-answer-id]').length")
    with page.expect_request(lambda r: r.url.endswith("/ask") and r.method == "POST") as req:
        action()
    page.wait_for_function(f"() => document.querySelectorAll('.answer[data-answer-id]').length > {n}", timeout=30_000)
    return req.value.post_data_json


def _pause_at(page, t: float) -> None:
    page.evaluate(f"""() => {{ const p = document.querySelector('#player'); p.pause(); p.currentTime = {t}; }}""")
    page.wait_for_function("() => !document.querySelector('#moment-tag').hidden", timeout=10_000)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_paused_moment_is_a_removable_tag_sent_with_the_question(stack, course, browser, viewport, tmp_path):
    ctx, page, errors = _open(browser, stack, course, viewport)
    assert page.is_hidden("#moment-tag")  # nothing paused on purpose yet: no tag
    t = round(course["video"].part_starts_s[1] + 4.0, 1)
    _pause_at(page, t)
    m, s = divmod(int(t), 60)
    assert page.inner_text("#moment-tag-text") == f"about {m}:{s:02d}"
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")  # fits a phone
    shots = shots_dir(tmp_path)
    page.fill("#question", "what does this mean?")
    page.screenshot(path=str(shots / f"ask-moment-{'phone' if viewport == PHONE else 'desktop'}.png"), full_page=False)
    body = _asked(page, lambda: page.keyboard.press("Enter") if page.focus("#question") is None else None)
    assert body["question"] == "what does this mean?"
    assert body["at"]["lecture_id"] == course["lecture"] and abs(body["at"]["t_s"] - t) < 0.25
    assert not body["at"].get("focus")
    box = page.query_selector(".answer")
    chips = box.query_selector_all(".chip")
    assert chips and "declined" not in (box.get_attribute("class") or ""), box.inner_text()
    assert page.is_visible("#moment-tag")  # still paused: the tag stays for the next question
    # × removes it: the next question goes without the moment
    page.click("#moment-remove")
    assert page.is_hidden("#moment-tag")
    page.fill("#question", "What is counting sort?")
    body = _asked(page, lambda: page.keyboard.press("Enter") if page.focus("#question") is None else None)
    assert body["at"] is None
    # playing hides it; pausing again brings it back
    page.evaluate("() => document.querySelector('#player').play()")
    page.wait_for_function("() => document.querySelector('#moment-tag').hidden", timeout=10_000)
    ctx.close()
    assert not errors, errors


def test_the_shortcut_asks_about_the_current_moment(stack, course, browser):
    ctx, page, errors = _open(browser, stack, course, DESKTOP)
    t = round(course["video"].part_starts_s[1] + 2.0, 1)
    _pause_at(page, t)
    page.focus("#question")
    body = _asked(page, lambda: page.keyboard.press("Alt+m"))
    assert body["question"] == "Explain this moment."
    assert body["at"] == {"lecture_id": course["lecture"], "t_s": body["at"]["t_s"], "focus": True}
    assert abs(body["at"]["t_s"] - t) < 0.25
    # the button does the same with the question typed
    page.fill("#question", "How are the halves combined?")
    body = _asked(page, lambda: page.click("#ask-moment"))
    assert body["question"] == "How are the halves combined?" and body["at"]["focus"] is True
    ctx.close()
    assert not errors, errors


def test_a_lecture_without_video_says_why_there_is_no_moment(stack, course, browser):
    """A lecture uploaded as captions only has no video: "Ask about this moment" asks nothing and says why."""
    vtt = ("WEBVTT\n\n00:00:01.000 --> 00:00:05.000\nMerge sort splits the array into two halves.\n\n"
           "00:00:06.000 --> 00:00:10.000\nThen it merges the two sorted halves.\n")
    r = requests.post(f"{stack.base}/api/courses/{course['id']}/lectures", headers=stack.admin,
                      files={"captions": ("c.vtt", vtt.encode(), "text/vtt")}, data={"title": "Captions only", "number": "2"},
                      timeout=60)
    assert r.status_code == 202, r.text
    lecture = r.json()["lecture_id"]
    assert stack.wait_ready(lecture, timeout_s=300)["status"] == "ready"
    ctx = browser.new_context(viewport=DESKTOP)
    page = ctx.new_page()
    page.goto(f"{stack.base}/courses/{course['id']}?lecture={lecture}")
    page.wait_for_function("() => document.querySelector('#now-playing').textContent.includes('no video')", timeout=20_000)
    asked: list[str] = []
    page.on("request", lambda req: asked.append(req.url) if req.url.endswith("/ask") else None)
    assert page.inner_text("#moment-note") == ""
    page.click("#ask-moment")
    page.wait_for_function("() => document.querySelector('#moment-note').textContent.includes('no video')", timeout=5_000)
    assert "captions only" in page.inner_text("#moment-note") and page.is_hidden("#moment-tag") and asked == []
    ctx.close()
