"use strict";
// The operator console: reads the backlog, the waiting jobs, the webhook
// deliveries and the dead letters from /console/api/ with the session
// cookie, and re-drives and cancels with JSON POSTs.
// Everything the server sends is put in the page as text, never as HTML.

const api = "/console/api/";
// A group shows its first rows; re-driving the group moves all of them.
const rowsPerGroup = 50;
const $ = (id) => document.getElementById(id);

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function short(id) {
  return String(id).slice(0, 8);
}

function age(seconds) {
  if (!seconds) return "–";
  const s = Math.round(seconds);
  if (s < 60) return s + " s";
  if (s < 3600) return Math.floor(s / 60) + " min " + (s % 60) + " s";
  if (s < 86400) return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
  return Math.floor(s / 86400) + " d " + Math.floor((s % 86400) / 3600) + " h";
}

function when(t) {
  return new Date(t).toISOString().replace("T", " ").slice(0, 19) + " UTC";
}

async function call(method, path, body) {
  const opts = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(api + path, opts);
  if (res.status === 401) {
    location.assign("/console/");
    throw new Error("logged out");
  }
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error((data.code || res.status) + ": " + (data.detail || res.statusText));
  return data;
}

function say(text, isError) {
  const s = $("status");
  s.textContent = text;
  s.className = isError ? "status error" : "status";
}

function renderBacklog(b) {
  const tbody = $("backlog").querySelector("tbody");
  tbody.replaceChildren();
  for (const w of b.workspaces) {
    const tr = el("tr");
    tr.dataset.workspace = w.workspace_id;
    tr.append(el("td", w.workspace_id, "id"), el("td", w.pending, "n"), el("td", w.dispatching, "n"),
      el("td", w.dead_letter, w.dead_letter ? "n bad" : "n"), el("td", age(w.oldest_due_age_seconds), "n"));
    tbody.append(tr);
  }
  $("backlog-empty").hidden = b.workspaces.length > 0;
  $("backlog").hidden = b.workspaces.length === 0;
  const t = b.totals;
  const totals = $("totals");
  totals.replaceChildren();
  for (const [label, value, cls] of [
    ["workspaces", b.workspaces.length + (b.truncated ? "+" : "")],
    ["pending", t.pending],
    ["dispatching", t.dispatching],
    ["dead letters", t.dead_letter, t.dead_letter ? "bad" : ""],
    ["oldest due", age(t.oldest_due_age_seconds)],
  ]) {
    const card = el("div", null, "card " + (cls || ""));
    card.append(el("strong", value), el("span", label));
    totals.append(card);
  }
  totals.lastChild.id = "oldest-due";
  $("as-of").textContent = "as of " + when(b.as_of);
}

// due is when a waiting job is published next, and how long until then
// as the server saw it.
function due(t, asOf) {
  const seconds = (new Date(t) - new Date(asOf)) / 1000;
  return when(t) + (seconds > 0 ? " (in " + age(seconds) + ")" : " (due)");
}

function renderWaiting(w) {
  const tbody = $("waiting").querySelector("tbody");
  tbody.replaceChildren();
  for (const d of w.destinations) {
    const tr = el("tr", null, "waiting-destination");
    tr.dataset.destination = d.destination;
    tr.append(el("td", d.destination, "id destination"), el("td", d.jobs, "n jobs"), el("td", d.workspaces, "n workspaces"),
      el("td", due(d.earliest_due, w.as_of)), el("td", due(d.latest_due, w.as_of)), el("td", d.kind + ": " + d.reason, "reason"));
    tbody.append(tr);
  }
  $("waiting-empty").hidden = w.destinations.length > 0;
  $("waiting").hidden = w.destinations.length === 0;
  $("waiting-truncated").hidden = !w.truncated;
}

// endpointState says whether an endpoint still receives its deliveries.
function endpointState(e) {
  if (e.deleted) return "deleted";
  return e.enabled ? "enabled" : "disabled";
}

function renderWebhooks(w) {
  const tbody = $("webhooks").querySelector("tbody");
  tbody.replaceChildren();
  for (const e of w.endpoints) {
    const tr = el("tr", null, "webhook-endpoint");
    tr.dataset.endpoint = e.endpoint_id;
    const ws = el("td", short(e.workspace_id), "id");
    ws.title = e.workspace_id;
    const id = el("td", short(e.endpoint_id), "id");
    id.title = e.endpoint_id;
    const actions = el("td", null, "row-actions");
    if (e.dead_letter > 0) {
      const redrive = el("button", "Re-drive dead letters", "redrive-webhook");
      redrive.type = "button";
      redrive.addEventListener("click", () => redriveWebhook(e));
      actions.append(redrive);
    }
    tr.append(ws, id, el("td", e.host || "–", "id host"), el("td", endpointState(e), e.enabled && !e.deleted ? "state" : "state off"),
      el("td", e.waiting, "n waiting"), el("td", e.dead_letter, e.dead_letter ? "n dead bad" : "n dead"),
      el("td", age(e.oldest_waiting_age_seconds), "n"), el("td", e.next_attempt_at ? due(e.next_attempt_at, w.as_of) : "–"),
      el("td", e.last_error || "–", "last-error"), actions);
    tbody.append(tr);
  }
  $("webhooks-empty").hidden = w.endpoints.length > 0;
  $("webhooks").hidden = w.endpoints.length === 0;
  $("webhooks-truncated").hidden = !w.truncated;
}

