// Entry point for the vendored CodeMirror 6 bundle (built by ../../vendor.sh into vendor/codemirror.js).
// Re-exports only what the app uses, so the bundle stays one small ES module.
export { EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter,
         drawSelection, dropCursor, rectangularSelection, crosshairCursor,
         highlightSpecialChars, placeholder, Decoration, ViewPlugin } from "@codemirror/view";
export { EditorState, Compartment, RangeSetBuilder } from "@codemirror/state";
export { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
export { indentUnit, bracketMatching, foldGutter, foldKeymap, indentOnInput,
         syntaxHighlighting, defaultHighlightStyle, HighlightStyle } from "@codemirror/language";
export { searchKeymap, highlightSelectionMatches } from "@codemirror/search";
export { closeBrackets, closeBracketsKeymap, autocompletion, completionKeymap } from "@codemirror/autocomplete";
export { python, pythonLanguage } from "@codemirror/lang-python";
export { tags, highlightCode, classHighlighter } from "@lezer/highlight";
