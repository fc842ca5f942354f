// The console under the editor: the learner's file run in a fresh namespace in an engine of its
// own, then what they type evaluated there (worker.js, CONSOLE_PY), and the print() output of runs
// and of the console in one output pane. This module is the pane and the prompt: the transcript
// (kept per problem, as data, so a language switch re-renders its words), multi-line input,
// history. app.js sends the input to the engine pool and hands the answer back (add*).
import { _, N_ } from "./i18n.js";

const HISTORY_KEY = "pp-judge:v1:console-history";
const HISTORY_SIZE = 100;
const OPENERS = { "(": ")", "[": "]", "{": "}" };

/**
 * Whether `text` needs more lines before it can run, as Python's prompt decides: an open bracket or
 * triple-quoted string, a line ending with ":" or "\", or a block that has not ended with an empty
 * line. (Enter then adds a line; Ctrl+Enter runs it anyway.)
 */
export function needsMore(text) {
  const lines = text.split("\n");
  const last = lines[lines.length - 1];
  let depth = 0;
  let quote = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === "\\") i++;
      else if (text.startsWith(quote, i)) { i += quote.length - 1; quote = null; }
      else if (quote.length === 1 && c === "\n") quote = null;
    } else if (c === "#") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (c === '"' || c === "'") {
      quote = text.startsWith(c.repeat(3), i) ? c.repeat(3) : c;
      if (quote.length === 3) i += 2;
    } else if (OPENERS[c]) depth++;
    else if (c === ")" || c === "]" || c === "}") depth = Math.max(0, depth - 1);
  }
  if (quote && quote.length === 3) return true;
  if (depth > 0) return true;
  const code = last.replace(/#.*$/, "").trimEnd();
  if (code.endsWith(":") || code.endsWith("\\")) return true;
  // inside a block: an indented last line, or a first line that opened one, waits for an empty line
  return lines.length > 1 && last.trim() !== "" && lines.some((line) => /:\s*(#.*)?$/.test(line));
}

export class Console {
  /** els: {details, output, form, input, restart, clear}; onSubmit(text), onRestart() */
  constructor(els, { onSubmit, onRestart }) {
    this.els = els;
    this.onSubmit = onSubmit;
    this.onRestart = onRestart;
    this.logs = new Map(); // problem id -> entries
    this.problem = null;
    this.history = loadHistory();
    this.recall = null; // index into history while ↑/↓ browse it
    this.draft = "";
    els.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    els.input.addEventListener("keydown", (event) => this.key(event));
    els.input.addEventListener("input", () => this.fit());
    els.restart.addEventListener("click", () => this.onRestart());
    els.clear.addEventListener("click", () => {
      if (this.problem) this.logs.set(this.problem, []);
      this.render();
    });
  }

  /** Show the transcript of problem `id`. */
  show(id) {
    this.problem = id;
    this.render();
  }

  log(id = this.problem) {
    if (!this.logs.has(id)) this.logs.set(id, []);
    return this.logs.get(id);
  }

  add(id, entry) {
    const log = this.log(id);
    log.push(entry);
    if (log.length > 400) log.splice(0, log.length - 400);
    if (id !== this.problem) return;
    this.els.output.querySelector(".console-empty")?.remove();
    this.els.output.append(renderEntry(entry));
    this.scrollToEnd();
  }

  /** A run's print() output: each test that printed, under the run's number. */
  addRun(id, run, result) {
    const printed = (result.tests || []).filter((t) => t.stdout || t.stderr)
      .map((t) => ({ name: t.name, stdout: t.stdout || "", stderr: t.stderr || "" }));
    if (!printed.length) return;
    this.add(id, { kind: "run", run, printed });
  }

  render() {
    const out = this.els.output;
    out.replaceChildren(...this.log().map(renderEntry));
    if (!out.childElementCount) {
      out.append(Object.assign(document.createElement("p"), {
        className: "muted console-empty",
        textContent: _("Nothing printed yet. What your code prints during a run, and what you run here, shows up here."),
      }));
    }
    this.scrollToEnd();
  }

  scrollToEnd() {
    const out = this.els.output;
    out.scrollTop = out.scrollHeight;
  }

  submit() {
    const text = this.els.input.value.replace(/\s+$/, "");
    if (!text.trim()) return;
    if (this.onSubmit(text) === false) return; // busy: kept in the prompt
    if (this.history[this.history.length - 1] !== text) this.history.push(text);
    if (this.history.length > HISTORY_SIZE) this.history.splice(0, this.history.length - HISTORY_SIZE);
    saveHistory(this.history);
    this.recall = null;
    this.els.input.value = "";
    this.fit();
  }

  key(event) {
    const input = this.els.input;
    if (event.key === "Enter" && !event.shiftKey && !event.altKey) {
      const forced = event.ctrlKey || event.metaKey; // Ctrl+Enter: run it as it is (not the tests)
      event.stopPropagation();
      if (forced || !needsMore(input.value)) {
        event.preventDefault();
        this.submit();
      } else if (!forced) {
        // a new line, indented like the last one (one more level after a ":")
        event.preventDefault();
        const before = input.value.slice(0, input.selectionStart);
        const line = before.slice(before.lastIndexOf("\n") + 1);
        let indent = /^\s*/.exec(line)[0];
        if (/:\s*(#.*)?$/.test(line)) indent += "    ";
        input.setRangeText(`\n${indent}`, input.selectionStart, input.selectionEnd, "end");
        this.fit();
      }
    } else if (event.key === "Tab" && !event.shiftKey && input.value.includes("\n")) {
      // in a block, Tab indents (Esc, then Tab leaves, as in the editor)
      if (this.escaped) return;
      event.preventDefault();
      input.setRangeText("    ", input.selectionStart, input.selectionEnd, "end");
    } else if ((event.key === "ArrowUp" || event.key === "ArrowDown") && !event.shiftKey) {
      const up = event.key === "ArrowUp";
      const atEdge = up ? !input.value.slice(0, input.selectionStart).includes("\n")
                        : !input.value.slice(input.selectionEnd).includes("\n");
      if (!atEdge || !this.history.length) return;
      if (this.recall === null) {
        if (!up) return;
        this.draft = input.value;
        this.recall = this.history.length;
      }
      this.recall = Math.max(0, Math.min(this.history.length, this.recall + (up ? -1 : 1)));
      input.value = this.recall === this.history.length ? this.draft : this.history[this.recall];
      if (this.recall === this.history.length) this.recall = null;
      event.preventDefault();
      const end = input.value.length;
      input.setSelectionRange(end, end);
      this.fit();
    }
    this.escaped = event.key === "Escape";
  }

  /** The prompt grows with its lines (up to ten). */
  fit() {
    const lines = this.els.input.value.split("\n").length;
    this.els.input.rows = Math.min(10, Math.max(1, lines));
  }
}

function loadHistory() {
  try {
    const saved = JSON.parse(localStorage.getItem(HISTORY_KEY) || "[]");
    return Array.isArray(saved) ? saved.filter((x) => typeof x === "string") : [];
  } catch (err) {
    return [];
  }
}

function saveHistory(history) {
  try {
    localStorage.setItem(HISTORY_KEY, JSON.stringify(history));
  } catch (err) {
    // history is a convenience: kept in this tab only
  }
}

const NOTES = {
  fresh: N_("Ran {file} in a fresh namespace."),
  restarted: N_("Restarted: the next input runs your file afresh."),
  changed: N_("Your file changed: ran it again in a fresh namespace."),
  stopped: N_("Stopped by you after {seconds} s: the console starts afresh with the next input."),
  timeout: N_("Timed out after {seconds} s (the time limit): the console starts afresh with the next input."),
  failed: N_("The console's Python failed ({message}): it starts afresh with the next input."),
  waiting: N_("Waiting for Python to start…"),
};

/** One entry of the transcript; its words are looked up now (a language switch renders them again). */
function renderEntry(entry) {
  const box = document.createElement("div");
  box.className = `console-entry console-${entry.kind}`;
  const pre = (text, cls = "") => {
    const node = document.createElement("pre");
    if (cls) node.className = cls;
    node.textContent = text;
    return node;
  };
  if (entry.kind === "input") {
    const lines = entry.text.split("\n").map((line, i) => `${i ? "..." : ">>>"} ${line}`);
    box.append(pre(lines.join("\n")));
  } else if (entry.kind === "note") {
    box.append(Object.assign(document.createElement("p"), { className: "muted", textContent: _(NOTES[entry.note], entry.values || {}) }));
  } else if (entry.kind === "out") {
    box.append(pre(entry.text, entry.stream === "stderr" ? "console-stderr" : ""));
  } else if (entry.kind === "value") {
    box.append(pre(entry.text));
  } else if (entry.kind === "error") {
    const here = _("console"); // a frame of what was typed in the console
    const lines = (entry.frames || []).map((f) => "  " + _("{file}:{line} in {function}: {code}",
      { file: f.file === "console" ? here : f.file, line: f.line, function: f.function, code: f.code }));
    box.append(pre([...lines, entry.text].join("\n"), "console-error"));
  } else if (entry.kind === "run") {
    box.append(Object.assign(document.createElement("p"), {
      className: "console-run-title",
      textContent: _("Run {run}: what the tests' calls of your code printed", { run: entry.run }),
    }));
    for (const t of entry.printed) {
      box.append(Object.assign(document.createElement("p"), { className: "console-test muted", textContent: t.name }));
      if (t.stdout) box.append(pre(t.stdout));
      if (t.stderr) box.append(pre(t.stderr, "console-stderr"));
    }
  }
  return box;
}
