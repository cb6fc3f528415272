"""The web product in a real browser (Debian's chromium driven by Playwright): asking with a
streamed answer, chips that seek across lectures, the transcript following playback,
feedback, conversations, sign-in by mailed link, the instructor's upload with live stages,
what a student can't do, phone width. ``LC_SCREENSHOTS=<dir>`` (``make screenshots``) also keeps
the pictures there."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import requests

from web_helpers import link_token, set_role

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--autoplay-policy=no-user-gesture-required", "--mute-audio"]
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1366, "height": 860}


def _heap_vtt(duration_s: float) -> str:
    a, b = 0.35 * duration_s, 0.6 * duration_s

    def ts(t: float) -> str:
        return f"00:{int(t // 60):02d}:{t % 60:06.3f}"

    return (f"WEBVTT\n\n{ts(1)} --> {ts(a - 1)}\nToday we look at priority queues and binary heaps.\n\n"
            f"{ts(a)} --> {ts(a + 4)}\nIn a max heap the largest key always sits at the root of the tree.\n\n"
            f"{ts(b)} --> {ts(b + 4)}\nInserting a key bubbles it up until the heap property holds again.\n")


@pytest.fixture(scope="module")
def course(stack, synth_video):
    """A course with two video lectures: L1 on sorting (speech recognised), L2 on heaps (the same
    video with heap captions, so its transcript and citations are about heaps)."""
    res, _ = synth_video
    course_id, l1 = stack.course_with_video("Algorithms (web)", res.path, 1)
    l2 = stack.upload_ready(course_id, res.path, title="Heaps", number=2, captions_vtt=_heap_vtt(res.duration_s))
    return {"id": course_id, "l1": l1, "l2": l2, "video": res}


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport=DESKTOP)
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" and "Content Security Policy" in m.text else None)
    yield pg
    ctx.close()
    assert not errors, errors  # nothing blocked by the CSP


def shots_dir(tmp_path: Path) -> Path:
    d = Path(os.environ.get("LC_SCREENSHOTS") or tmp_path)
    d.mkdir(parents=True, exist_ok=True)
    return d


def ask(page, question: str):
    """Types the question, presses Enter, waits for the finished answer; returns its element."""
    n = page.evaluate("document.querySelectorAll('.answer[data-answer-id]').length")
    page.fill("#question", question)
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => document.querySelectorAll('.answer[data-answer-id]').length > {n}", timeout=30_000)
    box = page.query_selector(".answer")
    assert box.get_attribute("data-answer-id")
    return box


def current_time(page) -> float:
    return page.evaluate("document.querySelector('#player').currentTime")


def test_chip_seeks_across_lectures_and_highlights_the_line(stack, course, page):
    page.goto(f"{stack.base}/courses/{course['id']}")
    page.wait_for_selector("#lecture-list button[data-lecture]")
    # the lecture list shows numbers, titles, durations and status, plus "Whole course"
    items = page.inner_text("#lecture-list")
    assert "Whole course" in items and "L1" in items and "L2" in items and "Heaps" in items and "ready" in items
    page.wait_for_function("() => document.querySelector('#player').readyState >= 1", timeout=20_000)
    assert "L1" in page.inner_text("#now-playing")
    # the scope menu and the lecture list's outline agree, whichever is used
    scoped = "[...document.querySelectorAll('#lecture-list button.scoped')].map(b => b.dataset.scope)"
    page.select_option("#scope", course["l2"])
    assert page.evaluate(scoped) == [course["l2"]]
    page.select_option("#scope", "")
    assert page.evaluate(scoped) == [""]
    # keyboard only: the second Tab stop skips to the question box (past the lecture list and the transcript)
    page.focus("a.skip[href='#main-content']")  # the page's first stop
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "skip-ask"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "question"
    # type, Enter; the answer streams in with chips named for screen readers
    box = ask(page, "What sits at the root of a max heap?")
    assert not box.get_attribute("class").count("declined")
    chips = box.query_selector_all(".chip")
    # the chip of the sentence that says where the largest key sits
    idx = page.evaluate("""(box) => { let said = null; const chips = [...box.querySelectorAll('.chip')];
        for (const k of box.querySelector('.body').children) {
          if (k.classList.contains('sentence')) said = k.textContent;
          else if (k.classList.contains('chip') && said && said.includes('root')) return chips.indexOf(k); }
        return -1; }""", box)
    assert idx >= 0, box.inner_text()
    chip = chips[idx]
    label, t = chip.inner_text(), float(chip.get_attribute("data-t"))
    assert label.startswith("L2 · ") and chip.get_attribute("data-lecture") == course["l2"]
    assert chip.get_attribute("aria-label") == f"{label}: play lecture 2 at {label.split(' · ')[1]}"  # label in name
    chip.focus()
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#now-playing').textContent.startsWith('L2')", timeout=10_000)
    page.wait_for_function(f"() => Math.abs(document.querySelector('#player').currentTime - {t}) < 1.0", timeout=15_000)
    assert abs(current_time(page) - t) < 1.0
    assert page.get_attribute("#lecture-list button[data-lecture='%s']" % course["l2"], "aria-current") == "true"
    # the cited line of L2's transcript is highlighted
    page.wait_for_selector("#transcript li.cited", timeout=10_000)
    cited = page.query_selector("#transcript li.cited")
    assert "root" in cited.inner_text() and abs(float(cited.get_attribute("data-start")) - t) <= 1.0
    # and back: a chip into L1 (sorting) switches the player again
    box = ask(page, "How does merge sort combine the two sorted halves?")
    chip = box.query_selector(".chip")
    t1 = float(chip.get_attribute("data-t"))
    assert chip.inner_text().startswith("L1 · ")
    chip.click()
    page.wait_for_function("() => document.querySelector('#now-playing').textContent.startsWith('L1')", timeout=10_000)
    page.wait_for_function(f"() => Math.abs(document.querySelector('#player').currentTime - {t1}) < 1.0", timeout=15_000)


PLAYER_ON_SCREEN = """() => { const r = document.querySelector('#player').getBoundingClientRect();
    return r.height > 0 && r.top >= -1 && r.bottom <= window.innerHeight + 1; }"""


@pytest.mark.parametrize("viewport", [{"width": 1400, "height": 900}, PHONE], ids=["desktop", "phone"])
def test_chip_of_an_earlier_answer_brings_the_player_into_view(stack, course, browser, viewport):
    """Issue #12.12: a chip far down the page (the first of several answers) scrolls the player into
    view at every width, not only below 1100 px; with reduced motion asked for, at once."""
    for motion in ("no-preference", "reduce"):
        ctx = browser.new_context(viewport=viewport, reduced_motion=motion)
        page = ctx.new_page()
        page.goto(f"{stack.base}/courses/{course['id']}")
        page.wait_for_selector("#transcript li")
        for q in ("What sits at the root of a max heap?", "How does merge sort combine the two sorted halves?",
                  "What does inserting a key into a heap do?", "What is counting sort?"):
            ask(page, q)
        first = page.query_selector_all(".answer[data-answer-id]")[-1]  # the earliest answer, lowest on the page
        chip = first.query_selector(".chip")
        chip.evaluate("(c) => c.scrollIntoView({block: 'start', behavior: 'instant'})")  # read down to it: the player above, off screen
        assert not page.evaluate(PLAYER_ON_SCREEN), "the player is still on screen: nothing to test"
        assert page.evaluate("(c) => { const r = c.getBoundingClientRect(); return r.top >= -1 && r.bottom <= innerHeight; }",
                             chip), "the chip is not on screen"
        t = float(chip.get_attribute("data-t"))
        chip.click()
        if motion == "reduce":  # no smooth scrolling: the player is there as soon as the click is handled
            assert page.evaluate(PLAYER_ON_SCREEN), (viewport, motion)
        else:
            page.wait_for_function(PLAYER_ON_SCREEN, timeout=5_000)
        page.wait_for_function(f"() => Math.abs(document.querySelector('#player').currentTime - {t}) < 1.0",
                               timeout=15_000)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
        ctx.close()


def test_pages_load_without_a_failed_request(stack, course, browser):
    """Issue #12.15: no 404 (the favicon was one) or console error when the course list and a course load."""
    ctx = browser.new_context(viewport=DESKTOP)
    page = ctx.new_page()
    failed, errors, icons = [], [], []
    page.on("response", lambda r: failed.append((r.status, r.url)) if r.status >= 400 else None)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("requestfinished", lambda r: icons.append(r.url) if "favicon" in r.url else None)
    for path in ("/", f"/courses/{course['id']}"):
        page.goto(stack.base + path)
        page.wait_for_load_state("networkidle")
    page.wait_for_function("() => document.querySelector('#player').readyState >= 1", timeout=20_000)
    ctx.close()
    assert icons, "the browser fetched no icon"
    assert failed == [] and errors == [], (failed, errors)


