// The page: problem list, statement, editor, Run / Stop / Reset, results, zip export and import.
// The judge itself runs in a Web Worker (see engine.js and ../worker.js).
import { EnginePool } from "./engine.js";
import * as store from "./storage.js";
import { createEditor, createCodeView } from "./editor.js";
import { renderResult } from "./results.js";
import { Console } from "./console.js";
import { renderStatement } from "./statement.js";
import { makeZip, readZip, downloadBytes } from "./zipio.js";
import { unfinishedResult } from "./unfinished.mjs";
import {
  _, ngettext, N_, DEFAULT_LANGUAGE, setCatalogs, setLanguage, interfaceLanguages, languageName,
  onLanguageChange, translateStatic, missingMessages, language as interfaceLanguage,
} from "./i18n.js";

const config = JSON.parse(document.getElementById("site-config").textContent);
setCatalogs(config.i18n);
setLanguage(startLanguage()); // before anything is shown: no English flash for a Chinese reader
const $ = (id) => document.getElementById(id);
const DEFAULT_TITLE = N_("Pipeline-parallel exercises");
const SITE_TITLE = document.title; // the course's title, written into <title> by judge build
/** The site's title: the course's as written, the judge's own wording in the page's language. */
const siteTitle = () => (SITE_TITLE === DEFAULT_TITLE ? _(DEFAULT_TITLE) : SITE_TITLE);

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
  consoleBox: $("console"),
  consoleOutput: $("console-output"),
  consoleInput: $("console-input"),
  consoleRun: $("console-run"),
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
  retriedRuns: new Set(), // problem ids whose last verdict is a second try (the first timed out while the page warmed up)
  hadVerdict: false, // a run gave a verdict in this page
  running: null, // problem id of the run in progress
};

// Exposed for the end-to-end tests and for measuring (boot and first-verdict times).
const metrics = { pageStart: performance.timeOrigin, bootMs: null, firstVerdictMs: null, lastRunEngineMs: null };
window.ppJudge = { state, metrics, config, i18n: { missing: missingMessages, language: interfaceLanguage } };

// ------------------------------------------------------------------------------------------
// engine

let lastStatusText = "";
let bannerAgain = null; // shows the banner again, in another language (showBanner)
let swRegistration = null; // the service worker's registration, once made (registerServiceWorker)
let swTold = ""; // what it was told last: "busy" or "idle" (tellServiceWorker)
let swRegistered = false;
/** The engine's status in the page's language (an error's own text is shown as it is). */
const statusText = (status) => {
  if (status.error) return status.text;
  if (!status.step) return _(status.text, status.values);
  const step = _(status.step.text, status.step.values).replace(/…$/, ""); // the engine's own progress, mid-sentence
  return _(status.text, { ...status.values, step: step.charAt(0).toLowerCase() + step.slice(1) });
};
const downloadText = (d) => _("Downloading Python: {loaded} of {total} MB",
                              { loaded: (d.loaded / 1e6).toFixed(1), total: (d.total / 1e6).toFixed(1) });

function engineChanged(status) {
  ui.status.dataset.state = status.state;
  ui.status.classList.toggle("engine-error", Boolean(status.error));
  // the live region says what is loading; the bytes go to the progress bar (not announced on every chunk)
  const phase = status.download ? _("Downloading Python…") : statusText(status);
  if (phase !== lastStatusText) ui.statusText.textContent = lastStatusText = phase;
  showDownload(status);
  if (status.state === "ready" && metrics.bootMs !== null) bootedTitle();
  if (status.state === "ready" && metrics.bootMs === null && pool.bootMs) {
    metrics.bootMs = pool.bootMs;
    bootedTitle();
    whenIdle(registerServiceWorker);
  }
  tellServiceWorker();
  if (status.error) {
    showBanner(() => _("{error}. Your code is saved; reload the page to try again.", { error: status.text }), "error");
  }
}
const bootedTitle = () => {
  ui.status.title = _("Python started in {seconds} s", { seconds: (metrics.bootMs / 1000).toFixed(1) });
};
const pool = new EnginePool(config, (status) => engineChanged(status));
window.ppJudge.pool = pool;

