// Who is signed in (the nav bar), signing out, and signing in by a mailed link.
import { $, api, state } from "./util.js";

export async function loadMe() {
  state.me = await api("/api/me");
  const me = state.me;
  $("#nav-signin").hidden = me.signed_in;
  $("#nav-user").hidden = !me.signed_in;
  $("#nav-email").textContent = me.signed_in ? `${me.email} (${me.role})` : "";
  $("#nav-manage").hidden = !me.signed_in;
  $("#nav-admin").hidden = !(me.signed_in && me.role === "admin");
}

$("#signout").addEventListener("click", async () => {
  await api("/api/auth/logout", { method: "POST" }).catch(() => {});
  location.href = "/";
});

export function showSignin() {
  $("#signin").hidden = false;
  $("#signin-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const email = $("#signin-email").value.trim();
    const status = $("#signin-status");
    try {
      await api("/api/auth/magic-link", { method: "POST", json: { email } });
      status.textContent = `We sent a sign-in link to ${email}. It works once, for 15 minutes.`;
    } catch (err) { status.textContent = err.message; }
  });
}

export function showVerify() {
  $("#verify").hidden = false;
  const token = new URLSearchParams(location.search).get("token") || "";
  history.replaceState(null, "", "/auth/verify"); // keep the token out of history
  $("#verify-button").addEventListener("click", async () => {
    try {
      const who = await api("/api/auth/verify", { method: "POST", json: { token } });
      $("#verify-status").textContent = `Signed in as ${who.email}.`;
      location.href = who.role === "student" ? "/" : "/manage";
    } catch (err) { $("#verify-status").textContent = err.message; }
  });
}
