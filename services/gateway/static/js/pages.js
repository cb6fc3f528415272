// The simple pages: the course list (home), "page not found", the admin's role requests, and the contact form.
import { $, api, el, state } from "./util.js";

export async function showHome() {
  $("#home").hidden = false;
  const data = await api("/api/courses");
  const list = $("#course-list");
  list.replaceChildren();
  $("#no-courses").hidden = data.courses.length > 0;
  for (const c of data.courses) {
    const n = c.lecture_count;
    list.append(el("li", {}, el("a", { href: `/courses/${c.id}` },
      el("strong", { text: c.title }), el("span", { class: "muted", text: ` — ${n} lecture${n === 1 ? "" : "s"}` }),
      c.visibility === "private" ? el("span", { class: "badge", text: "private" }) : null)));
  }
}

// an address the client has no page for (the server answers it with status 404)
export function showNotFound() {
  $("#not-found").hidden = false;
  document.title = "Page not found · Lecture Copilot";
}

export async function showAdmin() {
  $("#admin").hidden = false;
  const data = await api("/api/role-requests");
  const list = $("#request-list");
  list.replaceChildren();
  $("#no-requests").hidden = data.requests.length > 0;
  for (const r of data.requests) {
    const li = el("li", {}, el("strong", { text: r.email }), el("span", { class: "muted small", text: r.reason ? ` — ${r.reason}` : "" }));
    for (const [what, label] of [["approve", "Approve"], ["deny", "Deny"]]) {
      const b = el("button", { type: "button", class: what === "deny" ? "secondary small-btn" : "small-btn", text: label,
        "aria-label": `${label} ${r.email}` });
      b.addEventListener("click", async () => {
        await api(`/api/role-requests/${r.id}/${what}`, { method: "POST" });
        li.replaceChildren(el("span", { text: `${r.email}: ${what === "approve" ? "approved" : "denied"}` }));
      });
      li.append(" ", b);
    }
    list.append(li);
  }
}

// ---- contact ---------------------------------------------------------------------------------------
export function showContact() {
  $("#contact").hidden = false;
  if (state.me.signed_in) $("#contact-email").value = state.me.email;
  $("#contact-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const status = $("#contact-status");
    try {
      await api("/api/contact", { method: "POST", json: { name: $("#contact-name").value.trim() || null,
        email: $("#contact-email").value.trim(), message: $("#contact-message").value } });
      status.textContent = "Sent. Thank you; we'll answer by email.";
      $("#contact-form").reset();
    } catch (err) {
      status.textContent = err.message;
      if (err.code === "contact_off") $("#contact-form").hidden = true;  // 404: this server has no contact form
    }
  });
}
