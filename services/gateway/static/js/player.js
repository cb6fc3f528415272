// The lecture player: which lecture plays, seeking to a cited moment, captions, a fresh video URL
// when a presigned one expires, the citation chips that play a moment, and the lecture's checkpoints.
import { $, chipName, el, state } from "./util.js";
import { highlightTranscript, loadStudy, scrollTranscriptTo } from "./transcript.js";
import { loadNotes } from "./notes.js";
import { loadCheckpoints } from "./checkpoint.js";

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

export function selectLecture(lecture, seekTo) {
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
    loadStudy(lecture, (t) => selectLecture(lecture, t)).then(() => { if (seekTo !== undefined) highlightTranscript(seekTo, "cited"); })
      .catch(() => {});
    loadNotes(lecture, (t) => selectLecture(lecture, t));
    loadCheckpoints(lecture, chipFor);
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
    src: `/api/lectures/${lecture.id}/captions.vtt?slides=0` }));  // the slide is on screen: speech only
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

function showPlayer() {
  // a chip may sit far down the page (an earlier answer, or below the player on a phone): bring the
  // player into view at every width; no scrolling when it is already whole on screen ("nearest"),
  // no animation for those who ask for reduced motion
  const still = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  $("#player").scrollIntoView({ block: "nearest", behavior: still ? "auto" : "smooth" });
}

export function chipFor(c) {
  const b = el("button", { type: "button", class: "chip", text: c.label, "aria-label": chipName(c.lecture_number, c.t_s, c.label),
    dataset: { t: c.t_s, lecture: c.lecture_id } });
  b.addEventListener("click", () => {
    const lecture = state.lectures.find((l) => l.id === c.lecture_id);
    if (!lecture) return;
    selectLecture(lecture, c.t_s);
    showPlayer();
  });
  return b;
}
