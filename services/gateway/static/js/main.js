// Lecture Copilot web client (native ES modules, no build step): courses, the lecture player with
// transcript and chapters, streamed cited answers with feedback, sign-in by mailed link, instructor
// management (upload with live processing stages), insights, admin approvals, help and contact.
// No inline script: the page's CSP allows scripts from this origin and the page's nonce (this entry
// point carries it; the modules it imports come from /static/js).
import { $, notice, state } from "./util.js";
import { loadMe, showSignin, showVerify } from "./account.js";
import "./ask.js";
import { showCourse } from "./course.js";
import { showInsights } from "./insights.js";
import { showManage, showManageCourse } from "./manage.js";
import { showAdmin, showContact, showHome, showNotFound } from "./pages.js";

async function route() {
  await loadMe().catch(() => { state.me = { signed_in: false }; });
  const p = location.pathname;
  let m;
  if ((m = p.match(/^\/courses\/([0-9a-f-]{36})\/practice/))) return showCourse(m[1], "practice");
  if ((m = p.match(/^\/courses\/([0-9a-f-]{36})/))) return showCourse(m[1]);
  if ((m = p.match(/^\/manage\/([0-9a-f-]{36})\/insights/))) return showInsights(m[1]);
  if ((m = p.match(/^\/manage\/([0-9a-f-]{36})/))) return showManageCourse(m[1]);
  if (p === "/manage") return showManage();
  if (p === "/admin") return showAdmin();
  if (p === "/signin") return showSignin();
  if (p === "/auth/verify") return showVerify();
  if (p === "/help") { $("#help").hidden = false; return; }
  if (p === "/contact") return showContact();
  if (p === "/") return showHome();
  return showNotFound();
}

route().catch((err) => (err.status === 404 ? showNotFound() : notice(`Could not load this page: ${err.message}`)));