def test_an_unknown_address_says_page_not_found(stack, page):
    """An address with no page is a 404 that shows "Page not found" with a link home (not the course list,
    not raw JSON): an unknown path, a malformed course address, a course that does not exist."""
    for path in ("/nonexistent", "/courses/xyz/bogus", "/courses/00000000-0000-0000-0000-000000000000"):
        r = page.goto(stack.base + path)
        assert r.status == 404 and r.headers["content-type"].startswith("text/html"), (path, r.status)
        page.wait_for_selector("#not-found:not([hidden])", timeout=10_000)
        assert page.is_hidden("#home") and page.is_hidden("#course"), path
        assert page.get_attribute("#not-found a", "href") == "/" and "Page not found" in page.inner_text("#not-found")


def test_transcript_follows_playback(stack, course, page):
    page.goto(f"{stack.base}/courses/{course['id']}?lecture={course['l2']}")
    page.wait_for_selector("#transcript li")
    page.wait_for_function("() => document.querySelector('#player').readyState >= 1", timeout=20_000)
    # the lecture's captions are the video's subtitles, shown by default, loaded and parsed by the browser
    track = page.wait_for_function("""() => { const t = document.querySelector('#player track');
        return t && t.readyState === 2 && t.track.cues.length > 0 &&
          [t.kind, t.srclang, t.default, t.track.mode, t.getAttribute('src'),
           [...t.track.cues].map((c) => c.text).join('\\n')]; }""",
        timeout=15_000).json_value()
    assert track[:5] == ["subtitles", "en", True, "showing", f"/api/lectures/{course['l2']}/captions.vtt?slides=0"]
    assert "priority queues" in track[5] and "[Slide] " not in track[5]  # the slide is on screen, not over it
    # the slides' text sits among the spoken lines, marked as slides, at the second each slide appears
    slides = page.query_selector_all("#transcript li.slide")
    assert slides and all(li.query_selector(".tag").inner_text().lower() == "slide" for li in slides)
    assert any("sort" in li.inner_text().lower() for li in slides)
    lines = page.query_selector_all("#transcript li:not(.slide)")
    assert len(lines) == 3
    starts = [float(li.get_attribute("data-start")) for li in lines]
    for i in (1, 2, 0):
        page.evaluate(f"document.querySelector('#player').currentTime = {starts[i] + 0.5}")
        page.wait_for_function(
            f"() => document.querySelector('#transcript li.current')?.dataset.start === '{lines[i].get_attribute('data-start')}'",
            timeout=10_000)
    # while playing, the highlight moves on by itself
    page.evaluate(f"document.querySelector('#player').currentTime = {starts[1] - 1.0}")
    page.evaluate("document.querySelector('#player').play()")
    page.wait_for_function(
        f"() => document.querySelector('#transcript li.current')?.dataset.start === '{lines[1].get_attribute('data-start')}'",
        timeout=15_000)
    page.evaluate("document.querySelector('#player').pause()")
    # chapters exist with titles and seek when chosen
    page.wait_for_selector("#chapters li button")
    assert page.inner_text("#chapters li strong")
    page.click("#chapters li button")
    page.wait_for_function("() => document.querySelector('#player').currentTime < 1.5", timeout=10_000)


