// Statement display: typeset math with KaTeX and highlight Python code blocks.
import katex from "../vendor/katex.js";
import { pythonLanguage, highlightCode, classHighlighter } from "../vendor/codemirror.js";

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

export function renderStatement(container, html) {
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
}
