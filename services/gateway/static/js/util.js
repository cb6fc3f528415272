// Shared pieces of the web client: the page's state, DOM helpers, the JSON API with its CSRF header,
// the confirm dialog and the page-level notice.
export const $ = (sel) => document.querySelector(sel);
export const state = { me: null, course: null, lectures: [], current: null, conversationId: null, pendingSeek: null };

export function clock(t) {
  t = Math.max(0, Math.floor(t || 0));
  const h = Math.floor(t / 3600), m = Math.floor((t % 3600) / 60), s = t % 60;
  return h ? `${h}:${String(m).padStart(2, "0")}:${String(s).padStart(2, "0")}` : `${m}:${String(s).padStart(2, "0")}`;
}

// a chip's accessible name: its visible label first (WCAG 2.5.3, label in name), then what it does
export function chipName(lectureNumber, t, label = `L${lectureNumber} · ${clock(t)}`) {
  return `${label}: play lecture ${lectureNumber} at ${clock(t)}`;
}

// an explanation's text without the "(L4 · 0:22)" it names its moment with: the chip beside it shows that
export function withoutLabel(text, label) {
  return text.replaceAll(` (${label})`, "").replaceAll(`(${label})`, "").trim();
}

export function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

export function writeHeaders(method, headers = {}) {
  if (method !== "GET" && method !== "HEAD" && state.me && state.me.csrf_token) headers["X-CSRF-Token"] = state.me.csrf_token;
  return headers;
}

export async function errorOf(res) {
  try { return (await res.json()).error.message; } catch { return res.statusText || `HTTP ${res.status}`; }
}

export async function api(path, opts = {}) {
  const method = (opts.method || "GET").toUpperCase();
  const headers = writeHeaders(method, opts.headers || {});
  let body = opts.body;
  if (opts.json !== undefined) { headers["Content-Type"] = "application/json"; body = JSON.stringify(opts.json); }
  const res = await fetch(path, { method, headers, body, credentials: "same-origin" });
  if (!res.ok) {
    let error = {};
    try { error = (await res.json()).error || {}; } catch { /* not JSON: the status line says it */ }
    const err = new Error(error.message || res.statusText || `HTTP ${res.status}`);
    err.status = res.status;
    err.code = error.code;  // e.g. contact_off
    throw err;
  }
  return res.status === 204 ? null : res.json();
}

// "3 lectures", or "3 lectures ready of 4" while some are processing or failed
export function lecturesReady(lectures) {
  const ready = lectures.filter((l) => l.status === "ready").length;
  const word = (n) => `${n} lecture${n === 1 ? "" : "s"}`;
  return ready === lectures.length ? word(ready) : `${word(ready)} ready of ${lectures.length}`;
}

export function confirmDialog(text, okLabel = "Delete") {
  const d = $("#confirm");
  $("#confirm-text").textContent = text;
  $("#confirm-ok").textContent = okLabel;
  return new Promise((resolve) => {
    d.addEventListener("close", () => resolve(d.returnValue === "ok"), { once: true });
    d.returnValue = "";
    d.showModal();
    $("#confirm-cancel").focus();
  });
}

// An async event handler whose failure is said next to where it happened: the error's message (the API's
// sentence) in an alert placed after `anchor`, emptied when the handler is run again.
export function reporting(anchor, handler) {
  return async (e) => {
    let box = anchor.nextElementSibling;
    if (!box || !box.classList.contains("form-error")) {
      box = el("p", { class: "form-error", role: "alert" });
      anchor.after(box);
    }
    box.textContent = "";
    try {
      await handler(e);
    } catch (err) {
      if (box.isConnected) box.textContent = err.message;
      else throw err;
    }
  };
}

export function notice(text) {
  const p = el("p", { class: "notice", role: "alert" }, `${text} `, el("a", { href: "/", text: "See all courses" }));
  document.querySelector("header").after(p);
}


export function statusText(l) {
  if (l.status === "ready") return "ready";
  if (l.status === "failed") return "failed";
  if (l.status === "processing") return `${l.stage}…`;
  return l.status;
}
