// Lecture Copilot web client: courses, the lecture player with transcript and chapters, streamed
// cited answers with feedback, sign-in by mailed link, instructor management (upload with live
// processing stages), admin approvals, help and contact. No inline script: the page's CSP allows
// only this file (with the page's nonce).
"use strict";
const $ = (sel) => document.querySelector(sel);
const state = { me: null, course: null, lectures: [], current: null, conversationId: null, pendingSeek: null };
const STAGES = [["queued", "Queued"], ["transcribing", "Transcribing"], ["slides", "Reading slides"],
  ["indexing", "Indexing"], ["ready", "Ready"]];

function clock(t) {
  t = Math.max(0, Math.floor(t || 0));
  const h = Math.floor(t / 3600), m = Math.floor((t % 3600) / 60), s = t % 60;
  return h ? `${h}:${String(m).padStart(2, "0")}:${String(s).padStart(2, "0")}` : `${m}:${String(s).padStart(2, "0")}`;
}

function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function writeHeaders(method, headers = {}) {
  if (method !== "GET" && method !== "HEAD" && state.me && state.me.csrf_token) headers["X-CSRF-Token"] = state.me.csrf_token;
  return headers;
}

async function errorOf(res) {
  try { return (await res.json()).error.message; } catch (e) { return res.statusText || `HTTP ${res.status}`; }
}

async function api(path, opts = {}) {
  const method = (opts.method || "GET").toUpperCase();
  const headers = writeHeaders(method, opts.headers || {});
  let body = opts.body;
  if (opts.json !== undefined) { headers["Content-Type"] = "application/json"; body = JSON.stringify(opts.json); }
  const res = await fetch(path, { method, headers, body, credentials: "same-origin" });
  if (!res.ok) {
    let error = {};
    try { error = (await res.json()).error || {}; } catch (e) { /* not JSON: the status line says it */ }
    const err = new Error(error.message || res.statusText || `HTTP ${res.status}`);
    err.status = res.status;
    err.code = error.code;  // e.g. contact_off
    throw err;
  }
  return res.status === 204 ? null : res.json();
}

// "3 lectures", or "3 lectures ready of 4" while some are processing or failed
function lecturesReady(lectures) {
  const ready = lectures.filter((l) => l.status === "ready").length;
  const word = (n) => `${n} lecture${n === 1 ? "" : "s"}`;
  return ready === lectures.length ? word(ready) : `${word(ready)} ready of ${lectures.length}`;
}

function confirmDialog(text, okLabel = "Delete") {
  const d = $("#confirm");
  $("#confirm-text").textContent = text;
  $("#confirm-ok").textContent = okLabel;
  return new Promise((resolve) => {
    d.addEventListener("close", () => resolve(d.returnValue === "ok"), { once: true });
    d.returnValue = "";
    d.showModal();
    $("#confirm-cancel").focus();
  });
}

function notice(text) {
  const p = el("p", { class: "notice", role: "alert" }, `${text} `, el("a", { href: "/", text: "See all courses" }));
  document.querySelector("header").after(p);
}

// ---- who am I ---------------------------------------------------------------------------------
async function loadMe() {
  state.me = await api("/api/me");
  const me = state.me;
  $("#nav-signin").hidden = me.signed_in;
  $("#nav-user").hidden = !me.signed_in;
  $("#nav-email").textContent = me.signed_in ? `${me.email} (${me.role})` : "";
  $("#nav-manage").hidden = !me.signed_in;
  $("#nav-admin").hidden = !(me.signed_in && me.role === "admin");
}

$("#signout").addEventListener("click", async () => {
  await api("/api/auth/logout", { method: "POST" }).catch(() => {});
  location.href = "/";
});

// ---- home ---------------------------------------------------------------------------------------
async function showHome() {
  $("#home").hidden = false;
  const data = await api("/api/courses");
  const list = $("#course-list");
  list.replaceChildren();
  $("#no-courses").hidden = data.courses.length > 0;
  for (const c of data.courses) {
    const n = c.lecture_count;
    list.append(el("li", {}, el("a", { href: `/courses/${c.id}` },
      el("strong", { text: c.title }), el("span", { class: "muted", text: ` — ${n} lecture${n === 1 ? "" : "s"}` }),
      c.visibility === "private" ? el("span", { class: "badge", text: "private" }) : null)));
  }
}

// ---- course page: lectures, player, transcript, chapters ---------------------------------------
function statusText(l) {
  if (l.status === "ready") return "ready";
  if (l.status === "failed") return "failed";
  if (l.status === "processing") return `${l.stage}…`;
  return l.status;
}

async function loadStudy(lecture) {
  const [detail, transcript] = await Promise.all([
    api(`/api/lectures/${lecture.id}`), api(`/api/lectures/${lecture.id}/transcript`)]);
  const chapters = $("#chapters");
  chapters.replaceChildren();
  $("#no-chapters").hidden = detail.chapters.length > 0;
  for (const c of detail.chapters) {
    const b = el("button", { type: "button", "aria-label": `Chapter ${c.title}, at ${clock(c.start_s)}` },
      el("span", { class: "t", text: clock(c.start_s) }), el("strong", { text: c.title }),
      el("span", { class: "sum", text: c.summary }));
    b.addEventListener("click", () => selectLecture(lecture, c.start_s));
    chapters.append(el("li", {}, b));
  }
  const list = $("#transcript");
  list.replaceChildren();
  for (const seg of transcript.segments) {
    const slide = seg.kind === "slide";
    const b = el("button", { type: "button" }, el("span", { class: "t", text: clock(seg.start_s) }),
      ...(slide ? [el("span", { class: "tag", text: "Slide" })] : []),
      el("span", { class: "line", text: seg.text }));
    b.addEventListener("click", () => selectLecture(lecture, seg.start_s));
    list.append(el("li", { dataset: { start: seg.start_s, end: seg.end_s }, ...(slide ? { class: "slide" } : {}) }, b));
  }
}

function highlightTranscript(t, cls) {
  // the line being said at t: the last line that starts at or before t
  const items = [...document.querySelectorAll("#transcript li")];
  let hit = null;
  for (const li of items) if (parseFloat(li.dataset.start) <= t + 0.05) hit = li;
  items.forEach((li) => li.classList.toggle(cls, li === hit));
  if (hit && cls === "cited") scrollTranscriptTo(hit);
  return hit;
}

