// Lecture Copilot web client: course list, course page with player, streamed cited answers.
"use strict";
const $ = (sel) => document.querySelector(sel);
const state = { course: null, lectures: [], current: null, conversationId: null };

function clock(t) {
  t = Math.max(0, Math.floor(t));
  const h = Math.floor(t / 3600), m = Math.floor((t % 3600) / 60), s = t % 60;
  return h ? `${h}:${String(m).padStart(2, "0")}:${String(s).padStart(2, "0")}` : `${m}:${String(s).padStart(2, "0")}`;
}

async function api(path, opts = {}) {
  const res = await fetch(path, opts);
  if (!res.ok) {
    let msg = res.statusText;
    try { msg = (await res.json()).error.message; } catch (e) { /* not JSON */ }
    throw new Error(msg);
  }
  return res.status === 204 ? null : res.json();
}

async function showHome() {
  $("#home").hidden = false;
  const data = await api("/api/courses");
  const list = $("#course-list");
  list.innerHTML = "";
  $("#no-courses").hidden = data.courses.length > 0;
  for (const c of data.courses) {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = `/courses/${c.id}`;
    a.textContent = `${c.title} — ${c.lecture_count} lecture${c.lecture_count === 1 ? "" : "s"}`;
    li.appendChild(a);
    list.appendChild(li);
  }
}

async function loadStudy(lecture) {
  const [detail, transcript] = await Promise.all([
    api(`/api/lectures/${lecture.id}`), api(`/api/lectures/${lecture.id}/transcript`)]);
  const chapters = $("#chapters");
  chapters.innerHTML = "";
  for (const c of detail.chapters) {
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.type = "button";
    b.innerHTML = `<span class="t"></span><strong></strong><span class="sum"></span>`;
    b.querySelector(".t").textContent = clock(c.start_s);
    b.querySelector("strong").textContent = c.title;
    b.querySelector(".sum").textContent = c.summary;
    b.setAttribute("aria-label", `Chapter ${c.title} at ${clock(c.start_s)}`);
    b.addEventListener("click", () => selectLecture(lecture, c.start_s));
    li.appendChild(b);
    chapters.appendChild(li);
  }
  const list = $("#transcript");
  list.innerHTML = "";
  for (const seg of transcript.segments) {
    const li = document.createElement("li");
    li.dataset.start = seg.start_s;
    li.dataset.end = seg.end_s;
    const b = document.createElement("button");
    b.type = "button";
    b.innerHTML = `<span class="t"></span><span class="line"></span>`;
    b.querySelector(".t").textContent = clock(seg.start_s);
    b.querySelector(".line").textContent = seg.text;
    b.addEventListener("click", () => selectLecture(lecture, seg.start_s));
    li.appendChild(b);
    list.appendChild(li);
  }
}

function highlightTranscript(t, cls) {
  // the line being said at t: the last line that starts at or before t
  const items = [...document.querySelectorAll("#transcript li")];
  let hit = null;
  for (const li of items) if (parseFloat(li.dataset.start) <= t + 0.05) hit = li;
  items.forEach((li) => li.classList.toggle(cls, li === hit));
  if (hit && cls === "cited") hit.scrollIntoView({ block: "nearest" });
  return hit;
}

function selectLecture(lecture, seekTo) {
  const player = $("#player");
  const changed = !state.current || state.current.id !== lecture.id;
  state.current = lecture;
  document.querySelectorAll("#lecture-list button").forEach((b) =>
    b.setAttribute("aria-current", String(b.dataset.lecture === lecture.id)));
  $("#now-playing").textContent = `L${lecture.number} · ${lecture.title}`;
  if (changed) {
    $("#now-playing").textContent = `L${lecture.number} · ${lecture.title}`;
    loadStudy(lecture).then(() => { if (seekTo !== undefined) highlightTranscript(seekTo, "cited"); })
      .catch(() => {});
    player.src = `/api/lectures/${lecture.id}/video`;
    if (seekTo !== undefined) {
      player.addEventListener("loadedmetadata", () => { player.currentTime = seekTo; player.play().catch(() => {}); }, { once: true });
    }
  } else if (seekTo !== undefined) {
    player.currentTime = seekTo;
    player.play().catch(() => {});
    highlightTranscript(seekTo, "cited");
  }
}

