// "Ask about this moment": while the video is paused the ask box carries the player's position as a
// visible "about 12:31" tag (× removes it until the next pause); a question asked with the tag sends it
// as `at`, so a question pointing at the screen ("what does this mean?") is answered from what is shown
// and said then. The "Ask about this moment" button (or Alt+M) asks about the current second whatever
// the question's wording (`at.focus`), pausing the video there; where there is no moment to ask about (a
// lecture with captions only, no video) it says why instead.
import { $, clock, state } from "./util.js";

let moment = null; // { lecture_id, t_s } while paused and not removed

function showTag() {
  $("#moment-tag-text").textContent = moment ? `about ${clock(moment.t_s)}` : "";
  $("#moment-tag").hidden = !moment;
}

function here() {
  const player = $("#player");
  if (!state.current || state.current.status !== "ready" || !(player.readyState >= 1)) return null;
  return { lecture_id: state.current.id, t_s: Math.round(player.currentTime * 10) / 10 };
}

function onPause() {
  const player = $("#player");
  if (!player.paused || player.ended) return;
  moment = here();
  showTag();
}

$("#player").addEventListener("pause", onPause);
$("#player").addEventListener("seeked", onPause);
$("#player").addEventListener("play", () => { moment = null; showTag(); });
$("#player").addEventListener("loadedmetadata", () => { $("#moment-note").textContent = ""; });
$("#player").addEventListener("emptied", () => { $("#moment-note").textContent = ""; });
$("#moment-remove").addEventListener("click", () => { moment = null; showTag(); $("#question").focus(); });

// The question's `at`: the tagged moment, when the question may be about its lecture (the whole course or
// that lecture); null otherwise.
export function momentFor(scope, focus = false) {
  const at = focus ? here() : moment;
  if (!at || (scope && scope !== at.lecture_id)) return null;
  return focus ? { ...at, focus: true } : { ...at };
}

// Why there is no moment to ask about: no ready lecture, no video (captions only), or the video still loading.
function noMoment() {
  if (!state.current || state.current.status !== "ready") return "Choose a ready lecture to ask about a moment of it.";
  if ($("#player").error) {
    return "This lecture has no video (captions only), so there is no moment on screen to ask about: ask in words instead.";
  }
  return "The video is still loading; try again in a moment.";
}

// The shortcut: pause where the video is and ask about that second.
export function bindMomentShortcut(askAboutMoment) {
  const go = () => {
    const player = $("#player");
    if (!player.paused) player.pause();
    moment = here();
    showTag();
    $("#moment-note").textContent = moment ? "" : noMoment();
    if (moment) askAboutMoment();
  };
  $("#ask-moment").addEventListener("click", go);
  document.addEventListener("keydown", (e) => {
    if (e.altKey && !e.ctrlKey && !e.metaKey && (e.key === "m" || e.key === "M" || e.code === "KeyM")) {
      e.preventDefault();
      go();
    }
  });
}