function scrollTranscriptTo(li) {
  const box = $("#transcript");
  const top = li.offsetTop - box.offsetTop;
  if (top < box.scrollTop || top > box.scrollTop + box.clientHeight - 40) box.scrollTop = Math.max(0, top - 40);
}

function seekPlayer(t) {
  const player = $("#player");
  const go = () => { player.currentTime = t; player.play().catch(() => {}); };
  if (player.readyState >= 1) go();
  else player.addEventListener("loadedmetadata", go, { once: true });
}

function markCurrentLecture() {
  const id = state.current ? state.current.id : null;
  document.querySelectorAll("#lecture-list button[data-lecture]").forEach((b) =>
    b.setAttribute("aria-current", String(b.dataset.lecture === id)));
}

function selectLecture(lecture, seekTo) {
  const player = $("#player");
  const changed = !state.current || state.current.id !== lecture.id;
  state.current = lecture;
  markCurrentLecture();
  $("#now-playing").textContent = `L${lecture.number} · ${lecture.title}`;
  if (changed && state.course) {
    history.replaceState(null, "", `/courses/${state.course.id}${state.mode === "practice" ? "/practice" : ""}?lecture=${lecture.id}`);
  }
  if (changed) {
    player.src = `/api/lectures/${lecture.id}/video`;
    setCaptionsTrack(player, lecture);
    loadStudy(lecture).then(() => { if (seekTo !== undefined) highlightTranscript(seekTo, "cited"); })
      .catch(() => {});
    if (seekTo !== undefined) seekPlayer(seekTo);
  } else if (seekTo !== undefined) {
    seekPlayer(seekTo);
    highlightTranscript(seekTo, "cited");
  }
}

function setCaptionsTrack(player, lecture) {
  // the lecture's captions (WebVTT, made from its transcript) as the player's default subtitles
  player.querySelectorAll("track").forEach((t) => t.remove());
  if (lecture.status !== "ready") return;
  player.append(el("track", { kind: "subtitles", srclang: "en", label: "English", default: "",
    src: `/api/lectures/${lecture.id}/captions.vtt` }));
}

$("#player").addEventListener("timeupdate", () => {
  const li = highlightTranscript($("#player").currentTime, "current");
  if (li && document.activeElement !== $("#transcript")) scrollTranscriptTo(li);
});

// With object storage the video comes from a presigned URL that the store honours for LC_VIDEO_URL_S
// (10 minutes); past that its next request is refused and the player fails. A player that had loaded
// the current lecture's video asks /video again (a fresh URL: the redirect is never cached) and goes on
// from where it was, at most once in VIDEO_REFRESH_MS; one that never loaded it shows "no video".
const VIDEO_REFRESH_MS = 30000;

$("#player").addEventListener("loadedmetadata", () => {
  $("#player").dataset.loaded = state.current ? state.current.id : "";
  state.videoAt = $("#player").currentTime;
});

$("#player").addEventListener("timeupdate", () => {
  // where the lecture's video was (not the 0 a player that lost its source reports)
  if ($("#player").readyState >= 1) state.videoAt = $("#player").currentTime;
});

$("#player").addEventListener("error", () => {
  const player = $("#player");
  const lecture = state.current;
  if (!lecture) return;
  const decode = player.error && player.error.code === MediaError.MEDIA_ERR_DECODE;
  if (player.dataset.loaded === lecture.id && !decode && Date.now() - (state.videoRefreshedAt || 0) > VIDEO_REFRESH_MS) {
    const at = state.videoAt || 0, playing = !player.paused;
    state.videoRefreshedAt = Date.now();
    player.dataset.loaded = "";
    player.addEventListener("loadedmetadata", () => {
      player.currentTime = at;
      if (playing) player.play().catch(() => {});
    }, { once: true });
    player.src = `/api/lectures/${lecture.id}/video`;
    return;
  }
  $("#now-playing").textContent =
    `L${lecture.number} · ${lecture.title} — no video for this lecture (transcript only); chips highlight the transcript line.`;
});

function setScope(lectureId) {
  $("#scope").value = lectureId || "";
  document.querySelectorAll("#lecture-list button[data-scope]").forEach((b) =>
    b.classList.toggle("scoped", (b.dataset.scope || "") === (lectureId || "")));
}