def test_thumbs_down_with_comment_is_stored_and_conversations(stack, course, page):
    page.goto(f"{stack.base}/courses/{course['id']}")
    page.wait_for_selector("#lecture-list button[data-lecture]")
    first = ask(page, "What is counting sort?")
    a1 = first.get_attribute("data-answer-id")
    first.query_selector("button[aria-label='Unhelpful answer']").click()
    first.query_selector("textarea").fill("It should mention the key range.")
    first.query_selector(".fb-form button[type=submit]").click()
    page.wait_for_selector(f".answer[data-answer-id='{a1}'][data-feedback='down']", timeout=10_000)
    with stack.db() as c:
        rows = c.execute("SELECT rating, comment FROM feedback WHERE answer_id=%s", (a1,)).fetchall()
    assert rows == [("down", "It should mention the key range.")]
    # a follow-up continues the conversation; "New conversation" starts another
    a2 = ask(page, "and how fast is it?").get_attribute("data-answer-id")
    page.click("#new-conversation")
    assert page.query_selector(".answer") is None
    a3 = ask(page, "What is merge sort?").get_attribute("data-answer-id")
    with stack.db() as c:
        conv = dict(c.execute("SELECT id::text, conversation_id::text FROM answers WHERE id = ANY(%s::uuid[])",
                              ([a1, a2, a3],)).fetchall())
    assert conv[a1] == conv[a2] != conv[a3]
    # thumbs up is one click
    page.query_selector(".answer button[aria-label='Helpful answer']").click()
    page.wait_for_selector(f".answer[data-answer-id='{a3}'][data-feedback='up']", timeout=10_000)


