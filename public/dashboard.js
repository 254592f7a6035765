// The Flux dashboard (issue 13): polls GET /v1/status, keeps a few minutes of history in
// memory, and follows one dataflow's closed windows over a WebSocket with a short-lived read
// token. The pasted token stays in this tab's session storage and only ever travels in an
// Authorization header; nothing here logs a token or puts one in a URL.

const TOKEN_KEY = "flux-dashboard-token";
const POLL_MS = 1000;
const HISTORY_MS = 5 * 60_000;
const LIVE_TTL_SECONDS = 300;
const LIVE_ROWS = 24;

const state = {
  token: sessionStorage.getItem(TOKEN_KEY) ?? "",
  /** dataflow id -> [{ atMs, lsn }] (sum of primary LSNs), the last HISTORY_MS */
  history: new Map(),
  status: null,
  live: null,
  /** Whether the token may mint and inject faults (FLUX_ADMIN_TOKEN); null until known. */
  isAdmin: null,
};

const $ = (selector) => document.querySelector(selector);

/** Builds an element; strings become text nodes, so data is never parsed as HTML. */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === "onclick") el.addEventListener("click", value);
    else if (value !== undefined && value !== null && value !== false) el.setAttribute(name, String(value));
  }
  for (const child of children.flat()) el.append(child instanceof Node ? child : String(child ?? ""));
  return el;
}

function api(path, init = {}) {
  const headers = { authorization: `Bearer ${state.token}`, ...(init.body ? { "content-type": "application/json" } : {}) };
  return fetch(path, { ...init, headers });
}

function setConnection(text, kind) {
  const el = $("#connection");
  el.textContent = text;
  el.className = `pill ${kind}`;
}