async function showCourse(courseId, mode = "ask") {
  state.mode = mode;
  const course = await api(`/api/courses/${courseId}`);
  $("#course").hidden = false;
  state.course = course;
  state.lectures = course.lectures;
  $("#course-title").textContent = course.title;
  document.title = `${course.title} · Lecture Copilot`;
  const list = $("#lecture-list");
  const scope = $("#scope");
  const whole = el("button", { type: "button", class: "whole", "data-scope": "" },
    el("strong", { text: "Whole course" }), el("span", { class: "status", text: lecturesReady(course.lectures) }));
  whole.addEventListener("click", () => setScope(""));
  list.append(el("li", {}, whole));
  for (const l of course.lectures) {
    const b = el("button", { type: "button", "data-lecture": l.id, "data-scope": l.id,
      "aria-label": `Lecture ${l.number}: ${l.title}${l.duration_s ? `, ${clock(l.duration_s)}` : ""}, ${statusText(l)}` },
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
  if (mode === "practice") {
    $("#ask-panel").hidden = true;
    $("#practice").hidden = false;
    setupPractice(course, wanted ? wanted.id : "");
  }
}

// ---- practice (exam prep) ----------------------------------------------------------------------------
function setupPractice(course, lectureId) {
  const pick = $("#practice-scope");
  for (const l of course.lectures) pick.append(el("option", { value: l.id, text: `L${l.number} ${l.title}` }));
  pick.value = lectureId || "";
  $("#practice-form").addEventListener("submit", (e) => { e.preventDefault(); loadPractice(); });
  $("#quiz-form").addEventListener("submit", (e) => { e.preventDefault(); checkPractice(); });
  $("#quiz-again").addEventListener("click", () => loadPractice());
  loadPractice();
}

async function loadPractice() {
  const scope = $("#practice-scope").value;
  const status = $("#practice-status");
  const list = $("#quiz-list");
  $("#quiz-score").hidden = true;
  $("#quiz-again").hidden = true;
  $("#quiz-submit").hidden = false;
  list.replaceChildren();
  status.textContent = "Loading questions…";
  try {
    const data = await api(scope ? `/api/lectures/${scope}/quiz` : `/api/courses/${state.course.id}/quiz`);
    state.quiz = { scope, questions: data.questions };
    $("#quiz-form").hidden = data.questions.length === 0;
    status.textContent = data.questions.length
      ? `${data.questions.length} question${data.questions.length === 1 ? "" : "s"}. Choose one answer each, then check.`
      : "No practice questions here yet. The instructor can generate them on the course's manage page.";
    data.questions.forEach((q, i) => list.append(practiceItem(q, i)));
  } catch (err) { status.textContent = `Could not load the questions: ${err.message}`; }
}

function practiceItem(q, i) {
  const legend = el("legend", {}, el("span", { class: "qn", text: `${i + 1}. ` }), el("span", { text: q.question }),
    el("span", { class: "muted small", text: ` (L${q.lecture_number})` }));
  const fs = el("fieldset", {}, legend);
  q.options.forEach((o, k) => {
    const id = `q-${q.id}-${k}`;
    fs.append(el("div", { class: "option" }, el("input", { type: "radio", name: `q-${q.id}`, id, value: String(k) }),
      el("label", { for: id, text: o })));
  });
  return el("li", { class: "quiz-q", dataset: { question: q.id } }, fs, el("div", { class: "result", hidden: "" }));
}

async function checkPractice() {
  const answers = [];
  document.querySelectorAll("#quiz-list li.quiz-q").forEach((li) => {
    const picked = li.querySelector("input[type=radio]:checked");
    if (picked) answers.push({ question_id: li.dataset.question, choice: parseInt(picked.value, 10) });
  });
  const status = $("#practice-status");
  if (!answers.length) { status.textContent = "Choose an answer to at least one question first."; return; }
  const scope = state.quiz.scope;
  $("#quiz-submit").disabled = true;
  try {
    const res = await api(scope ? `/api/lectures/${scope}/quiz/answers` : `/api/courses/${state.course.id}/quiz/answers`,
      { method: "POST", json: { answers } });
    for (const r of res.results) showPracticeResult(r);
    const skipped = state.quiz.questions.length - res.total;
    const score = $("#quiz-score");
    score.textContent = `You got ${res.score} of ${res.total} right${skipped ? ` (${skipped} skipped)` : ""}.`;
    score.dataset.score = res.score;
    score.dataset.total = res.total;
    score.hidden = false;
    status.textContent = "";
    $("#quiz-submit").hidden = true;
    $("#quiz-again").hidden = false;
    score.focus();
  } catch (err) { status.textContent = `Not checked: ${err.message}`; }
  finally { $("#quiz-submit").disabled = false; }
}

function showPracticeResult(r) {
  const li = document.querySelector(`#quiz-list li[data-question="${r.question_id}"]`);
  if (!li) return;
  li.classList.add(r.correct ? "correct" : "wrong");
  li.querySelectorAll("input").forEach((inp) => {
    inp.disabled = true;
    const k = parseInt(inp.value, 10);
    if (k === r.answer_index) inp.parentElement.classList.add("is-answer");
    if (k === r.choice && !r.correct) inp.parentElement.classList.add("is-wrong");
  });
  const box = li.querySelector(".result");
  box.replaceChildren(
    el("p", {}, el("strong", { text: r.correct ? "Correct." : "Not quite." }),
      r.correct ? null : el("span", { text: ` The answer is “${r.answer}”.` })),
    el("p", { class: "explain" }, el("span", { text: `${r.explanation} ` }), chipFor(r.citation)),
    reportControls(r.question_id));
  box.hidden = false;
}

function reportControls(questionId) {
  const open = el("button", { type: "button", class: "linkish small", text: "Report this question",
    "aria-label": "Report this question as wrong or unclear" });
  const area = el("textarea", { rows: "2", maxlength: "2000", "aria-label": "What is wrong with this question? (optional)",
    placeholder: "What is wrong? (optional)" });
  const form = el("form", { class: "fb-form", hidden: "" }, area,
    el("div", { class: "fb-actions" }, el("button", { type: "submit", text: "Send report" })));
  const status = el("span", { class: "muted small", role: "status" });
  open.addEventListener("click", () => { form.hidden = false; open.hidden = true; area.focus(); });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      await api(`/api/quiz/questions/${questionId}/report`, { method: "POST", json: { comment: area.value.trim() || null } });
      status.textContent = "Reported. Thank you; the instructor will look at it.";
      form.hidden = true;
    } catch (err) { status.textContent = `Not reported: ${err.message}`; }
  });
  return el("div", { class: "report" }, open, form, status);
}

// ---- asking --------------------------------------------------------------------------------------
function showPlayer() {
  // a chip may sit far down the page (an earlier answer, or below the player on a phone): bring the
  // player into view at every width; no scrolling when it is already whole on screen ("nearest"),
  // no animation for those who ask for reduced motion
  const still = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  $("#player").scrollIntoView({ block: "nearest", behavior: still ? "auto" : "smooth" });
}

function chipFor(c) {
  const b = el("button", { type: "button", class: "chip", text: c.label, "aria-label": `Play lecture ${c.lecture_number} at ${clock(c.t_s)}`,
    dataset: { t: c.t_s, lecture: c.lecture_id } });
  b.addEventListener("click", () => {
    const lecture = state.lectures.find((l) => l.id === c.lecture_id);
    if (!lecture) return;
    selectLecture(lecture, c.t_s);
    showPlayer();
  });
  return b;
}

const THUMB = "M1 21h4V9H1v12zm22-11c0-1.1-.9-2-2-2h-6.31l.95-4.57.03-.32c0-.41-.17-.79-.44-1.06L14.17 1 7.59 7.59C7.22 7.95 7 8.45 7 9v10c0 1.1.9 2 2 2h9c.83 0 1.54-.5 1.84-1.22l3.02-7.05c.09-.23.14-.47.14-.73v-2z";

function thumbIcon(down) {
  // an SVG icon (no emoji font needed); the thumb down is the thumb up turned over
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("class", down ? "icon flip" : "icon");
  const path = document.createElementNS(ns, "path");
  path.setAttribute("d", THUMB);
  svg.append(path);
  return svg;
}