$("#player").addEventListener("timeupdate", () => {
  const li = highlightTranscript($("#player").currentTime, "current");
  const box = $("#transcript");
  if (li && document.activeElement !== box) {
    const top = li.offsetTop - box.offsetTop;
    if (top < box.scrollTop || top > box.scrollTop + box.clientHeight - 40) box.scrollTop = top - 40;
  }
});

async function showCourse(courseId) {
  const course = await api(`/api/courses/${courseId}`);
  $("#course").hidden = false;
  state.course = course;
  state.lectures = course.lectures;
  $("#course-title").textContent = course.title;
  document.title = `${course.title} · Lecture Copilot`;
  const list = $("#lecture-list");
  const scope = $("#scope");
  for (const l of course.lectures) {
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.type = "button";
    b.dataset.lecture = l.id;
    const mins = l.duration_s ? ` · ${clock(l.duration_s)}` : "";
    b.innerHTML = `<strong></strong><span class="status"></span>`;
    b.querySelector("strong").textContent = `L${l.number} ${l.title}`;
    b.querySelector(".status").textContent = `${l.status}${mins}`;
    b.addEventListener("click", () => selectLecture(l));
    li.appendChild(b);
    list.appendChild(li);
    const opt = document.createElement("option");
    opt.value = l.id;
    opt.textContent = `L${l.number} ${l.title}`;
    scope.appendChild(opt);
  }
  const ready = course.lectures.find((l) => l.status === "ready") || course.lectures[0];
  if (ready) selectLecture(ready);
}

function chipFor(c) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = "chip";
  b.textContent = c.label;
  b.dataset.t = c.t_s;
  b.dataset.lecture = c.lecture_id;
  b.setAttribute("aria-label", `Play lecture ${c.lecture_number} at ${clock(c.t_s)}`);
  b.addEventListener("click", () => {
    const lecture = state.lectures.find((l) => l.id === c.lecture_id);
    if (lecture) selectLecture(lecture, c.t_s);
  });
  return b;
}

async function ask(question) {
  const box = document.createElement("div");
  box.className = "answer";
  const q = document.createElement("p");
  q.className = "q";
  q.textContent = question;
  const body = document.createElement("p");
  body.className = "body";
  body.textContent = "…";
  box.append(q, body);
  $("#answers").prepend(box);
  const res = await fetch(`/api/courses/${state.course.id}/ask`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "Accept": "text/event-stream" },
    body: JSON.stringify({ question, lecture_id: $("#scope").value || null, conversation_id: state.conversationId }),
  });
  if (!res.ok) {
    let msg = res.statusText;
    try { msg = (await res.json()).error.message; } catch (e) { /* not JSON */ }
    body.textContent = msg;
    box.classList.add("error");
    return;
  }
  body.textContent = "";
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  // server-sent events: blocks separated by a blank line, "event:" and "data:" fields
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      let event = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).trim();
      }
      const payload = data ? JSON.parse(data) : {};
      if (event === "sentence") {
        const span = document.createElement("span");
        span.className = "sentence";
        span.textContent = (body.childNodes.length ? " " : "") + payload.text;
        body.appendChild(span);
        payload.citations.forEach((c) => body.appendChild(chipFor(c)));
      } else if (event === "done") {
        state.conversationId = payload.conversation_id;
        if (payload.declined) box.classList.add("declined");
        box.dataset.answerId = payload.answer_id;
      } else if (event === "error") {
        body.textContent = payload.message;
      }
    }
  }
}

$("#ask-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const input = $("#question");
  const question = input.value.trim();
  if (!question) { input.focus(); return; }
  const btn = $("#ask-button");
  btn.disabled = true;
  try { await ask(question); input.value = ""; } finally { btn.disabled = false; }
});

$("#player").addEventListener("error", () => {
  if (state.current) $("#now-playing").textContent =
    `L${state.current.number} · ${state.current.title} — no video for this lecture (transcript only); chips highlight the transcript line.`;
});

const m = location.pathname.match(/^\/courses\/([0-9a-f-]{36})/);
(m ? showCourse(m[1]) : showHome()).catch((err) => {
  const p = document.createElement("p");
  p.className = "notice";
  p.setAttribute("role", "alert");
  p.textContent = `Could not load this page: ${err.message} `;
  const a = document.createElement("a");
  a.href = "/";
  a.textContent = "See all courses";
  p.appendChild(a);
  document.querySelector("header").after(p);
});
