// A course's page: its lectures, the question scope, and the Ask / Practice tabs.
import { $, api, clock, el, lecturesReady, state, statusText } from "./util.js";
import { selectLecture } from "./player.js";
import { setupPractice } from "./practice.js";

function setScope(lectureId) {
  $("#scope").value = lectureId || "";
  document.querySelectorAll("#lecture-list button[data-scope]").forEach((b) =>
    b.classList.toggle("scoped", (b.dataset.scope || "") === (lectureId || "")));
}

export async function showCourse(courseId, mode = "ask") {
  state.mode = mode;
  const course = await api(`/api/courses/${courseId}`);
  $("#course").hidden = false;
  state.course = course;
  state.lectures = course.lectures;
  $("#course-title").textContent = course.title;
  document.title = `${course.title} · Lecture Copilot`;
  const list = $("#lecture-list");
  const scope = $("#scope");
  scope.addEventListener("change", () => setScope(scope.value));  // the list's outline follows the menu
  const whole = el("button", { type: "button", class: "whole", "data-scope": "" },
    el("strong", { text: "Whole course" }), el("span", { class: "status", text: lecturesReady(course.lectures) }));
  whole.addEventListener("click", () => setScope(""));
  list.append(el("li", {}, whole));
  for (const l of course.lectures) {
    // named by what it shows (WCAG 2.5.3, label in name): number, title, length and status
    const b = el("button", { type: "button", "data-lecture": l.id, "data-scope": l.id },
      el("span", { class: "num", text: `L${l.number}` }), el("strong", { text: l.title }),
      el("span", { class: "status" }, l.duration_s ? `${clock(l.duration_s)} · ` : "",
        el("span", { class: `st st-${l.status}`, text: statusText(l) })));
    b.addEventListener("click", () => { selectLecture(l); setScope(l.id); });
    list.append(el("li", {}, b));
    scope.append(el("option", { value: l.id, text: `L${l.number} ${l.title}` }));
  }
  if (course.can_manage) {
    $("#lectures-h").after(el("p", { class: "small" }, el("a", { href: `/manage/${course.id}`, text: "Manage this course" })));
  }
  const params = new URLSearchParams(location.search);
  const wanted = course.lectures.find((l) => l.id === params.get("lecture"));
  const ready = wanted || course.lectures.find((l) => l.status === "ready") || course.lectures[0];
  if (ready) selectLecture(ready, params.has("t") ? parseFloat(params.get("t")) : undefined);
  setScope(wanted ? wanted.id : "");
  $("#tab-ask").href = `/courses/${course.id}`;
  $("#tab-practice").href = `/courses/${course.id}/practice`;
  $(mode === "practice" ? "#tab-practice" : "#tab-ask").setAttribute("aria-current", "page");
  if (mode === "ask") {
    // the question box comes after the transcript's lines in the page's order: a keyboard user's second
    // stop goes straight to it (WCAG 2.4.1, bypass blocks)
    const skip = $("#skip-ask");
    skip.hidden = false;
    skip.addEventListener("click", (e) => { e.preventDefault(); $("#question").focus(); });
  }
  if (mode === "practice") {
    $("#ask-panel").hidden = true;
    $("#practice").hidden = false;
    setupPractice(course, wanted ? wanted.id : "");
  }
}
