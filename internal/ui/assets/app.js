// spate's web page: a LogsQL editor, the hits histogram, fields with their
// top values, and the rows, over the /select/logsql/* API of the server it
// is served by. Every value from the server is rendered as text
// (textContent), never as HTML. The page's state lives in its URL.
"use strict";

const $ = (id) => document.getElementById(id);
const el = (tag, attrs, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k);
  return e;
};

const RANGES = { "5m": 3e5, "15m": 9e5, "1h": 36e5, "6h": 216e5, "24h": 864e5, "7d": 6048e5, "30d": 2592e6, "365d": 31536e6 };
const state = { q: "*", range: "1h", start: "", end: "", view: "table", tenant: "", limit: 1000 };
let rows = [];            // the rows of the last query (or tail), in arrival order
let epoch = 0;            // bumped when rows is replaced or trimmed, not only appended to
let drawn = { epoch: -1, n: 0, cols: "" }; // what the table shows: rows[0:n] of that epoch, with those columns
let columns = [];         // table columns
let running = null;       // AbortController of the running query or tail
let paused = false;       // tail: rows are kept but not drawn
let plot = null;          // the uPlot histogram
let chart = null;         // the uPlot chart of a stats query

// ---- state and URL ----

function readURL() {
  const p = new URLSearchParams(location.search);
  for (const k of ["q", "range", "start", "end", "view", "tenant"]) if (p.has(k)) state[k] = p.get(k);
  if (p.has("limit")) state.limit = Math.max(1, parseInt(p.get("limit"), 10) || 1000);
  if (!(state.range in RANGES) && state.range !== "abs") state.range = "1h";
  if (!["table", "json", "raw"].includes(state.view)) state.view = "table";
}

function writeURL(push) {
  const p = new URLSearchParams();
  p.set("q", state.q);
  p.set("range", state.range);
  if (state.range === "abs") { p.set("start", state.start); p.set("end", state.end); }
  if (state.view !== "table") p.set("view", state.view);
  if (state.tenant) p.set("tenant", state.tenant);
  if (state.limit !== 1000) p.set("limit", String(state.limit));
  const url = location.pathname + "?" + p.toString();
  if (url !== location.pathname + location.search) (push ? history.pushState : history.replaceState).call(history, null, "", url);
}

function toForm() {
  $("q").value = state.q;
  $("range").value = state.range;
  $("absrange").hidden = state.range !== "abs";
  $("start").value = state.start.replace(/Z$/, "").slice(0, 19);
  $("end").value = state.end.replace(/Z$/, "").slice(0, 19);
  $("tenant").value = state.tenant;
  $("limit").value = String(state.limit);
  for (const b of document.querySelectorAll(".views button")) b.setAttribute("aria-pressed", String(b.dataset.view === state.view));
}

function fromForm() {
  state.q = $("q").value.trim() || "*";
  state.range = $("range").value;
  state.tenant = $("tenant").value.trim();
  state.limit = Math.max(1, parseInt($("limit").value, 10) || 1000);
  if (state.range === "abs") {
    const iso = (v) => (v ? new Date(v + "Z").toISOString() : "");
    state.start = iso($("start").value);
    state.end = iso($("end").value);
  }
}

// timeRange returns the query's [start, end] in milliseconds.
function timeRange() {
  if (state.range === "abs") {
    const s = Date.parse(state.start), e = Date.parse(state.end);
    return [isNaN(s) ? Date.now() - 36e5 : s, isNaN(e) ? Date.now() : e];
  }
  const end = Date.now();
  return [end - RANGES[state.range], end];
}

// ---- requests ----

// base is the path the server's API is under: the page is at BASE/ui/.
const base = location.pathname.replace(/\/ui\/.*$/, "").replace(/\/$/, "");

function headers() {
  const h = {};
  const m = /^(\d+)(?::(\d+))?$/.exec(state.tenant);
  if (m) { h.AccountID = m[1]; h.ProjectID = m[2] || "0"; }
  const tok = sessionStorage.getItem("spate.token");
  if (tok) h.Authorization = "Bearer " + tok;
  return h;
}

async function post(path, args, signal) {
  const resp = await fetch(base + "/" + path, { method: "POST", headers: headers(), body: new URLSearchParams(args), signal });
  if (!resp.ok) {
    let msg = (await resp.text()).trim();
    try { const j = JSON.parse(msg); if (j && typeof j.error === "string") msg = j.error; } catch (e) { /* plain text */ }
    const err = new Error(msg || resp.status + " " + resp.statusText);
    err.status = resp.status;
    throw err;
  }
  return resp;
}

