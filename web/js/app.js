// The page: problem list, statement, editor, Run / Stop / Reset, results, zip export and import.
// The judge itself runs in a Web Worker (see engine.js and ../worker.js).
import { EnginePool } from "./engine.js";
import * as store from "./storage.js";
import { createEditor, createCodeView } from "./editor.js";
import { renderResult } from "./results.js";
import { renderStatement } from "./statement.js";
import { makeZip, readZip, downloadBytes } from "./zipio.js";
import { unfinishedResult } from "./unfinished.mjs";

const config = JSON.parse(document.getElementById("site-config").textContent);
const $ = (id) => document.getElementById(id);

const ui = {
  status: document.querySelector("[data-testid=engine-status]"),
  statusText: document.querySelector("[data-testid=engine-status] .engine-text"),
  banner: $("banner"),
  list: $("problem-list"),
  homeList: $("home-list"),
  home: $("home"),
  workspace: $("workspace"),
  statement: $("panel-statement"),
  testsPanel: $("panel-tests"),
  fileName: $("file-name"),
  saveState: $("save-state"),
  run: $("run"),
  stop: $("stop"),
  reset: $("reset"),
  summary: document.querySelector("[data-testid=result-summary]"),
  testList: $("test-list"),
  results: $("results"),
};

const state = {
  problems: [],
  byId: new Map(),
  current: null, // the problem shown
  runs: 0, // data-run: grows with every run
  lastResults: new Map(), // problem id -> Result shown last (this visit): the Result JSON, as is
  stoppedRuns: new Set(), // problem ids whose last verdict came from the Stop button
  running: null, // problem id of the run in progress
};

// Exposed for the end-to-end tests and for measuring (boot and first-verdict times).
const metrics = { pageStart: performance.timeOrigin, bootMs: null, firstVerdictMs: null, lastRunEngineMs: null };
window.ppJudge = { state, metrics, config };

// ------------------------------------------------------------------------------------------
// engine

const pool = new EnginePool(config, (status) => {
  ui.status.dataset.state = status.state;
  ui.status.classList.toggle("engine-error", Boolean(status.error));
  ui.statusText.textContent = status.text;
  if (status.state === "ready" && metrics.bootMs === null && pool.bootMs) {
    metrics.bootMs = pool.bootMs;
    ui.status.title = `Python started in ${(pool.bootMs / 1000).toFixed(1)} s`;
    registerServiceWorker();
  }
  if (status.error) showBanner(`${status.text}. Your code is saved; reload the page to try again.`, "error");
});
window.ppJudge.pool = pool;
if (/Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent)) {
  for (const k of document.querySelectorAll("kbd")) k.textContent = k.textContent.replace("Ctrl", "⌘");
}
pool.start(); // boot Python as soon as the page opens, not on the first click

// ------------------------------------------------------------------------------------------
// editor

const editor = createEditor($("editor"), {
  onChange: (text) => {
    if (!state.current) return;
    const ok = store.saveCode(state.current.id, text);
    ui.saveState.textContent = ok ? "Saved in this browser" : "NOT saved (storage full)";
    refreshListState(state.current.id);
  },
  onRun: () => run(),
});
window.ppJudge.editor = editor;

store.onStorageError((err) => {
  if (err) {
    showBanner("Your browser refused to save your code (storage is full or disabled). Your edits are kept " +
               "in this tab only: use “Download all” now so nothing is lost.", "warning", "storage");
  } else {
    hideBanner("storage");
  }
});

// ------------------------------------------------------------------------------------------
// problems and navigation

function problemState(id) {
  const status = store.loadStatus(id);
  if (status === "passed" || status === "failing") return status;
  return "not-started";
}
const STATE_LABEL = { "not-started": "not started", failing: "failing", passed: "passed" };

function stateBadge(id) {
  const s = problemState(id);
  const span = document.createElement("span");
  span.className = `state state-${s}`;
  span.dataset.state = s;
  span.textContent = STATE_LABEL[s];
  return span;
}

function renderLists() {
  ui.list.replaceChildren();
  ui.homeList.replaceChildren();
  for (const p of state.problems) {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = `#/${p.id}`;
    a.setAttribute("data-testid", "problem-link");
    a.dataset.problemId = p.id;
    const title = document.createElement("span");
    title.className = "problem-title";
    title.textContent = p.title;
    a.append(title, stateBadge(p.id));
    li.append(a);
    ui.list.append(li);

    const card = document.createElement("li");
    card.className = "card";
    const link = document.createElement("a");
    link.href = `#/${p.id}`;
    link.className = "card-title";
    link.textContent = p.title;
    const summary = document.createElement("p");
    summary.textContent = p.summary;
    const meta = document.createElement("p");
    meta.className = "muted card-meta";
    meta.append(`${p.difficulty} · ${p.entry} · `, stateBadge(p.id));
    card.append(link, summary, meta);
    ui.homeList.append(card);
  }
  markCurrent();
}