/** The first visit's download: a progress bar with bytes of bytes (topbar and the results pane). */
function showDownload(status) {
  const d = status.state === "booting" ? status.download : null;
  ui.progress.hidden = !d;
  if (d) {
    ui.progress.max = d.total;
    ui.progress.value = d.loaded;
    ui.progress.setAttribute("aria-valuetext", downloadText(d));
    ui.progress.title = downloadText(d);
  }
  const idle = ui.summary.querySelector(".boot-note");
  if (idle) idle.textContent = bootNote(status);
}

function bootNote(status = pool.status()) {
  if (status.state !== "booting" || status.error) return "";
  const what = status.download
    ? _("{loaded} of {total} MB", { loaded: (status.download.loaded / 1e6).toFixed(1), total: (status.download.total / 1e6).toFixed(1) })
    : statusText(status).replace(/…$/, "");
  return _("Python is still loading ({what}). You can read and edit meanwhile; Run waits for it.", { what });
}
if (/Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent)) {
  for (const k of document.querySelectorAll("kbd")) k.textContent = k.textContent.replace("Ctrl", "⌘");
}
translateStatic(); // the page's static words, in the browser's language until the problem list says more
pool.start(); // boot Python as soon as the page opens, not on the first click (downloads wait for pageReady)

// ------------------------------------------------------------------------------------------
// editor

const editor = createEditor($("editor"), {
  onChange: (text) => {
    if (!state.current) return;
    const ok = store.saveCode(state.current.id, text);
    setSaveState(ok ? N_("Saved in this browser") : N_("NOT saved (storage full)"));
    refreshListState(state.current.id);
  },
  onRun: () => run(),
});
window.ppJudge.editor = editor;

let saveLabel = "";
/** The toolbar's save state (a message); not a live region: typing announces nothing. */
function setSaveState(message) {
  saveLabel = message;
  const text = _(message);
  if (ui.saveState.textContent !== text) ui.saveState.textContent = text;
}

