// Draw a timeline artifact (judge/artifacts.py) as SVG: one row per stage, forward (F),
// backward (B) and weight-gradient (W) blocks in different colours with the micro-batch number,
// idle time as hatched "bubble", and interleaved model chunks told apart by shade and a chunk mark.

const SVG = "http://www.w3.org/2000/svg";
const ROW = 26;
const GAP = 6;
const LABEL = 62;
const TOP = 8;
const AXIS = 22;

// [dark, light] shades per operation: chunk 0 is dark, chunk 1 light, more chunks in between
const COLOURS = {
  F: ["#2f6fde", "#a9c6f7"],
  B: ["#e0822b", "#f6c99c"],
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

function timeUnit(stages) {
  let unit = Infinity;
  for (const row of stages) for (const b of row) if (b.end > b.start) unit = Math.min(unit, b.end - b.start);
  return Number.isFinite(unit) ? unit : 1;
}

/** Returns a <figure> holding the SVG (horizontally scrollable when wide). */
export function renderTimeline(artifact, availableWidth = 640) {
  const stages = artifact.stages || [];
  const rowName = artifact.rows === "rank" ? "rank" : "stage";
  const total = Number(artifact.total) || 0;
  const figure = document.createElement("figure");
  figure.className = "timeline";
  if (artifact.title) {
    const cap = document.createElement("figcaption");
    cap.textContent = artifact.title;
    figure.append(cap);
  }
  if (!stages.length || total <= 0) {
    const p = document.createElement("p");
    p.className = "muted";
    p.textContent = "(empty timeline)";
    figure.append(p);
    return figure;
  }
  const unit = timeUnit(stages);
  const slots = total / unit;
  // px per time unit: fill the width, but never so narrow that the micro-batch numbers overlap
  const digits = Math.max(1, ...stages.flat().map((b) => String(b.mb).length));
  const minSlot = 8 + 7 * digits;
  const perUnit = Math.max(minSlot, Math.floor((availableWidth - LABEL - 12) / slots));
  const scale = perUnit / unit;
  const width = Math.ceil(LABEL + total * scale + 8);
  const height = TOP + stages.length * (ROW + GAP) + AXIS;
  const chunks = 1 + Math.max(0, ...stages.flat().map((b) => (b.chunk ?? 0)));
  const busy = stages.map((row) => row.reduce((s, b) => s + (b.end - b.start), 0));
  const idleTotal = busy.reduce((s, x) => s + (total - x), 0);
  const bubble = (idleTotal / (stages.length * total)) * 100;

  const svg = el("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-label": `${artifact.title || "Schedule timeline"}: ${stages.length} stages, total time ${fmt(total)}, ` +
      `idle (bubble) ${bubble.toFixed(1)}% of stage time` });
  const defs = el("defs");
  const pattern = el("pattern", { id: "bubble-hatch", width: 6, height: 6, patternUnits: "userSpaceOnUse",
                                  patternTransform: "rotate(45)" });
  pattern.append(el("rect", { width: 6, height: 6, class: "bubble-bg" }), el("line", { x1: 0, y1: 0, x2: 0, y2: 6, class: "bubble-line" }));
  defs.append(pattern);
  svg.append(defs);

  stages.forEach((row, s) => {
    const y = TOP + s * (ROW + GAP);
    svg.append(el("text", { x: 4, y: y + ROW / 2 + 4, class: "tl-stage" }, `${rowName} ${s}`));
    const idle = el("rect", { x: LABEL, y, width: total * scale, height: ROW, fill: "url(#bubble-hatch)", class: "tl-idle" });
    idle.append(el("title", {}, `${rowName} ${s}: idle ${fmt(total - busy[s])} of ${fmt(total)}`));
    svg.append(idle);
    for (const b of row) {
      const x = LABEL + b.start * scale;
      const w = Math.max(1, (b.end - b.start) * scale);
      const { fill, text } = fillFor(b.op, b.chunk, chunks);
      const g = el("g", { class: `tl-block tl-${b.op}` });
      g.append(el("rect", { x: x + 0.5, y: y + 0.5, width: Math.max(0.5, w - 1), height: ROW - 1, rx: 3, fill }));
      const chunkText = b.chunk === null || b.chunk === undefined ? "" : `, chunk ${b.chunk}`;
      g.append(el("title", {}, `${b.op}${b.mb}${chunkText} on ${rowName} ${s}: ${fmt(b.start)} to ${fmt(b.end)}`));
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
  scroller.append(svg);
  figure.append(scroller, legend(stages, chunks, bubble));
  return figure;
}

function legend(stages, chunks, bubble) {
  const ops = new Set(stages.flat().map((b) => b.op));
  const names = { F: "forward", B: "backward", W: "weight gradient" };
  const box = document.createElement("div");
  box.className = "timeline-legend";
  for (const op of ["F", "B", "W"]) {
    if (!ops.has(op)) continue;
    const item = document.createElement("span");
    item.innerHTML = `<i class="swatch" style="background:${COLOURS[op][0]}"></i>${op} ${names[op]}`;
    box.append(item);
  }
  const idle = document.createElement("span");
  idle.innerHTML = `<i class="swatch swatch-bubble"></i>idle (bubble) ${bubble.toFixed(1)}%`;
  box.append(idle);
  if (chunks > 1) {
    const c = document.createElement("span");
    c.textContent = `chunks 0–${chunks - 1}: darker = earlier chunk, one corner tick per chunk index`;
    box.append(c);
  }
  return box;
}

function fmt(x) {
  return Number.isInteger(x) ? String(x) : String(Math.round(x * 1000) / 1000);
}