def test_declined_answer_looks_intentional(stack, course, page):
    page.goto(f"{stack.base}/courses/{course['id']}")
    page.wait_for_selector("#lecture-list button[data-lecture]")
    box = ask(page, "What is the capital of France?")
    assert "declined" in box.get_attribute("class")
    assert box.query_selector(".declined-tag").inner_text() == "Not covered in these lectures"
    assert box.query_selector(".chip") is None


def _browser_sign_in(stack, smtp_sink, page, email: str) -> None:
    page.goto(f"{stack.base}/signin")
    since = len(smtp_sink.messages)
    page.fill("#signin-email", email)
    page.click("#signin-form button")
    page.wait_for_function("() => document.querySelector('#signin-status').textContent.includes('sent')", timeout=10_000)
    token = link_token(smtp_sink.wait_for(email, since=since))
    page.goto(f"{stack.base}/auth/verify?token={token}")
    page.click("#verify-button")
    page.wait_for_function("() => !document.querySelector('#nav-user').hidden", timeout=10_000)


def _instructor_creates_course(stack, smtp_sink, page, email: str, title: str) -> None:
    """Signs ``email`` in as an instructor and creates the course ``title`` on /manage; the page is
    then on the new course's manage page."""
    set_role(stack, email, "instructor")
    _browser_sign_in(stack, smtp_sink, page, email)
    page.wait_for_url(f"{stack.base}/manage", timeout=10_000)
    page.fill("#create-title", title)
    page.click("#create-form button")
    page.wait_for_url(f"{stack.base}/manage/*", timeout=10_000)


def test_a_browser_upload_resumes_after_a_dropped_chunk_and_a_taken_number_is_refused_before_any_byte(
        stack, smtp_sink, synth_video, page):
    """The page uploads a video resumably: when a chunk's connection drops, it asks the server
    where to resume and sends the rest; a number the course already has is refused at the upload's
    start, so not a byte of the video is sent and the page says why."""
    res, _ = synth_video
    _instructor_creates_course(stack, smtp_sink, page, "browser-resume@example.edu", "Resumed in the browser")
    page.wait_for_selector("#manage-course:not([hidden])")
    puts: list[str] = []

    def chunk(route):
        puts.append(route.request.headers.get("content-range", ""))
        if len(puts) == 1:
            route.abort("connectionreset")  # the first chunk never arrives
        else:
            route.continue_()

    page.route("**/api/uploads/*", lambda route: chunk(route) if route.request.method == "PUT" else route.continue_())
    page.set_input_files("#up-file", str(res.path))
    page.fill("#up-number", "4")
    page.click("#up-button")
    page.wait_for_function("() => document.querySelector('#upload-progress').dataset.lectureId", timeout=60_000)
    size = res.path.stat().st_size
    assert puts == [f"bytes 0-{size - 1}/{size}"] * 2, puts  # the same chunk again, from the server's offset 0
    lecture = page.evaluate("() => document.querySelector('#upload-progress').dataset.lectureId")
    got = requests.get(f"{stack.base}/api/lectures/{lecture}", headers=stack.admin, timeout=10).json()
    assert got["number"] == 4, got
    puts.clear()
    page.set_input_files("#up-file", str(res.path))
    page.fill("#up-number", "4")
    page.click("#up-button")
    page.wait_for_function("() => /already has a lecture 4|lecture 4/.test(document.querySelector('#up-status').textContent)",
                           timeout=60_000)
    assert puts == [], puts
    assert not page.is_disabled("#up-button")