// readLines calls onRow for every NDJSON row of resp as it arrives.
async function readLines(resp, onRow) {
  const reader = resp.body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (line.trim()) onRow(JSON.parse(line));
    }
  }
  if (buf.trim()) onRow(JSON.parse(buf));
}

// ---- running a query ----

function rangeArgs() {
  const [s, e] = timeRange();
  return { start: new Date(s).toISOString(), end: new Date(e).toISOString() };
}

async function run(push) {
  stop();
  fromForm();
  writeURL(push);
  remember(state.q);
  hideError();
  rows = [];
  epoch++;
  columns = [];
  const ctl = new AbortController();
  running = ctl;
  $("cancel").disabled = false;
  setStatus("Running…");
  const t0 = performance.now();
  const args = { query: state.q, ...rangeArgs() };
  const hits = loadHits(args, ctl.signal).catch(fail);
  const facets = loadFacets(args, ctl.signal).catch(fail);
  const stats = loadStats(args, ctl.signal).catch(fail);
  let pending = false;
  const draw = () => { pending = false; render(); };
  try {
    const resp = await post("select/logsql/query", { ...args, limit: String(state.limit) }, ctl.signal);
    await readLines(resp, (r) => {
      rows.push(r);
      if (!pending) { pending = true; requestAnimationFrame(draw); }
    });
    render();
    setStatus(`${rows.length} rows${rows.length >= state.limit ? " (the limit)" : ""} in ${Math.round(performance.now() - t0)} ms`);
  } catch (e) {
    fail(e);
  } finally {
    await Promise.all([hits, facets, stats]);
    if (running === ctl) { running = null; $("cancel").disabled = true; }
  }
}

function fail(e) {
  if (e.name === "AbortError") { setStatus(`Cancelled after ${rows.length} rows`); render(); return; }
  if (e.status === 400) showError(e.message);
  else setStatus("Error: " + e.message);
}

function stop() {
  if (running) running.abort();
  running = null;
  $("cancel").disabled = true;
  setTail(false);
}

function setStatus(s) { $("status").textContent = s; }

// showError shows the server's message and, when it names a column, a
// caret under that position of the query.
function showError(msg) {
  $("qerr").hidden = false;
  $("qerrmsg").textContent = msg;
  const m = /at column (\d+)/.exec(msg);
  const pre = $("qerrpos");
  if (m) {
    const col = parseInt(m[1], 10);
    const q = state.q.replace(/\n/g, " ");
    pre.textContent = q + "\n" + " ".repeat(Math.max(0, col - 1)) + "^";
    const ta = $("q");
    ta.focus();
    ta.setSelectionRange(col - 1, Math.min(col, state.q.length));
  } else {
    pre.textContent = "";
  }
  setStatus("The query has an error");
}

function hideError() { $("qerr").hidden = true; }

// ---- rendering rows ----

function pickColumns() {
  const count = new Map();
  for (const r of rows.slice(0, 500)) for (const k of Object.keys(r)) count.set(k, (count.get(k) || 0) + 1);
  const skip = new Set(["_time", "_msg", "_stream_id", "_stream"]);
  const top = [...count.entries()].filter(([k]) => !skip.has(k)).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 6).map(([k]) => k);
  const cols = [];
  if (count.has("_time")) cols.push("_time");
  cols.push(...top);
  if (count.has("_msg")) cols.push("_msg");
  if (cols.length === 0) cols.push(...[...count.keys()].slice(0, 8));
  return cols;
}

