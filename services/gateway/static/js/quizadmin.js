// Manage: a lecture's practice questions (generate, edit, delete, see reports).
import { $, api, chipName, confirmDialog, el, reporting, withoutLabel } from "./util.js";

let shown = null; // the course the section shows (its latest render), for the listeners wired once
let listed = null; // the ready lectures the picker lists (id, number, title): a render that changes none reloads nothing

// Shows the course's ready lectures in the picker and the chosen one's set. Called again on each render of
// the manage page (a lecture that becomes ready while the page is open joins the picker), which changes
// something only when the ready lectures did; the picker and the button are wired on the first call only.
export async function setupQuizAdmin(course) {
  const pick = $("#mc-quiz-lecture");
  const first = shown === null;
  const chosen = pick.value;
  shown = course;
  const ready = course.lectures.filter((l) => l.status === "ready");
  const key = ready.map((l) => `${l.id} ${l.number} ${l.title}`).join("\n");
  if (!first && key === listed) return; // a render for something else (a lecture processing, the settings saved)
  listed = key;
  pick.replaceChildren(...ready.map((l) => el("option", { value: l.id, text: `L${l.number} ${l.title}` })));
  if (ready.some((l) => l.id === chosen)) pick.value = chosen;
  $("#mc-quiz-generate").disabled = !ready.length;
  if (first) wireQuizAdmin(pick);
  if (!ready.length) {
    $("#mc-quiz-list").replaceChildren();
    $("#mc-quiz-status").textContent = "Questions can be written once a lecture is ready.";
    return;
  }
  $("#mc-quiz-status").textContent = "Loading questions…"; // a lecture's first set may be written now
  // say per lecture how many questions it has and how many were reported
  ready.forEach(async (l) => {
    try {
      labelLecture(course, l.id, await api(`/api/lectures/${l.id}/quiz/admin`));
    } catch { /* the list below says it */ }
  });
  await loadQuizAdmin(course, pick.value);
}

function wireQuizAdmin(pick) {
  pick.addEventListener("change", () => loadQuizAdmin(shown, pick.value));
  $("#mc-quiz-generate").addEventListener("click", async () => {
    const status = $("#mc-quiz-status");
    const btn = $("#mc-quiz-generate");
    const n = document.querySelectorAll("#mc-quiz-list li.qa").length;
    if (n && !(await confirmDialog("Replace this lecture's questions (with their reports and attempts) with a new set?", "Regenerate"))) return;
    btn.disabled = true;
    status.textContent = "Writing questions…";
    try {
      const gen = await api(`/api/lectures/${pick.value}/quiz/generate`, { method: "POST" });
      await loadQuizAdmin(shown, pick.value);
      status.textContent = `Wrote ${gen.kept} questions (${gen.method}; ${gen.written - gen.kept} dropped by the check).`;
    } catch (err) { status.textContent = err.message; }
    finally { btn.disabled = false; }
  });
}

// the picker's line for a lecture: how many questions it has and how many were reported (kept current
// as questions are written or deleted)
function labelLecture(course, lectureId, data) {
  const l = course.lectures.find((x) => x.id === lectureId);
  const opt = $("#mc-quiz-lecture").querySelector(`option[value="${lectureId}"]`);
  if (!l || !opt) return;
  const reported = data.questions.filter((q) => q.reports > 0).length;
  opt.textContent = `L${l.number} ${l.title} — ${data.questions.length} questions${reported ? `, ${reported} reported` : ""}`;
}

async function loadQuizAdmin(course, lectureId) {
  const list = $("#mc-quiz-list");
  const status = $("#mc-quiz-status");
  list.replaceChildren();
  try {
    const data = await api(`/api/lectures/${lectureId}/quiz/admin`);
    labelLecture(course, lectureId, data);
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
      text: q.citation.label, "aria-label": chipName(q.citation.lecture_number, q.citation.t_s, q.citation.label) });
    const stats = el("p", { class: "muted small" },
      `Answered ${q.attempts}×${q.attempts ? `, wrong ${q.wrong}×` : ""} · written ${q.method === "extractive" ? "from the transcript" : `by ${q.method}`}`,
      q.reports ? el("span", { class: "badge warn", text: `reported ${q.reports}×` }) : null);
    const comments = q.report_comments.length
      ? el("ul", { class: "qa-reports small" }, ...q.report_comments.map((c) => el("li", { text: `“${c}”` }))) : null;
    const edit = el("button", { type: "button", class: "secondary small-btn", text: "Edit", "aria-label": `Edit question ${i + 1}` });
    const del = el("button", { type: "button", class: "danger small-btn", text: "Delete", "aria-label": `Delete question ${i + 1}` });
    edit.addEventListener("click", () => editForm());
    del.addEventListener("click", reporting(del, async () => {
      if (!(await confirmDialog(`Delete question ${i + 1}, “${q.question}”?`))) return;
      await api(`/api/quiz/questions/${q.id}`, { method: "DELETE" });
      await loadQuizAdmin(course, lectureId);
    }));
    li.replaceChildren(...[el("p", { class: "qa-stem" }, el("strong", { text: `${i + 1}. ` }), el("span", { text: q.question })),
      opts, el("p", { class: "small" }, el("span", { text: `${withoutLabel(q.explanation, q.citation.label)} ` }), cite), stats, comments,
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
