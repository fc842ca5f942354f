// Download all solutions as a zip laid out like practice/ (<problem-id>/<entry file>), and import
// such a zip (also one whose paths sit under a top folder, e.g. practice/<problem-id>/<entry>).
import { zipSync, unzipSync, strToU8, strFromU8 } from "../vendor/fflate.js";

/** Zip bytes for {problem id: {entry, text}}. */
export function makeZip(solutions) {
  const files = {};
  for (const [id, { entry, text }] of Object.entries(solutions)) {
    files[`${id}/${entry}`] = [strToU8(text), { mtime: new Date() }];
  }
  return zipSync(files, { level: 6 });
}

/**
 * Read a zip; return {found: {problem id: text}, ignored: [paths]} for the given problems
 * ({id: entry}). A file counts when its path ends with <id>/<entry>.
 */
export function readZip(bytes, entries) {
  const files = unzipSync(bytes);
  const found = {};
  const ignored = [];
  for (const [path, data] of Object.entries(files)) {
    if (path.endsWith("/")) continue;
    const parts = path.split("/").filter(Boolean);
    const [id, name] = parts.slice(-2);
    if (parts.length >= 2 && entries[id] === name && !parts.includes("__MACOSX")) found[id] = strFromU8(data);
    else ignored.push(path);
  }
  return { found, ignored };
}

export function downloadBytes(bytes, filename) {
  const blob = new Blob([bytes], { type: "application/zip" });
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
