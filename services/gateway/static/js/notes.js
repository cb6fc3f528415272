// Notes pinned to moments: the signed-in person's private notes on the lecture playing, beside its
// transcript in time order. Add one at the player's current moment, choose one to play that moment,
// edit or delete it; export the lecture's or the whole course's notes as Markdown (links that open
// the page at each moment). Signed out, the section says to sign in.
import { $, api, clock, confirmDialog, el, state } from "./util.js";

let current = null;  // { lecture, play(t) } of the lecture whose notes are shown
let pinned = null;  // the moment of the note being written: the player's when its first letter was typed

function signedIn() {
  return Boolean(state.me && state.me.signed_in);
}

function now() {
  // the player's moment, inside the lecture (the server refuses a moment past its duration)
  const t = $("#player").readyState >= 1 ? $("#player").currentTime : 0;
  const end = current && current.lecture.duration_s;
  return Math.max(0, end ? Math.min(t, end) : t);
}

function noteTime() {
  return pinned !== null ? pinned : now();
}

function showMoment() {
  $("#note-add").textContent = `Add note at ${clock(noteTime())}`;
}

function status(text) {
  $("#note-status").textContent = text;
}

export async function loadNotes(lecture, play) {
  if (!current || current.lecture.id !== lecture.id) pinned = null;  // a moment of another lecture
  current = { lecture, play };
  const list = $("#notes-list");
  list.replaceChildren();
  $("#notes-signin").hidden = signedIn();
  $("#note-form").hidden = !signedIn();
  $("#notes-export").hidden = !signedIn();
  status("");
  if (!signedIn()) return;
  $("#notes-md-lecture").href = `/api/lectures/${lecture.id}/notes.md`;
  $("#notes-md-course").href = `/api/courses/${state.course.id}/notes.md`;
  showMoment();
  try {
    const data = await api(`/api/lectures/${lecture.id}/notes`);
    if (!current || current.lecture.id !== lecture.id) return;  // another lecture was chosen meanwhile
    for (const n of data.notes) list.append(noteItem(n));
    if (!data.notes.length) status("No notes on this lecture yet.");
  } catch (err) { status(`Could not load your notes: ${err.message}`); }
}

function noteItem(n) {
  const seekButton = el("button", { type: "button", class: "note-seek", "aria-label": `Play ${clock(n.t_s)}: ${n.text}` },
    el("span", { class: "t", text: clock(n.t_s) }), el("span", { class: "note-text", text: n.text }));
  seekButton.addEventListener("click", () => current.play(n.t_s));
  const edit = el("button", { type: "button", class: "linkish", text: "Edit", "aria-label": `Edit the note at ${clock(n.t_s)}` });
  const del = el("button", { type: "button", class: "linkish danger", text: "Delete",
    "aria-label": `Delete the note at ${clock(n.t_s)}` });
  const li = el("li", { dataset: { note: n.id, t: n.t_s } }, seekButton, el("span", { class: "note-actions" }, edit, " ", del));
  edit.addEventListener("click", () => li.replaceChildren(editForm(n)));
  del.addEventListener("click", () => removeNote(n));
  return li;
}

function editForm(n) {
  const id = `note-edit-${n.id}`;
  const text = el("textarea", { id, rows: "3", maxlength: "4000", required: "" });
  text.value = n.text;
  const cancel = el("button", { type: "button", class: "secondary small-btn", text: "Cancel" });
  cancel.addEventListener("click", () => reload());
  const form = el("form", { class: "note-edit" }, el("label", { for: id, class: "visually-hidden", text: `Edit the note at ${clock(n.t_s)}` }),
    text, el("span", { class: "note-actions" }, el("button", { type: "submit", class: "small-btn", text: "Save" }), " ", cancel));
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      await api(`/api/notes/${n.id}`, { method: "PATCH", json: { text: text.value } });
      await reload();
      status("Note saved.");
    } catch (err) { status(`Could not save the note: ${err.message}`); }
  });
  setTimeout(() => text.focus(), 0);
  return form;
}

async function removeNote(n) {
  if (!(await confirmDialog(`Delete your note at ${clock(n.t_s)}?`))) return;
  try {
    await api(`/api/notes/${n.id}`, { method: "DELETE" });
    await reload();
    status("Note deleted.");
  } catch (err) { status(`Could not delete the note: ${err.message}`); }
}

function reload() {
  return current ? loadNotes(current.lecture, current.play) : Promise.resolve();
}

$("#note-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  if (!current) return;
  const text = $("#note-text").value;
  const t = noteTime();
  try {
    await api(`/api/lectures/${current.lecture.id}/notes`, { method: "POST", json: { text, t_s: t } });
    $("#note-text").value = "";
    pinned = null;
    await reload();
    status(`Note added at ${clock(t)}.`);
  } catch (err) { status(`Could not add the note: ${err.message}`); }
});

// typing a note freezes its moment where the player was (the video may play on meanwhile); emptied,
// the box follows the player again
$("#note-text").addEventListener("input", () => {
  if (!$("#note-text").value.trim()) pinned = null;
  else if (pinned === null) pinned = now();
  showMoment();
});

$("#player").addEventListener("timeupdate", () => { if (current && signedIn()) showMoment(); });
$("#player").addEventListener("seeked", () => { if (current && signedIn()) showMoment(); });
