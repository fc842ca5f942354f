// Draw a timeline artifact (judge/artifacts.py) as SVG: one row per stage, forward (F),
// backward (B) and weight-gradient (W) blocks in different colours with the micro-batch number,
// idle time as hatched "bubble", and interleaved model chunks told apart by shade and a chunk mark.

import { _, ngettext } from "./i18n.js";

const SVG = "http://www.w3.org/2000/svg";
const ROW = 26;
const GAP = 6;
const LABEL = 62;
const TOP = 8;
const AXIS = 22;

// [dark, light] shades per operation: chunk 0 is dark, chunk 1 light, more chunks in between
// (the dark shades hold white numbers at a contrast of 4.5:1 or more)
const COLOURS = {
  F: ["#2f6fde", "#a9c6f7"],
  B: ["#b45309", "#f6c99c"],
  W: ["#7e57c2", "#cdb8ef"],
};

function el(name, attrs = {}, text) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

function mix(a, b, t) {
  const pa = [1, 3, 5].map((i) => parseInt(a.slice(i, i + 2), 16));
  const pb = [1, 3, 5].map((i) => parseInt(b.slice(i, i + 2), 16));
  return "#" + pa.map((x, i) => Math.round(x + (pb[i] - x) * t).toString(16).padStart(2, "0")).join("");
}

function fillFor(op, chunk, chunks) {
  const [dark, light] = COLOURS[op] || ["#888888", "#cccccc"];
  if (chunk === null || chunk === undefined || chunks <= 1) return { fill: dark, text: "#ffffff" };
  const t = chunks <= 1 ? 0 : chunk / (chunks - 1);
  return { fill: mix(dark, light, t), text: t > 0.5 ? "#1b1b1b" : "#ffffff" };
}

/** "stage 2" / "rank 2" (the timeline's rows), in the page's language. */
function rowLabel(rowName, row) {
  return rowName === "rank" ? _("rank {row}", { row }) : _("stage {row}", { row });
}

function rowCount(rowName, n) {
  return rowName === "rank" ? ngettext("{n} rank", "{n} ranks", n) : ngettext("{n} stage", "{n} stages", n);
}

function timeUnit(stages) {
  let unit = Infinity;
  for (const row of stages) for (const b of row) if (b.end > b.start) unit = Math.min(unit, b.end - b.start);
  return Number.isFinite(unit) ? unit : 1;
}

/**
 * Returns a <figure> holding the SVG (horizontally scrollable when wide).
 * options: {mark: {row, index, missingAt?}: the block to mark as the first difference (missingAt: the
 * time where a block is missing), scale: {unit, total} shared with another timeline, caption}
 */