store.onStorageError((err) => {
  if (err) {
    showBanner(() => _("Your browser refused to save your code (storage is full or disabled). Your edits are " +
                       "kept in this tab only: use “Download all” now so nothing is lost."), "warning", "storage");
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
const STATE_LABEL = { "not-started": N_("not started"), failing: N_("failing"), passed: N_("passed") };
const DIFFICULTY = { easy: N_("easy"), medium: N_("medium"), hard: N_("hard") };

function stateBadge(id) {
  const s = problemState(id);
  const span = document.createElement("span");
  span.className = `state state-${s}`;
  span.dataset.state = s;
  span.textContent = _(STATE_LABEL[s]);
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
    title.textContent = titleOf(p);
    a.append(title, stateBadge(p.id));
    li.append(a);
    ui.list.append(li);

    const card = document.createElement("li");
    card.className = "card";
    const link = document.createElement("a");
    link.href = `#/${p.id}`;
    link.className = "card-title";
    link.textContent = titleOf(p);
    const summary = document.createElement("p");
    summary.textContent = p.summary;
    const meta = document.createElement("p");
    meta.className = "muted card-meta";
    meta.append(`${DIFFICULTY[p.difficulty] ? _(DIFFICULTY[p.difficulty]) : p.difficulty} · ${p.entry} · `, stateBadge(p.id));
    card.append(link, summary, meta);
    ui.homeList.append(card);
  }
  renderProgress();
  markCurrent();
}

function refreshListState(id) {
  for (const badge of document.querySelectorAll(`[data-problem-id="${id}"] .state`)) badge.replaceWith(stateBadge(id));
  renderProgress();
}

/** The overview of progress across the problems, from the states kept in this browser: solved
 * (the last run passed), tried (it did not), not started. */
function renderProgress() {
  const count = { passed: 0, failing: 0, "not-started": 0 };
  for (const p of state.problems) count[problemState(p.id)] += 1;
  const values = { solved: count.passed, tried: count.failing, todo: count["not-started"], total: state.problems.length };
  const text = _("{solved} of {total} solved · {tried} tried · {todo} not started", values);
  $("progress-counts").textContent = text;
  document.querySelector("[data-testid=progress-line]").textContent = text;
  const overview = document.querySelector("[data-testid=progress-overview]");
  Object.assign(overview.dataset, { solved: values.solved, tried: values.tried, todo: values.todo });
  const bar = $("progress-bar");
  bar.replaceChildren(...[["solved", values.solved], ["tried", values.tried]].map(([cls, n]) => {
    const part = document.createElement("span");
    part.className = cls;
    part.style.width = `${(100 * n) / Math.max(1, values.total)}%`;
    return part;
  }));
}

// the text size (the drawer's control): a scale kept in this browser
const TEXT_SCALES = [0.85, 1, 1.15, 1.3, 1.5];
const TEXT_KEY = "text-scale";
function setTextScale(scale, save = true) {
  const value = TEXT_SCALES.includes(scale) ? scale : 1;
  document.documentElement.style.setProperty("--text-scale", String(value));
  document.documentElement.dataset.textScale = String(value);
  $("font-smaller").disabled = value === TEXT_SCALES[0];
  $("font-larger").disabled = value === TEXT_SCALES[TEXT_SCALES.length - 1];
  if (save) store.savePreference(TEXT_KEY, String(value));
  editor.view?.requestMeasure?.();
}
const stepScale = (step) => {
  const now = Number(document.documentElement.dataset.textScale) || 1;
  const i = Math.max(0, Math.min(TEXT_SCALES.length - 1, TEXT_SCALES.indexOf(now) + step));
  setTextScale(TEXT_SCALES[i]);
};
$("font-smaller").addEventListener("click", () => stepScale(-1));
$("font-larger").addEventListener("click", () => stepScale(1));
$("font-reset").addEventListener("click", () => setTextScale(1));
setTextScale(Number(store.loadPreference(TEXT_KEY)) || 1, false);

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
  document.title = siteTitle();
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
  document.title = `${titleOf(problem)} · ${siteTitle()}`;
  markCurrent();
  if (!switching) return;
  if (needsNumpy(problem)) pool.wantNumpy(); // numpy loads only for the problems that import it
  ui.title.textContent = titleOf(problem);
  showStatement(problem);
  renderTestsPanel(problem);
  selectTab("statement", false);
  ui.fileName.textContent = problem.entry;
  ui.timeLimit.textContent = timeLimitText(problem);
  const saved = store.loadCode(problem.id);
  editor.setText(saved ?? problem.starter);
  setSaveState(saved === null ? N_("Starter code") : N_("Saved in this browser"));
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
  state.lastTry = null;
  pool.endConsole(); // the console's namespace is the file of the problem shown
  consoleUI.show(problem.id);
  ui.tryCall.placeholder = tryExample(problem);
  ui.tryCall.value = store.loadTry(problem.id) || "";
  updateRunButtons();
  ui.statement.scrollTop = 0;
}

const timeLimitText = (problem) => _("time limit {seconds} s", { seconds: problem.time_limit });

// ------------------------------------------------------------------------------------------
// the language: the page's own words (the judge's catalogs, js/i18n.js) and the statements
// (README.<lang>.md as built into statements_html, else the default, English)

let language = DEFAULT_LANGUAGE;
/** A problem's title in the statements' language (its README.<lang>.md's heading), else problem.toml's. */
function titleOf(problem) {
  return (problem.titles && problem.titles[language]) || problem.title;
}

/** The languages the page's words or some statement are in, the default first. */
function statementLanguages() {
  const found = new Set([...interfaceLanguages(),
                         ...state.problems.flatMap((p) => Object.keys(p.statements_html || {}))]);
  found.delete(DEFAULT_LANGUAGE);
  return [DEFAULT_LANGUAGE, ...[...found].sort()];
}

/** The page's words' language before the problem list is in: the learner's choice, else the browser's. */
function startLanguage() {
  const chosen = store.loadLanguage();
  if (chosen) return interfaceLanguages().includes(chosen) ? chosen : DEFAULT_LANGUAGE;
  return initialLanguage(interfaceLanguages());
}

/** The learner's choice if they made one, else the first of the browser's languages that the page or a statement is in. */
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
  ui.langSelect.replaceChildren(...available.map((lang) => {
    const option = new Option(languageName(lang), lang);
    option.lang = lang; // each name in its own language
    return option;
  }));
  useLanguage(initialLanguage(available));
  ui.langSwitch.hidden = available.length < 2;
  ui.langSelect.addEventListener("change", () => {
    store.saveLanguage(ui.langSelect.value);
    useLanguage(ui.langSelect.value);
  });
}