function renderGroups(d) {
  const groups = $("groups");
  groups.replaceChildren();
  const template = $("group-template");
  for (const g of d.groups) {
    const node = template.content.firstElementChild.cloneNode(true);
    node.dataset.key = g.key;
    node.querySelector(".stage").textContent = g.stage === "job" ? "failed job" : "delivery";
    node.querySelector(".stage").classList.add(g.stage);
    node.querySelector(".count").textContent = g.count + (g.count === 1 ? " event" : " events");
    node.querySelector(".cause").textContent = g.cause;
    node.querySelector(".cause").title = g.example;
    node.querySelector(".meta").textContent = g.workspaces + (g.workspaces === 1 ? " workspace · " : " workspaces · ") + g.event_types.join(", ");
    node.querySelector(".redrive-group").addEventListener("click", () => redriveGroup(g));
    const tbody = node.querySelector("tbody");
    for (const e of g.events.slice(0, rowsPerGroup)) {
      const tr = el("tr", null, "dead-letter");
      tr.dataset.eventId = e.id;
      const view = el("button", "View", "quiet view");
      view.type = "button";
      view.addEventListener("click", () => show(e.workspace_id, e.id));
      const redrive = el("button", "Re-drive", "redrive");
      redrive.type = "button";
      redrive.addEventListener("click", () => redriveOne(e.workspace_id, e.id));
      const actions = el("td", null, "row-actions");
      actions.append(view, redrive);
      const ws = el("td", short(e.workspace_id), "id");
      ws.title = e.workspace_id;
      const id = el("td", short(e.id), "id");
      id.title = e.id;
      tr.append(ws, id, el("td", e.event_type), el("td", e.attempt_count, "n delivery-attempts"),
        el("td", e.job_attempts ?? "–", "n job-attempts"), el("td", when(e.created_at)), actions);
      tbody.append(tr);
    }
    if (g.events.length > rowsPerGroup) {
      const more = el("td", "… and " + (g.events.length - rowsPerGroup) + " more", "muted");
      more.colSpan = 7;
      const tr = el("tr");
      tr.append(more);
      tbody.append(tr);
    }
    groups.append(node);
  }
  $("dead-letters-empty").hidden = d.groups.length > 0;
  $("dead-letters-truncated").hidden = !d.truncated;
}

async function refresh() {
  try {
    const [b, w, h, d] = await Promise.all([call("GET", "backlog"), call("GET", "waiting"), call("GET", "webhooks"),
      call("GET", "dead-letters")]);
    renderBacklog(b);
    renderWaiting(w);
    renderWebhooks(h);
    renderGroups(d);
    document.body.dataset.loaded = String(Date.now());
  } catch (err) {
    say("Could not load: " + err.message, true);
  }
}

async function show(workspace, id) {
  try {
    const e = await call("GET", "dead-letters/" + workspace + "/" + id);
    const dl = $("detail-fields");
    dl.replaceChildren();
    for (const [label, value] of [
      ["Event", e.id], ["Workspace", e.workspace_id], ["Type", e.event_type],
      ["Aggregate", e.aggregate_type + " " + e.aggregate_id], ["Operation", e.operation_id || "–"],
      ["Stage", e.stage], ["Holds ordering key", e.holds_ordering_key || "–"], ["Delivery attempts", e.attempt_count], ["Job attempts", e.job_attempts ?? "–"], ["Created", when(e.created_at)], ["Last error", e.last_error],
    ]) {
      dl.append(el("dt", label), el("dd", value));
    }
    $("detail-payload").textContent = e.payload_withheld
      ? "(withheld: a field looks like a secret)"
      : JSON.stringify(e.payload ?? null, null, 2);
    $("detail-redrive").onclick = async () => { $("detail").close(); await redriveOne(workspace, id); };
    $("detail-release").hidden = !e.holds_ordering_key;
    $("detail-release").onclick = async () => { $("detail").close(); await releaseOne(workspace, id); };
    $("detail").showModal();
  } catch (err) {
    say("Could not show " + id + ": " + err.message, true);
  }
}

async function redriveOne(workspace, id) {
  try {
    const r = await call("POST", "dead-letters/" + workspace + "/" + id + "/redrive", {});
    say("Re-drove " + r.redriven + " event" + (r.redriven === 1 ? "" : "s") + ".");
  } catch (err) {
    say("Could not re-drive " + id + ": " + err.message, true);
  }
  await refresh();
}

