// A course's insights for its instructor: questions per day, topics, what the lectures did not
// cover, the most cited moments and the thumbs down, for a date range (CSV too).
import { $, api, chipName, clock, el, state } from "./util.js";

function isoDay(d) { return d.toISOString().slice(0, 10); }

export async function showInsights(courseId) {
  const course = await api(`/api/courses/${courseId}`);
  if (!course.can_manage) throw Object.assign(new Error("Only the course's instructor can read its insights."), { status: 403 });
  $("#insights").hidden = false;
  $("#ins-course").textContent = `· ${course.title}`;
  $("#course-title").textContent = course.title;
  document.title = `Insights · ${course.title} · Lecture Copilot`;
  $("#ins-back").href = `/manage/${course.id}`;
  const params = new URLSearchParams(location.search);
  const today = new Date();
  $("#ins-to").value = params.get("to") || isoDay(today);
  $("#ins-from").value = params.get("from") || isoDay(new Date(today.getTime() - 29 * 86400000));
  const load = async () => {
    const q = `from=${encodeURIComponent($("#ins-from").value)}&to=${encodeURIComponent($("#ins-to").value)}`;
    history.replaceState(null, "", `/manage/${course.id}/insights?${q}`);
    $("#ins-csv").href = `/api/courses/${course.id}/insights.csv?${q}`;
    $("#ins-status").textContent = "Reading the question log…";
    try {
      const ins = await api(`/api/courses/${course.id}/insights?${q}`);
      renderInsights(course, ins);
      $("#ins-status").textContent = "";
      $("#ins-body").hidden = false;
    } catch (err) { $("#ins-status").textContent = err.message; }
  };
  $("#ins-form").addEventListener("submit", (e) => { e.preventDefault(); load(); });
  let resizing = null; // redraw the chart at the new width (it is drawn at the width it is shown at)
  window.addEventListener("resize", () => {
    clearTimeout(resizing);
    resizing = setTimeout(() => { if (state.insights) $("#ins-chart").replaceChildren(dayChart(state.insights.per_day)); }, 150);
  });
  await load();
}

function renderInsights(course, ins) {
  state.insights = ins;
  $("#ins-questions").textContent = ins.questions;
  $("#ins-students").textContent = ins.students;
  $("#ins-declined").textContent = ins.questions ? `${ins.declined} (${Math.round((100 * ins.declined) / ins.questions)}%)` : "0";
  $("#ins-chart").replaceChildren(dayChart(ins.per_day));
  const groups = (ul, items, empty) => {
    const max = Math.max(1, ...items.map((t) => t.count));
    ul.replaceChildren(...items.map((t) => {
      const bar = el("span", { class: "bar", "aria-hidden": "true" });
      bar.style.width = `${Math.max(4, (100 * t.count) / max)}%`;
      return el("li", {}, el("div", { class: "g-head" }, el("strong", { text: t.label }),
        el("span", { class: "count", text: `${t.count}×` })), bar,
        t.examples.length ? el("p", { class: "muted small", text: `Also asked: ${t.examples.join(" · ")}` }) : null);
    }));
    if (!items.length) ul.replaceChildren(el("li", { class: "muted", text: empty }));
  };
  groups($("#ins-topics"), ins.topics, "No questions in this period.");
  groups($("#ins-uncovered"), ins.uncovered, "Every question in this period was covered.");
  $("#ins-moments").replaceChildren(...ins.top_moments.map((m) => el("li", {},
    el("a", { class: "chip", href: `/courses/${course.id}?lecture=${m.lecture_id}&t=${m.t_s}`, text: m.label,
      "aria-label": chipName(m.lecture_number, m.t_s, m.label) }),
    el("span", { text: ` ${m.lecture_title} ` }), el("span", { class: "muted small", text: `cited ${m.count}×` }))));
  if (!ins.top_moments.length) $("#ins-moments").replaceChildren(el("li", { class: "muted", text: "No citations in this period." }));
  $("#ins-down").replaceChildren(...ins.thumbs_down.map((d) => el("li", {},
    el("p", { class: "q" }, el("strong", { text: d.question })),
    el("p", { class: "muted small", text: d.answer }),
    d.comment ? el("p", { class: "comment", text: `“${d.comment}”` }) : el("p", { class: "muted small", text: "No comment." }))));
  if (!ins.thumbs_down.length) $("#ins-down").replaceChildren(el("li", { class: "muted", text: "No thumbs down in this period." }));
  renderCheckpoints(course, ins.checkpoints);
}

