// Practice (exam prep): a lecture's or the course's multiple-choice questions, checked by the server,
// each answer with its explanation, a chip to the moment it comes from, and a report button.
import { $, api, el, state, withoutLabel } from "./util.js";
import { chipFor } from "./player.js";

export function setupPractice(course, lectureId) {
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
  // the lecture once: a question that names it ("… from Lecture 1?") gets no "(L1)" after it
  const named = new RegExp(`\\bLecture ${q.lecture_number}\\b`).test(q.question);
  const legend = el("legend", {}, el("span", { class: "qn", text: `${i + 1}. ` }), el("span", { text: q.question }),
    named ? null : el("span", { class: "muted small", text: ` (L${q.lecture_number})` }));
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
    // the set is checked: a skipped question's options are locked too (Try again starts a new round)
    document.querySelectorAll("#quiz-list input[type=radio]").forEach((inp) => { inp.disabled = true; });
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
    el("p", { class: "explain" }, el("span", { text: `${withoutLabel(r.explanation, r.citation.label)} ` }), chipFor(r.citation)),
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