async function releaseOne(workspace, id) {
  try {
    const r = await call("POST", "dead-letters/" + workspace + "/" + id + "/release", {});
    say("Released " + r.released + " event" + (r.released === 1 ? "" : "s") + ": the job stays given up on, its key goes on.");
  } catch (err) {
    say("Could not release " + id + ": " + err.message, true);
  }
  await refresh();
}

async function redriveGroup(g) {
  if (!confirm("Re-drive " + g.count + " dead letters in " + g.workspaces + " workspace(s)?\n\n" + g.cause)) return;
  try {
    const r = await call("POST", "groups/redrive", { key: g.key });
    say("Re-drove " + r.redriven + " event" + (r.redriven === 1 ? "" : "s") + " of the group.");
  } catch (err) {
    say("Could not re-drive the group: " + err.message, true);
  }
  await refresh();
}

async function redriveWebhook(e) {
  if (!confirm("Re-drive the " + e.dead_letter + " dead-lettered deliveries to " + (e.host || e.endpoint_id) + "?")) return;
  try {
    const r = await call("POST", "webhooks/" + e.workspace_id + "/" + e.endpoint_id + "/redrive", {});
    say("Re-drove " + r.redriven + " deliver" + (r.redriven === 1 ? "y" : "ies") + " to " + (e.host || e.endpoint_id) + ".");
  } catch (err) {
    say("Could not re-drive the deliveries to " + (e.host || e.endpoint_id) + ": " + err.message, true);
  }
  await refresh();
}

// cancelled says what became of an operation an operator cancelled.
function cancelled(op) {
  if (op.status === "cancelled") return "Operation " + op.id + " (" + op.kind + ") is cancelled.";
  if (op.cancel_requested_at) {
    return "Operation " + op.id + " (" + op.kind + ") is running: its job was told to stop at " + when(op.cancel_requested_at) +
      "; it stops where its kind can, otherwise it ends with what the external system did.";
  }
  return "Operation " + op.id + " (" + op.kind + ") is " + op.status + ".";
}

async function cancelOperation(ev) {
  ev.preventDefault();
  const workspace = $("cancel-workspace").value.trim();
  const id = $("cancel-operation").value.trim();
  const result = $("cancel-result");
  if (!confirm("Cancel operation " + id + " of workspace " + workspace + "?")) return;
  try {
    const op = await call("POST", "operations/" + encodeURIComponent(workspace) + "/" + encodeURIComponent(id) + "/cancel", {});
    result.textContent = cancelled(op);
    result.className = "status";
  } catch (err) {
    result.textContent = "Could not cancel " + id + ": " + err.message;
    result.className = "status error";
  }
  await refresh();
  if (!$("cancels").hidden || !$("cancels-empty").hidden) await showCancels();
}

// showCancels lists a workspace's newest cancelled operations and its
// running ones told to stop.
async function showCancels() {
  const workspace = $("cancel-workspace").value.trim();
  if (!workspace) {
    say("Name the workspace whose cancels to show.", true);
    return;
  }
  try {
    const c = await call("GET", "operations/" + encodeURIComponent(workspace) + "/cancels");
    const tbody = $("cancels").querySelector("tbody");
    tbody.replaceChildren();
    for (const op of [...c.stopping, ...c.cancelled]) {
      const tr = el("tr", null, "cancelled-operation");
      tr.dataset.operation = op.id;
      tr.append(el("td", op.id, "id"), el("td", op.kind), el("td", op.status === "running" ? "running, stopping" : op.status, "status-cell"),
        el("td", op.cancel_requested_at ? when(op.cancel_requested_at) : "–"), el("td", when(op.updated_at)));
      tbody.append(tr);
    }
    const none = c.stopping.length + c.cancelled.length === 0;
    $("cancels").hidden = none;
    $("cancels-empty").hidden = !none;
  } catch (err) {
    say("Could not show the cancels of " + workspace + ": " + err.message, true);
  }
}

// revokeSessions ends every console session of the operator named, this
// one's included when it is the operator's own name.
async function revokeSessions(ev) {
  ev.preventDefault();
  const name = $("revoke-operator").value.trim();
  const result = $("revoke-result");
  if (!confirm("End every console session of " + name + ", in every process?")) return;
  try {
    const r = await call("POST", "operators/" + encodeURIComponent(name) + "/revoke-sessions", {});
    result.textContent = "Ended " + r.revoked + " session(s) of " + name + ".";
    result.className = "status";
  } catch (err) {
    result.textContent = "Could not revoke the sessions of " + name + ": " + err.message;
    result.className = "status error";
  }
}

let timer = null;
$("live").addEventListener("change", (ev) => {
  clearInterval(timer);
  timer = ev.target.checked ? setInterval(() => { if (!document.hidden) refresh(); }, 5000) : null;
});
$("refresh").addEventListener("click", refresh);
$("detail-close").addEventListener("click", () => $("detail").close());
$("cancel-form").addEventListener("submit", cancelOperation);
$("cancels-show").addEventListener("click", showCancels);
$("revoke-form").addEventListener("submit", revokeSessions);
refresh();
