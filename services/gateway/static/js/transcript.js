// A lecture's chapters and transcript beside the player: the list, the line being said, and the
// line a citation points to. A click on a chapter or line calls play(t) (t in seconds).
import { $, api, clock, el } from "./util.js";

export async function loadStudy(lecture, play) {
  const [detail, transcript] = await Promise.all([
    api(`/api/lectures/${lecture.id}`), api(`/api/lectures/${lecture.id}/transcript`)]);
  const chapters = $("#chapters");
  chapters.replaceChildren();
  $("#no-chapters").hidden = detail.chapters.length > 0;
  for (const c of detail.chapters) {
    // named by what it shows (WCAG 2.5.3, label in name): its time, title and summary
    const b = el("button", { type: "button" },
      el("span", { class: "t", text: clock(c.start_s) }), el("strong", { text: c.title }),
      el("span", { class: "sum", text: c.summary }));
    b.addEventListener("click", () => play(c.start_s));
    chapters.append(el("li", {}, b));
  }
  const list = $("#transcript");
  list.replaceChildren();
  for (const seg of transcript.segments) {
    const slide = seg.kind === "slide";
    const b = el("button", { type: "button" }, el("span", { class: "t", text: clock(seg.start_s) }),
      ...(slide ? [el("span", { class: "tag", text: "Slide" })] : []),
      el("span", { class: "line", text: seg.text }));
    b.addEventListener("click", () => play(seg.start_s));
    list.append(el("li", { dataset: { start: seg.start_s, end: seg.end_s }, ...(slide ? { class: "slide" } : {}) }, b));
  }
}

export function highlightTranscript(t, cls) {
  // the line being said at t: the last line that starts at or before t
  const items = [...document.querySelectorAll("#transcript li")];
  let hit = null;
  for (const li of items) if (parseFloat(li.dataset.start) <= t + 0.05) hit = li;
  items.forEach((li) => li.classList.toggle(cls, li === hit));
  if (hit && cls === "cited") scrollTranscriptTo(hit);
  return hit;
}

export function scrollTranscriptTo(li) {
  const box = $("#transcript");
  const top = li.offsetTop - box.offsetTop;
  if (top < box.scrollTop || top > box.scrollTop + box.clientHeight - 40) box.scrollTop = Math.max(0, top - 40);
}