function feedbackControls(box, answerId) {
  const up = el("button", { type: "button", class: "thumb", "aria-label": "Helpful answer", "aria-pressed": "false" },
    thumbIcon(false), el("span", { text: "Yes" }));
  const down = el("button", { type: "button", class: "thumb", "aria-label": "Unhelpful answer", "aria-pressed": "false" },
    thumbIcon(true), el("span", { text: "No" }));
  const status = el("span", { class: "muted small", role: "status" });
  const form = el("form", { class: "fb-form", hidden: "" });
  const area = el("textarea", { rows: "2", maxlength: "2000", "aria-label": "What was wrong with this answer? (optional)",
    placeholder: "What was wrong? (optional)" });
  form.append(area, el("div", { class: "fb-actions" }, el("button", { type: "submit", text: "Send feedback" })));
  const send = async (rating, comment) => {
    try {
      await api(`/api/answers/${answerId}/feedback`, { method: "POST", json: { rating, comment: comment || null } });
      status.textContent = "Thanks for the feedback.";
      box.dataset.feedback = rating;
      up.disabled = down.disabled = true;
      form.hidden = true;
    } catch (e) { status.textContent = `Feedback not saved: ${e.message}`; }
  };
  up.addEventListener("click", () => { up.setAttribute("aria-pressed", "true"); send("up"); });
  down.addEventListener("click", () => { down.setAttribute("aria-pressed", "true"); form.hidden = false; area.focus(); });
  form.addEventListener("submit", (e) => { e.preventDefault(); send("down", area.value.trim()); });
  return el("div", { class: "feedback" }, el("span", { class: "muted small", text: "Was this helpful?" }), up, down, status, form);
}

function parseSSE(buf, onEvent) {
  // server-sent events: blocks separated by a blank line, "event:" and "data:" fields
  let cut;
  while ((cut = buf.indexOf("\n\n")) >= 0) {
    const block = buf.slice(0, cut);
    buf = buf.slice(cut + 2);
    let event = "message", data = "";
    for (const line of block.split("\n")) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data += line.slice(5).trim();
    }
    if (!data && event === "message") continue;  // a ": keep-alive" comment while the answer is written
    onEvent(event, data ? JSON.parse(data) : {});
  }
  return buf;
}

// why a model's answer was replaced by sentences quoted from the lectures, or cut short (AskAnswer.reason)
const WRITER_NOTES = {
  writer_took_too_long: "The model took too long",
  writer_answer_too_long: "The model's answer ran too long",
  writers_busy: "The model is busy",
};

function writerNote(payload) {
  const why = WRITER_NOTES[payload.reason];
  if (!why) return null;
  const what = payload.writer === "extractive" ? "so this answer quotes the lectures" : "so its answer stops here";
  return el("p", { class: "muted small writer-note", text: `${why}, ${what}.` });
}

async function ask(question) {
  const q = el("p", { class: "q", text: question });
  const body = el("p", { class: "body" }, el("span", { class: "typing", text: "…" }));
  const box = el("article", { class: "answer", "aria-busy": "true", "aria-label": `Answer to: ${question}` }, q, body);
  $("#answers").prepend(box);
  $("#ask-empty").hidden = true;
  const res = await fetch(`/api/courses/${state.course.id}/ask`, {
    method: "POST", credentials: "same-origin",
    headers: writeHeaders("POST", { "Content-Type": "application/json", "Accept": "text/event-stream" }),
    body: JSON.stringify({ question, lecture_id: $("#scope").value || null, conversation_id: state.conversationId }),
  });
  if (!res.ok) {
    body.textContent = await errorOf(res);
    box.classList.add("error");
    box.removeAttribute("aria-busy");
    return;
  }
  body.replaceChildren();
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  let live = null; // the sentence being written (delta text), replaced when it is validated
  const onEvent = (event, payload) => {
    if (event === "delta") {
      if (!live) { live = el("span", { class: "sentence pending" }); body.append(live); }
      live.textContent += payload.text;
    } else if (event === "sentence") {
      if (live) { live.remove(); live = null; }
      const span = el("span", { class: "sentence", text: (body.childNodes.length ? " " : "") + payload.text });
      body.append(span);
      payload.citations.forEach((c) => body.append(chipFor(c)));
    } else if (event === "done") {
      if (live) { live.remove(); live = null; }
      state.conversationId = payload.conversation_id;
      $("#conversation-note").hidden = false;
      box.dataset.answerId = payload.answer_id;
      if (payload.declined) {
        box.classList.add("declined");
        body.replaceChildren(el("span", { class: "declined-tag", text: "Not covered in these lectures" }),
          el("span", { class: "sentence", text: " " + payload.answer.replace(/^Not covered in these lectures\.?\s*/i, "") }));
      } else if (writerNote(payload)) {
        box.append(writerNote(payload));
      }
      box.append(feedbackControls(box, payload.answer_id));
    } else if (event === "error") {
      body.textContent = payload.message;
      box.classList.add("error");
    }
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf = parseSSE(buf + decoder.decode(value, { stream: true }), onEvent);
  }
  box.removeAttribute("aria-busy");
}

$("#ask-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const input = $("#question");
  const question = input.value.trim();
  if (!question) { input.focus(); return; }
  const btn = $("#ask-button");
  btn.disabled = true;
  try { await ask(question); input.value = ""; } finally { btn.disabled = false; input.focus(); }
});

$("#new-conversation").addEventListener("click", () => {
  state.conversationId = null;
  $("#answers").replaceChildren();
  $("#ask-empty").hidden = false;
  $("#conversation-note").hidden = true;
  $("#question").focus();
});

// ---- sign-in ----------------------------------------------------------------------------------
function showSignin() {
  $("#signin").hidden = false;
  $("#signin-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const email = $("#signin-email").value.trim();
    const status = $("#signin-status");
    try {
      await api("/api/auth/magic-link", { method: "POST", json: { email } });
      status.textContent = `We sent a sign-in link to ${email}. It works once, for 15 minutes.`;
    } catch (err) {
      status.textContent = err.message;
      if (err.code === "contact_off") $("#contact-form").hidden = true;  // 404: this server has no contact form
    }
  });
}

function showVerify() {
  $("#verify").hidden = false;
  const token = new URLSearchParams(location.search).get("token") || "";
  history.replaceState(null, "", "/auth/verify"); // keep the token out of history
  $("#verify-button").addEventListener("click", async () => {
    try {
      const who = await api("/api/auth/verify", { method: "POST", json: { token } });
      $("#verify-status").textContent = `Signed in as ${who.email}.`;
      location.href = who.role === "student" ? "/" : "/manage";
    } catch (err) { $("#verify-status").textContent = err.message; }
  });
}