export function renderTimeline(artifact, availableWidth = 640, options = {}) {
  const stages = artifact.stages || [];
  const rowName = artifact.rows === "rank" ? "rank" : "stage";
  const stuckRows = artifact.stuck || [];
  // stuck before anything ran: the rows are drawn empty, each with what it waits for
  const nothingRan = stages.length > 0 && stuckRows.length > 0 && stages.every((row) => !row.length);
  const total = Math.max(Number(artifact.total) || 0, options.scale ? options.scale.total : 0, nothingRan ? 1 : 0);
  const figure = document.createElement("figure");
  figure.className = "timeline";
  const caption = options.caption ?? artifact.title;
  if (caption) {
    const cap = document.createElement("figcaption");
    cap.textContent = caption;
    figure.append(cap);
  }
  if (!stages.length || total <= 0) {
    const p = document.createElement("p");
    p.className = "muted";
    p.textContent = _("(empty timeline)");
    figure.append(p);
    return figure;
  }
  const unit = options.scale ? options.scale.unit : timeUnit(stages);
  const slots = total / unit;
  // px per time unit: fill the width, but never so narrow that the micro-batch numbers overlap
  const digits = Math.max(1, ...stages.flat().map((b) => String(b.mb).length));
  const minSlot = 8 + 7 * digits;
  const perUnit = Math.max(minSlot, Math.floor((availableWidth - LABEL - 12) / slots));
  const scale = perUnit / unit;
  const stuck = new Map(stuckRows.map((s) => [Number(s.row), String(s.waiting)]));
  const stuckRoom = stuck.size ? 150 : 0;
  const width = Math.ceil(LABEL + total * scale + 8 + stuckRoom);
  const height = TOP + stages.length * (ROW + GAP) + AXIS;
  const chunks = 1 + Math.max(0, ...stages.flat().map((b) => (b.chunk ?? 0)));
  const busy = stages.map((row) => row.reduce((s, b) => s + (b.end - b.start), 0));
  const idleTotal = busy.reduce((s, x) => s + (total - x), 0);
  const bubble = (idleTotal / (stages.length * total)) * 100;
  const mark = options.mark || null;
  const described = [
    nothingRan ? _("{caption}: {rows}, nothing ran", { caption: caption || _("Schedule timeline"), rows: rowCount(rowName, stages.length) })
      : _("{caption}: {rows}, total time {total}, idle (bubble) {percent}%",
          { caption: caption || _("Schedule timeline"), rows: rowCount(rowName, stages.length), total: fmt(total),
            percent: bubble.toFixed(1) }),
    ...[...stuck].map(([r, w]) => _("{row} is stuck waiting for {block}", { row: rowLabel(rowName, r), block: w })),
    mark ? _("first difference on {row}, operation {operation}", { row: rowLabel(rowName, mark.row), operation: mark.index + 1 }) : "",
  ];
  const svg = el("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-label": described.filter(Boolean).join("; ") });
  const defs = el("defs");
  const pattern = el("pattern", { id: "bubble-hatch", width: 6, height: 6, patternUnits: "userSpaceOnUse",
                                  patternTransform: "rotate(45)" });
  pattern.append(el("rect", { width: 6, height: 6, class: "bubble-bg" }), el("line", { x1: 0, y1: 0, x2: 0, y2: 6, class: "bubble-line" }));
  defs.append(pattern);
  svg.append(defs);

  stages.forEach((row, s) => {
    const y = TOP + s * (ROW + GAP);
    svg.append(el("text", { x: 4, y: y + ROW / 2 + 4, class: "tl-stage" }, rowLabel(rowName, s)));
    const idle = el("rect", { x: LABEL, y, width: total * scale, height: ROW, fill: "url(#bubble-hatch)", class: "tl-idle" });
    idle.append(el("title", {}, _("{row}: idle {idle} of {total}", { row: rowLabel(rowName, s), idle: fmt(total - busy[s]), total: fmt(total) })));
    svg.append(idle);
    row.forEach((b, index) => {
      const x = LABEL + b.start * scale;
      const w = Math.max(1, (b.end - b.start) * scale);
      const { fill, text } = fillFor(b.op, b.chunk, chunks);
      const g = el("g", { class: `tl-block tl-${b.op}` });
      g.append(el("rect", { x: x + 0.5, y: y + 0.5, width: Math.max(0.5, w - 1), height: ROW - 1, rx: 3, fill }));
      const where = { block: `${b.op}${b.mb}`, chunk: b.chunk, row: rowLabel(rowName, s), start: fmt(b.start), end: fmt(b.end) };
      g.append(el("title", {}, b.chunk === null || b.chunk === undefined
        ? _("{block} on {row}: {start} to {end}", where) : _("{block}, chunk {chunk} on {row}: {start} to {end}", where)));
      if (w >= 12) {
        g.append(el("text", { x: x + w / 2, y: y + ROW / 2 + 4, fill: text, class: "tl-label" }, String(b.mb)));
      }
      if (chunks > 1 && b.chunk !== null && b.chunk !== undefined && w >= 16) {
        // a tick per chunk index in the corner, so chunks differ by more than colour
        for (let k = 0; k < b.chunk; k += 1) {
          g.append(el("rect", { x: x + 3 + k * 4, y: y + 3, width: 2, height: 5, fill: text, opacity: 0.8 }));
        }
      }
      svg.append(g);
      if (mark && mark.row === s && mark.index === index) svg.append(diffMark(x, y, w));
    });
    if (mark && mark.row === s && mark.index >= row.length) {
      // the block the other timeline has here is missing from this one: a dashed empty box
      const at = mark.missingAt ?? (row.length ? row[row.length - 1].end : 0);
      svg.append(diffMark(LABEL + at * scale, y, Math.max(minSlot, unit * scale), true));
    }
    if (stuck.has(s)) {
      const end = row.length ? row[row.length - 1].end : 0;
      const x = LABEL + end * scale;
      // the text goes after a "missing here" frame on the same row
      const missing = mark && mark.row === s && mark.index >= row.length ?
        LABEL + (mark.missingAt ?? end) * scale + Math.max(minSlot, unit * scale) : x;
      const g = el("g", { class: "tl-stuck", "data-testid": "stuck-row", "data-row": s });
      g.append(el("line", { x1: x + 2, y1: y - 1, x2: x + 2, y2: y + ROW + 1, class: "tl-stuck-line" }));
      g.append(el("text", { x: Math.max(x, missing) + 8, y: y + ROW / 2 + 4, class: "tl-stuck-text" },
                  _("stuck: waits for {block}", { block: stuck.get(s) })));
      svg.append(g);
    }
  });

  // time axis
  const axisY = TOP + stages.length * (ROW + GAP) + 2;
  svg.append(el("line", { x1: LABEL, y1: axisY, x2: LABEL + total * scale, y2: axisY, class: "tl-axis" }));
  const every = Math.max(1, Math.ceil(28 / perUnit));
  for (let k = 0; k <= slots + 1e-9; k += every) {
    const x = LABEL + k * unit * scale;
    svg.append(el("line", { x1: x, y1: axisY, x2: x, y2: axisY + 4, class: "tl-axis" }));
    svg.append(el("text", { x, y: axisY + 15, class: "tl-tick" }, fmt(k * unit)));
  }

  const scroller = document.createElement("div");
  scroller.className = "timeline-scroll";
  scroller.tabIndex = 0; // it may scroll sideways: reachable by keyboard
  scroller.setAttribute("role", "group");
  scroller.setAttribute("aria-label", caption || _("Schedule timeline"));
  scroller.append(svg);
  const frame = document.createElement("div");
  frame.className = "timeline-frame";
  frame.append(scroller);
  scrollCues(frame, scroller);
  figure.append(frame, ...(nothingRan ? [] : [legend(stages, chunks, bubble)])); // no bubble to speak of
  return figure;
}