function refreshListState(id) {
  for (const badge of document.querySelectorAll(`[data-problem-id="${id}"] .state`)) badge.replaceWith(stateBadge(id));
}

function markCurrent() {
  for (const a of ui.list.querySelectorAll("a")) {
    if (state.current && a.dataset.problemId === state.current.id) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
}

function route() {
  const id = decodeURIComponent(location.hash.replace(/^#\/?/, ""));
  document.body.classList.remove("nav-open");
  $("toggle-nav").setAttribute("aria-expanded", "false");
  if (id && state.byId.has(id)) showProblem(state.byId.get(id));
  else showHome();
}

function showHome() {
  state.current = null;
  ui.workspace.hidden = true;
  ui.home.hidden = false;
  document.title = "Pipeline-parallel exercises";
  renderLists();
}

function showProblem(problem) {
  const switching = !state.current || state.current.id !== problem.id;
  state.current = problem;
  store.saveLast(problem.id);
  ui.home.hidden = true;
  ui.workspace.hidden = false;
  document.title = `${problem.title} · Pipeline-parallel exercises`;
  markCurrent();
  if (!switching) return;
  renderStatement(ui.statement, problem.statement_html);
  renderTestsPanel(problem);
  selectTab("statement", false);
  ui.fileName.textContent = problem.entry;
  const saved = store.loadCode(problem.id);
  editor.setText(saved ?? problem.starter);
  ui.saveState.textContent = saved === null ? "Starter code" : "Saved in this browser";
  showResult(state.lastResults.get(problem.id) || null);
  ui.statement.scrollTop = 0;
}

function renderTestsPanel(problem) {
  ui.testsPanel.replaceChildren();
  const intro = document.createElement("p");
  intro.className = "muted";
  intro.textContent = "These are the public tests your code runs against (read-only). Graded runs also use tests that are not shown.";
  ui.testsPanel.append(intro);
  const byPath = new Map(problem.files.map((f) => [f.path, f]));
  for (const path of [...problem.public_tests, ...problem.support]) {
    const file = byPath.get(path);
    const section = document.createElement("section");
    section.className = "code-file";
    const h = document.createElement("h3");
    h.textContent = path.startsWith("support/") ? `${path.slice(8)} (support module, beside your file)` : path;
    section.append(h);
    if (file.text !== undefined && path.endsWith(".py")) {
      const holder = document.createElement("div");
      holder.className = "code-view";
      section.append(holder);
      createCodeView(holder, file.text);
    } else {
      const pre = document.createElement("pre");
      pre.textContent = file.text ?? "(binary file)";
      section.append(pre);
    }
    ui.testsPanel.append(section);
  }
}

const TABS = ["statement", "tests", "code"];
const phoneQuery = window.matchMedia("(max-width: 760px)");

/** Select a view. "code" exists on phones only (there the editor is a third tab). */
function selectTab(name, focus = true) {
  if (name === "code" && !phoneQuery.matches) name = ui.workspace.dataset.leftView || "statement";
  ui.workspace.dataset.view = name;
  if (name !== "code") ui.workspace.dataset.leftView = name;
  for (const tab of TABS) {
    const button = $(`tab-${tab}`);
    const selected = tab === name;
    button.setAttribute("aria-selected", String(selected));
    button.tabIndex = selected ? 0 : -1;
    if (selected && focus) button.focus();
  }
  // the left panel keeps showing on wide screens while the (phone-only) code view is selected
  const left = ui.workspace.dataset.leftView || "statement";
  ui.statement.hidden = left !== "statement";
  ui.testsPanel.hidden = left !== "tests";
}

for (const tab of TABS) {
  $(`tab-${tab}`).addEventListener("click", () => selectTab(tab));
  $(`tab-${tab}`).addEventListener("keydown", (event) => {
    if (event.key !== "ArrowRight" && event.key !== "ArrowLeft") return;
    const visible = TABS.filter((t) => t !== "code" || phoneQuery.matches);
    const step = event.key === "ArrowRight" ? 1 : -1;
    selectTab(visible[(visible.indexOf(tab) + step + visible.length) % visible.length]);
    event.preventDefault();
  });
}
phoneQuery.addEventListener?.("change", () => {
  if (!phoneQuery.matches && ui.workspace.dataset.view === "code") selectTab("statement", false);
});

$("toggle-nav").addEventListener("click", () => {
  const open = !document.body.classList.contains("nav-open");
  document.body.classList.toggle("nav-open", open);
  $("toggle-nav").setAttribute("aria-expanded", String(open));
  if (open) ui.list.querySelector("a")?.focus();
});

// ------------------------------------------------------------------------------------------
// run, stop, reset

function workerProblem(p) {
  return { id: p.id, entry: p.entry, files: p.files, wheels: p.wheels, packages: p.packages };
}
window.ppJudge.workerProblem = workerProblem; // for bench/browser.py (pool.barePytest)

function unfinished(problem, reason, seconds = 0, detail = "") {
  // Python's Result for a run that gave none (judge.engines.unfinished, rendered by the build)
  return unfinishedResult(config.unfinished, reason, { problem: problem.id, seconds, detail });
}

async function run() {
  const problem = state.current;
  if (!problem || state.running) return;
  const source = editor.getText();
  store.saveCodeIfEdited(problem.id, source);
  state.running = problem.id;
  state.runs += 1;
  const started = performance.now();
  ui.summary.dataset.run = String(state.runs);
  ui.summary.dataset.status = "running";
  ui.summary.replaceChildren(Object.assign(document.createElement("span"), {
    className: "summary-text",
    textContent: pool.status().state === "booting" ? "Waiting for Python to start, then running the tests…" : "Running the tests…",
  }));
  ui.testList.replaceChildren();
  ui.run.disabled = true;
  ui.stop.disabled = false;
  const outcome = await pool.run(workerProblem(problem), source, problem.time_limit, (text) => {
    // numpy loads after a restore from the memory snapshot: this run needs it and says so
    const summary = ui.summary.querySelector(".summary-text");
    if (summary && ui.summary.dataset.run === String(state.runs)) {
      summary.textContent = `${text.replace(/…$/, "")}, then running the tests…`;
      ui.summary.dataset.waiting = "numpy";
    }
  });
  delete ui.summary.dataset.waiting;
  let result;
  if (outcome.kind === "result") {
    metrics.lastRunEngineMs = outcome.engineMs; // the runner's own time in the worker
    try {
      result = JSON.parse(outcome.json);
    } catch (err) {
      result = unfinished(problem, "unreadable", 0, err.message);
    }
  } else if (outcome.kind === "timeout" || outcome.kind === "stopped") {
    result = unfinished(problem, outcome.kind, outcome.seconds);
  } else {
    result = unfinished(problem, outcome.kind === "crashed" ? "crashed" : "engine-error", 0, outcome.message);
  }
  if (metrics.firstVerdictMs === null) metrics.firstVerdictMs = Math.round(performance.now() - started);
  state.running = null;
  ui.run.disabled = false;
  ui.stop.disabled = true;
  const stopped = outcome.kind === "stopped";
  if (!stopped) store.saveStatus(problem.id, result.status === "passed" ? "passed" : "failing");
  refreshListState(problem.id);
  state.lastResults.set(problem.id, result);
  if (stopped) state.stoppedRuns.add(problem.id); else state.stoppedRuns.delete(problem.id);
  if (state.current && state.current.id === problem.id) {
    showResult(result);
    if (phoneQuery.matches) ui.summary.scrollIntoView({ block: "start", behavior: "smooth" });
  }
}

function showResult(result) {
  if (!result) {
    ui.summary.dataset.status = "";
    ui.summary.replaceChildren(Object.assign(document.createElement("span"), {
      className: "summary-text", textContent: "Press Run (Ctrl+Enter) to test your code against the public tests.",
    }));
    ui.testList.replaceChildren();
    return;
  }
  ui.summary.dataset.status = result.status;
  renderResult(result, ui.summary, ui.testList, {
    entry: state.current.entry,
    stopped: state.stoppedRuns.has(state.current.id),
    goToLine: (line) => editor.goToLine(line),
    width: () => Math.max(280, ui.results.clientWidth - 48),
  });
}

ui.run.addEventListener("click", () => run());
ui.stop.addEventListener("click", () => pool.abort("stopped"));
ui.reset.addEventListener("click", () => {
  const problem = state.current;
  if (!problem) return;
  if (!window.confirm(`Replace your code in ${problem.entry} with the starter code? Your current code will be lost.`)) return;
  editor.setText(problem.starter);
  store.saveCode(problem.id, problem.starter);
  ui.saveState.textContent = "Starter code";
  editor.focus();
});

document.addEventListener("keydown", (event) => {
  if ((event.ctrlKey || event.metaKey) && event.key === "Enter" && state.current) {
    event.preventDefault();
    run();
  }
});

// ------------------------------------------------------------------------------------------
// zip export and import

function solutionsForExport() {
  const out = {};
  for (const p of state.problems) out[p.id] = { entry: p.entry, text: store.loadCode(p.id) ?? p.starter };
  return out;
}

$("export-zip").addEventListener("click", () => {
  if (state.current) store.saveCodeIfEdited(state.current.id, editor.getText());
  downloadBytes(makeZip(solutionsForExport()), "practice.zip");
});

$("import-zip-input").addEventListener("change", async (event) => {
  const input = event.target;
  const file = input.files && input.files[0];
  input.value = "";
  if (!file) return;
  let found;
  let ignored;
  try {
    ({ found, ignored } = readZip(new Uint8Array(await file.arrayBuffer()),
                                  Object.fromEntries(state.problems.map((p) => [p.id, p.entry]))));
  } catch (err) {
    showBanner(`Could not read ${file.name}: ${err.message || err}`, "error", "import");
    return;
  }
  const ids = Object.keys(found);
  if (!ids.length) {
    showBanner(`${file.name} holds no solution of these problems (expected paths like ` +
               `${state.problems[0]?.id}/${state.problems[0]?.entry}).`, "warning", "import");
    return;
  }
  if (!window.confirm(`Import ${ids.length} solution(s) from ${file.name} (${ids.join(", ")})? ` +
                      "This replaces your current code for those problems.")) return;
  for (const id of ids) store.saveCode(id, found[id]);
  if (state.current && found[state.current.id] !== undefined) editor.setText(found[state.current.id]);
  renderLists();
  showBanner(`Imported ${ids.length} solution(s)` + (ignored.length ? `; ignored ${ignored.length} other file(s).` : "."),
             "info", "import");
});

// ------------------------------------------------------------------------------------------
// banner, service worker, start

function showBanner(text, kind = "info", key = "general") {
  ui.banner.hidden = false;
  ui.banner.dataset.kind = kind;
  ui.banner.dataset.key = key;
  ui.banner.replaceChildren(Object.assign(document.createElement("span"), { textContent: text }));
  const close = Object.assign(document.createElement("button"), { type: "button", className: "link-button", textContent: "Dismiss" });
  close.addEventListener("click", () => { ui.banner.hidden = true; });
  ui.banner.append(close);
}

function hideBanner(key) {
  if (ui.banner.dataset.key === key) ui.banner.hidden = true;
}

let swRegistered = false;
function registerServiceWorker() {
  if (swRegistered || !("serviceWorker" in navigator)) return;
  swRegistered = true;
  // After the engine booted, so the precache reads Pyodide from the HTTP cache instead of
  // competing with the boot for the network.
  const hadController = Boolean(navigator.serviceWorker.controller);
  navigator.serviceWorker.register("sw.js").then((registration) => {
    const offerUpdate = (worker) => {
      if (!worker || !hadController) return;
      const ask = () => showUpdateBanner(worker);
      if (worker.state === "installed") ask();
      else worker.addEventListener("statechange", () => { if (worker.state === "installed") ask(); });
    };
    offerUpdate(registration.waiting || registration.installing);
    registration.addEventListener("updatefound", () => offerUpdate(registration.installing));
    return navigator.serviceWorker.ready;
  }).then(() => {
    document.documentElement.dataset.offlineReady = "true";
  }).catch((err) => console.warn("service worker not registered:", err));
}

function showUpdateBanner(worker) {
  showBanner("A new version of the exercises is ready.", "info", "update");
  const button = Object.assign(document.createElement("button"), { type: "button", textContent: "Reload to update" });
  button.addEventListener("click", () => {
    if (state.current) store.saveCodeIfEdited(state.current.id, editor.getText());
    navigator.serviceWorker.addEventListener("controllerchange", () => location.reload(), { once: true });
    worker.postMessage("skip-waiting");
  });
  ui.banner.insertBefore(button, ui.banner.lastChild);
}
setTimeout(registerServiceWorker, 30000); // also when Python is slow to start

window.addEventListener("pagehide", () => {
  if (state.current) store.saveCodeIfEdited(state.current.id, editor.getText());
});

async function start() {
  const response = await fetch(config.manifest);
  if (!response.ok) throw new Error(`could not load the problem list (${response.status})`);
  const manifest = await response.json();
  state.problems = manifest.problems;
  for (const p of state.problems) state.byId.set(p.id, p);
  pool.prepareProblems(state.problems.map(workerProblem)); // compiled while the learner reads
  renderLists();
  window.addEventListener("hashchange", route);
  if (!location.hash) {
    const last = store.loadLast();
    if (last && state.byId.has(last)) history.replaceState(null, "", `#/${last}`);
  }
  route();
  document.documentElement.dataset.appReady = "true";
}

start().catch((err) => showBanner(`The page could not start: ${err.message || err}`, "error"));
