// Entry point for the vendored KaTeX bundle: math in statements.
import katex from "katex";
export default katex;