function render() {
  const out = $("results");
  if (state.view === "json") {
    out.replaceChildren(el("pre", { class: "rows", text: JSON.stringify(rows, null, 2) }));
    return;
  }
  if (state.view === "raw") {
    out.replaceChildren(el("pre", { class: "rows", text: rows.map((r) => JSON.stringify(r)).join("\n") }));
    return;
  }
  if (columns.length === 0 || rows.length <= 500) columns = pickColumns();
  const cols = columns.join("\u0000");
  const table = out.querySelector("table");
  if (table && drawn.epoch === epoch && drawn.cols === cols && drawn.n <= rows.length) {
    // Fast path: rows only came in since the last draw; append them.
    const body = table.tBodies[0];
    for (let i = drawn.n; i < rows.length; i++) body.append(rowEl(rows[i], i));
    table.setAttribute("aria-rowcount", String(rows.length));
    drawn.n = rows.length;
    return;
  }
  const head = el("tr", {}, el("th", { class: "x", scope: "col" }, el("span", { class: "vh", text: "details" })));
  for (const c of columns) head.append(el("th", { scope: "col", text: c }));
  const body = el("tbody");
  rows.forEach((r, i) => body.append(rowEl(r, i)));
  out.replaceChildren(el("table", { "aria-label": "Rows", "aria-rowcount": String(rows.length) }, el("thead", {}, head), body));
  drawn = { epoch, n: rows.length, cols };
}

function rowEl(r, i) {
  const tr = el("tr", { "data-row": String(i) });
  const btn = el("button", { type: "button", "aria-expanded": "false", "aria-label": "Show all fields of row " + (i + 1), text: "▸" });
  btn.addEventListener("click", () => toggleDetail(tr, r, btn));
  tr.append(el("td", { class: "x" }, btn));
  for (const c of columns) {
    const v = r[c];
    const td = el("td", { class: "val", tabindex: "0", "data-field": c, title: v === undefined ? "" : "Filter on " + c + " = " + v });
    td.textContent = v === undefined ? "" : v;
    if (v !== undefined) {
      td.addEventListener("click", () => addFilter(c, v));
      td.addEventListener("keydown", (e) => { if (e.key === "Enter") addFilter(c, v); });
    }
    tr.append(td);
  }
  return tr;
}

function toggleDetail(tr, r, btn) {
  const next = tr.nextElementSibling;
  if (next && next.classList.contains("detail")) {
    next.remove();
    btn.setAttribute("aria-expanded", "false");
    btn.textContent = "▸";
    return;
  }
  const dl = el("dl", { class: "fields" });
  for (const k of Object.keys(r).sort()) {
    const dd = el("dd", { tabindex: "0", title: "Filter on " + k, text: r[k] });
    dd.addEventListener("click", () => addFilter(k, r[k]));
    dd.addEventListener("keydown", (e) => { if (e.key === "Enter") addFilter(k, r[k]); });
    dl.append(el("dt", { text: k }), dd);
  }
  const td = el("td", { colspan: String(columns.length + 1) }, dl);
  if (r._stream_id && r._time) {
    const ctx = el("button", { type: "button", class: "context", text: "Show context",
      title: "The 10 logs before and after this one in its stream (stream_context)" });
    ctx.addEventListener("click", () => showContext(r));
    td.append(ctx);
  }
  tr.after(el("tr", { class: "detail" }, td));
  btn.setAttribute("aria-expanded", "true");
  btn.textContent = "▾";
}

// showContext replaces the query with one for the logs around row r in
// its stream: stream_context reads them whatever the time range.
function showContext(r) {
  $("q").value = `_stream_id:${r._stream_id} ${filterFor("_time", r._time)} | stream_context before 10 after 10`;
  run(true);
}

// filterFor returns the LogsQL filter that matches field = value exactly.
function filterFor(field, value) {
  if (field === "_stream") return "_stream:" + value;
  if (field === "_time") return "_time:" + value;
  const name = /^[\w.@-]+$/.test(field) ? field : JSON.stringify(field);
  return name + ":=" + JSON.stringify(String(value));
}

// addFilter puts field = value into the query, before its first pipe, and
// runs it.
function addFilter(field, value) {
  const f = filterFor(field, value);
  const q = $("q").value.trim();
  const pipe = q.search(/\s\|\s/);
  let next;
  if (q === "" || q === "*") next = f;
  else if (pipe >= 0) next = q.slice(0, pipe) + " " + f + q.slice(pipe);
  else next = q + " " + f;
  $("q").value = next;
  run(true);
}

// ---- histogram ----

function niceStep(ms) {
  const steps = [1e3, 5e3, 1e4, 3e4, 6e4, 3e5, 6e5, 18e5, 36e5, 108e5, 216e5, 432e5, 864e5, 6048e5];
  for (const s of steps) if (s >= ms) return s;
  return steps[steps.length - 1];
}

