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
const SITE_TITLE = document.title; // the course's title, written into <title> by judge build

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
  progress: $("boot-progress"),
  timeLimit: $("time-limit"),
  skip: $("skip-link"),
  title: $("problem-title"),
  tryForm: $("try-form"),
  tryCall: $("try-call"),
  tryRun: $("try-run"),
  tryOutput: $("try-output"),
  splitter: $("splitter"),
  editorBox: $("editor"),
  langSwitch: document.querySelector("[data-testid=lang-switch]"),
  langSelect: $("lang-select"),
};

const state = {
  problems: [],
  byId: new Map(),
  current: null, // the problem shown
  runs: 0, // data-run: grows with every run
  lastResults: new Map(), // problem id -> Result shown last: the Result JSON, as is
  keptResults: new Set(), // problem ids whose shown Result was read back from this browser (an earlier visit)
  stoppedRuns: new Set(), // problem ids whose last verdict came from the Stop button
  running: null, // problem id of the run in progress
};

// Exposed for the end-to-end tests and for measuring (boot and first-verdict times).
const metrics = { pageStart: performance.timeOrigin, bootMs: null, firstVerdictMs: null, lastRunEngineMs: null };
window.ppJudge = { state, metrics, config };

// ------------------------------------------------------------------------------------------
// engine

let lastStatusText = "";
const pool = new EnginePool(config, (status) => {
  ui.status.dataset.state = status.state;
  ui.status.classList.toggle("engine-error", Boolean(status.error));
  // the live region says what is loading; the bytes go to the progress bar (not announced on every chunk)
  const phase = status.download ? "Downloading Python…" : status.text;
  if (phase !== lastStatusText) ui.statusText.textContent = lastStatusText = phase;
  showDownload(status);
  if (status.state === "ready" && metrics.bootMs === null && pool.bootMs) {
    metrics.bootMs = pool.bootMs;
    ui.status.title = `Python started in ${(pool.bootMs / 1000).toFixed(1)} s`;
    registerServiceWorker();
  }
  if (status.error) showBanner(`${status.text}. Your code is saved; reload the page to try again.`, "error");
});
window.ppJudge.pool = pool;

/** The first visit's download: a progress bar with bytes of bytes (topbar and the results pane). */
function showDownload(status) {
  const d = status.state === "booting" ? status.download : null;
  ui.progress.hidden = !d;
  if (d) {
    ui.progress.max = d.total;
    ui.progress.value = d.loaded;
    ui.progress.setAttribute("aria-valuetext", status.text);
    ui.progress.title = status.text;
  }
  const idle = ui.summary.querySelector(".boot-note");
  if (idle) idle.textContent = bootNote(status);
}

function bootNote(status = pool.status()) {
  if (status.state !== "booting" || status.error) return "";
  const what = status.download ? status.text : status.text.replace(/…$/, "");
  return `Python is still loading (${what.replace(/^Downloading Python: /, "")}). You can read and edit meanwhile; ` +
         "Run waits for it.";
}
if (/Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent)) {
  for (const k of document.querySelectorAll("kbd")) k.textContent = k.textContent.replace("Ctrl", "⌘");
}
pool.start(); // boot Python as soon as the page opens, not on the first click (downloads wait for pageReady)

// ------------------------------------------------------------------------------------------
// editor

