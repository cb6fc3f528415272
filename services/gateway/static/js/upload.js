// Uploading a lecture from the manage page: captions in one request, a video as a resumable upload,
// with byte progress and then its processing stages.
import { $, api, writeHeaders } from "./util.js";
import { followLecture, stageList } from "./live.js";

// One request with upload progress: resolves with the parsed JSON answer of a 2xx, else rejects
// with an Error carrying status and the error's code and fields (a dropped connection: status 0).
function sendWithProgress(method, path, body, headers, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, path);
    for (const [k, v] of Object.entries(writeHeaders(method, headers))) xhr.setRequestHeader(k, v);
    xhr.upload.addEventListener("progress", (e) => { if (e.lengthComputable) onProgress(e.loaded, e.total); });
    xhr.addEventListener("load", () => {
      let data = {};
      try { data = JSON.parse(xhr.responseText); } catch { /* not JSON */ }
      if (xhr.status >= 200 && xhr.status < 300) return resolve(data);
      const err = new Error((data.error && data.error.message) || `Upload failed (HTTP ${xhr.status})`);
      reject(Object.assign(err, { status: xhr.status, code: data.error && data.error.code, detail: data.error || {} }));
    });
    xhr.addEventListener("error", () => reject(Object.assign(new Error("The connection was interrupted."), { status: 0 })));
    xhr.send(body);
  });
}

function uploadWithProgress(courseId, form, onProgress) {
  return sendWithProgress("POST", `/api/courses/${courseId}/lectures`, form, {}, onProgress);
}

// A video goes up as a resumable upload (POST …/uploads, then PUTs of UPLOAD_CHUNK bytes): the start
// refuses what the file would be refused for (a number the course has, the size) before any byte is
// sent, and a dropped or failed chunk is sent again from the offset the server gives, up to
// UPLOAD_RETRIES times in a row, waiting a little longer each time. Resolves {lecture_id}.
// (16 MiB: at least LC_UPLOAD_MIN_CHUNK_BYTES' default 5 MiB, and under a minute at 3 Mbit/s.)
const UPLOAD_CHUNK = 16 * 1048576;
const UPLOAD_RETRIES = 5;
// 429: this address holds its share of the server's threads waiting for bytes (several slow uploads at once)
const RETRYABLE = (err) => err.status === 0 || err.status === 408 || err.status === 429 || err.status >= 500 ||
  (err.status === 409 && (err.code === "wrong_offset" || err.code === "busy"));

async function uploadResumable(courseId, file, fields, onProgress) {
  let st = await api(`/api/courses/${courseId}/uploads`, { method: "POST",
    json: { filename: file.name, size: file.size, ...fields } });
  const id = st.upload_id;
  let failures = 0;
  onProgress(0, file.size);
  while (st.state === "receiving" || st.state === "finishing") {
    if (st.state === "finishing") {  // all bytes are in (the last answer was lost): its checks are running
      await new Promise((r) => setTimeout(r, 2000));
      st = await api(`/api/uploads/${id}`);
      continue;
    }
    const at = st.offset, end = Math.min(file.size, at + UPLOAD_CHUNK);
    try {
      st = await sendWithProgress("PUT", `/api/uploads/${id}`, file.slice(at, end),
        { "Content-Range": `bytes ${at}-${end - 1}/${file.size}`, "Content-Type": "application/octet-stream" },
        (loaded) => onProgress(at + loaded, file.size));
      failures = 0;
    } catch (err) {
      if (!RETRYABLE(err) || ++failures > UPLOAD_RETRIES) throw err;
      onProgress(at, file.size, `${err.message} Resuming (try ${failures} of ${UPLOAD_RETRIES})…`);
      await new Promise((r) => setTimeout(r, 1000 * failures));
      st = await api(`/api/uploads/${id}`);  // where to resume: the bytes the server has
    }
  }
  if (st.lecture_id) return { lecture_id: st.lecture_id };
  throw new Error(st.error || `The upload was ${st.state}.`);
}

function mb(n) { return `${(n / 1048576).toFixed(n < 10485760 ? 1 : 0)} MB`; }

// The upload form of the course courseId's manage page; render() redraws the page's lecture table.
export function setupUpload(courseId, render) {
  let following = null;  // the watch on the last upload's processing, which writes the same status line
  $("#upload-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const file = $("#up-file").files[0];
    if (!file) return;
    if (following) { following.close(); following = null; }  // the status line is the new upload's now
    const isCaptions = /\.(vtt|srt)$/i.test(file.name);
    const fields = {};
    if ($("#up-title").value.trim()) fields.title = $("#up-title").value.trim();
    if ($("#up-number").value) fields.number = Number($("#up-number").value);
    const box = $("#upload-progress");
    box.hidden = false;
    $("#up-name").textContent = file.name;
    const bar = $("#up-bytes");
    const stages = $("#up-stages");
    stageList(stages, isCaptions);
    delete stages.dataset.status;
    $("#up-status").textContent = "Uploading…";
    $("#up-button").disabled = true;
    const progress = (loaded, total, note) => {
      bar.max = total; bar.value = loaded;
      $("#up-bytes-text").textContent = `${mb(loaded)} of ${mb(total)} (${Math.round((100 * loaded) / total)}%)`;
      $("#up-status").textContent = note || "Uploading…";
    };
    try {
      let res;
      if (isCaptions) {  // a small text file: one multipart request
        const fd = new FormData();
        for (const [k, v] of Object.entries(fields)) fd.append(k, String(v));
        fd.append("captions", file, file.name);
        res = await uploadWithProgress(courseId, fd, progress);
      } else {
        res = await uploadResumable(courseId, file, fields, progress);
      }
      // the form is cleared now, before the table's redraw: a file picked while it redraws is kept
      $("#upload-form").reset();
      bar.value = bar.max;
      $("#up-bytes-text").textContent = "Uploaded.";
      box.dataset.lectureId = res.lecture_id;
      await render();
      following = followLecture(res.lecture_id, stages, $("#up-status"), () => render());
    } catch (err) {
      $("#up-status").textContent = err.message;
    } finally { $("#up-button").disabled = false; }
  });
}