/**
 * A timeline wider than its pane scrolls sideways: a shade on the side that has more
 * (data-more="right" / "left" / "both") and a line under it saying so, updated as it scrolls or
 * the pane is resized.
 */
function scrollCues(frame, scroller) {
  const cue = document.createElement("p");
  cue.className = "timeline-cue muted";
  cue.dataset.testid = "timeline-cue";
  cue.hidden = true;
  frame.append(cue);
  const update = () => {
    const room = scroller.scrollWidth - scroller.clientWidth;
    const left = scroller.scrollLeft > 2;
    const right = room - scroller.scrollLeft > 2;
    const more = left && right ? "both" : right ? "right" : left ? "left" : "";
    if (more) frame.dataset.more = more; else delete frame.dataset.more;
    cue.hidden = !more;
    if (more) cue.textContent = right ? _("Scroll sideways for the rest of the timeline →") : _("← The timeline starts further left");
  };
  scroller.addEventListener("scroll", update, { passive: true });
  if (typeof ResizeObserver !== "undefined") new ResizeObserver(update).observe(scroller);
  requestAnimationFrame(update);
}

function diffMark(x, y, w, missing = false) {
  const g = el("g", { class: missing ? "tl-diff tl-diff-missing" : "tl-diff", "data-testid": "first-difference" });
  g.append(el("rect", { x: x - 1.5, y: y - 1.5, width: w + 3, height: ROW + 3, rx: 4, class: "tl-diff-box" }));
  g.append(el("path", { d: `M ${x + w / 2 - 5} ${y - 7} L ${x + w / 2 + 5} ${y - 7} L ${x + w / 2} ${y - 1} Z`, class: "tl-diff-arrow" }));
  g.append(el("title", {}, missing ? _("first difference: no operation here") : _("first difference")));
  return g;
}

const label = (b) => `${b.op}${b.mb}` + (b.chunk === null || b.chunk === undefined ? "" : `c${b.chunk}`) + (b.when || "");
/** The block with its times after its label (a difference in time, not in order). */
const withTimes = (b, timing) => (b && timing
  ? { ...b, when: " " + _("from {start} to {end}", { start: fmt(b.start), end: fmt(b.end) }) } : b);

/** Where two timelines first differ (judge.artifacts.first_difference's rule): {row, index} or null. */
export function firstDifference(yours, expected) {
  const mine = yours.stages || [];
  const want = expected.stages || [];
  let best = null;
  for (let r = 0; r < Math.max(mine.length, want.length); r += 1) {
    const a = mine[r] || [];
    const b = want[r] || [];
    let k = -1;
    for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
      if (i >= a.length || i >= b.length || label(a[i]) !== label(b[i])) { k = i; break; }
    }
    if (k < 0) continue;
    const times = [a, b].filter((row) => k < row.length).map((row) => Number(row[k].start));
    const when = times.length ? Math.min(...times) : 0;
    if (!best || when < best.when || (when === best.when && r < best.row)) best = { when, row: r, index: k };
  }
  return best ? { row: best.row, index: best.index } : null;
}