// ---- manage -------------------------------------------------------------------------------------
async function showManage() {
  $("#manage").hidden = false;
  const me = state.me;
  if (!me.signed_in) { $("#need-signin").hidden = false; return; }
  if (me.role === "student") {
    $("#request-access").hidden = false;
    const status = $("#request-status");
    if (me.role_request && me.role_request.status === "pending") status.textContent = "Your request is waiting for an admin.";
    if (me.role_request && me.role_request.status === "denied") status.textContent = "Your last request was denied.";
    $("#request-form").addEventListener("submit", async (e) => {
      e.preventDefault();
      try {
        await api("/api/role-requests", { method: "POST", json: { reason: $("#request-reason").value.trim() || null } });
        status.textContent = "Requested. An admin will approve or deny it.";
      } catch (err) { status.textContent = err.message; }
    });
    return;
  }
  // bound before the section shows: a click while the list loads must not submit the form natively
  $("#create-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const c = await api("/api/courses", { method: "POST", json: { title: $("#create-title").value, visibility: $("#create-visibility").value } });
    location.href = `/manage/${c.id}`;
  });
  $("#my-courses").hidden = false;
  const data = await api("/api/courses?mine=1");
  const list = $("#manage-list");
  list.replaceChildren();
  for (const c of data.courses) {
    list.append(el("li", {}, el("a", { href: `/manage/${c.id}`, text: c.title }),
      el("span", { class: "muted small", text: ` · ${c.lecture_count} lecture${c.lecture_count === 1 ? "" : "s"} · ${c.visibility}` })));
  }
  if (!data.courses.length) list.append(el("li", { class: "muted", text: "No courses yet." }));
}

function stageList(container) {
  container.replaceChildren(...STAGES.map(([key, label]) =>
    el("li", { dataset: { stage: key } }, el("span", { class: "dot", "aria-hidden": "true" }), el("span", { class: "name", text: label }),
      el("span", { class: "pct muted small" }))));
}

function showStage(container, st) {
  const order = STAGES.map(([k]) => k);
  const at = st.status === "ready" ? order.length - 1 : Math.max(0, order.indexOf(st.stage));
  container.querySelectorAll("li").forEach((li, i) => {
    const key = li.dataset.stage;
    li.classList.toggle("done", i < at || st.status === "ready");
    li.classList.toggle("current", i === at && st.status !== "ready" && st.status !== "failed");
    li.classList.toggle("failed", st.status === "failed" && i === at);
    li.querySelector(".pct").textContent = (key === st.stage && st.status === "processing" && st.progress > 0)
      ? ` ${Math.round(st.progress * 100)}%` : "";
    if (i === at) li.setAttribute("aria-current", "step"); else li.removeAttribute("aria-current");
  });
  container.dataset.status = st.status;
  container.dataset.stage = st.stage;
}

// Live status of a lecture: server-sent events while the server has a stream to spare, else (429:
// too many open streams) GET /api/lectures/{id} every 3 s. Returns a handle with close().
function watchLecture(lectureId, onStatus) {
  let stopped = false, timer = null;
  const es = new EventSource(`/api/lectures/${lectureId}/events`);
  es.addEventListener("status", (e) => onStatus(JSON.parse(e.data)));
  es.addEventListener("error", () => {
    if (stopped || es.readyState !== EventSource.CLOSED) return;  // CONNECTING: it reconnects by itself
    const poll = async () => {
      if (stopped) return;
      try {
        const l = await api(`/api/lectures/${lectureId}`);
        onStatus({ status: l.status, stage: l.stage, progress: l.progress, error: l.error });
      } catch (_) { /* a network blip: try again */ }
      if (!stopped) timer = setTimeout(poll, 3000);
    };
    poll();
  });
  return { close() { stopped = true; es.close(); clearTimeout(timer); } };
}

function followLecture(lectureId, container, statusEl, onEnd) {
  const watch = watchLecture(lectureId, (st) => {
    showStage(container, st);
    if (st.status === "ready") statusEl.textContent = "Ready: students can ask about it now.";
    else if (st.status === "failed") statusEl.textContent = `Processing failed: ${st.error || "unknown reason"}`;
    else statusEl.textContent = `${st.stage}…`;
    if (st.status === "ready" || st.status === "failed") { watch.close(); if (onEnd) onEnd(st); }
  });
  return watch;
}

// One request with upload progress: resolves with the parsed JSON answer of a 2xx, else rejects
// with an Error carrying status and the error's code and fields (a dropped connection: status 0).
function sendWithProgress(method, path, body, headers, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, path);
    for (const [k, v] of Object.entries(writeHeaders(method, headers))) xhr.setRequestHeader(k, v);
    xhr.upload.addEventListener("progress", (e) => { if (e.lengthComputable) onProgress(e.loaded, e.total); });
    xhr.addEventListener("load", () => {
      let data = {};
      try { data = JSON.parse(xhr.responseText); } catch (e) { /* not JSON */ }
      if (xhr.status >= 200 && xhr.status < 300) return resolve(data);
      const err = new Error((data.error && data.error.message) || `Upload failed (HTTP ${xhr.status})`);
      reject(Object.assign(err, { status: xhr.status, code: data.error && data.error.code, detail: data.error || {} }));
    });
    xhr.addEventListener("error", () => reject(Object.assign(new Error("The connection was interrupted."), { status: 0 })));
    xhr.send(body);
  });
}

function uploadWithProgress(courseId, form, onProgress) {
  return sendWithProgress("POST", `/api/courses/${courseId}/lectures`, form, {}, onProgress);
}

// A video goes up as a resumable upload (POST …/uploads, then PUTs of UPLOAD_CHUNK bytes): the start
// refuses what the file would be refused for (a number the course has, the size) before any byte is
// sent, and a dropped or failed chunk is sent again from the offset the server gives, up to
// UPLOAD_RETRIES times in a row, waiting a little longer each time. Resolves {lecture_id}.
// (16 MiB: at least LC_UPLOAD_MIN_CHUNK_BYTES' default 5 MiB, and under a minute at 3 Mbit/s.)
const UPLOAD_CHUNK = 16 * 1048576;
const UPLOAD_RETRIES = 5;
// 429: this address holds its share of the server's threads waiting for bytes (several slow uploads at once)
const RETRYABLE = (err) => err.status === 0 || err.status === 408 || err.status === 429 || err.status >= 500 ||
  (err.status === 409 && (err.code === "wrong_offset" || err.code === "busy"));