def test_instructor_uploads_with_progress_until_ready(stack, smtp_sink, synth_video, page, tmp_path):
    res, _ = synth_video
    _instructor_creates_course(stack, smtp_sink, page, "browser-instructor@example.edu", "Uploaded in the browser")
    page.wait_for_selector("#manage-course:not([hidden])")
    # record every stage the page shows
    page.evaluate("""() => { window.__stages = []; const s = document.querySelector('#up-stages');
        new MutationObserver(() => { const v = s.dataset.stage; if (v && window.__stages.at(-1) !== v) window.__stages.push(v); })
        .observe(s, { attributes: true, attributeFilter: ['data-stage'] }); }""")
    page.set_input_files("#up-file", str(res.path))
    page.fill("#up-title", "Sorting, uploaded")
    page.fill("#up-number", "3")
    page.click("#up-button")
    page.wait_for_selector("#upload-progress:not([hidden])")
    page.wait_for_function("() => (() => { const b = document.querySelector('#up-bytes'); return b.value === b.max && b.max > 1; })()",
                           timeout=60_000)
    if page.evaluate("document.querySelector('#up-stages').dataset.status") != "ready":
        page.screenshot(path=str(shots_dir(tmp_path) / "upload-processing-desktop.png"), full_page=True)
    total = page.evaluate("document.querySelector('#up-bytes').max")  # a resumable upload: the file's bytes
    assert total == res.path.stat().st_size
    page.wait_for_selector("#up-stages[data-status='ready']", timeout=240_000)
    stages = page.evaluate("window.__stages")
    # stages shorter than the 0.5 s poll may be skipped over; the order never goes back
    order = ["queued", "transcribing", "slides", "indexing", "ready"]
    assert stages[-1] == "ready" and len(stages) >= 2 and [order.index(x) for x in stages] == sorted(
        order.index(x) for x in stages), stages
    assert len(page.query_selector_all("#up-stages li.done")) == 5
    assert "Ready" in page.inner_text("#up-status")
    page.wait_for_selector("#mc-lectures tr .st-ready", timeout=10_000)
    assert "Sorting, uploaded" in page.inner_text("#mc-lectures")
    # the lecture that became ready while the page was open joins the practice picker, no reload needed
    page.wait_for_selector("#mc-quiz-lecture option", state="attached", timeout=10_000)
    assert "Sorting, uploaded" in page.inner_text("#mc-quiz-lecture")
    assert not page.is_disabled("#mc-quiz-generate")
    assert "once a lecture is ready" not in page.inner_text("#mc-quiz-status")  # "Loading questions…" at once
    page.wait_for_function("() => !document.querySelector('#mc-quiz-status').textContent.includes('Loading')",
                           timeout=30_000)  # its first set is written on this first listing (or none can be)
    assert page.query_selector("#mc-quiz-list li.qa") or "No questions" in page.inner_text("#mc-quiz-status")
    # a ready lecture's captions can be downloaded in both formats
    for ext, name, ctype in (("vtt", "WebVTT", "text/vtt"), ("srt", "SRT", "application/x-subrip")):
        link = page.query_selector(f"#mc-lectures a[aria-label='Download the captions of lecture 3 as {name}']")
        with page.expect_download() as got:
            link.click()
        assert got.value.suggested_filename == f"L3-Sorting-uploaded.{ext}"
        assert Path(got.value.path()).read_text().strip()
        assert page.request.get(stack.base + link.get_attribute("href")).headers["content-type"].startswith(ctype)
    page.screenshot(path=str(shots_dir(tmp_path) / "upload-desktop.png"), full_page=True)
    page.set_viewport_size(PHONE)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    page.screenshot(path=str(shots_dir(tmp_path) / "upload-phone.png"), full_page=True)
    lecture_id = page.get_attribute("#mc-lectures tr", "data-lecture")
    page.set_viewport_size(DESKTOP)
    # a failed lecture offers Retry, which runs the pipeline again to ready
    with stack.db() as c:
        c.execute("UPDATE lectures SET status='failed', stage='failed', error='disk full' WHERE id=%s", (lecture_id,))
    page.reload()
    page.wait_for_selector("#mc-lectures .st-failed")
    assert page.get_attribute("#mc-lectures .st-failed", "title") == "disk full"
    page.click("#mc-lectures button[aria-label='Retry lecture 3']")
    page.wait_for_selector("#mc-lectures tr .st-ready", timeout=240_000)
    # rename, then delete, confirmed first in a dialog
    page.click("#mc-lectures button[aria-label='Rename lecture 3']")
    page.fill("#mc-lectures input", "Sorting, renamed")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#mc-lectures').textContent.includes('Sorting, renamed')")
    assert requests.get(f"{stack.base}/api/lectures/{lecture_id}", timeout=10).json()["title"] == "Sorting, renamed"
    page.click("#mc-lectures button[aria-label='Delete lecture 3']")
    page.wait_for_selector("dialog#confirm[open]")
    page.click("#confirm-cancel")
    assert requests.get(f"{stack.base}/api/lectures/{lecture_id}", timeout=10).status_code == 200
    page.click("#mc-lectures button[aria-label='Delete lecture 3']")
    page.click("#confirm-ok")
    page.wait_for_selector("#mc-empty:not([hidden])", timeout=10_000)
    page.wait_for_function("() => document.querySelector('#mc-quiz-status').textContent.includes('once a lecture is ready')")
    assert page.query_selector("#mc-quiz-lecture option") is None and page.is_disabled("#mc-quiz-generate")
    assert requests.get(f"{stack.base}/api/lectures/{lecture_id}", timeout=10).status_code == 404
    # captions only: no video frames, so no slides to read; that stage shows as skipped, not done
    vtt = tmp_path / "heaps.vtt"
    vtt.write_text(_heap_vtt(res.duration_s))
    page.set_input_files("#up-file", str(vtt))
    page.click("#up-button")
    page.wait_for_selector("#up-stages[data-status='ready']", timeout=240_000)
    slides = page.query_selector("#up-stages li[data-stage='slides']")
    assert "skipped" in slides.get_attribute("class") and "done" not in slides.get_attribute("class")
    assert "none (captions only)" in slides.inner_text()
    assert len(page.query_selector_all("#up-stages li.done")) == 4