/** Where two timelines with the same order first differ in time (judge.artifacts.first_timing_difference):
 * {row, index} of the earliest block whose start or end differs, or null. */
export function firstTimingDifference(yours, expected, tolerance = 1e-9) {
  if (firstDifference(yours, expected)) return null;
  const want = expected.stages || [];
  let best = null;
  (yours.stages || []).forEach((a, r) => {
    const b = want[r] || [];
    const k = a.findIndex((x, i) => i < b.length && (Math.abs(Number(x.start) - Number(b[i].start)) > tolerance ||
                                                      Math.abs(Number(x.end) - Number(b[i].end)) > tolerance));
    if (k < 0) return;
    const when = Math.min(Number(a[k].start), Number(b[k].start));
    if (!best || when < best.when || (when === best.when && r < best.row)) best = { when, row: r, index: k };
  });
  return best ? { row: best.row, index: best.index } : null;
}

/** Yours above, expected below, on one time scale, the first difference marked on both. */
export function renderComparison(yours, expected, width = 640) {
  const availableWidth = width - 24; // the box's border and padding
  const box = document.createElement("div");
  box.className = "timeline-compare";
  box.dataset.testid = "timeline-compare";
  const diff = firstDifference(yours, expected) || firstTimingDifference(yours, expected);
  const timing = Boolean(diff) && !firstDifference(yours, expected); // same order: the note gives the times
  const unit = Math.min(timeUnit(yours.stages || []), timeUnit(expected.stages || []));
  const scale = { unit, total: Math.max(Number(yours.total) || 0, Number(expected.total) || 0) };
  const rowName = yours.rows === "rank" ? "rank" : "stage";
  const at = (t, row, index) => withTimes(((t.stages || [])[row] || [])[index] || null, timing);
  const note = document.createElement("p");
  note.className = "compare-note";
  note.dataset.testid = "difference-note";
  if (diff) {
    const a = at(yours, diff.row, diff.index);
    const b = at(expected, diff.row, diff.index);
    // (outside the call below: Babel's extractor does not see a _() nested in another's values)
    const none = _("has nothing");
    const nothing = _("nothing");
    note.textContent = _("First difference: {row}, operation {operation}: yours {yours}, expected {expected}.", {
      row: rowLabel(rowName, diff.row), operation: diff.index + 1,
      yours: a ? label(a) : none, expected: b ? label(b) : nothing });
  } else {
    note.textContent = _("Your timeline is the same as the expected one: the test failed on something else (see its message).");
  }
  const markFor = (self, other) => {
    if (!diff) return null;
    const otherBlock = at(other, diff.row, diff.index);
    return { row: diff.row, index: diff.index, missingAt: otherBlock ? otherBlock.start : undefined };
  };
  box.append(note,
    renderTimeline(yours, availableWidth, { scale, mark: markFor(yours, expected),
      caption: yours.title ? _("Yours: {title}", { title: yours.title }) : _("Yours") }),
    renderTimeline(expected, availableWidth, { scale, mark: markFor(expected, yours),
      caption: /^expected/i.test(expected.title || "") ? expected.title
        : expected.title ? _("Expected: {title}", { title: expected.title }) : _("Expected") }));
  return box;
}

function legend(stages, chunks, bubble) {
  const ops = new Set(stages.flat().map((b) => b.op));
  const names = { F: _("forward"), B: _("backward"), W: _("weight gradient") };
  const box = document.createElement("div");
  box.className = "timeline-legend";
  for (const op of ["F", "B", "W"]) {
    if (!ops.has(op)) continue;
    const item = document.createElement("span");
    item.innerHTML = `<i class="swatch" style="background:${COLOURS[op][0]}"></i>`;
    item.append(`${op} ${names[op]}`);
    box.append(item);
  }
  const idle = document.createElement("span");
  idle.innerHTML = `<i class="swatch swatch-bubble"></i>`;
  idle.append(_("idle (bubble) {percent}%", { percent: bubble.toFixed(1) }));
  box.append(idle);
  if (chunks > 1) {
    const c = document.createElement("span");
    c.textContent = _("chunks 0–{last}: darker = earlier chunk, one corner tick per chunk index", { last: chunks - 1 });
    box.append(c);
  }
  return box;
}

function fmt(x) {
  return Number.isInteger(x) ? String(x) : String(Math.round(x * 1000) / 1000);
}