async function uploadResumable(courseId, file, fields, onProgress) {
  let st = await api(`/api/courses/${courseId}/uploads`, { method: "POST",
    json: { filename: file.name, size: file.size, ...fields } });
  const id = st.upload_id;
  let failures = 0;
  onProgress(0, file.size);
  while (st.state === "receiving" || st.state === "finishing") {
    if (st.state === "finishing") {  // all bytes are in (the last answer was lost): its checks are running
      await new Promise((r) => setTimeout(r, 2000));
      st = await api(`/api/uploads/${id}`);
      continue;
    }
    const at = st.offset, end = Math.min(file.size, at + UPLOAD_CHUNK);
    try {
      st = await sendWithProgress("PUT", `/api/uploads/${id}`, file.slice(at, end),
        { "Content-Range": `bytes ${at}-${end - 1}/${file.size}`, "Content-Type": "application/octet-stream" },
        (loaded) => onProgress(at + loaded, file.size));
      failures = 0;
    } catch (err) {
      if (!RETRYABLE(err) || ++failures > UPLOAD_RETRIES) throw err;
      onProgress(at, file.size, `${err.message} Resuming (try ${failures} of ${UPLOAD_RETRIES})…`);
      await new Promise((r) => setTimeout(r, 1000 * failures));
      st = await api(`/api/uploads/${id}`);  // where to resume: the bytes the server has
    }
  }
  if (st.lecture_id) return { lecture_id: st.lecture_id };
  throw new Error(st.error || `The upload was ${st.state}.`);
}

function mb(n) { return `${(n / 1048576).toFixed(n < 10485760 ? 1 : 0)} MB`; }

async function showManageCourse(courseId) {
  const render = async () => {
    const c = await api(`/api/courses/${courseId}`);
    if (!c.can_manage) throw Object.assign(new Error("You can't manage this course."), { status: 403 });
    $("#mc-title").textContent = c.title;
    $("#course-title").textContent = c.title;
    $("#mc-new-title").value = c.title;
    $("#mc-visibility").value = c.visibility;
    $("#mc-open").href = `/courses/${c.id}`;
    $("#mc-insights").href = `/manage/${c.id}/insights`;
    $("#mc-assessment").checked = !!c.assessment_mode;
    const tbody = $("#mc-lectures");
    rowStreams.forEach((es) => es.close()); // one live status stream per processing row, renewed on each render
    rowStreams.length = 0;
    tbody.replaceChildren();
    $("#mc-empty").hidden = c.lectures.length > 0;
    for (const l of c.lectures) tbody.append(lectureRow({ ...l, course_id: c.id }, render));
    $("#manage-course").hidden = false;
    return c;
  };
  const course = await render();
  setupQuizAdmin(course);
  const members = async () => {
    const data = await api(`/api/courses/${courseId}/members`);
    const ul = $("#mc-members");
    ul.replaceChildren();
    for (const email of data.members) {
      const rm = el("button", { type: "button", class: "secondary small-btn", text: "Remove", "aria-label": `Remove ${email}` });
      rm.addEventListener("click", async () => {
        await api(`/api/courses/${courseId}/members/${encodeURIComponent(email)}`, { method: "DELETE" });
        await members();
      });
      ul.append(el("li", {}, el("span", { text: `${email} ` }), rm));
    }
    if (!data.members.length) ul.append(el("li", { class: "muted small", text: "No members yet." }));
  };
  await members();
  $("#member-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    await api(`/api/courses/${courseId}/members`, { method: "POST", json: { email: $("#member-email").value.trim() } });
    $("#member-email").value = "";
    await members();
  });
  $("#rename-course").addEventListener("submit", async (e) => {
    e.preventDefault();
    await api(`/api/courses/${courseId}`, { method: "PATCH", json: { title: $("#mc-new-title").value, visibility: $("#mc-visibility").value,
      assessment_mode: $("#mc-assessment").checked } });
    await render();
  });
  $("#mc-delete").addEventListener("click", async () => {
    if (!(await confirmDialog(`Delete the course "${$("#mc-title").textContent}" with all its lectures, videos and answers? This can't be undone.`))) return;
    await api(`/api/courses/${courseId}`, { method: "DELETE" });
    location.href = "/manage";
  });
  $("#upload-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const file = $("#up-file").files[0];
    if (!file) return;
    const isCaptions = /\.(vtt|srt)$/i.test(file.name);
    const fields = {};
    if ($("#up-title").value.trim()) fields.title = $("#up-title").value.trim();
    if ($("#up-number").value) fields.number = Number($("#up-number").value);
    const box = $("#upload-progress");
    box.hidden = false;
    $("#up-name").textContent = file.name;
    const bar = $("#up-bytes");
    const stages = $("#up-stages");
    stageList(stages);
    delete stages.dataset.status;
    $("#up-status").textContent = "Uploading…";
    $("#up-button").disabled = true;
    const progress = (loaded, total, note) => {
      bar.max = total; bar.value = loaded;
      $("#up-bytes-text").textContent = `${mb(loaded)} of ${mb(total)} (${Math.round((100 * loaded) / total)}%)`;
      $("#up-status").textContent = note || "Uploading…";
    };
    try {
      let res;
      if (isCaptions) {  // a small text file: one multipart request
        const fd = new FormData();
        for (const [k, v] of Object.entries(fields)) fd.append(k, String(v));
        fd.append("captions", file, file.name);
        res = await uploadWithProgress(courseId, fd, progress);
      } else {
        res = await uploadResumable(courseId, file, fields, progress);
      }
      bar.value = bar.max;
      $("#up-bytes-text").textContent = "Uploaded.";
      box.dataset.lectureId = res.lecture_id;
      await render();
      followLecture(res.lecture_id, stages, $("#up-status"), () => render());
      $("#upload-form").reset();
    } catch (err) {
      $("#up-status").textContent = err.message;
    } finally { $("#up-button").disabled = false; }
  });
}

const rowStreams = [];

