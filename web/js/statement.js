// Statement display: typeset math with KaTeX and highlight Python code blocks.
import katex from "../vendor/katex.js";
import { pythonLanguage, highlightCode, classHighlighter } from "../vendor/codemirror.js";
import { _ } from "./i18n.js";

// "Hint", "Hints", "Hint 2: ..." but not "Hinting"; "提示", "提示 1" ("\b" needs a word character
// beside it, and 提 and 示 are none, so the Chinese word is matched without it)
const HINT_HEADING = /^\s*(?:hints?\b|提示)/i;
const hintsShown = new Map(); // statement key (the problem) -> how many hints the learner asked for

/**
 * Hints on demand: the statement's sections headed "Hint…" (or "提示…"), in order, are folded
 * away; one button shows the next, and only then offers a stronger one.
 */
function foldHints(container, key) {
  const headings = [...container.querySelectorAll("h2, h3")].filter((h) => HINT_HEADING.test(h.textContent));
  if (!headings.length) return;
  const bodies = headings.map((heading) => {
    const level = Number(heading.tagName[1]);
    const body = document.createElement("div");
    body.className = "hint-body";
    body.dataset.testid = "hint";
    heading.before(body);
    let node = heading;
    while (node) {
      const next = node.nextSibling;
      body.append(node);
      if (!next || (/^H[1-6]$/.test(next.nodeName) && Number(next.nodeName[1]) <= level)) break;
      node = next;
    }
    body.hidden = true;
    return body;
  });
  const button = document.createElement("button");
  button.type = "button";
  button.className = "secondary hint-button";
  button.dataset.testid = "hint-button";
  bodies[0].before(button);
  const show = (n) => {
    bodies.forEach((body, i) => { body.hidden = i >= n; });
    if (n >= bodies.length) {
      button.remove();
      return;
    }
    bodies[n].before(button);
    button.textContent = n === 0 ? _("Show a hint ({n} of {total})", { n: 1, total: bodies.length })
                                 : _("Show a stronger hint ({n} of {total})", { n: n + 1, total: bodies.length });
  };
  button.addEventListener("click", () => {
    const n = (hintsShown.get(key) || 0) + 1;
    hintsShown.set(key, n);
    show(n);
    bodies[n - 1].querySelector("h2, h3")?.setAttribute("tabindex", "-1");
    bodies[n - 1].querySelector("h2, h3")?.focus();
  });
  show(hintsShown.get(key) || 0);
}

/** Typeset every .math element under root (rendered at build time as escaped TeX). */
export function typesetMath(root) {
  for (const node of root.querySelectorAll(".math")) {
    const tex = node.textContent;
    const display = node.classList.contains("block") || node.classList.contains("display");
    try {
      katex.render(tex, node, { displayMode: display, throwOnError: false, output: "htmlAndMathml" });
    } catch (err) {
      node.textContent = tex;
      node.title = String(err.message || err);
    }
  }
}

/** Syntax-highlight ```python fenced blocks with CodeMirror's Python grammar. */
export function highlightPython(root) {
  for (const code of root.querySelectorAll("pre > code.language-python, pre > code.language-py")) {
    const text = code.textContent;
    const out = document.createDocumentFragment();
    const tree = pythonLanguage.parser.parse(text);
    highlightCode(text, tree, classHighlighter,
      (chunk, classes) => {
        if (!classes) { out.append(chunk); return; }
        const span = document.createElement("span");
        span.className = classes;
        span.textContent = chunk;
        out.append(span);
      },
      () => out.append("\n"));
    code.replaceChildren(out);
  }
}

export function renderStatement(container, html, key = "") {
  container.innerHTML = html; // rendered by judge/commands/site/markdown.py with raw HTML escaped
  typesetMath(container);
  highlightPython(container);
  for (const a of container.querySelectorAll("a[href^='http']")) {
    a.target = "_blank";
    a.rel = "noopener";
  }
  // the page's one h1 is the problem's title (always there, also while the statement tab is hidden)
  for (const h1 of container.querySelectorAll("h1")) {
    const h2 = document.createElement("h2");
    h2.className = "statement-title";
    h2.append(...h1.childNodes);
    h1.replaceWith(h2);
  }
  // blocks that may scroll sideways are reachable by keyboard
  for (const node of container.querySelectorAll("pre, table, .math.block")) node.tabIndex = 0;
  foldHints(container, key);
}
