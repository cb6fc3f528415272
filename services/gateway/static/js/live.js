// A lecture's processing stages, followed live (server-sent events, else polling).
import { api, el } from "./util.js";

const STAGES = [["queued", "Queued"], ["transcribing", "Transcribing"], ["slides", "Reading slides"],
  ["indexing", "Indexing"], ["ready", "Ready"]];

// captionsOnly: a lecture uploaded as captions has no video frames, so no slides to read: that stage shows
// as skipped, never done
export function stageList(container, captionsOnly = false) {
  container.replaceChildren(...STAGES.map(([key, label]) => {
    const skipped = captionsOnly && key === "slides";
    return el("li", { class: skipped ? "skipped" : "", dataset: { stage: key } }, el("span", { class: "dot", "aria-hidden": "true" }),
      el("span", { class: "name", text: skipped ? `${label} — none (captions only)` : label }), el("span", { class: "pct muted small" }));
  }));
}

function showStage(container, st) {
  const order = STAGES.map(([k]) => k);
  const at = st.status === "ready" ? order.length - 1 : Math.max(0, order.indexOf(st.stage));
  container.querySelectorAll("li").forEach((li, i) => {
    const key = li.dataset.stage;
    if (li.classList.contains("skipped")) return;
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
export function watchLecture(lectureId, onStatus) {
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
      } catch { /* a network blip: try again */ }
      if (!stopped) timer = setTimeout(poll, 3000);
    };
    poll();
  });
  return { close() { stopped = true; es.close(); clearTimeout(timer); } };
}

export function followLecture(lectureId, container, statusEl, onEnd) {
  const watch = watchLecture(lectureId, (st) => {
    showStage(container, st);
    if (st.status === "ready") statusEl.textContent = "Ready: students can ask about it now.";
    else if (st.status === "failed") statusEl.textContent = `Processing failed: ${st.error || "unknown reason"}`;
    else statusEl.textContent = `${st.stage}…`;
    if (st.status === "ready" || st.status === "failed") { watch.close(); if (onEnd) onEnd(st); }
  });
  return watch;
}