def test_student_sees_no_upload_controls_and_the_api_refuses(stack, smtp_sink, course, page):
    email = "browser-student@example.edu"
    _browser_sign_in(stack, smtp_sink, page, email)
    page.goto(f"{stack.base}/manage")
    page.wait_for_selector("#request-access:not([hidden])")
    assert page.is_hidden("#my-courses") and page.is_hidden("#nav-manage") is False
    assert page.query_selector("#upload-form:visible") is None
    page.goto(f"{stack.base}/manage/{course['id']}")
    page.wait_for_selector(".notice[role=alert]", timeout=10_000)
    assert page.is_hidden("#manage-course") and page.query_selector("#upload-form:visible") is None
    page.goto(f"{stack.base}/courses/{course['id']}")
    page.wait_for_selector("#lecture-list button[data-lecture]")
    assert "Manage this course" not in page.inner_text("#course")
    # the API itself refuses, with the session and its CSRF token
    status = page.evaluate("""async (cid) => {
        const me = await (await fetch('/api/me')).json();
        const h = {'X-CSRF-Token': me.csrf_token};
        const fd = new FormData(); fd.append('captions', new Blob(['WEBVTT\\n\\n00:01.000 --> 00:02.000\\nhi\\n']), 'a.vtt');
        const up = await fetch(`/api/courses/${cid}/lectures`, {method: 'POST', headers: h, body: fd});
        const ren = await fetch(`/api/courses/${cid}`, {method: 'PATCH', headers: {...h, 'Content-Type': 'application/json'}, body: '{"title": "x"}'});
        const del = await fetch(`/api/courses/${cid}`, {method: 'DELETE', headers: h});
        const priv = await fetch('/api/courses/00000000-0000-4000-8000-000000000000');
        return [up.status, ren.status, del.status, priv.status];
    }""", course["id"])
    assert status == [403, 403, 403, 404]
    # students can ask for instructor access from the page
    page.goto(f"{stack.base}/manage")
    page.click("#request-form button")
    page.wait_for_function("() => document.querySelector('#request-status').textContent.includes('Requested')", timeout=10_000)


