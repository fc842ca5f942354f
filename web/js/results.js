// The results panel: a summary line, then one entry per test with its outcome, message,
// trimmed traceback (frames in the learner's file jump to that line in the editor), captured
// output and artifacts (timelines drawn as SVG).
import { renderTimeline, renderComparison } from "./timeline.js";
import { _, ngettext, N_ } from "./i18n.js";

const OUTCOME_ICON = { passed: "✓", failed: "✗", error: "!", skipped: "–" };
const OUTCOME_WORD = { passed: N_("passed"), failed: N_("failed"), error: N_("error"), skipped: N_("skipped") };
const STATUS_WORD = { passed: N_("passed"), failed: N_("failed"), error: N_("error"), timeout: N_("timeout"),
                      stopped: N_("stopped") };

function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "dataset") Object.assign(node.dataset, v);
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function seconds(x) {
  if (!x) return "";
  return x < 1 ? _("{ms} ms", { ms: Math.round(x * 1000) }) : _("{seconds} s", { seconds: x.toFixed(x < 10 ? 2 : 1) });
}

/** Summary text for a Result: the browser runs the public tests only, and says so. */
export function summaryText(result, stopped = false) {
  const { status, passed = 0, total = 0 } = result;
  // Stop's verdict (judge.engines.unfinished: an error saying so), in the page's words
  if (stopped && status === "error" && !total) return _("Stopped by you after {seconds} s", { seconds: result.duration || 0 });
  if (status === "passed") return ngettext("The public test passed", "All {n} public tests passed", total);
  if (status === "failed") return ngettext("{passed} of {n} public test passed", "{passed} of {n} public tests passed", total, { passed });
  if (status === "timeout") {
    return result.duration ? _("Timed out after {seconds} s", { seconds: result.duration })
                           : _("Timed out: the time limit was reached");
  }
  if (total) {
    return _("Error: {message} ({passed} of {total} passed)",
             { message: firstLine(result.message) || _("see below"), passed, total });
  }
  return _("Error: {message}", { message: firstLine(result.message) || _("the tests could not run") });
}

function firstLine(text) { return (text || "").split("\n")[0]; }

/**
 * Fill `summaryEl` and `listEl` from a Result object.
 * ctx: {entry, stopped (the verdict came from Stop), goToLine(line), width()}
 */
export function renderResult(result, summaryEl, listEl, ctx) {
  summaryEl.replaceChildren();
  listEl.replaceChildren();
  // Stop's verdict is Python's error Result (judge.engines.unfinished), shown as what it is: stopped
  const status = ctx.stopped && result.status === "error" && !(result.tests || []).length ? "stopped" : result.status;
  const badge = h("span", { class: `badge badge-${status}` }, STATUS_WORD[status] ? _(STATUS_WORD[status]) : status);
  const text = h("span", { class: "summary-text" }, summaryText(result, ctx.stopped));
  const points = result.max_points && result.tests?.length
    ? _("{points} / {max_points} points", { points: num(result.points), max_points: num(result.max_points) }) : "";
  const took = result.duration ? _("in {duration}", { duration: seconds(result.duration) }) : "";
  const meta = h("span", { class: "summary-meta muted" }, took + (points ? ` · ${points}` : ""));
  summaryEl.append(badge, text, meta);
  if (ctx.kept) {
    summaryEl.append(h("p", { class: "muted hint kept-note", "data-testid": "kept-result" },
      _("Your last run's result, kept in this browser. Run again to test the code as it is now.")));
  }
  if (result.status === "passed" || result.status === "failed") {
    summaryEl.append(h("p", { class: "muted hint" },
      result.status === "passed"
        ? _("These are the public tests: the grader also runs tests that are not shown here.")
        : _("The grader also runs tests that are not shown here.")));
  }
  if (result.status === "passed" && ctx.next) {
    summaryEl.append(h("p", { class: "hint next-exercise" },
      h("a", { href: ctx.next.href, "data-testid": "next-exercise" }, _("Next exercise: {title} →", { title: ctx.next.title }))));
  } else if (result.status === "passed") {
    summaryEl.append(h("p", { class: "hint next-exercise" },
      h("a", { href: "#/", "data-testid": "next-exercise" }, _("That was the last exercise: back to the list"))));
  }
  if (result.objectives && result.objectives.length && result.tests?.length) summaryEl.append(renderObjectives(result));
  const multiLine = (result.message || "").includes("\n") || (result.message || "").length > 90;
  if (result.message && (result.status === "error" || result.status === "timeout") && (multiLine || result.tests?.length)) {
    summaryEl.append(h("pre", { class: "message summary-message" }, linkify(result.message, ctx)));
  }
  if (result.status === "timeout" || ctx.stopped) {
    summaryEl.append(h("p", { class: "muted hint" },
      ctx.stopped ? _("The run was stopped before the tests finished.") :
      ctx.retried ? _("Tried twice: the first try ran while the page was still starting up, and this second try ran " +
                      "out of time too. Look for a loop that never ends, or work that grows too fast. Your code is saved.") :
      _("Look for a loop that never ends, or work that grows too fast. Your code is saved.")));
  } else if (ctx.retried) {
    summaryEl.append(h("p", { class: "muted hint", "data-testid": "retried-note" },
      _("The first try ran out of time while the page was still starting up; this verdict is from a second try.")));
  }
  // failures first (in the runner's order), then the rest: what needs work is what is seen first
  const rank = (t) => (t.outcome === "failed" || t.outcome === "error" ? 0 : 1);
  const tests = [...(result.tests || [])].sort((a, b) => rank(a) - rank(b));
  let opened = 0;
  // nothing failed: open the first test that drew a timeline, so the learner sees their schedule
  const showcase = result.status === "passed" ? tests.find((t) => (t.artifacts || []).some((a) => a.value && a.value.type === "timeline")) : null;
  const names = displayNames(tests);
  for (const test of tests) {
    const bad = test.outcome === "failed" || test.outcome === "error";
    const open = (bad && opened < 3) || test === showcase;
    if (open) opened += 1;
    listEl.append(renderTest(test, open, { ...ctx, name: names.get(test) }));
  }
}

