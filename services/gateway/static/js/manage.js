// Managing: the instructor's courses (or a request for the instructor role), and one course's
// settings, members and lecture table.
import { $, api, clock, confirmDialog, el, reporting, state, statusText } from "./util.js";
import { watchLecture } from "./live.js";
import { setupQuizAdmin } from "./quizadmin.js";
import { setupUpload } from "./upload.js";

export async function showManage() {
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
  $("#create-form").addEventListener("submit", reporting($("#create-form"), async (e) => {
    e.preventDefault();
    const c = await api("/api/courses", { method: "POST", json: { title: $("#create-title").value, visibility: $("#create-visibility").value } });
    location.href = `/manage/${c.id}`;
  }));
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

export async function showManageCourse(courseId) {
  let rendered = false;
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
    $("#mc-checkpoints").checked = !!c.checkpoints;
    const tbody = $("#mc-lectures");
    rowStreams.forEach((es) => es.close()); // one live status stream per processing row, renewed on each render
    rowStreams.length = 0;
    tbody.replaceChildren();
    $("#mc-empty").hidden = c.lectures.length > 0;
    for (const l of c.lectures) tbody.append(lectureRow({ ...l, course_id: c.id }, render));
    $("#manage-course").hidden = false;
    if (rendered) setupQuizAdmin(c); // a lecture that became ready (or was deleted) changes the practice picker
    return c;
  };
  const course = await render();
  rendered = true;
  setupQuizAdmin(course);
  const members = async () => {
    const data = await api(`/api/courses/${courseId}/members`);
    const ul = $("#mc-members");
    ul.replaceChildren();
    for (const email of data.members) {
      const rm = el("button", { type: "button", class: "secondary small-btn", text: "Remove", "aria-label": `Remove ${email}` });
      rm.addEventListener("click", reporting($("#mc-members"), async () => {
        await api(`/api/courses/${courseId}/members/${encodeURIComponent(email)}`, { method: "DELETE" });
        await members();
      }));
      ul.append(el("li", {}, el("span", { text: `${email} ` }), rm));
    }
    if (!data.members.length) ul.append(el("li", { class: "muted small", text: "No members yet." }));
  };
  await members();
  $("#member-form").addEventListener("submit", reporting($("#member-form"), async (e) => {
    e.preventDefault();
    await api(`/api/courses/${courseId}/members`, { method: "POST", json: { email: $("#member-email").value.trim() } });
    $("#member-email").value = "";
    await members();
  }));
  const saved = $("#mc-saved");  // says the settings were saved, until one is changed again
  $("#rename-course").addEventListener("input", () => { saved.textContent = ""; });
  $("#rename-course").addEventListener("submit", reporting($("#rename-course"), async (e) => {
    e.preventDefault();
    saved.textContent = "";
    await api(`/api/courses/${courseId}`, { method: "PATCH", json: { title: $("#mc-new-title").value, visibility: $("#mc-visibility").value,
      assessment_mode: $("#mc-assessment").checked, checkpoints: $("#mc-checkpoints").checked } });
    await render();
    saved.textContent = "Saved.";
  }));
  $("#mc-delete").addEventListener("click", reporting($("#mc-delete"), async () => {
    if (!(await confirmDialog(`Delete the course "${$("#mc-title").textContent}" with all its lectures, videos and answers? This can't be undone.`))) return;
    await api(`/api/courses/${courseId}`, { method: "DELETE" });
    location.href = "/manage";
  }));
  setupUpload(courseId, render);
}

const rowStreams = [];

function lectureRow(l, rerender) {
  const st = el("span", { class: `st st-${l.status}`, text: statusText(l) });
  if (l.status === "failed" && l.error) st.title = l.error;
  const actions = el("td", { class: "actions" });
  const rename = el("button", { type: "button", class: "secondary small-btn", text: "Rename", "aria-label": `Rename lecture ${l.number}` });
  rename.addEventListener("click", () => {
    const input = el("input", { value: l.title, maxlength: "200", required: "", "aria-label": `New title for lecture ${l.number}` });
    const save = el("button", { type: "submit", class: "small-btn", text: "Save" });
    const f = el("form", { class: "inline-form" }, input, save);
    f.addEventListener("submit", reporting(f, async (e) => {
      e.preventDefault();
      await api(`/api/lectures/${l.id}`, { method: "PATCH", json: { title: input.value } });
      await rerender();
    }));
    titleCell.replaceChildren(f);
    input.focus();
  });
  const del = el("button", { type: "button", class: "danger small-btn", text: "Delete", "aria-label": `Delete lecture ${l.number}` });
  del.addEventListener("click", reporting(del, async () => {
    if (!(await confirmDialog(`Delete lecture ${l.number} "${l.title}", its video, transcript and search index?`))) return;
    await api(`/api/lectures/${l.id}`, { method: "DELETE" });
    await rerender();
  }));
  actions.append(rename, del);
  if (l.status === "ready") {
    actions.prepend(el("span", { class: "captions small" }, "Captions ",
      ...[["vtt", "WebVTT"], ["srt", "SRT"]].flatMap(([ext, name], i) => [i ? " · " : "",
        el("a", { href: `/api/lectures/${l.id}/captions.${ext}`, download: "", text: ext.toUpperCase(),
          "aria-label": `Download the captions of lecture ${l.number} as ${name}` })])));
  }
  if (l.status === "failed") {
    const retry = el("button", { type: "button", class: "small-btn", text: "Retry", "aria-label": `Retry lecture ${l.number}` });
    retry.addEventListener("click", reporting(retry, async () => {
      await api(`/api/lectures/${l.id}/retry`, { method: "POST" });
      await rerender();
    }));
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