/** Show the page in `lang`: its own words (English without a catalog) and the statements. */
function useLanguage(lang) {
  language = lang;
  ui.langSelect.value = lang;
  setLanguage(interfaceLanguages().includes(lang) ? lang : DEFAULT_LANGUAGE);
  document.documentElement.lang = interfaceLanguage();
}

// Switching re-renders the page's words and the statement; the editor keeps the learner's code and
// the results pane shows the same Result (or the run in progress) in the new language.
onLanguageChange(() => {
  translateStatic();
  lastStatusText = "";
  engineChanged(pool.status());
  setSplit(Number(ui.splitter.getAttribute("aria-valuenow")) || 45, false);
  if (!state.problems.length) return;
  renderLists();
  redoBanner();
  const problem = state.current;
  if (!problem) {
    document.title = siteTitle();
    return;
  }
  document.title = `${titleOf(problem)} · ${siteTitle()}`;
  ui.title.textContent = titleOf(problem);
  showStatement(problem);
  renderTestsPanel(problem);
  ui.timeLimit.textContent = timeLimitText(problem);
  setSaveState(saveLabel);
  const running = state.running === problem.id && ui.summary.dataset.status === "running";
  if (running && state.runMode === "run" && state.runningText) runningSummary(state.runningText);
  else showResult(state.lastResults.get(problem.id) || null);
  if (state.running === problem.id && state.runMode === "try" && state.tryText) showTryWaiting(state.tryText);
  else if (state.lastTry && state.lastTry.problem === problem) showTry(state.lastTry.answer, problem);
  consoleUI.render();
  updateRunButtons();
});

