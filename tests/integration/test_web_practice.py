"""Practice and insights in a real browser (Debian's chromium driven by Playwright): a student
answers a lecture's questions, sees the score and per question the explanation with a chip that
seeks the video, reports a question; the instructor sees the set with the report, edits a question,
switches assessment mode, and reads the course's insights (numbers, the per-day SVG chart, groups,
moments that open the player). Desktop and phone width; ``LC_SCREENSHOTS=<dir>`` keeps the pictures."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta, timezone

import pytest
import requests

from .test_quiz_api import SENTENCES
from .test_web_browser import DESKTOP, PHONE, _browser_sign_in, browser, shots_dir  # noqa: F401 (browser: a fixture)

pytestmark = pytest.mark.slow

UNNAMED = """[...document.querySelectorAll('button, a, input, select, textarea')]
    .filter(e => e.offsetParent !== null)
    .filter(e => !(e.getAttribute('aria-label') || e.textContent.trim() || (e.labels && e.labels.length)
                   || e.getAttribute('title') || e.getAttribute('placeholder')))
    .map(e => e.outerHTML.slice(0, 80))"""


def _vtt(duration_s: float) -> str:
    step = (duration_s - 2) / len(SENTENCES)

    def ts(t: float) -> str:
        return f"00:{int(t // 60):02d}:{t % 60:06.3f}"

    return "WEBVTT\n\n" + "\n\n".join(f"{ts(1 + i * step)} --> {ts(1 + (i + 1) * step - 0.1)}\n{s}"
                                      for i, s in enumerate(SENTENCES)) + "\n"


@pytest.fixture(scope="module")
def practice_course(stack, synth_video):
    """A course with one video lecture whose transcript is the sorting captions, its set generated."""
    res, _ = synth_video
    course = stack.create_course("Sorting (practice)")
    lecture = stack.upload_ready(course, res.path, title="Sorting", number=1, captions_vtt=_vtt(res.duration_s))
    r = requests.post(f"{stack.base}/api/lectures/{lecture}/quiz/generate", headers=stack.admin, timeout=180)
    assert r.status_code == 201 and r.json()["kept"] >= 2, r.text
    return {"id": course, "lecture": lecture, "key": {q["id"]: q for q in r.json()["questions"]}}


def _context(browser, viewport):
    ctx = browser.new_context(viewport=viewport, device_scale_factor=1)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "Content Security Policy" in m.text else None)
    return ctx, page, errors


def _answer_first_right_rest_wrong(page, key) -> int:
    ids = page.evaluate("[...document.querySelectorAll('#quiz-list li.quiz-q')].map(li => li.dataset.question)")
    assert len(ids) == len(key) >= 2
    # keyboard: Space picks the focused option, the arrow keys move within the question
    page.focus(f"#q-{ids[0]}-0")
    page.keyboard.press("Space")
    page.keyboard.press("ArrowDown")
    assert page.is_checked(f"#q-{ids[0]}-1") and not page.is_checked(f"#q-{ids[0]}-0")
    for i, qid in enumerate(ids):
        want = key[qid]["answer_index"] if i == 0 else (key[qid]["answer_index"] + 1) % 4
        page.click(f"label[for='q-{qid}-{want}']")
    return len(ids)


def test_student_practises_sees_score_and_chip_seeks_the_video(stack, practice_course, browser, tmp_path):
    out = shots_dir(tmp_path)
    for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        ctx, page, errors = _context(browser, viewport)
        page.goto(f"{stack.base}/courses/{practice_course['id']}/practice?lecture={practice_course['lecture']}")
        page.wait_for_selector("#quiz-list li.quiz-q")
        assert page.get_attribute("#tab-practice", "aria-current") == "page"
        assert page.is_hidden("#ask-panel") and page.is_visible("#practice")
        # no answers in the page before checking; a question that names its lecture does not name it twice
        assert page.evaluate("document.querySelectorAll('.is-answer').length") == 0
        legend = page.inner_text("#quiz-list li.quiz-q legend")
        assert "Lecture 1" in legend and "(L1)" not in legend, legend
        n = _answer_first_right_rest_wrong(page, practice_course["key"])
        page.wait_for_function("() => document.querySelector('#player').readyState >= 1", timeout=20_000)
        page.click("#quiz-submit")
        page.wait_for_selector("#quiz-score:not([hidden])")
        assert page.inner_text("#quiz-score").startswith(f"You got 1 of {n} right")
        assert page.get_attribute("#quiz-score", "data-score") == "1"
        first = page.query_selector("#quiz-list li.quiz-q")
        assert "correct" in first.get_attribute("class") and "Correct." in first.inner_text()
        wrong = page.query_selector_all("#quiz-list li.quiz-q.wrong")
        assert len(wrong) == n - 1 and "The answer is" in wrong[0].inner_text()
        assert len(page.query_selector_all("#quiz-list .is-answer")) == n  # the right option is marked everywhere
        # the explanation's chip seeks the player like an answer chip
        chip = wrong[0].query_selector(".chip")
        t = float(chip.get_attribute("data-t"))
        assert chip.inner_text().startswith("L1 · ") and chip.get_attribute("data-lecture") == practice_course["lecture"]
        # the moment shows once: the chip (the explanation no longer ends with "(L1 · 0:22)"; the page
        # strips it from a set written before)
        explain = wrong[0].query_selector(".explain").inner_text()
        assert explain.count(chip.inner_text()) == 1 and f"({chip.inner_text()})" not in explain, explain
        chip.click()
        page.wait_for_function(f"() => Math.abs(document.querySelector('#player').currentTime - {t}) < 1", timeout=15_000)
        page.evaluate("document.querySelector('#player').pause()")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), name
        assert page.evaluate(UNNAMED) == []
        if name == "desktop":  # report the first question with a comment
            first.query_selector("button.linkish").click()
            first.query_selector("textarea").fill("Option B is also right")
            first.query_selector(".fb-form button[type=submit]").click()
            page.wait_for_function("() => document.querySelector('#quiz-list li.quiz-q .report [role=status]')"
                                   ".textContent.includes('Reported')", timeout=10_000)
        page.query_selector("#quiz-score").scroll_into_view_if_needed()
        page.screenshot(path=str(out / f"practice-{name}.png"), full_page=True)
        ctx.close()
        assert not errors, errors
    # a question left unanswered is locked like the others once the set is checked
    ctx, page, errors = _context(browser, DESKTOP)
    page.goto(f"{stack.base}/courses/{practice_course['id']}/practice?lecture={practice_course['lecture']}")
    page.wait_for_selector("#quiz-list li.quiz-q")
    page.click("#quiz-list li.quiz-q:first-child label")
    page.click("#quiz-submit")
    page.wait_for_selector("#quiz-score:not([hidden])")
    n = len(practice_course["key"])
    assert page.inner_text("#quiz-score").endswith(f"({n - 1} skipped).")
    assert page.evaluate("[...document.querySelectorAll('#quiz-list input[type=radio]')].every(i => i.disabled)")
    ctx.close()
    assert not errors, errors
    with stack.db() as conn:
        comments = [r[0] for r in conn.execute(
            "SELECT r.comment FROM quiz_reports r JOIN quiz_questions q ON q.id=r.question_id WHERE q.lecture_id=%s",
            (practice_course["lecture"],)).fetchall()]
        attempts = conn.execute("SELECT count(*) FROM quiz_attempts a JOIN quiz_questions q ON q.id=a.question_id "
                                "WHERE q.lecture_id=%s", (practice_course["lecture"],)).fetchone()[0]
    assert comments == ["Option B is also right"] and attempts == 2 * len(practice_course["key"]) + 1


def _seed_log(stack, course: str, lecture: str) -> None:
    """26 questions over the last 5 days: 12 on merge sort (citing L1 · 0:05), 8 on counting sort
    (L1 · 0:20), 6 declined ones about the exam date; two thumbs down with a comment."""
    now = datetime.now(timezone.utc)
    rows = ([("How does merge sort work?", False, 5.0)] * 6 + [("how does merge sort work", False, 5.0)] * 6
            + [("Why is counting sort linear time?", False, 20.0)] * 8 + [("When is the final exam?", True, None)] * 6)
    with stack.db() as conn:
        for i, (q, declined, t) in enumerate(rows):
            aid = str(uuid.uuid4())
            sents = [] if declined else [{"text": "From the lecture.", "citations": [{"lecture_id": lecture, "t_s": t}]}]
            conn.execute("INSERT INTO answers (id, conversation_id, course_id, question, answer, declined, sentences, "
                         "sources, writer, created_at, asker) VALUES (%s,%s,%s,%s,%s,%s,%s,'[]','extractive',%s,%s)",
                         (aid, str(uuid.uuid4()), course, q, "Not covered in these lectures." if declined else
                          "Merge sort splits the array.", declined, json.dumps(sents), now - timedelta(days=i % 5),
                          f"{i % 9:032x}"))
            if i in (0, 7):
                conn.execute("INSERT INTO feedback (answer_id, rating, comment) VALUES (%s,'down',%s)",
                             (aid, "The answer skipped the merge step" if i == 0 else None))


def test_instructor_manages_questions_and_reads_insights(stack, smtp_sink, practice_course, browser, tmp_path):
    out = shots_dir(tmp_path)
    _seed_log(stack, practice_course["id"], practice_course["lecture"])
    ctx, page, errors = _context(browser, DESKTOP)
    _browser_sign_in(stack, smtp_sink, page, "admin@example.edu")
    # the manage page: the lecture's set with answers and the student's report
    page.goto(f"{stack.base}/manage/{practice_course['id']}")
    page.wait_for_selector("#mc-quiz-list li.qa")
    items = page.query_selector_all("#mc-quiz-list li.qa")
    assert len(items) == len(practice_course["key"])
    reported = page.query_selector_all("#mc-quiz-list li.qa.reported")
    assert len(reported) == 1 and "reported 1×" in reported[0].inner_text()
    assert "Option B is also right" in reported[0].inner_text()
    assert "Regenerate" in page.inner_text("#mc-quiz-generate")
    assert "null" not in page.inner_text("#mc-quiz-list") and "undefined" not in page.inner_text("#mc-quiz-list")
    page.wait_for_function("() => document.querySelector('#mc-quiz-lecture option').textContent.includes('1 reported')",
                           timeout=10_000)
    # edit a question in place
    items[0].query_selector("button:text('Edit')").click()
    page.fill("#mc-quiz-list li.qa textarea", "Which sort splits the array into two halves?")
    page.click("#mc-quiz-list li.qa form button[type=submit]")
    page.wait_for_function("() => document.querySelector('#mc-quiz-list li.qa .qa-stem').textContent.includes('two halves')",
                           timeout=10_000)
    # deleting a question: the picker's count follows
    n = len(practice_course["key"])
    page.query_selector_all("#mc-quiz-list li.qa")[-1].query_selector("button:text('Delete')").click()
    page.click("#confirm-ok")
    page.wait_for_function(f"() => document.querySelector('#mc-quiz-lecture option').textContent.includes('{n - 1} questions')",
                           timeout=10_000)
    assert len(page.query_selector_all("#mc-quiz-list li.qa")) == n - 1
    # a refused action says why beside its form
    page.fill("#member-email", "not-an-email@x")
    page.click("#member-form button[type=submit]")
    page.wait_for_function("() => document.querySelector('#member-form + .form-error')?.textContent.includes('email')",
                           timeout=10_000)
    # regenerating right away is refused with the wait
    page.click("#mc-quiz-generate")
    page.click("#confirm-ok")
    page.wait_for_function("() => /try again in \\d+ s/.test(document.querySelector('#mc-quiz-status').textContent)",
                           timeout=10_000)
    # assessment mode
    page.check("#mc-assessment")
    assert page.inner_text("#mc-saved") == ""
    page.click("#rename-course button[type=submit]")
    page.wait_for_function("() => document.querySelector('#mc-saved').textContent === 'Saved.'", timeout=10_000)
    assert page.get_attribute("#mc-saved", "role") == "status"
    assert requests.get(f"{stack.base}/api/courses/{practice_course['id']}", timeout=10).json()["assessment_mode"] is True
    page.screenshot(path=str(out / "manage-practice-desktop.png"), full_page=True)
    # insights
    page.click("#mc-insights")
    page.wait_for_url(f"{stack.base}/manage/{practice_course['id']}/insights*", timeout=10_000)
    page.wait_for_selector("#ins-body:not([hidden])", timeout=60_000)
    assert page.inner_text("#ins-questions") == "26" and page.inner_text("#ins-students") == "9"
    assert page.inner_text("#ins-declined").startswith("6")
    bars = page.evaluate("[...document.querySelectorAll('#ins-chart svg g.day')].map(g => +g.dataset.questions)")
    assert len(bars) == 30 and sum(bars) == 26
    # the day labels fit inside the chart
    assert page.evaluate("""() => { const svg = document.querySelector('#ins-chart svg'); const box = svg.getBoundingClientRect();
        return [...svg.querySelectorAll('text')].every(t => { const r = t.getBoundingClientRect();
          return r.left >= box.left - 1 && r.right <= box.right + 1; }); }""")
    assert page.get_attribute("#ins-chart svg", "role") == "img" and "26 in all" in page.get_attribute("#ins-chart svg", "aria-label")
    topics = page.query_selector_all("#ins-topics li")
    assert "merge sort" in topics[0].inner_text().lower() and "12×" in topics[0].inner_text()
    assert "8×" in topics[1].inner_text()
    assert "final exam" in page.inner_text("#ins-uncovered").lower() and "6×" in page.inner_text("#ins-uncovered")
    assert "The answer skipped the merge step" in page.inner_text("#ins-down")
    assert len(page.query_selector_all("#ins-down li")) == 2
    assert page.get_attribute("#ins-csv", "href").startswith(f"/api/courses/{practice_course['id']}/insights.csv?from=")
    csv_text = page.evaluate("async () => (await fetch(document.querySelector('#ins-csv').href)).text()")
    assert csv_text.startswith("section,label,count") and "top_moment,L1 · 0:05,12" in csv_text
    assert page.evaluate(UNNAMED) == []
    page.screenshot(path=str(out / "insights-desktop.png"), full_page=True)
    page.set_viewport_size(PHONE)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    page.wait_for_function("() => document.querySelector('#ins-chart svg').viewBox.baseVal.width <= 340", timeout=5_000)
    page.screenshot(path=str(out / "insights-phone.png"), full_page=True)
    page.set_viewport_size(DESKTOP)
    # a period with nothing in it
    page.fill("#ins-from", "2020-01-01")
    page.fill("#ins-to", "2020-01-31")
    page.click("#ins-form button[type=submit]")
    page.wait_for_function("() => document.querySelector('#ins-questions').textContent === '0'", timeout=30_000)
    assert "No questions in this period" in page.inner_text("#ins-topics")
    # the most-cited moment opens the course at that second
    page.goto(f"{stack.base}/manage/{practice_course['id']}/insights")
    page.wait_for_selector("#ins-moments a.chip")
    first = page.query_selector("#ins-moments a.chip")
    assert first.inner_text() == "L1 · 0:05"
    first.click()
    page.wait_for_url(f"{stack.base}/courses/{practice_course['id']}*", timeout=10_000)
    page.wait_for_function("() => Math.abs(document.querySelector('#player').currentTime - 5) < 1", timeout=20_000)
    ctx.close()
    assert not errors, errors