function num(x) {
  return String(Math.round((Number(x) || 0) * 100) / 100);
}

/**
 * Points by learning objective. Each says what it is: "right" (a check) when its tests pass, and
 * then, when it counts only as far as the objectives it requires are right, what it waits for;
 * "to do" (a cross) with the first failure's words when its tests fail.
 */
function renderObjectives(result) {
  const list = h("ul", { class: "objectives", "data-testid": "objectives", "aria-label": _("Points by objective (public tests)") });
  const titles = new Map(result.objectives.map((o) => [o.id, o.title]));
  for (const o of result.objectives) {
    const full = o.points >= o.max_points;
    const right = full || (o.total > 0 && o.passed >= o.total);
    const gated = right && !full && (o.requires || []).length;
    const state = full ? "full" : gated ? "gated" : right ? "right" : "short";
    let note = null;
    if (gated) {
      const waiting = (o.requires || []).filter((r) => {
        const other = result.objectives.find((x) => x.id === r);
        return !other || other.points < other.max_points;
      }).map((r) => titles.get(r) || r);
      note = _("right; it counts in full once {objectives} is right", { objectives: waiting.join(", ") || o.requires.join(", ") });
    } else if (right) {
      note = _("right");
    } else if (o.note) {
      note = o.note;
    }
    list.append(h("li", { class: `objective objective-${state} ${right ? "objective-right" : ""}`, "data-objective": o.id,
                          "data-state": state },
      h("span", { class: "objective-mark", "aria-hidden": "true" }, right ? "✓" : "✗"),
      h("span", { class: "visually-hidden" }, right ? _("right:") : _("not yet right:")),
      " ",
      h("span", { class: "objective-title" }, o.title),
      " ",
      h("span", { class: "objective-points" }, _("{points} / {max_points} points", { points: num(o.points), max_points: num(o.max_points) })),
      note ? h("span", { class: "objective-note" }, ` · ${note}`) : null));
  }
  return h("div", { class: "objectives-box" }, h("div", { class: "label" }, _("Points by objective (public tests)")), list);
}

/** Names shown for the tests: a name that several tests share gets its parameters (from its id). */
function displayNames(tests) {
  const count = new Map();
  for (const t of tests) count.set(t.name, (count.get(t.name) || 0) + 1);
  const names = new Map();
  for (const t of tests) {
    const params = /\[(.*)\]$/.exec(t.id || "");
    names.set(t, count.get(t.name) > 1 && params && !t.name.includes(`[${params[1]}]`) ? `${t.name} [${params[1]}]` : t.name);
  }
  return names;
}

function renderTest(test, open, ctx) {
  const li = h("li", { class: `test test-${test.outcome}`, "data-testid": "test-result",
                       "data-outcome": test.outcome, "data-test-id": test.id });
  const details = h("details", { open: open || null });
  const summary = h("summary", {},
    h("span", { class: `outcome outcome-${test.outcome}`, "aria-hidden": "true" }, OUTCOME_ICON[test.outcome] || "?"),
    h("span", { class: /\s/.test(ctx.name || test.name) ? "test-name prose" : "test-name", title: test.id }, ctx.name || test.name),
    h("span", { class: "visually-hidden" }, ` ${OUTCOME_WORD[test.outcome] ? _(OUTCOME_WORD[test.outcome]) : test.outcome}`),
    h("span", { class: "test-meta muted" }, seconds(test.duration)));
  details.append(summary);
  // a closed entry gets its body (timelines are the costly part) when it is first opened: most
  // entries of a long list are never opened, and the verdict shows sooner
  if (open) {
    details.append(renderBody(test, ctx));
  } else {
    const fill = () => {
      if (!details.open || details.querySelector(".test-body")) return;
      details.removeEventListener("toggle", fill);
      details.append(renderBody(test, ctx));
    };
    details.addEventListener("toggle", fill);
  }
  li.append(details);
  return li;
}

