"""Checkpoints while watching in a real browser (Debian's chromium driven by Playwright): the
instructor turns them on from the manage page; a student's player pauses when playback crosses a
chapter's end, the panel takes the focus, an answer shows right or wrong with the explaining chip,
Continue plays on, Escape (skip) plays on, "Don't show again for this lecture" sticks after a reload,
the Checkpoints switch turns them off and on; the instructor's insights count the answers. axe-core
(the npm package, node_modules/axe-core) finds no serious or critical violation on the panel or the
page. Desktop and phone width; ``LC_SCREENSHOTS=<dir>`` keeps the pictures."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from .test_web_browser import DESKTOP, PHONE, _browser_sign_in, browser, shots_dir  # noqa: F401 (browser: a fixture)
from .test_web_practice import UNNAMED, _vtt

pytestmark = pytest.mark.slow

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
# axe's default rule set (experimental rules aside); what counts: serious or critical
AXE_RUN = """async (sel) => {
  const r = await axe.run(sel);
  return r.violations.filter((v) => ["serious", "critical"].includes(v.impact))
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}"""


@pytest.fixture(scope="module")
def cp_course(stack, synth_video):
    """A course (the admin's) with one video lecture whose transcript is the sorting captions, its set generated."""
    res, _ = synth_video
    course = stack.create_course("Sorting (checkpoints)")
    lecture = stack.upload_ready(course, res.path, title="Sorting", number=1, captions_vtt=_vtt(res.duration_s))
    r = requests.post(f"{stack.base}/api/lectures/{lecture}/quiz/generate", headers=stack.admin, timeout=180)
    assert r.status_code == 201, r.text
    return {"id": course, "lecture": lecture, "key": {q["id"]: q for q in r.json()["questions"]}}


def _context(browser, viewport):
    assert AXE.is_file(), "npm ci installs axe-core (package.json devDependencies)"
    ctx = browser.new_context(viewport=viewport, device_scale_factor=1)
    ctx.add_init_script(path=str(AXE))  # by the browser's debugging protocol: the page's CSP is untouched
    page = ctx.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "Content Security Policy" in m.text else None)
    return ctx, page, errors


def _open(stack, page, cp_course) -> None:
    page.goto(f"{stack.base}/courses/{cp_course['id']}?lecture={cp_course['lecture']}")
    page.wait_for_selector("#player[data-checkpoints]", state="attached", timeout=20_000)
    page.wait_for_function("() => document.querySelector('#player').readyState >= 1", timeout=20_000)


def _cross(page, at_s: float) -> None:
    """Plays from 1.2 s before ``at_s`` (a checkpoint's chapter end), so playback crosses it."""
    page.evaluate("(t) => { const p = document.querySelector('#player'); p.currentTime = t; p.play(); }", max(0, at_s - 1.2))


def _paused_at_panel(page, qid: str) -> None:
    page.wait_for_selector("#checkpoint:not([hidden])", timeout=15_000)
    assert page.get_attribute("#checkpoint", "data-question") == qid
    assert page.evaluate("document.querySelector('#player').paused")
    assert page.evaluate("!!document.activeElement.closest('#checkpoint')")  # focus moved into the panel


def _plays_on(page) -> None:
    page.wait_for_selector("#checkpoint", state="hidden", timeout=5_000)
    page.wait_for_function("() => !document.querySelector('#player').paused", timeout=5_000)


def _no_panel_while_crossing(page, at_s: float) -> None:
    _cross(page, at_s)
    page.wait_for_function(f"() => document.querySelector('#player').currentTime > {at_s + 0.5}", timeout=10_000)
    assert page.is_hidden("#checkpoint") and not page.evaluate("document.querySelector('#player').paused")


def _axe(page, where: str) -> None:
    assert page.evaluate(AXE_RUN, "#checkpoint") == [], where
    assert page.evaluate(AXE_RUN, "#course") == [], where


def test_instructor_turns_checkpoints_on_from_the_manage_page(stack, smtp_sink, cp_course, browser):
    ctx, page, errors = _context(browser, DESKTOP)
    _browser_sign_in(stack, smtp_sink, page, "admin@example.edu")
    page.goto(f"{stack.base}/manage/{cp_course['id']}")
    page.wait_for_selector("#mc-checkpoints")
    assert not page.is_checked("#mc-checkpoints")
    page.check("#mc-checkpoints")
    with page.expect_response(lambda r: r.request.method == "PATCH" and r.status == 200, timeout=10_000):
        page.click("#rename-course button[type=submit]")
    ctx.close()
    assert not errors, errors
    assert requests.get(f"{stack.base}/api/courses/{cp_course['id']}", timeout=10).json()["checkpoints"] is True


