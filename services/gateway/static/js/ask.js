// Asking: a question streams its answer as server-sent events (sentences with citation chips),
// then thumbs up/down feedback; the conversation goes on until "New conversation".
import { $, api, el, errorOf, state, writeHeaders } from "./util.js";
import { chipFor } from "./player.js";
import { bindMomentShortcut, momentFor } from "./moment.js";

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

async function ask(question, focus = false) {
  const q = el("p", { class: "q", text: question });
  const body = el("p", { class: "body" }, el("span", { class: "typing", text: "…" }));
  const box = el("article", { class: "answer", "aria-busy": "true", "aria-label": `Answer to: ${question}` }, q, body);
  $("#answers").prepend(box);
  $("#ask-empty").hidden = true;
  const res = await fetch(`/api/courses/${state.course.id}/ask`, {
    method: "POST", credentials: "same-origin",
    headers: writeHeaders("POST", { "Content-Type": "application/json", "Accept": "text/event-stream" }),
    body: JSON.stringify({ question, lecture_id: $("#scope").value || null, conversation_id: state.conversationId,
      at: momentFor($("#scope").value, focus) }),
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

bindMomentShortcut(async () => {
  // the typed question about this moment, or "Explain this moment." when none is typed
  const input = $("#question");
  const question = input.value.trim() || "Explain this moment.";
  const btn = $("#ask-button");
  btn.disabled = true;
  try { await ask(question, true); input.value = ""; } finally { btn.disabled = false; }
});

$("#new-conversation").addEventListener("click", () => {
  state.conversationId = null;
  $("#answers").replaceChildren();
  $("#ask-empty").hidden = false;
  $("#conversation-note").hidden = true;
  $("#question").focus();
});
