"""The web client in a real browser (Debian's chromium driven by Playwright; no downloaded
browser): ask, the answer streams in with chips, a click seeks the video to the chip's second."""

from __future__ import annotations

import shutil

import pytest

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--autoplay-policy=no-user-gesture-required", "--mute-audio"]


@pytest.fixture(scope="module")
def course(stack, synth_video):
    res, _ = synth_video
    course_id, _ = stack.course_with_video("Algorithms (browser)", res.path, 2)
    return course_id, res


@pytest.fixture(scope="module")
def page():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        pg = browser.new_page(viewport={"width": 1280, "height": 800})
        yield pg
        browser.close()


def test_chip_click_seeks_video(stack, course, page, tmp_path):
    course_id, res = course
    page.goto(f"{stack.base}/courses/{course_id}")
    page.wait_for_selector("#lecture-list button")
    assert "Algorithms (browser)" in page.inner_text("#course-title")
    page.fill("#question", "How does merge sort combine the two sorted halves?")
    page.keyboard.press("Enter")
    page.wait_for_selector(".answer[data-answer-id] .chip", timeout=30_000)
    # the latest chip of the answer: it must lie in the merge-sort part of the video
    chips = page.query_selector_all(".answer .chip")
    chip = max(chips, key=lambda c: float(c.get_attribute("data-t")))
    label = chip.inner_text()
    assert label.startswith("L2 · ")
    assert chip.get_attribute("aria-label").startswith(f"{chip.inner_text()}: play lecture 2 at ")
    t = float(chip.get_attribute("data-t"))
    assert res.part_starts_s[1] - 1 <= t <= res.duration_s
    page.wait_for_function("() => document.querySelector('#player').readyState >= 1", timeout=20_000)
    chip.click()
    page.wait_for_function(f"() => Math.abs(document.querySelector('#player').currentTime - {t}) < 1.0", timeout=10_000)
    current = page.evaluate("document.querySelector('#player').currentTime")
    assert abs(current - t) < 1.0
    # the shown time matches the chip label (M:SS)
    m, s = label.split(" · ")[1].split(":")
    assert int(m) * 60 + int(s) == int(t)
    page.screenshot(path=str(tmp_path / "answer.png"))


def test_declined_answer_looks_intentional(stack, course, page):
    course_id, _ = course
    page.goto(f"{stack.base}/courses/{course_id}")
    page.wait_for_selector("#lecture-list button")
    page.fill("#question", "What is the capital of France?")
    page.click("#ask-button")
    page.wait_for_selector(".answer.declined", timeout=30_000)
    box = page.query_selector(".answer.declined")
    assert "Not covered in these lectures" in box.inner_text()
    assert box.query_selector(".chip") is None


def test_transcript_follows_playback_and_chapters_seek(stack, course, page):
    course_id, res = course
    page.goto(f"{stack.base}/courses/{course_id}")
    page.wait_for_selector("#transcript li")
    page.wait_for_selector("#chapters li")
    assert page.inner_text("#chapters li strong")
    page.wait_for_function("() => document.querySelector('#player').readyState >= 1", timeout=20_000)
    lines = page.query_selector_all("#transcript li")
    target = lines[-1]
    t = float(target.get_attribute("data-start"))
    target.query_selector("button").click()
    page.wait_for_function(f"() => Math.abs(document.querySelector('#player').currentTime - {t}) < 1.0", timeout=10_000)
    page.evaluate("document.querySelector('#player').pause()")
    page.wait_for_function("() => document.querySelector('#transcript li.current') !== null", timeout=10_000)
    current = page.query_selector("#transcript li.current")
    assert float(current.get_attribute("data-start")) <= t + 0.5
    assert current.get_attribute("data-start") == target.get_attribute("data-start")
    page.query_selector("#chapters li button").click()
    page.wait_for_function("() => document.querySelector('#player').currentTime < 1.0", timeout=10_000)