function renderCheckpoints(course, checkpoints) {
  // per checkpoint: where (a chip that opens the lecture at the chapter's end), the question, answered, wrong
  $("#ins-cp").replaceChildren(...checkpoints.map((c) => el("tr", { dataset: { question: c.question_id } },
    el("td", {}, el("a", { class: "chip", href: `/courses/${course.id}?lecture=${c.lecture_id}&t=${c.at_s}`,
      text: `L${c.lecture_number} · ${clock(c.at_s)}`, "aria-label": chipName(c.lecture_number, c.at_s) }),
    el("span", { text: ` ${c.chapter_title}` })),
    el("td", { text: c.question }),
    el("td", { class: "num", text: String(c.answered) }),
    el("td", { class: "num", text: c.answered ? `${c.wrong} (${Math.round((100 * c.wrong) / c.answered)}%)` : "0" }))));
  $("#ins-cp-table").hidden = !checkpoints.length;
  $("#ins-cp-empty").hidden = checkpoints.length > 0;
}

function dayChart(days) {
  // questions per day as an inline SVG bar chart (answered + declined stacked); no chart library
  const ns = "http://www.w3.org/2000/svg";
  const mk = (tag, attrs = {}, text) => {
    const e = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  // drawn at about the width it is shown at, so the labels stay legible on a phone
  const W = Math.round(Math.max(320, Math.min(720, window.innerWidth - 70))), H = 200, L = 34, B = 24, T = 10;
  const max = Math.max(1, ...days.map((d) => d.questions));
  const total = days.reduce((a, d) => a + d.questions, 0);
  const svg = mk("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", class: "day-chart",
    "aria-label": `Questions per day from ${days[0] ? days[0].date : ""} to ${days.length ? days[days.length - 1].date : ""}: ${total} in all, at most ${max} a day.` });
  const bw = (W - L - 4) / Math.max(1, days.length);
  const y = (v) => T + (H - T - B) * (1 - v / max);
  svg.append(mk("line", { x1: L, x2: W, y1: H - B, y2: H - B, class: "axis" }),
    mk("text", { x: L - 6, y: T + 4, "text-anchor": "end", class: "tick" }, String(max)),
    mk("text", { x: L - 6, y: H - B, "text-anchor": "end", class: "tick" }, "0"));
  days.forEach((d, i) => {
    const x = L + 2 + i * bw;
    const g = mk("g", { class: "day", "data-date": d.date, "data-questions": d.questions });
    g.append(mk("title", {}, `${d.date}: ${d.questions} questions, ${d.declined} not covered`));
    const answered = d.questions - d.declined;
    g.append(mk("rect", { x: x + bw * 0.12, width: bw * 0.76, y: y(d.questions), height: Math.max(0, y(answered) - y(d.questions)), class: "declined" }));
    g.append(mk("rect", { x: x + bw * 0.12, width: bw * 0.76, y: y(answered), height: Math.max(0, H - B - y(answered)), class: "answered" }));
    svg.append(g);
    if (i === 0 || i === days.length - 1 || (days.length > 10 && i % 7 === 0 && i > 2 && i < days.length - 3)) {
      const anchor = i === 0 ? "start" : i === days.length - 1 ? "end" : "middle";
      const tx = i === 0 ? x : i === days.length - 1 ? x + bw : x + bw / 2;
      svg.append(mk("text", { x: tx, y: H - 6, "text-anchor": anchor, class: "tick" }, d.date.slice(5)));
    }
  });
  const legend = el("p", { class: "legend small muted" }, el("span", { class: "key answered", "aria-hidden": "true" }), " answered ",
    el("span", { class: "key declined", "aria-hidden": "true" }), " not covered");
  return el("div", {}, svg, legend);
}
