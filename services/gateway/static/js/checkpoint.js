// Checkpoints while watching: with the course's checkpoints on, the player pauses when playback crosses a
// chapter's end and offers that chapter's practice question in a panel under the video (focus moves into
// it; Escape skips). An answer is graded by the server and shows right or wrong with the explanation and a
// chip to the explaining moment; Continue plays on from the chapter's end. "Don't show again for this
// lecture" and the student's Checkpoints switch are kept in this browser (localStorage).
import { $, api, el, state, withoutLabel } from "./util.js";

const OFF_KEY = "lc-checkpoints-off";
const hiddenKey = (lectureId) => `lc-checkpoints-hidden:${lectureId}`;
const cp = { list: [], lectureId: null, done: new Set(), active: null, lastT: null, chip: null, back: null };

function stored(key) { try { return localStorage.getItem(key) === "1"; } catch { return false; } }
function store(key, on) { try { if (on) localStorage.setItem(key, "1"); else localStorage.removeItem(key); } catch { /* private mode */ } }

function wanted() {
  return !!(state.course && state.course.checkpoints) && !stored(OFF_KEY) && !stored(hiddenKey(cp.lectureId));
}

export async function loadCheckpoints(lecture, chip) {
  close();
  Object.assign(cp, { list: [], lectureId: lecture.id, done: new Set(), lastT: null, chip });
  $("#cp-switch").hidden = !(state.course && state.course.checkpoints);
  if ($("#cp-switch").hidden) return;
  $("#cp-on").checked = !stored(OFF_KEY);
  try {
    const data = await api(`/api/lectures/${lecture.id}/checkpoints`);
    if (cp.lectureId === lecture.id) cp.list = data.checkpoints;
  } catch { cp.list = []; }
  $("#player").dataset.checkpoints = String(cp.list.length);
}

function open(c) {
  const player = $("#player");
  cp.active = c;
  cp.back = document.activeElement;
  player.pause();
  $("#cp-chapter").textContent = c.chapter_title;
  $("#cp-q").textContent = c.question.question;
  $("#cp-result").replaceChildren();
  $("#cp-continue").hidden = true;
  $("#cp-skip").hidden = false;
  $("#cp-options").replaceChildren(...c.question.options.map((o, k) => {
    const b = el("button", { type: "button", class: "cp-option", dataset: { choice: k } },
      el("span", { class: "cp-letter", "aria-hidden": "true", text: `${"ABCD"[k]}. ` }), el("span", { text: o }));
    b.addEventListener("click", () => answer(c, k));
    return b;
  }));
  const panel = $("#checkpoint");
  panel.dataset.question = c.question.id;
  panel.hidden = false;
  panel.scrollIntoView({ block: "nearest" });
  $("#cp-options button").focus();
}

function close() {
  const panel = $("#checkpoint");
  const was = cp.active;
  if (was) cp.done.add(was.chapter_index);
  cp.active = null;
  panel.hidden = true;
  if (was && panel.contains(document.activeElement)) {
    const back = cp.back && document.body.contains(cp.back) && cp.back !== document.body ? cp.back : $("#player");
    back.focus();
  }
  return was;
}

function playOn(fromEnd) {
  const player = $("#player");
  const was = close();
  if (!was) return;
  if (fromEnd && Math.abs(player.currentTime - was.at_s) > 1) player.currentTime = Math.min(was.at_s, player.duration || was.at_s);
  cp.lastT = null;
  if (!player.ended) player.play().catch(() => {});
}

async function answer(c, choice) {
  const buttons = [...document.querySelectorAll("#cp-options button")];
  buttons.forEach((b) => { b.disabled = true; });
  const box = $("#cp-result");
  try {
    const r = await api(`/api/practice/${c.question.id}/answer`, { method: "POST", json: { choice, checkpoint: true } });
    buttons.forEach((b, k) => {
      b.classList.toggle("is-answer", k === r.answer_index);
      b.classList.toggle("is-wrong", k === choice && !r.correct);
      if (k === choice) b.setAttribute("aria-pressed", "true");
    });
    box.className = `cp-result ${r.correct ? "correct" : "wrong"}`;
    box.replaceChildren(
      el("p", {}, el("strong", { text: r.correct ? "Correct." : "Not quite." }),
        r.correct ? null : el("span", { text: ` The answer is “${c.question.options[r.answer_index]}”.` })),
      el("p", { class: "explain" }, el("span", { text: `${withoutLabel(r.explanation, r.citation.label)} ` }), cp.chip(r.citation)));
    $("#cp-skip").hidden = true;
    $("#cp-continue").hidden = false;
    $("#cp-continue").focus();
  } catch (err) {
    box.className = "cp-result";
    box.replaceChildren(el("p", { text: `Not checked: ${err.message}` }));
    buttons.forEach((b) => { b.disabled = false; });
  }
}

function due(t) {
  // the first checkpoint whose chapter end playback just crossed (from lastT to t), not yet offered
  const from = cp.lastT;
  if (from === null || t < from || t - from > 3) return null;
  return cp.list.find((c) => !cp.done.has(c.chapter_index) && from < c.at_s && t >= c.at_s - 0.05) || null;
}

const player = $("#player");
player.addEventListener("seeking", () => { cp.lastT = null; });
player.addEventListener("timeupdate", () => {
  const t = player.currentTime;
  if (!cp.active && !player.paused && !player.seeking && wanted()) {
    const c = due(t);
    if (c) { cp.lastT = t; open(c); return; }
  }
  cp.lastT = player.seeking ? null : t;
});
player.addEventListener("ended", () => {
  // a last chapter that ends at (or past) the media's end: offered when the video ends
  if (cp.active || !wanted()) return;
  const end = player.duration || 0;
  const c = cp.list.find((x) => !cp.done.has(x.chapter_index) && x.at_s >= end - 1.5);
  if (c) open(c);
});

$("#checkpoint").addEventListener("keydown", (e) => {
  if (e.key === "Escape") { e.preventDefault(); playOn(true); }
});
$("#cp-continue").addEventListener("click", () => playOn(true));
$("#cp-skip").addEventListener("click", () => playOn(true));
$("#cp-hide").addEventListener("click", () => { store(hiddenKey(cp.lectureId), true); playOn(true); });
$("#cp-off").addEventListener("click", () => { store(OFF_KEY, true); $("#cp-on").checked = false; playOn(true); });
$("#cp-on").addEventListener("change", () => {
  store(OFF_KEY, !$("#cp-on").checked);
  if ($("#cp-on").checked) store(hiddenKey(cp.lectureId), false); // on again: this lecture's too
  if (!$("#cp-on").checked && cp.active) playOn(true);
});