/** The statement in the chosen language; without a translation the default one, under a note saying so. */
function showStatement(problem) {
  const translated = (problem.statements_html || {})[language];
  renderStatement(ui.statement, translated ?? problem.statement_html, problem.id);
  ui.statement.dataset.lang = translated === undefined ? DEFAULT_LANGUAGE : language;
  ui.statement.lang = ui.statement.dataset.lang;
  if (translated === undefined && language !== DEFAULT_LANGUAGE) {
    const note = document.createElement("p");
    note.className = "statement-note";
    note.dataset.testid = "statement-note";
    note.lang = interfaceLanguage();
    note.textContent = _("No {language} statement for this exercise yet: shown in English.",
                         { language: languageName(language) });
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
  intro.textContent = _("These are the public tests your code runs against (read-only). Graded runs also use " +
                        "tests that are not shown.");
  ui.testsPanel.append(intro);
  const byPath = new Map(problem.files.map((f) => [f.path, f]));
  for (const path of [...problem.public_tests, ...problem.support]) {
    const file = byPath.get(path);
    const section = document.createElement("section");
    section.className = "code-file";
    const h = document.createElement("h3");
    h.textContent = path.startsWith("support/") ? _("{file} (support module, beside your file)", { file: path.slice(8) }) : path;
    section.append(h);
    if (file.text !== undefined && path.endsWith(".py")) {
      const holder = document.createElement("div");
      holder.className = "code-view";
      section.append(holder);
      createCodeView(holder, file.text, path);
    } else {
      const pre = document.createElement("pre");
      pre.textContent = file.text ?? _("(binary file)");
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
  ui.consoleRun.setAttribute("aria-disabled", String(busy));
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
    const link = Object.assign(document.createElement("a"), { href: `#/${other.id}`, textContent: _("Go to that exercise") });
    // the link sits where the translation puts {link}
    const parts = _("The tests of “{title}” are running. {link} to see them or stop them.", { title: titleOf(other) })
      .split("{link}");
    note.replaceChildren(parts[0], link, parts.slice(1).join(""));
  }
}

/** The summary of the run in progress; `text()` gives it in the page's language (again after a switch). */
function runningSummary(text) {
  state.runningText = text;
  ui.summary.replaceChildren(Object.assign(document.createElement("span"), { className: "summary-text", textContent: text() }));
}

function showTryWaiting(text) {
  state.tryText = text;
  ui.tryOutput.replaceChildren(Object.assign(document.createElement("p"), { className: "muted", textContent: text() }));
}

/** Start a run (mode "run": the public tests; "try": one call of the learner's function). */
async function startRun(mode = "run") {
  const problem = state.current;
  if (!problem || state.running) return;
  const source = editor.getText();
  const call = ui.tryCall.value.trim();
  if (mode === "try" && !call) {
    showTry({ error: _("Type a call of one of your functions first, like {example}", { example: tryExample(problem) || "f(1, 2)" }) },
            problem);
    ui.tryCall.focus();
    return;
  }
  store.saveCodeIfEdited(problem.id, source);
  state.running = problem.id;
  state.runMode = mode;
  updateRunButtons();
  const booting = pool.status().state === "booting";
  const limit = () => timeLimitText(problem);
  let started = performance.now();
  if (mode === "run") {
    state.runs += 1;
    ui.summary.dataset.run = String(state.runs);
    ui.summary.dataset.status = "running";
    runningSummary(booting ? () => _("Waiting for Python to start, then running the tests ({limit})…", { limit: limit() })
                           : () => _("Running the tests ({limit})…", { limit: limit() }));
    ui.testList.replaceChildren();
  } else {
    store.saveTry(problem.id, call);
    state.lastTry = null;
    ui.tryOutput.dataset.status = "running";
    showTryWaiting(booting ? () => _("Waiting for Python to start…") : () => _("Calling {call} ({limit})…", { call, limit: limit() }));
  }
  const runNumber = state.runs;
  // a first run while the page is still warming up (the spare engine booting, numpy loading, the
  // offline copy being made) that runs out of time is made once more, and says why
  const warm = mode === "run" && !state.hadVerdict && warming();
  let retrying = null; // the words of a second try, while it runs
  const attempt = () => pool.run(workerProblem(problem), source, problem.time_limit, (message, what) => {
    // the run waits: for the standard library or numpy (they load after a restore from the memory
    // snapshot) or for a fresh engine (after a hard stop, before the spare is ready), and says so
    if (mode === "run" && ui.summary.dataset.run === String(runNumber) && state.running === problem.id) {
      ui.summary.dataset.waiting = what;
      if (state.current && state.current.id === problem.id) {
        const waiting = () => _("{waiting}, then running the tests…", { waiting: statusText(message).replace(/…$/, "") });
        runningSummary(retrying ? () => `${retrying()} ${waiting()}` : waiting);
      }
    }
  }, mode === "try" ? { mode: "try", call } : {});
  let outcome = await attempt();
  let retried = false;
  if (warm && outcome.kind === "timeout" && state.running === problem.id) {
    retried = true;
    ui.summary.dataset.retry = "warming";
    const limited = outcome.seconds;
    retrying = () => _("The first run ran out of time ({seconds} s) while the page was still starting up " +
                       "(Python's spare engine, numpy, the offline copy): running the tests once more…",
                       { seconds: limited });
    if (state.current && state.current.id === problem.id) runningSummary(retrying);
    outcome = await attempt();
    delete ui.summary.dataset.retry;
  }
  delete ui.summary.dataset.waiting;
  state.running = null;
  state.runMode = null;
  state.runningText = null;
  state.tryText = null;
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
  state.hadVerdict = true;
  if (retried) state.retriedRuns.add(problem.id); else state.retriedRuns.delete(problem.id);
  const stopped = outcome.kind === "stopped";
  if (!stopped) store.saveStatus(problem.id, result.status === "passed" ? "passed" : "failing");
  refreshListState(problem.id);
  state.lastResults.set(problem.id, result);
  state.keptResults.delete(problem.id);
  store.saveResult(problem.id, result, stopped);
  consoleUI.addRun(problem.id, runNumber, result);
  if (stopped) state.stoppedRuns.add(problem.id); else state.stoppedRuns.delete(problem.id);
  if (state.current && state.current.id === problem.id) {
    showResult(result);
    if (phoneQuery.matches) ui.summary.scrollIntoView({ block: "start", behavior: "smooth" });
  }
  updateRunButtons();
}

const run = () => startRun("run");

// ------------------------------------------------------------------------------------------
// the console (js/console.js): the file run in a fresh namespace in an engine kept for it, then
// the learner's input; the same time limit and Stop as a run, and no verdict changes

const consoleUI = new Console(
  { details: ui.consoleBox, output: ui.consoleOutput, form: $("console-form"), input: ui.consoleInput,
    restart: $("console-restart"), clear: $("console-clear") },
  { onSubmit: (text) => consoleInput(text), onRestart: () => restartConsole() });
window.ppJudge.console = consoleUI;
let consoleAnswers = 0;

function restartConsole() {
  if (!state.current) return;
  if (state.running === state.current.id && state.runMode === "console") pool.abort("stopped");
  pool.endConsole();
  consoleUI.add(state.current.id, { kind: "note", note: "restarted" });
}

/** Send one input to the console; false when another run is in progress (the input stays in the prompt). */
function consoleInput(text) {
  const problem = state.current;
  if (!problem || state.running) return false;
  const source = editor.getText();
  store.saveCodeIfEdited(problem.id, source);
  const key = `${problem.id}\n${source}`;
  const kept = pool.console ? pool.console.key : null;
  if (kept !== key) {
    const changed = kept !== null && kept.startsWith(`${problem.id}\n`);
    consoleUI.add(problem.id, { kind: "note", note: changed ? "changed" : "fresh", values: { file: problem.entry } });
  }
  consoleUI.add(problem.id, { kind: "input", text });
  state.running = problem.id;
  state.runMode = "console";
  ui.consoleOutput.dataset.status = "running";
  updateRunButtons();
  pool.run(workerProblem(problem), source, problem.time_limit, null, { mode: "console", input: text, console: key })
    .then((outcome) => consoleAnswer(problem, outcome));
  return true;
}

function consoleAnswer(problem, outcome) {
  state.running = null;
  state.runMode = null;
  const add = (entry) => consoleUI.add(problem.id, entry);
  let status = "error";
  if (outcome.kind === "result") {
    let answer;
    try {
      answer = JSON.parse(outcome.json);
    } catch (err) {
      answer = { ok: false, output: [], error: _("unreadable answer from Python ({error})", { error: err.message }) };
    }
    for (const [stream, text] of answer.output || []) add({ kind: "out", stream, text });
    if (answer.value !== null && answer.value !== undefined) add({ kind: "value", text: answer.value, type: answer.type });
    if (!answer.ok) add({ kind: "error", text: answer.error, frames: answer.frames });
    if (answer.file_error) pool.endConsole(); // a file that fails to run gives no namespace to keep
    status = answer.ok ? "ok" : "error";
  } else if (outcome.kind === "timeout" || outcome.kind === "stopped") {
    add({ kind: "note", note: outcome.kind, values: { seconds: outcome.seconds } });
    status = outcome.kind;
  } else {
    add({ kind: "note", note: "failed", values: { message: outcome.message || "" } });
  }
  consoleAnswers += 1;
  ui.consoleOutput.dataset.status = status;
  ui.consoleOutput.dataset.answers = String(consoleAnswers);
  updateRunButtons();
}

function tryOutcome(problem, outcome) {
  if (outcome.kind === "result") {
    try {
      return JSON.parse(outcome.json);
    } catch (err) {
      return { error: _("unreadable answer from Python ({error})", { error: err.message }) };
    }
  }
  if (outcome.kind === "timeout") {
    return { error: _("Timed out after {seconds} s (the time limit): does it loop forever?", { seconds: outcome.seconds }) };
  }
  if (outcome.kind === "stopped") return { error: _("Stopped by you after {seconds} s", { seconds: outcome.seconds }) };
  return { error: outcome.message || _("the Python engine failed") };
}

/** Why Try it refused a call, by the code worker.js's TRY_PY gives. */
const TRY_REFUSALS = {
  syntax: N_("that is not Python ({detail})"),
  not_a_call: N_("write a call of one of your functions, like f(1, 2)"),
  starred: N_("* and ** arguments are not supported here"),
  not_literal: N_("type the arguments as values: numbers, strings, True, False, None, and lists, tuples, dicts or sets of them"),
};

function tryError(answer) {
  const why = answer.refused && TRY_REFUSALS[answer.refused.code];
  if (!why) return answer.error;
  return _("Cannot call that: {reason}", { reason: _(why, { detail: answer.refused.detail || "" }) });
}

/** Try it's answer: the value (repr), what it printed, or the error with the lines of your file. */
function showTry(answer, problem) {
  if (!state.current || state.current.id !== problem.id) return;
  state.lastTry = { problem, answer }; // shown again in another language
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
  if (answer.ok) add(_("Returned ({type})", { type: answer.type }), answer.value, "try-value");
  if (answer.stdout) add(_("Printed"), answer.stdout, "try-stdout");
  if (answer.stderr) add(_("Printed to stderr"), answer.stderr, "try-stderr");
  if (!answer.ok) {
    const lines = (answer.frames || []).map((f) => "  " + _("{file}:{line} in {function}: {code}",
      { file: problem.entry, line: f.line, function: f.function, code: f.code }));
    add(_("Error"), [tryError(answer), ...lines].filter(Boolean).join("\n"), "try-error");
  }
}

// On phones the results sit far below the editor: the sticky toolbar's "↑ Code" goes back to it
$("back-to-code").addEventListener("click", () => {
  window.scrollTo({ top: Math.max(0, ui.editorBox.getBoundingClientRect().top + window.scrollY - 120), behavior: "smooth" });
  editor.focus();
});

function showResult(result) {
  if (!result) {
    ui.summary.dataset.status = "";
    const text = Object.assign(document.createElement("span"), {
      className: "summary-text",
      textContent: _("Press Run (Ctrl+Enter) to test your code against the public tests ({limit}).",
                     { limit: timeLimitText(state.current) }),
    });
    const what = Object.assign(document.createElement("p"), {
      className: "muted hint results-empty",
      textContent: _("Run saves your code and runs the exercise's public tests on it in this browser: {files}. " +
                     "Each test's verdict, what it expected and what your code printed show here, failures first. " +
                     "The console above runs your code without judging it.",
                     { files: (state.current.public_tests || []).join(", ") }),
    });
    what.dataset.testid = "results-empty";
    const note = Object.assign(document.createElement("span"), { className: "boot-note muted", textContent: bootNote() });
    ui.summary.replaceChildren(text, note, what);
    ui.testList.replaceChildren();
    return;
  }
  const stopped = state.stoppedRuns.has(state.current.id) && result.status === "error" && !(result.tests || []).length;
  ui.summary.dataset.status = stopped ? "stopped" : result.status;
  const next = nextProblem(state.current);
  renderResult(result, ui.summary, ui.testList, {
    entry: state.current.entry,
    stopped: state.stoppedRuns.has(state.current.id),
    retried: state.retriedRuns.has(state.current.id),
    kept: state.keptResults.has(state.current.id),
    next: next ? { href: `#/${next.id}`, title: titleOf(next) } : null,
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
  if (!window.confirm(_("Replace your code in {file} with the starter code? Your current code will be lost.",
                        { file: problem.entry }))) return;
  editor.setText(problem.starter);
  store.saveCode(problem.id, problem.starter);
  setSaveState(N_("Starter code"));
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
  ui.splitter.setAttribute("aria-valuetext", _("height: editor {editor}%, results {results}%",
                                                 { editor: value, results: 100 - value }));
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
    showBanner(() => _("Could not read {file}: {error}", { file: file.name, error: err.message || err }), "error", "import");
    return;
  }
  const ids = Object.keys(found);
  if (!ids.length) {
    showBanner(() => _("{file} holds no solution of these problems (expected paths like {example}).",
                       { file: file.name, example: `${state.problems[0]?.id}/${state.problems[0]?.entry}` }),
               "warning", "import");
    return;
  }
  if (!window.confirm(ngettext("Import {n} solution from {file} ({problems})? This replaces your current code for " +
                               "that problem.",
                               "Import {n} solutions from {file} ({problems})? This replaces your current code for " +
                               "those problems.", ids.length, { file: file.name, problems: ids.join(", ") }))) return;
  for (const id of ids) store.saveCode(id, found[id]);
  if (state.current && found[state.current.id] !== undefined) editor.setText(found[state.current.id]);
  renderLists();
  showBanner(() => [ngettext("Imported {n} solution.", "Imported {n} solutions.", ids.length),
                    ignored.length ? ngettext("Ignored {n} other file.", "Ignored {n} other files.", ignored.length) : ""]
    .filter(Boolean).join(" "), "info", "import");
});

// ------------------------------------------------------------------------------------------
// banner, service worker, start

/** A banner; `text()` gives its words in the page's language (called again after a switch). */
function showBanner(text, kind = "info", key = "general") {
  bannerAgain = () => showBanner(text, kind, key);
  ui.banner.hidden = false;
  ui.banner.dataset.kind = kind;
  ui.banner.dataset.key = key;
  ui.banner.replaceChildren(Object.assign(document.createElement("span"), { textContent: text() }));
  const close = Object.assign(document.createElement("button"), { type: "button", className: "link-button", textContent: _("Dismiss") });
  close.addEventListener("click", () => { ui.banner.hidden = true; });
  ui.banner.append(close);
}

function redoBanner() {
  if (!ui.banner.hidden && bannerAgain) bannerAgain();
}

function hideBanner(key) {
  if (ui.banner.dataset.key === key) ui.banner.hidden = true;
}

// The page's own background work waits for the learner's runs (a busy laptop has the CPU for one
// thing at a time): the offline copy starts after the page has been idle for a moment, and pauses
// between files while a run is in progress; the spare engine, numpy and keeping the memory image
// wait in the workers (engine.js, worker.js).
const IDLE_MS = 1500;
function whenIdle(work) {
  const check = () => {
    if (pool.busy || state.running) setTimeout(check, IDLE_MS);
    else work();
  };
  setTimeout(check, IDLE_MS);
}

/** "busy" / "idle" to the service worker that is precaching, as runs start and end. */
function tellServiceWorker() {
  const word = pool.busy ? "busy" : "idle";
  if (!swRegistration || word === swTold) return;
  swTold = word;
  for (const worker of [swRegistration.installing, swRegistration.waiting, swRegistration.active]) worker?.postMessage(word);
}
/** Whether the page's own background work is still going on: the spare engine booting, numpy
 * loading, the offline copy not made yet. */
function warming() {
  const spare = pool.spare;
  const booting = !pool.noSpare && (!spare || spare.state === "booting");
  const numpy = [pool.primary, pool.spare].some((e) => e && e.state !== "dead" && e.numpy === "loading");
  const offline = "serviceWorker" in navigator && document.documentElement.dataset.offlineReady !== "true";
  return booting || numpy || offline;
}

/** What of the page's background work is where (for the tests): precache and the spare engine. */
window.ppJudge.background = () => ({
  precache: !swRegistered ? "waiting" : swRegistration && swRegistration.installing ? (swTold === "busy" ? "paused" : "running") : "done",
  spare: !pool.spare ? "none" : pool.spare.held ? "paused" : pool.spare.state,
  running: pool.busy,
});

function registerServiceWorker() {
  if (swRegistered || !("serviceWorker" in navigator)) return;
  swRegistered = true;
  // After the engine booted, so the precache reads Pyodide from the HTTP cache instead of
  // competing with the boot for the network.
  const hadController = Boolean(navigator.serviceWorker.controller);
  navigator.serviceWorker.register("sw.js").then((registration) => {
    swRegistration = registration;
    swTold = "";
    tellServiceWorker();
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
  showBanner(() => _("A new version of the exercises is ready."), "info", "update");
  bannerAgain = () => showUpdateBanner(worker);
  const button = Object.assign(document.createElement("button"), { type: "button", textContent: _("Reload to update") });
  button.addEventListener("click", () => {
    if (state.current) store.saveCodeIfEdited(state.current.id, editor.getText());
    navigator.serviceWorker.addEventListener("controllerchange", () => location.reload(), { once: true });
    worker.postMessage("skip-waiting");
  });
  ui.banner.insertBefore(button, ui.banner.lastChild);
}
setTimeout(() => whenIdle(registerServiceWorker), 30000); // also when Python is slow to start

window.addEventListener("pagehide", () => {
  if (state.current) store.saveCodeIfEdited(state.current.id, editor.getText());
});

async function start() {
  const response = await fetch(config.manifest);
  if (!response.ok) throw new Error(_("could not load the problem list ({status})", { status: response.status }));
  const manifest = await response.json();
  pool.pageReady(); // the page's files are in (index.html preloads them): the rest is drawing it
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

// the page's own files first: Python's large downloads wait for them (slow first visits), and
// for a page that failed to start no longer than that
start().catch((err) => showBanner(() => _("The page could not start: {error}", { error: err.message || err }), "error"))
  .finally(() => pool.pageReady());
