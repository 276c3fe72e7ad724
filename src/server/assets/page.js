const $ = (id) => document.getElementById(id);
let running = null;
// Whether the index answers, as the overview last said: Run and Check wait for it.
let healthy = true;
const TOKEN_WRONG = "the token is missing or wrong";
function token() { return sessionStorage.getItem("solr-dedup-token") || ""; }
// A server with a token and none given yet: the page asks for it first, and sends nothing until then.
function waitingForToken() { return needsToken && !token(); }
function askForToken() {
  $("token-box").style.display = "block";
  $("overview").innerHTML = '<p class="muted">The index is shown once the token is given (above).</p>';
  setButtons();
  $("token").focus();
}
async function api(path, body) {
  const headers = {};
  if (token()) headers["Authorization"] = "Bearer " + token();
  const init = { headers };
  if (body !== undefined) { init.method = "POST"; headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
  const r = await fetch(path, init);
  if (r.status === 401) {
    $("token-box").style.display = "block";
    setButtons();
    throw new Error(TOKEN_WRONG);
  }
  if ($("message").textContent === TOKEN_WRONG) say("");
  return r;
}
function say(text, bad) { const m = $("message"); m.textContent = text; m.className = bad ? "bad" : "muted"; }
async function fragment(id, path) {
  const r = await api(path);
  $(id).innerHTML = await r.text();
  if (id === "overview") applyHealth();
}
function setButtons() {
  $("btn-run").disabled = $("btn-check").disabled = !!running || !healthy || waitingForToken();
}
// Run and Check are disabled while the index does not answer; the reason is shown beside them.
function applyHealth() {
  const h = $("health");
  const state = h ? h.dataset.healthy : "yes";
  healthy = state === "yes";
  const blocked = $("run-blocked");
  if (healthy) { blocked.hidden = true; blocked.textContent = ""; }
  else {
    blocked.hidden = false;
    blocked.textContent = state === "none" ? "Run and Check need an index: start serve with --solr URL or --input FILE."
      : "Run and Check wait until the index answers: " + h.textContent.trim();
  }
  setButtons();
}
function showProgress(run) {
  const box = $("progress-box"), bar = $("progress");
  if (!run) { box.hidden = true; return; }
  box.hidden = false;
  const p = run.progress || { phase: "starting", done: 0, rate: 0, round: 0, percent: 0 };
  // One bar for the whole run; the phase is named beside it.
  const percent = Math.max(0, Math.min(p.percent || 0, 100));
  bar.max = 100; bar.value = percent;
  $("progress-phase").textContent = `${p.phase} (${Math.floor(percent)} %)`;
  const whole = (n) => Math.round(n).toLocaleString();
  const rate = p.rate >= 10 ? whole(p.rate) : p.rate.toLocaleString(undefined, { maximumFractionDigits: 1 });
  const eta = (s) => s < 60 ? `${Math.round(s)}s` : s < 3600 ? `${Math.floor(s / 60)}m ${String(Math.round(s % 60)).padStart(2, "0")}s`
    : `${Math.floor(s / 3600)}h ${String(Math.floor(s % 3600 / 60)).padStart(2, "0")}m`;
  $("progress-text").textContent = `${run.kind} ${run.id}: ${p.phase}, ${whole(Math.min(p.done, p.total ?? p.done))}` +
    (p.total != null ? ` of ${whole(p.total)}` : "") + ` documents, ${rate}/s` +
    (p.eta != null ? `, about ${eta(p.eta)} left` : "") + `, round ${p.round}`;
}
let idle = 0;
async function poll() {
  try {
    const r = await api("api/runs/current");
    const run = (await r.json()).run;
    showProgress(run);
    $("btn-cancel").disabled = !run;
    setButtons();
    if (running && (!run || run.id !== running)) {
      const ended = running;
      running = run ? run.id : null;
      await fragment("overview", "ui/overview");
      const done = await (await api("api/runs/" + ended)).json();
      say(`Run ${ended} ${done.state}` + (done.error ? `: ${done.error}` : "."), done.state !== "succeeded");
    } else if (run && !running) {
      running = run.id;
      await fragment("overview", "ui/overview");
    } else if (!run && ++idle % 5 === 0) {
      // Health, counts and runs started by the schedule, every 10 s while idle.
      await fragment("overview", "ui/overview");
    }
  } catch (e) { say(e.message, true); }
  setTimeout(poll, running ? 400 : 2000);
}
async function start(check) {
  try {
    const r = await api("api/runs", { check, full: $("opt-full").checked, dry_run: $("opt-dry").checked });
    const answer = await r.json();
    if (r.status === 202) {
      running = answer.id; setButtons();
      // A full run is asked for once: the next one is incremental unless ticked again.
      $("opt-full").checked = false;
      say(`${check ? "Check" : "Run"} ${answer.id} started.`); showProgress(answer.run);
    }
    else say(answer.error, true);
  } catch (e) { say(e.message, true); }
}
$("btn-run").onclick = () => start(false);
$("btn-check").onclick = () => start(true);
$("btn-cancel").onclick = async () => {
  if (!running) return;
  try { const r = await api(`api/runs/${running}/cancel`, {}); if (r.status !== 202) say((await r.json()).error, true); else say("Cancelling after the batch in flight…"); }
  catch (e) { say(e.message, true); }
};
// Groups ten at a time, up to the API's hundred.
let groupsShown = 10;
async function showGroups() {
  try {
    const host = $("groups-host").value.trim();
    await fragment("groups", `ui/groups?dimension=${encodeURIComponent($("groups-dimension").value)}&limit=${groupsShown}` +
      (host ? "&host=" + encodeURIComponent(host) : ""));
    const listed = document.querySelectorAll("#groups details.group").length;
    $("btn-more-groups").hidden = listed < groupsShown || groupsShown >= 100;
  } catch (e) { say(e.message, true); }
}
$("btn-groups").onclick = () => { groupsShown = 10; $("groups").innerHTML = '<p class="muted">Loading…</p>'; showGroups(); };
$("btn-more-groups").onclick = () => { groupsShown = Math.min(groupsShown + 10, 100); showGroups(); };
$("lookup-form").onsubmit = async (ev) => {
  ev.preventDefault();
  const q = $("lookup-q").value.trim();
  if (!q) return;
  $("lookup").innerHTML = '<p class="muted">Looking…</p>';
  try { await fragment("lookup", "ui/lookup?q=" + encodeURIComponent(q)); }
  catch (e) { say(e.message, true); }
};
// A member's "flags and groups" looks it up here, rather than in Solr's raw JSON.
document.addEventListener("click", (ev) => {
  const link = ev.target.closest("a[data-lookup]");
  if (!link) return;
  ev.preventDefault();
  $("lookup-q").value = link.dataset.lookup;
  $("lookup-form").requestSubmit();
  $("lookup-q").scrollIntoView({ block: "center" });
});
$("btn-test").onclick = async () => {
  const urls = $("urls").value.split("\n").map((u) => u.trim()).filter((u) => u);
  const table = $("url-results");
  table.textContent = "";
  if (!urls.length) return;
  try {
    const r = await api("api/urls/predict", { urls });
    const answer = await r.json();
    if (r.status !== 200) { say(answer.error, true); return; }
    const head = table.insertRow();
    for (const t of ["URL", "canonical", "duplicate of", "probability"]) { const th = document.createElement("th"); th.textContent = t; head.appendChild(th); }
    const labels = ["URL", "canonical", "duplicate of", "probability"];
    for (const a of answer.answers) {
      const row = table.insertRow();
      row.className = "url-result";
      row.dataset.duplicate = a.duplicate_of ? "yes" : "no";
      // duplicate_of is the copy search shows; the page the canonical form met, when another, beside it.
      const dup = !a.duplicate_of ? "new" : a.duplicate_of.url + (a.matched ? ` (met ${a.matched.url}, a hidden double)` : "");
      const cells = a.error ? [a.url, a.error, "", ""] :
        [a.url, a.canonical, dup, a.duplicate_of ? a.probability.toFixed(3) : ""];
      cells.forEach((c, i) => { const cell = row.insertCell(); cell.textContent = c; cell.dataset.label = labels[i]; });
    }
  } catch (e) { say(e.message, true); }
};
let polling = false;
function begin() {
  fragment("overview", "ui/overview").catch((e) => say(e.message, true));
  if (!polling) { polling = true; poll(); }
}
$("btn-token").onclick = () => {
  const given = $("token").value.trim();
  if (!given) { $("token").focus(); return; }
  sessionStorage.setItem("solr-dedup-token", given);
  $("token-box").style.display = "none";
  if ($("message").textContent === TOKEN_WRONG) say("");
  setButtons();
  begin();
};
$("token").addEventListener("keydown", (ev) => { if (ev.key === "Enter") $("btn-token").click(); });
if (waitingForToken()) askForToken(); else begin();