const editor = createEditor($("editor"), {
  onChange: (text) => {
    if (!state.current) return;
    const ok = store.saveCode(state.current.id, text);
    const label = ok ? "Saved in this browser" : "NOT saved (storage full)";
    if (ui.saveState.textContent !== label) ui.saveState.textContent = label; // not a live region: no announcement per key
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
  document.title = SITE_TITLE;
  renderLists();
}

const NUMPY_IMPORT = /^\s*(import|from)\s+numpy\b/m;
const needsNumpy = (p) => p.files.some((f) => f.path.endsWith(".py") && f.text !== undefined && NUMPY_IMPORT.test(f.text));

function showProblem(problem) {
  const switching = !state.current || state.current.id !== problem.id;
  state.current = problem;
  store.saveLast(problem.id);
  ui.home.hidden = true;
  ui.workspace.hidden = false;
  document.title = `${problem.title} · ${SITE_TITLE}`;
  markCurrent();
  if (!switching) return;
  if (needsNumpy(problem)) pool.wantNumpy(); // numpy loads only for the problems that import it
  ui.title.textContent = problem.title;
  showStatement(problem);
  renderTestsPanel(problem);
  selectTab("statement", false);
  ui.fileName.textContent = problem.entry;
  ui.timeLimit.textContent = `time limit ${problem.time_limit} s`;
  const saved = store.loadCode(problem.id);
  editor.setText(saved ?? problem.starter);
  ui.saveState.textContent = saved === null ? "Starter code" : "Saved in this browser";
  let shown = state.lastResults.get(problem.id) || null;
  if (!shown) {
    // the last verdict, kept in this browser: a reload shows it under its badge
    const kept = store.loadResult(problem.id);
    if (kept) {
      shown = kept.result;
      state.lastResults.set(problem.id, shown);
      if (kept.stopped) state.stoppedRuns.add(problem.id);
      state.keptResults.add(problem.id);
    }
  }
  showResult(shown);
  ui.tryOutput.replaceChildren();
  ui.tryCall.placeholder = tryExample(problem);
  ui.tryCall.value = store.loadTry(problem.id) || "";
  updateRunButtons();
  ui.statement.scrollTop = 0;
}

// ------------------------------------------------------------------------------------------
// the statements' language: README.<lang>.md as built into statements_html, else the default (English)

const LANGUAGE_NAMES = { en: "English", zh: "中文" };
const DEFAULT_LANGUAGE = "en";
let language = DEFAULT_LANGUAGE;

/** The languages some statement is in, the default first. */
function statementLanguages() {
  const found = new Set(state.problems.flatMap((p) => Object.keys(p.statements_html || {})));
  return [DEFAULT_LANGUAGE, ...[...found].sort()];
}

/** The learner's choice if they made one, else the first of the browser's languages that a statement is in. */
function initialLanguage(available) {
  const chosen = store.loadLanguage();
  if (chosen && available.includes(chosen)) return chosen;
  for (const tag of navigator.languages || [navigator.language || ""]) {
    const base = tag.toLowerCase().split("-")[0];
    if (available.includes(base)) return base;
  }
  return DEFAULT_LANGUAGE;
}

function setupLanguages() {
  const available = statementLanguages();
  language = initialLanguage(available);
  ui.langSelect.replaceChildren(...available.map((lang) => new Option(LANGUAGE_NAMES[lang] || lang, lang)));
  ui.langSelect.value = language;
  ui.langSwitch.hidden = available.length < 2;
  document.documentElement.lang = language;
  ui.langSelect.addEventListener("change", () => {
    language = ui.langSelect.value;
    store.saveLanguage(language);
    document.documentElement.lang = language;
    if (state.current) showStatement(state.current); // the statement only: the editor keeps the learner's code
  });
}

/** The statement in the chosen language; without a translation the default one, under a note saying so. */
function showStatement(problem) {
  const translated = (problem.statements_html || {})[language];
  renderStatement(ui.statement, translated ?? problem.statement_html);
  ui.statement.dataset.lang = translated === undefined ? DEFAULT_LANGUAGE : language;
  if (translated === undefined && language !== DEFAULT_LANGUAGE) {
    const note = document.createElement("p");
    note.className = "statement-note";
    note.dataset.testid = "statement-note";
    note.textContent = `No ${LANGUAGE_NAMES[language] || language} statement for this exercise yet: shown in English.`;
    ui.statement.prepend(note);
  }
}

/** The Try it field's hint: the starter's first function with its parameters named. */
function tryExample(problem) {
  const m = /^def\s+([A-Za-z_]\w*)\s*\(([^)]*)\)/m.exec(problem.starter);
  if (!m) return "";
  const params = m[2].split(",").map((a) => a.split(/[:=]/)[0].trim()).filter((a) => a && !a.startsWith("*"));
  return `${m[1]}(${params.join(", ")})`;
}

/** The problem after this one in the list (null at the end). */
function nextProblem(problem) {
  const i = state.problems.indexOf(problem);
  return i >= 0 && i + 1 < state.problems.length ? state.problems[i + 1] : null;
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
      createCodeView(holder, file.text, path);
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
const wideQuery = window.matchMedia("(max-width: 1180px)"); // (the problem list is a drawer below 1180 px)

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

function openNav() {
  document.body.classList.add("nav-open");
  $("toggle-nav").setAttribute("aria-expanded", "true");
  // the drawer takes the focus: the current problem's link, else the first
  const target = ui.list.querySelector("a[aria-current=page]") || ui.list.querySelector("a");
  requestAnimationFrame(() => target?.focus());
}

function closeNav(returnFocus = false) {
  document.body.classList.remove("nav-open");
  $("toggle-nav").setAttribute("aria-expanded", "false");
  if (returnFocus) $("toggle-nav").focus();
}

$("toggle-nav").addEventListener("click", () => {
  if (document.body.classList.contains("nav-open")) closeNav(true);
  else openNav();
});
// a drawer left by the keyboard (Tab past its last link) closes
$("problem-nav").addEventListener("focusout", (event) => {
  if (!document.body.classList.contains("nav-open") || !wideQuery.matches) return;
  const to = event.relatedTarget;
  if (to && !$("problem-nav").contains(to) && to !== $("toggle-nav")) closeNav(false);
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

/** Run and Stop belong to the problem whose run is in progress: another problem's page cannot stop it. */
function updateRunButtons() {
  const busy = Boolean(state.running);
  const mine = busy && state.current && state.running === state.current.id;
  // Run stays focusable while busy (aria-disabled, not disabled): a keyboard user keeps their place
  ui.run.setAttribute("aria-disabled", String(busy));
  ui.tryRun.setAttribute("aria-disabled", String(busy));
  const stopHadFocus = document.activeElement === ui.stop;
  ui.stop.disabled = !mine;
  if (stopHadFocus && ui.stop.disabled) ui.run.focus(); // never drop the focus to the page
  const other = busy && !mine ? state.byId.get(state.running) : null;
  let note = ui.summary.parentElement.querySelector(".other-run");
  if (other && !note) {
    note = document.createElement("p");
    note.className = "other-run muted";
    note.dataset.testid = "other-run";
    ui.summary.before(note);
  }
  if (note && !other) note.remove();
  if (note && other) {
    note.replaceChildren(`The tests of “${other.title}” are running. `,
      Object.assign(document.createElement("a"), { href: `#/${other.id}`, textContent: "Go to that exercise" }),
      " to see them or stop them.");
  }
}

function runningSummary(text) {
  ui.summary.replaceChildren(Object.assign(document.createElement("span"), { className: "summary-text", textContent: text }));
}

/** Start a run (mode "run": the public tests; "try": one call of the learner's function). */
async function startRun(mode = "run") {
  const problem = state.current;
  if (!problem || state.running) return;
  const source = editor.getText();
  const call = ui.tryCall.value.trim();
  if (mode === "try" && !call) {
    showTry({ error: "Type a call of one of your functions first, like " + (tryExample(problem) || "f(1, 2)") }, problem);
    ui.tryCall.focus();
    return;
  }
  store.saveCodeIfEdited(problem.id, source);
  state.running = problem.id;
  state.runMode = mode;
  updateRunButtons();
  const booting = pool.status().state === "booting";
  const limit = `time limit ${problem.time_limit} s`;
  let started = performance.now();
  if (mode === "run") {
    state.runs += 1;
    ui.summary.dataset.run = String(state.runs);
    ui.summary.dataset.status = "running";
    runningSummary(booting ? `Waiting for Python to start, then running the tests (${limit})…` : `Running the tests (${limit})…`);
    ui.testList.replaceChildren();
  } else {
    store.saveTry(problem.id, call);
    ui.tryOutput.dataset.status = "running";
    ui.tryOutput.replaceChildren(Object.assign(document.createElement("p"), {
      className: "muted", textContent: booting ? "Waiting for Python to start…" : `Calling ${call} (${limit})…` }));
  }
  const runNumber = state.runs;
  const outcome = await pool.run(workerProblem(problem), source, problem.time_limit, (text, what) => {
    // the run waits: for numpy (it loads after a restore from the memory snapshot) or for a fresh
    // engine (after a hard stop, before the spare is ready), and says so
    const summary = ui.summary.querySelector(".summary-text");
    if (mode === "run" && summary && ui.summary.dataset.run === String(runNumber)) {
      summary.textContent = `${text.replace(/…$/, "")}, then running the tests…`;
      ui.summary.dataset.waiting = what;
    }
  }, mode === "try" ? { mode: "try", call } : {});
  delete ui.summary.dataset.waiting;
  state.running = null;
  state.runMode = null;
  if (mode === "try") {
    showTry(tryOutcome(problem, outcome), problem);
    updateRunButtons();
    return;
  }
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
  const stopped = outcome.kind === "stopped";
  if (!stopped) store.saveStatus(problem.id, result.status === "passed" ? "passed" : "failing");
  refreshListState(problem.id);
  state.lastResults.set(problem.id, result);
  state.keptResults.delete(problem.id);
  store.saveResult(problem.id, result, stopped);
  if (stopped) state.stoppedRuns.add(problem.id); else state.stoppedRuns.delete(problem.id);
  if (state.current && state.current.id === problem.id) {
    showResult(result);
    if (phoneQuery.matches) ui.summary.scrollIntoView({ block: "start", behavior: "smooth" });
  }
  updateRunButtons();
}

const run = () => startRun("run");

function tryOutcome(problem, outcome) {
  if (outcome.kind === "result") {
    try {
      return JSON.parse(outcome.json);
    } catch (err) {
      return { error: `unreadable answer from Python (${err.message})` };
    }
  }
  if (outcome.kind === "timeout") return { error: `Timed out after ${outcome.seconds} s (the time limit): does it loop forever?` };
  if (outcome.kind === "stopped") return { error: `Stopped by you after ${outcome.seconds} s.` };
  return { error: outcome.message || "the Python engine failed" };
}

/** Try it's answer: the value (repr), what it printed, or the error with the lines of your file. */
function showTry(answer, problem) {
  if (!state.current || state.current.id !== problem.id) return;
  const out = ui.tryOutput;
  out.dataset.status = answer.ok ? "ok" : "error";
  out.replaceChildren();
  const add = (label, text, cls) => {
    const box = document.createElement("div");
    box.className = `try-part ${cls}`;
    const h = document.createElement("div");
    h.className = "label";
    h.textContent = label;
    const pre = document.createElement("pre");
    pre.tabIndex = 0;
    pre.textContent = text;
    box.append(h, pre);
    out.append(box);
  };
  if (answer.ok) add(`Returned (${answer.type})`, answer.value, "try-value");
  if (answer.stdout) add("Printed", answer.stdout, "try-stdout");
  if (answer.stderr) add("Printed to stderr", answer.stderr, "try-stderr");
  if (!answer.ok) {
    const lines = (answer.frames || []).map((f) => `  ${problem.entry}:${f.line} in ${f.function}: ${f.code}`);
    add("Error", [answer.error, ...lines].filter(Boolean).join("\n"), "try-error");
  }
}

function showResult(result) {
  if (!result) {
    ui.summary.dataset.status = "";
    const text = Object.assign(document.createElement("span"), {
      className: "summary-text",
      textContent: `Press Run (Ctrl+Enter) to test your code against the public tests (time limit ${state.current.time_limit} s).`,
    });
    const note = Object.assign(document.createElement("span"), { className: "boot-note muted", textContent: bootNote() });
    ui.summary.replaceChildren(text, note);
    ui.testList.replaceChildren();
    return;
  }
  ui.summary.dataset.status = result.status;
  const next = nextProblem(state.current);
  renderResult(result, ui.summary, ui.testList, {
    entry: state.current.entry,
    stopped: state.stoppedRuns.has(state.current.id),
    kept: state.keptResults.has(state.current.id),
    next: next ? { href: `#/${next.id}`, title: next.title } : null,
    goToLine: (line) => editor.goToLine(line),
    width: () => Math.max(280, ui.results.clientWidth - 48),
  });
}

ui.run.addEventListener("click", () => { if (ui.run.getAttribute("aria-disabled") !== "true") run(); });
ui.stop.addEventListener("click", () => stopRun());
ui.tryForm.addEventListener("submit", (event) => {
  event.preventDefault();
  if (ui.tryRun.getAttribute("aria-disabled") !== "true") startRun("try");
});

/** Stop the run in progress, if it is this problem's. */
function stopRun() {
  if (!state.running || !state.current || state.running !== state.current.id) return false;
  pool.abort("stopped");
  return true;
}
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
  } else if (event.key === "Escape") {
    if (document.body.classList.contains("nav-open")) {
      closeNav(true);
      event.preventDefault();
    } else if (stopRun()) {
      // Esc stops a run (in the editor too: Esc then Tab still leaves it)
    }
  }
});

// "Skip to the editor": the editor itself (the page's routes live in the hash, so no #anchor jump)
ui.skip.addEventListener("click", (event) => {
  event.preventDefault();
  if (!state.current || ui.workspace.hidden) {
    (ui.homeList.querySelector("a") || ui.list.querySelector("a"))?.focus();
    return;
  }
  if (phoneQuery.matches) selectTab("code", false);
  editor.focus();
});

// The splitter between the editor and the results: drag it, or focus it and use the arrow keys.
const SPLIT_KEY = "split";
function setSplit(percent, save = true) {
  const value = Math.round(Math.min(80, Math.max(20, percent)));
  document.documentElement.style.setProperty("--editor-share", String(value));
  ui.splitter.setAttribute("aria-valuenow", String(value));
  ui.splitter.setAttribute("aria-valuetext", `editor ${value}% of the height, results ${100 - value}%`);
  if (save) store.savePreference(SPLIT_KEY, String(value));
}
setSplit(Number(store.loadPreference(SPLIT_KEY)) || 45, false);
ui.splitter.addEventListener("keydown", (event) => {
  const now = Number(ui.splitter.getAttribute("aria-valuenow"));
  const step = { ArrowUp: -5, ArrowDown: 5, PageUp: -15, PageDown: 15 }[event.key];
  if (step) { setSplit(now + step); event.preventDefault(); }
  else if (event.key === "Home") { setSplit(20); event.preventDefault(); }
  else if (event.key === "End") { setSplit(80); event.preventDefault(); }
});
ui.splitter.addEventListener("pointerdown", (event) => {
  const pane = ui.splitter.parentElement;
  const top = ui.editorBox.getBoundingClientRect().top;
  const bottom = pane.getBoundingClientRect().bottom - (ui.splitter.getBoundingClientRect().bottom - ui.editorBox.getBoundingClientRect().bottom);
  ui.splitter.setPointerCapture(event.pointerId);
  const move = (e) => setSplit(((e.clientY - top) / Math.max(1, bottom - top)) * 100);
  const up = () => {
    ui.splitter.removeEventListener("pointermove", move);
    ui.splitter.removeEventListener("pointerup", up);
  };
  ui.splitter.addEventListener("pointermove", move);
  ui.splitter.addEventListener("pointerup", up);
  event.preventDefault();
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
  setupLanguages();
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

// the page's own files first: Python's large downloads wait for them (slow first visits)
start().catch((err) => showBanner(`The page could not start: ${err.message || err}`, "error"))
  .finally(() => pool.pageReady());