async function loadHits(args, signal) {
  const [s, e] = timeRange();
  const step = niceStep((e - s) / 80);
  const resp = await post("select/logsql/hits", { ...args, step: step / 1000 + "s" }, signal);
  const data = await resp.json();
  const h = (data.hits && data.hits[0]) || { timestamps: [], values: [] };
  const xs = h.timestamps.map((t) => Date.parse(t) / 1000);
  drawHits(xs, h.values, step / 1000);
  $("hitsbox").dataset.total = String(h.total || h.values.reduce((a, b) => a + b, 0));
}

function drawHits(xs, ys, step) {
  const box = $("hits");
  if (plot) { plot.destroy(); plot = null; }
  if (typeof uPlot === "undefined") return;
  const width = Math.max(300, box.clientWidth || $("out").clientWidth - 24);
  plot = new uPlot({
    width, height: 150,
    legend: { show: false },
    cursor: { drag: { x: true, y: false, setScale: false } },
    scales: { x: { time: true } },
    axes: [{}, { size: 50 }],
    series: [{}, { label: "hits", stroke: "#2457c5", fill: "rgba(36,87,197,.25)", paths: uPlot.paths.bars({ size: [0.9, 40] }) }],
    hooks: {
      setSelect: [(u) => {
        if (u.select.width < 2) return;
        const a = u.posToVal(u.select.left, "x"), b = u.posToVal(u.select.left + u.select.width, "x");
        state.range = "abs";
        state.start = new Date(a * 1000).toISOString();
        state.end = new Date((b + step) * 1000).toISOString();
        toForm();
        run(true);
      }],
    },
  }, [xs, ys], box);
  box.dataset.points = String(xs.length);
}

// ---- stats queries as charts ----

const COLORS = ["#2457c5", "#d92d20", "#079455", "#dc6803", "#7a5af8", "#0e9384", "#c11574", "#475467"];

// loadStats draws a query ending in stats over time, from
// /select/logsql/stats_query_range: one line per result series.
async function loadStats(args, signal) {
  const box = $("chartbox");
  if (chart) { chart.destroy(); chart = null; }
  if (!/\|\s*stats\b/.test(state.q)) { box.hidden = true; delete box.dataset.series; return; }
  const [s, e] = timeRange();
  const step = niceStep((e - s) / 60);
  const resp = await post("select/logsql/stats_query_range", { ...args, step: step / 1000 + "s" }, signal);
  const data = await resp.json();
  const result = ((data.data && data.data.result) || []).slice(0, 20);
  const ts = [...new Set(result.flatMap((r) => r.values.map((v) => v[0])))].sort((a, b) => a - b);
  const at = new Map(ts.map((t, i) => [t, i]));
  const cols = result.map((r) => {
    const ys = new Array(ts.length).fill(null);
    for (const [t, v] of r.values) ys[at.get(t)] = Number(v);
    return ys;
  });
  const label = (m) => {
    const { __name__: name, ...rest } = m;
    const tags = Object.entries(rest).map(([k, v]) => k + "=" + JSON.stringify(v)).join(", ");
    return (name || "") + (tags ? "{" + tags + "}" : "");
  };
  box.hidden = false;
  box.dataset.series = String(result.length);
  if (typeof uPlot === "undefined") return;
  const width = Math.max(300, $("out").clientWidth - 24);
  chart = new uPlot({
    width, height: 200,
    scales: { x: { time: true } },
    axes: [{}, { size: 60 }],
    series: [{}, ...result.map((r, i) => ({
      label: label(r.metric), stroke: COLORS[i % COLORS.length], width: 1.5,
      points: { show: ts.length < 30 },
      paths: ts.length === 1 ? uPlot.paths.bars({ size: [0.5, 60] }) : undefined,
      fill: ts.length === 1 ? COLORS[i % COLORS.length] + "55" : undefined,
    }))],
  }, [ts, ...cols], $("chart"));
}

// ---- fields ----

async function loadFacets(args, signal) {
  const resp = await post("select/logsql/facets", { ...args, limit: "8" }, signal);
  const data = await resp.json();
  const box = $("facets");
  box.replaceChildren();
  for (const f of data.facets || []) {
    if (f.field_name === "_time" || f.field_name === "_stream_id") continue; // every value differs, or says nothing
    const ul = el("ul");
    for (const v of f.values) {
      const b = el("button", { type: "button", title: "Filter on " + f.field_name + " = " + v.field_value },
        el("span", { class: "v", text: v.field_value }), el("span", { class: "n", text: String(v.hits) }));
      b.addEventListener("click", () => addFilter(f.field_name, v.field_value));
      ul.append(el("li", {}, b));
    }
    box.append(el("details", { class: "facet", open: "", "data-field": f.field_name }, el("summary", { text: f.field_name }), ul));
  }
  if (!box.firstChild) box.append(el("p", { class: "muted", text: "No fields." }));
}