function renderBody(test, ctx) {
  const body = h("div", { class: "test-body" });
  if (test.message) body.append(h("pre", { class: "message" }, linkify(test.message, ctx)));
  if (test.traceback && test.traceback.length) body.append(renderTraceback(test.traceback, ctx));
  for (const node of renderArtifacts(test, ctx)) body.append(node);
  if (test.stdout) body.append(outputBlock(_("Output (stdout)"), test.stdout));
  if (test.stderr) body.append(outputBlock(_("Errors (stderr)"), test.stderr));
  if (!body.childElementCount) body.append(h("p", { class: "muted" }, test.outcome === "passed" ? _("Passed.") : _("No details.")));
  return body;
}

function renderTraceback(frames, ctx) {
  const list = h("ol", { class: "traceback", "aria-label": _("Traceback, most recent call last") });
  for (const f of frames) {
    const mine = f.file === ctx.entry;
    const where = `${f.file}:${f.line}`;
    const loc = mine
      ? h("button", { type: "button", class: "link-button frame-link", title: _("Show line {line} in the editor", { line: f.line }),
                      onclick: () => ctx.goToLine(f.line) }, where)
      : h("span", { class: "frame-file" }, where);
    list.append(h("li", { class: mine ? "frame frame-mine" : "frame" },
      loc, h("span", { class: "muted" }, " " + _("in {function}", { function: f.function })),
      f.code ? h("code", { class: "frame-code" }, f.code) : null));
  }
  return h("div", { class: "traceback-box" }, h("div", { class: "label" }, _("Traceback")), list);
}

/** Turn "pp_sim.py:12" / "pp_sim.py, line 12" in messages into links to the editor line. */
function linkify(text, ctx) {
  const frag = document.createDocumentFragment();
  const entry = ctx.entry.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const re = new RegExp(`(${entry})(?::(\\d+)|, line (\\d+))`, "g");
  let last = 0;
  for (const m of text.matchAll(re)) {
    frag.append(text.slice(last, m.index));
    const line = Number(m[2] || m[3]);
    frag.append(h("button", { type: "button", class: "link-button", title: _("Show line {line} in the editor", { line }),
                              onclick: () => ctx.goToLine(line) }, m[0]));
    last = m.index + m[0].length;
  }
  frag.append(text.slice(last));
  return frag;
}

function outputBlock(title, text) {
  return h("details", { class: "output", open: true }, h("summary", {}, title), h("pre", { tabindex: "0" }, text));
}

/**
 * The test's artifacts. A failed public test that recorded the expected timeline ("expected")
 * beside its own gets both, yours above, the first difference marked on each; an expected timeline
 * of a secret test is never drawn (the page never has one: secret tests are not shipped).
 */
function renderArtifacts(test, ctx) {
  const artifacts = test.artifacts || [];
  const isTimeline = (a) => a.value && typeof a.value === "object" && a.value.type === "timeline";
  const expected = artifacts.find((a) => a.name === "expected" && isTimeline(a));
  const compare = expected && test.visibility === "public" && (test.outcome === "failed" || test.outcome === "error");
  const out = [];
  let paired = false;
  for (const artifact of artifacts) {
    if (artifact === expected) continue;
    if (compare && !paired && isTimeline(artifact)) {
      paired = true;
      try {
        out.push(renderComparison(artifact.value, expected.value, ctx.width()));
      } catch (err) {
        out.push(h("pre", { class: "message" }, _("(could not draw the timelines: {error})", { error: err.message })));
      }
      continue;
    }
    out.push(renderArtifact(artifact, ctx));
  }
  return out;
}

function renderArtifact(artifact, ctx) {
  const value = artifact.value;
  if (value && typeof value === "object" && value.type === "timeline") {
    try {
      return renderTimeline(value, ctx.width());
    } catch (err) {
      return h("pre", { class: "message" }, _("(could not draw the timeline: {error})", { error: err.message }));
    }
  }
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 1);
  return h("details", { class: "output" }, h("summary", {}, artifact.name), h("pre", { tabindex: "0" }, text));
}
