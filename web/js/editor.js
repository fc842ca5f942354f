// The code editor (CodeMirror 6) and read-only code views.
import {
  EditorView, EditorState, Compartment, keymap, lineNumbers, highlightActiveLine,
  highlightActiveLineGutter, drawSelection, dropCursor, rectangularSelection, crosshairCursor,
  highlightSpecialChars, defaultKeymap, history, historyKeymap, indentWithTab, indentUnit,
  bracketMatching, foldGutter, foldKeymap, indentOnInput, syntaxHighlighting, defaultHighlightStyle,
  HighlightStyle, searchKeymap, highlightSelectionMatches, closeBrackets, closeBracketsKeymap,
  python, tags, Decoration, ViewPlugin, RangeSetBuilder,
} from "../vendor/codemirror.js";

const HANG = 4; // extra columns of a wrapped line's continuation, beyond the line's own indentation

/** The line's indentation in columns (tabs to the next tab stop). */
function indentColumns(text, tabSize) {
  let cols = 0;
  for (const c of text) {
    if (c === " ") cols += 1;
    else if (c === "\t") cols += tabSize - (cols % tabSize);
    else break;
  }
  return cols;
}

// Long lines soft-wrap (EditorView.lineWrapping) with a hanging indent: a line decoration gives each
// line a left padding of its indentation plus HANG columns and takes that much back from its first
// visual line (text-indent), so the continuation starts under the code, not at column 0.
const hangingIndent = ViewPlugin.fromClass(class {
  constructor(view) { this.decorations = this.build(view); }

  update(update) {
    if (update.docChanged || update.viewportChanged) this.decorations = this.build(update.view);
  }

  build(view) {
    const builder = new RangeSetBuilder();
    const { doc, tabSize } = view.state;
    for (const { from, to } of view.visibleRanges) {
      for (let pos = from; pos <= to;) {
        const line = doc.lineAt(pos);
        if (line.length) {
          const hang = indentColumns(line.text, tabSize) + HANG;
          builder.add(line.from, line.from, Decoration.line({
            attributes: { class: "cm-hang", style: `padding-left: calc(${hang}ch + 6px); text-indent: -${hang}ch` },
          }));
        }
        pos = line.to + 1;
      }
    }
    return builder.finish();
  }
}, { decorations: (plugin) => plugin.decorations });

const darkHighlight = HighlightStyle.define([
  { tag: tags.keyword, color: "#c792ea" },
  { tag: [tags.name, tags.deleted, tags.character, tags.macroName], color: "#e6e6e6" },
  { tag: [tags.function(tags.variableName), tags.labelName], color: "#82aaff" },
  { tag: [tags.definition(tags.name), tags.separator], color: "#ffcb6b" },
  { tag: [tags.className, tags.typeName], color: "#ffcb6b" },
  { tag: [tags.number, tags.bool, tags.atom, tags.null], color: "#f78c6c" },
  { tag: [tags.string, tags.special(tags.string)], color: "#c3e88d" },
  { tag: [tags.comment, tags.meta], color: "#8a93a6", fontStyle: "italic" },
  { tag: [tags.operator, tags.operatorKeyword], color: "#89ddff" },
  { tag: tags.invalid, color: "#ff5370" },
]);

// CodeMirror's default light colours, its orange (#e40: escapes, f-string fields, regexps: 3.8:1 on
// white) darkened to 6:1, so every token meets 4.5:1 (axe, tests/browser/test_page.py)
const lightHighlight = HighlightStyle.define(
  defaultHighlightStyle.specs.map((spec) => (spec.color === "#e40" ? { ...spec, color: "#b83200" } : spec)));