// ---- live tail ----

function setTail(on) {
  $("tail").setAttribute("aria-pressed", String(on));
  $("pause").disabled = !on;
  if (!on) { paused = false; $("pause").setAttribute("aria-pressed", "false"); }
}

async function tail() {
  if ($("tail").getAttribute("aria-pressed") === "true") { stop(); setStatus(`Tail stopped with ${rows.length} rows`); return; }
  stop();
  fromForm();
  writeURL(false);
  hideError();
  rows = [];
  epoch++;
  columns = [];
  render();
  const ctl = new AbortController();
  running = ctl;
  setTail(true);
  $("cancel").disabled = false;
  setStatus("Tailing… new rows appear as they are stored");
  const cap = () => Math.max(10, parseInt($("cap").value, 10) || 1000);
  let pending = false;
  try {
    const resp = await post("select/logsql/tail", { query: state.q }, ctl.signal);
    await readLines(resp, (r) => {
      rows.push(r);
      if (rows.length > cap()) { rows.splice(0, rows.length - cap()); epoch++; }
      if (!paused && !pending) {
        pending = true;
        requestAnimationFrame(() => { pending = false; if (!paused) { render(); setStatus(`Tailing: ${rows.length} rows`); } });
      }
    });
  } catch (e) {
    if (e.name !== "AbortError") fail(e);
  } finally {
    if (running === ctl) { running = null; $("cancel").disabled = true; setTail(false); }
  }
}

// ---- history ----

function remember(q) {
  let h = [];
  try { h = JSON.parse(localStorage.getItem("spate.history") || "[]"); } catch (e) { h = []; }
  h = [q, ...h.filter((x) => x !== q)].slice(0, 30);
  localStorage.setItem("spate.history", JSON.stringify(h));
  fillHistory(h);
}

function fillHistory(h) {
  const sel = $("history");
  sel.replaceChildren(el("option", { value: "", text: "…" }));
  for (const q of h) sel.append(el("option", { value: q, text: q.length > 60 ? q.slice(0, 60) + "…" : q }));
}

// ---- wiring ----

function init() {
  readURL();
  toForm();
  $("token").value = sessionStorage.getItem("spate.token") || "";
  try { fillHistory(JSON.parse(localStorage.getItem("spate.history") || "[]")); } catch (e) { fillHistory([]); }
  $("qform").addEventListener("submit", (e) => { e.preventDefault(); run(true); });
  $("q").addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); run(true); } });
  $("cancel").addEventListener("click", () => { stop(); setStatus(`Cancelled with ${rows.length} rows`); });
  $("range").addEventListener("change", () => {
    $("absrange").hidden = $("range").value !== "abs";
    if ($("range").value === "abs" && !$("start").value) {
      const [s, e] = timeRange();
      $("start").value = new Date(s).toISOString().slice(0, 19);
      $("end").value = new Date(e).toISOString().slice(0, 19);
    }
  });
  $("token").addEventListener("change", () => {
    const v = $("token").value.trim();
    if (v) sessionStorage.setItem("spate.token", v); else sessionStorage.removeItem("spate.token");
  });
  $("history").addEventListener("change", () => { if ($("history").value) { $("q").value = $("history").value; run(true); } });
  for (const b of document.querySelectorAll(".views button")) {
    b.addEventListener("click", () => { state.view = b.dataset.view; toForm(); writeURL(false); render(); });
  }
  $("tail").addEventListener("click", tail);
  $("pause").addEventListener("click", () => {
    paused = !paused;
    $("pause").setAttribute("aria-pressed", String(paused));
    if (!paused) render();
    setStatus(paused ? `Paused at ${rows.length} rows (still receiving)` : `Tailing: ${rows.length} rows`);
  });
  window.addEventListener("popstate", () => { readURL(); toForm(); run(false); });
  window.addEventListener("resize", () => { if (plot) plot.setSize({ width: Math.max(300, $("hits").clientWidth), height: 150 }); });
  run(false);
}

document.addEventListener("DOMContentLoaded", init);