def test_player_pauses_at_a_chapter_end_and_offers_its_question(stack, cp_course, browser, tmp_path):
    out = shots_dir(tmp_path)
    r = requests.patch(f"{stack.base}/api/courses/{cp_course['id']}", json={"checkpoints": True}, headers=stack.admin,
                       timeout=10)
    assert r.status_code == 200
    cps = requests.get(f"{stack.base}/api/lectures/{cp_course['lecture']}/checkpoints", timeout=10).json()["checkpoints"]
    assert cps, "the lecture has a chapter with a question"
    first = cps[0]
    qid, at_s = first["question"]["id"], first["at_s"]
    right = cp_course["key"][qid]["answer_index"]
    for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        ctx, page, errors = _context(browser, viewport)
        _open(stack, page, cp_course)
        assert page.is_visible("#cp-switch") and page.is_checked("#cp-on")
        _cross(page, at_s)
        _paused_at_panel(page, qid)
        assert page.inner_text("#cp-q") == first["question"]["question"]
        assert len(page.query_selector_all("#cp-options button")) == 4
        _axe(page, f"{name}: question")
        # a wrong answer, by keyboard: the focused option button, Enter
        wrong = (right + 1) % 4
        page.focus(f"#cp-options button[data-choice='{wrong}']")
        page.keyboard.press("Enter")
        page.wait_for_selector("#cp-result.wrong", timeout=10_000)
        assert "Not quite." in page.inner_text("#cp-result")
        assert page.get_attribute(f"#cp-options button[data-choice='{right}']", "class").endswith("is-answer")
        chip = page.query_selector("#cp-result .chip")
        assert chip.inner_text().startswith("L1 · ") and chip.get_attribute("data-lecture") == cp_course["lecture"]
        assert page.evaluate("document.activeElement.id") == "cp-continue"
        _axe(page, f"{name}: answered")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), name
        assert page.evaluate(UNNAMED) == []
        page.evaluate("document.querySelector(%r).scrollIntoView()" % ("#checkpoint" if name == "phone" else ".player"))
        page.screenshot(path=str(out / f"checkpoint-{name}.png"))
        # the chip plays the explaining moment; Continue plays on from the chapter's end
        t = float(chip.get_attribute("data-t"))
        chip.click()
        page.wait_for_function(f"() => Math.abs(document.querySelector('#player').currentTime - {t}) < 1.5", timeout=15_000)
        page.click("#cp-continue")
        _plays_on(page)
        assert page.evaluate("document.querySelector('#player').currentTime") >= min(at_s, t) - 1.5
        ctx.close()
        assert not errors, errors
    with stack.db() as conn:
        rows = conn.execute("SELECT checkpoint, correct FROM quiz_attempts WHERE question_id=%s", (qid,)).fetchall()
    assert [tuple(r) for r in rows] == [(True, False), (True, False)]


def test_skip_dont_show_again_and_the_switch(stack, cp_course, browser):
    requests.patch(f"{stack.base}/api/courses/{cp_course['id']}", json={"checkpoints": True}, headers=stack.admin,
                   timeout=10)
    cps = requests.get(f"{stack.base}/api/lectures/{cp_course['lecture']}/checkpoints", timeout=10).json()["checkpoints"]
    qid, at_s = cps[0]["question"]["id"], cps[0]["at_s"]
    ctx, page, errors = _context(browser, DESKTOP)
    _open(stack, page, cp_course)
    # Escape skips: the panel closes and playback goes on, nothing recorded
    _cross(page, at_s)
    _paused_at_panel(page, qid)
    page.keyboard.press("Escape")
    _plays_on(page)
    # "don't show again for this lecture" sticks after a reload
    _open(stack, page, cp_course)
    _cross(page, at_s)
    _paused_at_panel(page, qid)
    page.click("#cp-hide")
    _plays_on(page)
    _open(stack, page, cp_course)
    _no_panel_while_crossing(page, at_s)
    # the switch: on again brings this lecture's back; off stops them (after a reload too)
    page.uncheck("#cp-on")
    page.check("#cp-on")
    _open(stack, page, cp_course)
    _cross(page, at_s)
    _paused_at_panel(page, qid)
    page.click("#cp-off")
    _plays_on(page)
    assert not page.is_checked("#cp-on")
    _open(stack, page, cp_course)
    assert not page.is_checked("#cp-on")
    _no_panel_while_crossing(page, at_s)
    ctx.close()
    assert not errors, errors
    with stack.db() as conn:
        n = conn.execute("SELECT count(*) FROM quiz_attempts WHERE question_id=%s", (qid,)).fetchone()[0]
    assert n == 2  # the two answers of the test before (skips record nothing)


def test_insights_show_each_checkpoint_answered_and_wrong(stack, smtp_sink, cp_course, browser, tmp_path):
    out = shots_dir(tmp_path)
    cps = requests.get(f"{stack.base}/api/lectures/{cp_course['lecture']}/checkpoints", timeout=10).json()["checkpoints"]
    qid = cps[0]["question"]["id"]
    ctx, page, errors = _context(browser, DESKTOP)
    _browser_sign_in(stack, smtp_sink, page, "admin@example.edu")
    page.goto(f"{stack.base}/manage/{cp_course['id']}/insights")
    page.wait_for_selector("#ins-cp-table:not([hidden])", timeout=30_000)
    row = page.query_selector(f"#ins-cp tr[data-question='{qid}']")
    cells = [c.inner_text() for c in row.query_selector_all("td")]
    # the desktop's and the phone's wrong answers came from one visitor (one network, no account): one person
    assert cells[2] == "1" and cells[3].startswith("1 (100%)"), cells
    assert cells[0].startswith("L1 · ") and cells[1] == cps[0]["question"]["question"]
    assert page.evaluate(AXE_RUN, "#insights") == []
    page.query_selector("#ins-cp-table").scroll_into_view_if_needed()
    page.screenshot(path=str(out / "checkpoint-insights-desktop.png"))
    ctx.close()
    assert not errors, errors