const theme = EditorView.theme({
  "&": { height: "100%", fontSize: "14px" },
  ".cm-scroller": { fontFamily: "var(--mono)", lineHeight: "1.5" },
  ".cm-content": { caretColor: "var(--fg)" },
  ".cm-gutters": { backgroundColor: "var(--panel)", color: "var(--muted)", borderRight: "1px solid var(--border)" },
  ".cm-activeLine": { backgroundColor: "var(--active-line)" },
  ".cm-activeLineGutter": { backgroundColor: "var(--active-line)" },
  "&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection": { backgroundColor: "var(--selection) !important" },
  ".cm-cursor": { borderLeftColor: "var(--fg)" },
  ".cm-flash-line": { backgroundColor: "var(--flash) !important" },
});

const darkQuery = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
const highlightFor = () => syntaxHighlighting(darkQuery && darkQuery.matches ? darkHighlight : lightHighlight,
                                              { fallback: true });

/** The learner's editor. onChange(text) after every edit; onRun() for Ctrl/Cmd+Enter. */
export function createEditor(parent, { onChange, onRun }) {
  const highlight = new Compartment();
  const runKeys = keymap.of([
    { key: "Mod-Enter", preventDefault: true, run: () => { onRun(); return true; } },
  ]);
  const extensions = () => [
    runKeys,
    lineNumbers(), highlightActiveLineGutter(), highlightSpecialChars(), history(), foldGutter(),
    drawSelection(), dropCursor(), EditorState.allowMultipleSelections.of(true), indentOnInput(),
    highlight.of(highlightFor()), bracketMatching(), closeBrackets(), rectangularSelection(),
    crosshairCursor(), highlightActiveLine(), highlightSelectionMatches(),
    keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...searchKeymap, ...historyKeymap, ...foldKeymap,
               indentWithTab]),
    indentUnit.of("    "), EditorState.tabSize.of(4), python(), theme, EditorView.lineWrapping, hangingIndent,
    EditorView.contentAttributes.of({ "aria-label": "Your solution (Python)", spellcheck: "false",
                                      autocorrect: "off", autocapitalize: "off", "aria-describedby": "editor-help",
                                      tabindex: "0" }), // (axe: the scroller's content is focusable)
    EditorView.updateListener.of((update) => { if (update.docChanged) onChange(update.state.doc.toString()); }),
  ];
  const view = new EditorView({ parent, state: EditorState.create({ doc: "", extensions: extensions() }) });
  darkQuery?.addEventListener?.("change", () => view.dispatch({ effects: highlight.reconfigure(highlightFor()) }));
  return {
    view,
    getText: () => view.state.doc.toString(),
    /** Replace the whole text (switching problems, reset, import); a fresh undo history. */
    setText(text) {
      view.setState(EditorState.create({ doc: text, extensions: extensions() }));
    },
    /** Move the cursor to a 1-based line, scroll it into view, focus, and flash it. */
    goToLine(line) {
      const doc = view.state.doc;
      const target = doc.line(Math.max(1, Math.min(line, doc.lines)));
      view.dispatch({ selection: { anchor: target.from }, effects: EditorView.scrollIntoView(target.from, { y: "center" }) });
      view.focus();
      const el = view.domAtPos(target.from).node;
      const lineEl = (el.nodeType === 1 ? el : el.parentElement)?.closest(".cm-line");
      if (lineEl) {
        lineEl.classList.add("cm-flash-line");
        setTimeout(() => lineEl.classList.remove("cm-flash-line"), 900);
      }
    },
    focus: () => view.focus(),
  };
}

/** A read-only, highlighted view of a code file (public tests, support modules), named `label`. */
export function createCodeView(parent, text, label = "Code") {
  return new EditorView({
    parent,
    state: EditorState.create({
      doc: text,
      extensions: [lineNumbers(), highlightSpecialChars(), syntaxHighlighting(darkQuery && darkQuery.matches ? darkHighlight : lightHighlight, { fallback: true }),
                   python(), theme, EditorView.lineWrapping, hangingIndent, EditorState.readOnly.of(true),
                   EditorView.editable.of(false),
                   // focusable (it may scroll) and named: a screen reader says which file this is
                   EditorView.contentAttributes.of({ "aria-readonly": "true", "aria-label": `${label} (read-only)`,
                                                     tabindex: "0" })],
    }),
  });
}