// ---- manage: practice questions per lecture ------------------------------------------------------------
async function setupQuizAdmin(course) {
  const pick = $("#mc-quiz-lecture");
  const ready = course.lectures.filter((l) => l.status === "ready");
  pick.replaceChildren(...ready.map((l) => el("option", { value: l.id, text: `L${l.number} ${l.title}` })));
  $("#mc-quiz-generate").disabled = !ready.length;
  if (!ready.length) { $("#mc-quiz-status").textContent = "Questions can be written once a lecture is ready."; return; }
  // say per lecture how many questions it has and how many were reported
  ready.forEach(async (l) => {
    try {
      const data = await api(`/api/lectures/${l.id}/quiz/admin`);
      const reported = data.questions.filter((q) => q.reports > 0).length;
      const opt = pick.querySelector(`option[value="${l.id}"]`);
      opt.textContent = `L${l.number} ${l.title} — ${data.questions.length} questions${reported ? `, ${reported} reported` : ""}`;
    } catch (e) { /* the list below says it */ }
  });
  pick.addEventListener("change", () => loadQuizAdmin(course, pick.value));
  $("#mc-quiz-generate").addEventListener("click", async () => {
    const status = $("#mc-quiz-status");
    const btn = $("#mc-quiz-generate");
    const n = document.querySelectorAll("#mc-quiz-list li.qa").length;
    if (n && !(await confirmDialog("Replace this lecture's questions (with their reports and attempts) with a new set?", "Regenerate"))) return;
    btn.disabled = true;
    status.textContent = "Writing questions…";
    try {
      const gen = await api(`/api/lectures/${pick.value}/quiz/generate`, { method: "POST" });
      await loadQuizAdmin(course, pick.value);
      status.textContent = `Wrote ${gen.kept} questions (${gen.method}; ${gen.written - gen.kept} dropped by the check).`;
    } catch (err) { status.textContent = err.message; }
    finally { btn.disabled = false; }
  });
  await loadQuizAdmin(course, pick.value);
}

async function loadQuizAdmin(course, lectureId) {
  const list = $("#mc-quiz-list");
  const status = $("#mc-quiz-status");
  list.replaceChildren();
  try {
    const data = await api(`/api/lectures/${lectureId}/quiz/admin`);
    $("#mc-quiz-generate").textContent = data.questions.length ? "Regenerate questions" : "Generate questions";
    status.textContent = data.questions.length ? "" : "No questions for this lecture yet.";
    data.questions.forEach((q, i) => list.append(quizAdminItem(course, lectureId, q, i)));
  } catch (err) { status.textContent = `Could not load the questions: ${err.message}`; }
}

function quizAdminItem(course, lectureId, q, i) {
  const li = el("li", { class: `qa${q.reports ? " reported" : ""}`, dataset: { question: q.id } });
  const show = () => {
    const opts = el("ol", { class: "qa-options", type: "A" }, ...q.options.map((o, k) => el("li",
      { class: k === q.answer_index ? "is-answer" : "" }, el("span", { text: o }),
      k === q.answer_index ? el("span", { class: "tag-ok", text: " correct" }) : null)));
    const cite = el("a", { class: "chip", href: `/courses/${course.id}?lecture=${q.citation.lecture_id}&t=${q.citation.t_s}`,
      text: q.citation.label, "aria-label": `Play lecture ${q.citation.lecture_number} at ${clock(q.citation.t_s)}` });
    const stats = el("p", { class: "muted small" },
      `Answered ${q.attempts}×${q.attempts ? `, wrong ${q.wrong}×` : ""} · written ${q.method === "extractive" ? "from the transcript" : `by ${q.method}`}`,
      q.reports ? el("span", { class: "badge warn", text: `reported ${q.reports}×` }) : null);
    const comments = q.report_comments.length
      ? el("ul", { class: "qa-reports small" }, ...q.report_comments.map((c) => el("li", { text: `“${c}”` }))) : null;
    const edit = el("button", { type: "button", class: "secondary small-btn", text: "Edit", "aria-label": `Edit question ${i + 1}` });
    const del = el("button", { type: "button", class: "danger small-btn", text: "Delete", "aria-label": `Delete question ${i + 1}` });
    edit.addEventListener("click", () => editForm());
    del.addEventListener("click", async () => {
      if (!(await confirmDialog(`Delete question ${i + 1}, “${q.question}”?`))) return;
      await api(`/api/quiz/questions/${q.id}`, { method: "DELETE" });
      li.remove();
    });
    li.replaceChildren(...[el("p", { class: "qa-stem" }, el("strong", { text: `${i + 1}. ` }), el("span", { text: q.question })),
      opts, el("p", { class: "small" }, el("span", { text: `${q.explanation} ` }), cite), stats, comments,
      el("div", { class: "qa-actions" }, edit, del)].filter((x) => x));
  };
  const editForm = () => {
    const stem = el("textarea", { rows: "2", maxlength: "2000", id: `qe-stem-${q.id}` });
    stem.value = q.question;
    const optInputs = q.options.map((o, k) => { const inp = el("input", { maxlength: "300", id: `qe-opt-${q.id}-${k}` }); inp.value = o; return inp; });
    const answer = el("select", { id: `qe-ans-${q.id}` }, ...q.options.map((_, k) => el("option", { value: String(k), text: "ABCD"[k] })));
    answer.value = String(q.answer_index);
    const expl = el("textarea", { rows: "2", maxlength: "2000", id: `qe-expl-${q.id}` });
    expl.value = q.explanation;
    const status = el("p", { class: "small", role: "status" });
    const form = el("form", { class: "stack-form qa-edit" },
      el("label", { for: stem.id, text: "Question" }), stem,
      ...optInputs.flatMap((inp, k) => [el("label", { for: inp.id, text: `Option ${"ABCD"[k]}` }), inp]),
      el("label", { for: answer.id, text: "Correct option" }), answer,
      el("label", { for: expl.id, text: "Explanation" }), expl,
      el("div", { class: "qa-actions" }, el("button", { type: "submit", text: "Save question" }),
        el("button", { type: "button", class: "secondary", text: "Cancel", onclick: () => show() })), status);
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      try {
        q = await api(`/api/quiz/questions/${q.id}`, { method: "PATCH", json: { question: stem.value,
          options: optInputs.map((x) => x.value), answer_index: parseInt(answer.value, 10), explanation: expl.value } });
        show();
      } catch (err) { status.textContent = err.message; }
    });
    li.replaceChildren(form);
    stem.focus();
  };
  show();
  return li;
}

// ---- insights ------------------------------------------------------------------------------------------
function isoDay(d) { return d.toISOString().slice(0, 10); }