def test_phone_width_and_screenshots(stack, course, browser, tmp_path):
    out = shots_dir(tmp_path)
    for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        ctx = browser.new_context(viewport=viewport, device_scale_factor=1)
        page = ctx.new_page()
        page.goto(f"{stack.base}/")
        page.wait_for_selector("#course-list li")
        page.screenshot(path=str(out / f"courses-{name}.png"), full_page=True)
        page.goto(f"{stack.base}/courses/{course['id']}")
        page.wait_for_selector("#transcript li")
        page.wait_for_function("() => document.querySelector('#player').readyState >= 1", timeout=20_000)
        page.evaluate("""async () => { const p = document.querySelector('#player');
            await p.play(); p.pause(); }""")  # headless chromium shows a spinner until the video has played
        page.wait_for_timeout(300)
        page.screenshot(path=str(out / f"course-{name}.png"), full_page=True)
        box = ask(page, "What sits at the root of a max heap?")
        box.query_selector(".chip").click()
        page.wait_for_selector("#transcript li.cited", timeout=10_000)
        page.evaluate("document.querySelector('#player').pause()")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), name
        # every control has an accessible name
        unnamed = page.evaluate("""[...document.querySelectorAll('button, a, input, select, textarea')]
            .filter(e => e.offsetParent !== null)
            .filter(e => !(e.getAttribute('aria-label') || e.textContent.trim() || (e.labels && e.labels.length)
                           || e.getAttribute('title') || e.getAttribute('placeholder')))
            .map(e => e.outerHTML.slice(0, 80))""")
        assert unnamed == [], unnamed
        if name == "phone":
            # the question box stays right under the video; the lecture list comes next, above the chapters,
            # transcript and notes (it came last, below everything)
            tops = page.evaluate("""['#player', '#ask-form', '#lecture-list', '#chapters', '#notes-h']
                .map(s => document.querySelector(s).getBoundingClientRect().top)""")
            assert tops == sorted(tops), tops
            page.query_selector(".answer").scroll_into_view_if_needed()
        page.screenshot(path=str(out / f"answer-{name}.png"), full_page=True)
        ctx.close()
    assert all((out / f"{p}-{n}.png").stat().st_size > 10_000 for p in ("courses", "course", "answer")
               for n in ("desktop", "phone"))


def test_live_status_falls_back_to_polling_when_no_stream_is_free(stack, smtp_sink, page):
    import uuid

    from web_helpers import mint

    email = "browser-poller@example.edu"
    _instructor_creates_course(stack, smtp_sink, page, email, "Polled")
    course = page.url.rsplit("/", 1)[1]
    other_course, other, lecture = stack.create_course("Streams held"), str(uuid.uuid4()), str(uuid.uuid4())
    insert = ("INSERT INTO lectures (id, course_id, number, title, status, stage) "
              "VALUES (%s, %s, 1, 'Waiting', 'queued', 'queued')")  # stays queued until the test says otherwise
    with stack.db() as c:
        c.execute(insert, (other, other_course))
    # every stream the gateway allows is taken (by two other people, three each, on another lecture)
    held = [requests.get(f"{stack.base}/api/lectures/{other}/events", headers=who, stream=True, timeout=30)
            for who in (mint(stack, "student", "poll-a@example.edu"), mint(stack, "student", "poll-b@example.edu"))
            for _ in range(3)]
    try:
        assert [r.status_code for r in held] == [200] * 6
        with stack.db() as c:
            c.execute(insert, (lecture, course))
        page.reload()
        page.wait_for_selector("#mc-lectures tr .st-queued", timeout=10_000)
        with stack.db() as c:
            c.execute("UPDATE lectures SET status='ready', stage='ready' WHERE id=%s", (lecture,))
        page.wait_for_selector("#mc-lectures tr .st-ready", timeout=15_000)  # the page polled
    finally:
        for r in held:
            r.close()
        with stack.db() as c:
            c.execute("DELETE FROM lectures WHERE id=%s", (other,))