const seconds = (ms) => (ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`);
const clock = (iso) => (iso ? new Date(iso).toLocaleTimeString([], { hour12: false }) : "–");

// ---- polling -------------------------------------------------------------------------

/**
 * Asks whether the token is FLUX_ADMIN_TOKEN without minting anything: an empty mint request
 * passes the access check only for it (then fails validation, 400); any other token gets 403.
 */
async function checkAdmin() {
  const res = await api("/v1/admin/tokens", { method: "POST", body: "{}" }).catch(() => null);
  state.isAdmin = res ? res.status === 400 : null;
}

async function poll() {
  if (!state.token) return setConnection("no token", "idle");
  if (state.isAdmin === null) await checkAdmin();
  let res;
  try {
    res = await api("/v1/status");
  } catch {
    return setConnection("server unreachable", "bad");
  }
  if (!res.ok) {
    const body = await res.json().catch(() => null);
    return setConnection(`${res.status} ${body?.error?.code ?? ""}`.trim(), "bad");
  }
  const status = await res.json();
  state.status = status;
  setConnection(`live · ${new Date().toLocaleTimeString([], { hour12: false })}`, "ok");
  remember(status, Date.now());
  render(status);
}

function remember(status, nowMs) {
  for (const dataflow of status.dataflows) {
    const lsn = dataflow.partitions.reduce((sum, p) => sum + (p.replicas[0]?.lsn ?? 0), 0);
    const samples = state.history.get(dataflow.id) ?? [];
    samples.push({ atMs: nowMs, lsn });
    while (samples.length > 2 && samples[0].atMs < nowMs - HISTORY_MS) samples.shift();
    state.history.set(dataflow.id, samples);
  }
}

// ---- rendering -----------------------------------------------------------------------

function render(status) {
  $("#rates").replaceChildren(...status.dataflows.map(rateCard));
  $("#refusals").replaceChildren(refusalChart(status.refusals));
  $("#dataflows").replaceChildren(...status.dataflows.map((d) => dataflowCard(d, status.faultsEnabled && state.isAdmin === true)));
  $("#timeline tbody").replaceChildren(...timelineRows(status.dataflows));
  const select = $("#live-select");
  const ids = status.dataflows.map((d) => d.id);
  const shown = [...select.options].slice(1).map((o) => o.value);
  if (ids.join() !== shown.join()) {
    const chosen = select.value;
    select.replaceChildren(h("option", { value: "" }, "(choose)"), ...ids.map((id) => h("option", { value: id, selected: id === chosen }, id)));
  }
}

/** Log entries per second on the primaries (batches and clock ticks), from LSN growth between polls. */
function rates(samples) {
  const out = [];
  for (let i = 1; i < samples.length; i++) {
    const dt = (samples[i].atMs - samples[i - 1].atMs) / 1000;
    out.push(dt > 0 ? Math.max(0, samples[i].lsn - samples[i - 1].lsn) / dt : 0);
  }
  return out;
}

function rateCard(dataflow) {
  const values = rates(state.history.get(dataflow.id) ?? []);
  const last = values.at(-1) ?? 0;
  return h("div", { class: "card", "data-rate": dataflow.id },
    h("div", { class: "card-title" }, dataflow.id),
    h("div", { class: "big" }, last.toFixed(1), h("span", { class: "unit" }, " entries/s")),
    sparkline(values),
    h("div", { class: "muted" }, `stream ${dataflow.stream} · last ${Math.round(((values.length) * POLL_MS) / 1000)} s`));
}

function sparkline(values) {
  const width = 220, height = 40;
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("class", "spark");
  const max = Math.max(1, ...values);
  // At least a minute wide, growing to HISTORY_MS as samples accumulate.
  const step = width / Math.max(60_000 / POLL_MS - 1, values.length - 1);
  const offset = width - step * (values.length - 1);
  const points = values.map((v, i) => `${(offset + i * step).toFixed(1)},${(height - 2 - (v / max) * (height - 4)).toFixed(1)}`);
  const line = document.createElementNS("http://www.w3.org/2000/svg", "polyline");
  line.setAttribute("points", points.join(" "));
  svg.append(line);
  return svg;
}

function refusalChart(refusals) {
  if (refusals === null) return h("p", { class: "muted" }, "refusal counts unavailable");
  if (refusals.length === 0) return h("p", { class: "muted", id: "no-refusals" }, "none");
  const byMinute = new Map();
  for (const r of refusals) {
    const row = byMinute.get(r.at) ?? new Map();
    row.set(r.code, (row.get(r.code) ?? 0) + r.count);
    byMinute.set(r.at, row);
  }
  const max = Math.max(...[...byMinute.values()].map((m) => [...m.values()].reduce((a, b) => a + b, 0)));
  return h("table", { class: "refusals" }, [...byMinute].map(([at, codes]) => {
    const total = [...codes.values()].reduce((a, b) => a + b, 0);
    const bar = h("span", { class: "bar" });
    bar.style.width = `${Math.max(2, (total / max) * 100)}%`; // CSSOM, which the page's CSP allows (a style attribute it would not)
    return h("tr", { "data-refusals": at },
      h("td", {}, clock(at)),
      h("td", { class: "bar-cell" }, bar),
      h("td", {}, [...codes].map(([code, n]) => `${code} ${n}`).join(" · ")));
  }));
}

function dataflowCard(dataflow, faultsEnabled) {
  const rows = dataflow.partitions.flatMap((p) =>
    p.replicas.map((r, i) =>
      h("tr", { "data-replica": r.name, class: r.error ? "down" : "" },
        i === 0 ? h("td", { rowspan: p.replicas.length }, `p${p.partition}`) : null,
        i === 0 ? h("td", { rowspan: p.replicas.length }, h("span", { class: `health ${p.status}`, "data-partition-status": p.partition }, p.status)) : null,
        i === 0 ? h("td", { rowspan: p.replicas.length }, p.epoch) : null,
        i === 0 ? h("td", { rowspan: p.replicas.length, "data-key-groups": p.partition }, p.keyGroups) : null,
        h("td", { class: "mono" }, r.name),
        h("td", { class: "role" }, r.error ? h("span", { class: "health unavailable", title: r.error }, "no answer") : (r.role ?? "–")),
        h("td", {}, r.epoch ?? "–"),
        h("td", {}, r.lsn ?? "–"),
        h("td", {}, r.appliedLsn ?? "–"),
        h("td", {}, r.lag ?? "–"),
        h("td", {}, r.outputSeq ?? "–"),
        h("td", { "data-open-entries": r.name }, r.openEntries ?? "–"),
        h("td", { "data-events-per-second": r.name }, r.eventsPerSecond ?? "–"),
        h("td", {}, clock(r.lastHeartbeat)),
        h("td", {}, r.missedProbes),
        faultsEnabled ? h("td", { class: "faults" }, ["crash", "hang", "heal"].map((kind) => h("button", { type: "button", "data-fault": kind, onclick: () => fault(r.name, kind) }, kind))) : null,
      ),
    ),
  );
  const input = dataflow.stream === null ? `from ${dataflow.from.join(", ")}` : `stream ${dataflow.stream}`;
  const readers = dataflow.readers.length > 0 ? ` · read by ${dataflow.readers.join(", ")}` : "";
  return h("div", { class: "dataflow", "data-dataflow": dataflow.id },
    h("h3", {}, dataflow.id, h("span", { class: "muted" }, ` · ${input} · ${dataflow.partitions.length} partitions, ${dataflow.keyGroups} key groups${readers}`)),
    h("table", {},
      h("thead", {}, h("tr", {}, ["partition", "health", "epoch", "key groups", "replica", "role", "replica epoch", "LSN", "applied", "lag", "outputs", "open entries", "events/s", "heartbeat", "missed", ...(faultsEnabled ? ["fault"] : [])].map((t) => h("th", {}, t)))),
      h("tbody", {}, rows)),
    dataflow.edges.length > 0 ? edgeTable(dataflow.edges) : null);
}

/** A stage's edges (docs/PIPELINES.md): per upstream partition and partition, results produced, delivered, acknowledged, and the lag. */
function edgeTable(edges) {
  const cell = (n) => h("td", {}, n ?? "–");
  return h("table", { class: "edges" },
    h("thead", {}, h("tr", {}, ["from", "to", "produced", "delivered", "acknowledged", "lag"].map((t) => h("th", {}, t)))),
    h("tbody", {}, edges.map((e) =>
      h("tr", { "data-edge": `${e.upstream}/p${e.upstreamPartition}>p${e.partition}`, class: e.lag === null || e.lag > 0 ? "lagging" : "" },
        h("td", { class: "mono" }, `${e.upstream}/p${e.upstreamPartition}`), h("td", {}, `p${e.partition}`), cell(e.produced), cell(e.delivered), cell(e.acknowledged), cell(e.lag)))));
}

/** Takeovers and recoveries, newest first, with how long each lasted where the log tells. */
function timelineRows(dataflows) {
  const rows = [];
  for (const dataflow of dataflows) {
    const events = dataflow.events.map((e) => ({ ...e, atMs: Date.parse(e.at ?? "") })).sort((a, b) => a.atMs - b.atMs);
    events.forEach((e, i) => {
      const samePartition = (x) => x.partition === e.partition;
      let duration = "";
      if (e.kind === "recovery-finished") {
        const start = events.slice(0, i).reverse().find((x) => samePartition(x) && x.kind === "recovery-started");
        if (start) duration = `recovery took ${seconds(e.atMs - start.atMs)}`;
      } else if (e.kind === "takeover" || e.kind === "degraded" || e.kind === "unavailable") {
        const end = events.slice(i + 1).find((x) => samePartition(x) && (x.kind === "recovery-finished" || x.kind === "resumed"));
        duration = end ? `back to healthy after ${seconds(end.atMs - e.atMs)}` : "ongoing";
      }
      rows.push({ dataflow: dataflow.id, e, duration, order: i });
    });
  }
  // Newest first; events of one tick share a time, so their logged order breaks the tie.
  rows.sort((a, b) => b.e.atMs - a.e.atMs || b.order - a.order);
  return rows.slice(0, 100).map(({ dataflow, e, duration }) =>
    h("tr", { class: `event ${e.kind}`, "data-kind": e.kind, "data-dataflow": dataflow },
      h("td", {}, clock(e.at)), h("td", {}, dataflow), h("td", {}, `p${e.partition}`),
      h("td", {}, h("span", { class: `kind ${e.kind}` }, e.kind)), h("td", {}, duration), h("td", { class: "detail" }, e.detail)));
}

async function fault(replica, kind) {
  const res = await api(`/v1/admin/replicas/${encodeURIComponent(replica)}/fault`, { method: "POST", body: JSON.stringify({ kind }) });
  if (!res.ok) {
    const body = await res.json().catch(() => null);
    alert(`fault ${kind} on ${replica}: ${res.status} ${body?.error?.message ?? ""}`);
  }
  void poll();
}

// ---- live results --------------------------------------------------------------------

function liveState(text) {
  $("#live-state").textContent = text;
}

async function mintReadToken(dataflow) {
  const res = await api("/v1/admin/tokens", { method: "POST", body: JSON.stringify({ scope: "read", dataflows: [dataflow], ttlSeconds: LIVE_TTL_SECONDS }) });
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new Error(res.status === 403 ? "live results need FLUX_ADMIN_TOKEN (to mint a read token)" : `${res.status} ${body?.error?.message ?? ""}`);
  return body;
}

/** Starts a few windows back on each partition, so recent results show at once. */
function startCursor(dataflow) {
  const d = state.status?.dataflows.find((x) => x.id === dataflow);
  if (!d) return null;
  return d.partitions.map((p) => Math.max(0, (p.replicas[0]?.outputSeq ?? 0) - 3)).join(",");
}

function stopLive() {
  if (!state.live) return;
  state.live.stopped = true;
  state.live.socket?.close(1000, "done");
  state.live = null;
}

function startLive(dataflow) {
  stopLive();
  $("#live-rows").replaceChildren();
  if (!dataflow) return liveState("");
  if (state.isAdmin === false) return liveState("live results need FLUX_ADMIN_TOKEN (to mint a read token)");
  const live = { dataflow, cursor: startCursor(dataflow), grant: null, socket: null, stopped: false, retryMs: 500 };
  state.live = live;
  void connectLive(live);
}

async function connectLive(live) {
  if (live.stopped) return;
  try {
    if (!live.grant || live.grant.expiresAtMs - Date.now() < 60_000) live.grant = await mintReadToken(live.dataflow);
  } catch (err) {
    liveState(err.message);
    return;
  }
  const query = new URLSearchParams({ maxMs: "120000", ...(live.cursor ? { cursor: live.cursor } : {}) });
  const url = `${location.origin.replace(/^http/, "ws")}/v1/dataflows/${encodeURIComponent(live.dataflow)}/subscribe?${query}`;
  const socket = new WebSocket(url, ["flux.v1", `flux-token.${live.grant.token}`]);
  live.socket = socket;
  socket.onopen = () => liveState(`following ${live.dataflow} (read token until ${new Date(live.grant.expiresAtMs).toLocaleTimeString([], { hour12: false })})`);
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    live.cursor = message.cursor;
    live.retryMs = 500;
    if (message.type === "window") addLiveRow(message);
  };
  socket.onclose = (event) => {
    if (live.stopped) return;
    // An orderly end (maxMs reached) reconnects at once; failures back off up to 10 s.
    const delayMs = event.code === 1000 ? 0 : live.retryMs;
    live.retryMs = Math.min(10_000, live.retryMs * 2);
    liveState(`reconnecting to ${live.dataflow}…`);
    setTimeout(() => void connectLive(live), delayMs);
  };
}

function addLiveRow(w) {
  const values = Object.entries(w.values).map(([name, v]) => `${name}=${typeof v === "number" ? +v.toFixed(2) : JSON.stringify(v)}`).join("  ");
  const row = h("tr", { "data-key": w.key, class: "fresh" },
    h("td", { class: "mono" }, w.key),
    h("td", {}, `${clock(new Date(w.windowStartMs).toISOString())} – ${clock(new Date(w.windowEndMs).toISOString())}`),
    h("td", { class: "mono" }, values),
    h("td", {}, `p${w.partition} · ${w.outputSeq}`));
  const body = $("#live-rows");
  body.prepend(row);
  while (body.children.length > LIVE_ROWS) body.lastElementChild.remove();
}

// ---- wiring --------------------------------------------------------------------------

$("#token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  state.token = $("#token").value.trim();
  $("#token").value = "";
  sessionStorage.setItem(TOKEN_KEY, state.token);
  state.history.clear();
  state.isAdmin = null;
  void poll();
});
$("#forget-token").addEventListener("click", () => {
  state.token = "";
  sessionStorage.removeItem(TOKEN_KEY);
  state.isAdmin = null;
  stopLive();
  setConnection("no token", "idle");
});
$("#live-select").addEventListener("change", (event) => startLive(event.target.value));

let polling = false;
setInterval(async () => {
  if (polling) return;
  polling = true;
  try {
    await poll();
  } finally {
    polling = false;
  }
}, POLL_MS);
void poll();