async function showInsights(courseId) {
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
      "aria-label": `Play lecture ${m.lecture_number} at ${clock(m.t_s)}` }),
    el("span", { text: ` ${m.lecture_title} ` }), el("span", { class: "muted small", text: `cited ${m.count}×` }))));
  if (!ins.top_moments.length) $("#ins-moments").replaceChildren(el("li", { class: "muted", text: "No citations in this period." }));
  $("#ins-down").replaceChildren(...ins.thumbs_down.map((d) => el("li", {},
    el("p", { class: "q" }, el("strong", { text: d.question })),
    el("p", { class: "muted small", text: d.answer }),
    d.comment ? el("p", { class: "comment", text: `“${d.comment}”` }) : el("p", { class: "muted small", text: "No comment." }))));
  if (!ins.thumbs_down.length) $("#ins-down").replaceChildren(el("li", { class: "muted", text: "No thumbs down in this period." }));
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

function lectureRow(l, rerender) {
  const st = el("span", { class: `st st-${l.status}`, text: statusText(l) });
  if (l.status === "failed" && l.error) st.title = l.error;
  const actions = el("td", { class: "actions" });
  const rename = el("button", { type: "button", class: "secondary small-btn", text: "Rename", "aria-label": `Rename lecture ${l.number}` });
  rename.addEventListener("click", () => {
    const input = el("input", { value: l.title, maxlength: "200", "aria-label": `New title for lecture ${l.number}` });
    const save = el("button", { type: "submit", class: "small-btn", text: "Save" });
    const f = el("form", { class: "inline-form" }, input, save);
    f.addEventListener("submit", async (e) => {
      e.preventDefault();
      await api(`/api/lectures/${l.id}`, { method: "PATCH", json: { title: input.value } });
      await rerender();
    });
    titleCell.replaceChildren(f);
    input.focus();
  });
  const del = el("button", { type: "button", class: "danger small-btn", text: "Delete", "aria-label": `Delete lecture ${l.number}` });
  del.addEventListener("click", async () => {
    if (!(await confirmDialog(`Delete lecture ${l.number} "${l.title}", its video, transcript and search index?`))) return;
    await api(`/api/lectures/${l.id}`, { method: "DELETE" });
    await rerender();
  });
  actions.append(rename, del);
  if (l.status === "ready") {
    actions.prepend(el("span", { class: "captions small" }, "Captions ",
      ...[["vtt", "WebVTT"], ["srt", "SRT"]].flatMap(([ext, name], i) => [i ? " · " : "",
        el("a", { href: `/api/lectures/${l.id}/captions.${ext}`, download: "", text: ext.toUpperCase(),
          "aria-label": `Download the captions of lecture ${l.number} as ${name}` })])));
  }
  if (l.status === "failed") {
    const retry = el("button", { type: "button", class: "small-btn", text: "Retry", "aria-label": `Retry lecture ${l.number}` });
    retry.addEventListener("click", async () => {
      await api(`/api/lectures/${l.id}/retry`, { method: "POST" });
      await rerender();
    });
    actions.prepend(retry);
  }
  if (l.status === "queued" || l.status === "processing") {
    const watch = watchLecture(l.id, (s) => {
      st.className = `st st-${s.status}`;
      st.textContent = statusText(s) + (s.status === "processing" && s.progress > 0 ? ` ${Math.round(s.progress * 100)}%` : "");
      if (s.status === "ready" || s.status === "failed") { watch.close(); rerender(); }
    });
    rowStreams.push(watch);
  }
  const titleCell = el("td", {}, el("a", { href: `/courses/${l.course_id}?lecture=${l.id}`, text: l.title }));
  return el("tr", { dataset: { lecture: l.id } }, el("td", { text: `L${l.number}` }), titleCell,
    el("td", { text: l.duration_s ? clock(l.duration_s) : "—" }), el("td", {}, st), actions);
}

// ---- admin -----------------------------------------------------------------------------------------
async function showAdmin() {
  $("#admin").hidden = false;
  const data = await api("/api/role-requests");
  const list = $("#request-list");
  list.replaceChildren();
  $("#no-requests").hidden = data.requests.length > 0;
  for (const r of data.requests) {
    const li = el("li", {}, el("strong", { text: r.email }), el("span", { class: "muted small", text: r.reason ? ` — ${r.reason}` : "" }));
    for (const [what, label] of [["approve", "Approve"], ["deny", "Deny"]]) {
      const b = el("button", { type: "button", class: what === "deny" ? "secondary small-btn" : "small-btn", text: label,
        "aria-label": `${label} ${r.email}` });
      b.addEventListener("click", async () => {
        await api(`/api/role-requests/${r.id}/${what}`, { method: "POST" });
        li.replaceChildren(el("span", { text: `${r.email}: ${what === "approve" ? "approved" : "denied"}` }));
      });
      li.append(" ", b);
    }
    list.append(li);
  }
}

// ---- contact ---------------------------------------------------------------------------------------
function showContact() {
  $("#contact").hidden = false;
  if (state.me.signed_in) $("#contact-email").value = state.me.email;
  $("#contact-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const status = $("#contact-status");
    try {
      await api("/api/contact", { method: "POST", json: { name: $("#contact-name").value.trim() || null,
        email: $("#contact-email").value.trim(), message: $("#contact-message").value } });
      status.textContent = "Sent. Thank you; we'll answer by email.";
      $("#contact-form").reset();
    } catch (err) {
      status.textContent = err.message;
      if (err.code === "contact_off") $("#contact-form").hidden = true;  // 404: this server has no contact form
    }
  });
}

// ---- routing -----------------------------------------------------------------------------------------
async function route() {
  await loadMe().catch(() => { state.me = { signed_in: false }; });
  const p = location.pathname;
  let m;
  if ((m = p.match(/^\/courses\/([0-9a-f-]{36})\/practice/))) return showCourse(m[1], "practice");
  if ((m = p.match(/^\/courses\/([0-9a-f-]{36})/))) return showCourse(m[1]);
  if ((m = p.match(/^\/manage\/([0-9a-f-]{36})\/insights/))) return showInsights(m[1]);
  if ((m = p.match(/^\/manage\/([0-9a-f-]{36})/))) return showManageCourse(m[1]);
  if (p === "/manage") return showManage();
  if (p === "/admin") return showAdmin();
  if (p === "/signin") return showSignin();
  if (p === "/auth/verify") return showVerify();
  if (p === "/help") { $("#help").hidden = false; return; }
  if (p === "/contact") return showContact();
  return showHome();
}

route().catch((err) => notice(`Could not load this page: ${err.message}`));
