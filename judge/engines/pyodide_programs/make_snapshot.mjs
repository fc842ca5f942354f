// Make the memory snapshot a site ships, under Node.js (see judge/engines/pyodide_snapshot.py).
//
//   node make_snapshot.mjs SPEC.json
//
// SPEC.json: {"boot": path of the site's js/boot.mjs, "indexURL": folder of pyodide.js and
//             pyodide.asm.wasm, "lockFileURL", "stdLibURL": files, "archives": [zip paths],
//             "out": where to write the image}
// Writes the image (the wasm's data segment XORed in at dataOffset, see boot.mjs) and prints one
// JSON object on stdout: {"dataOffset": n | null, "size": bytes}.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const require = createRequire(import.meta.url);

async function main() {
  const spec = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
  const { makeJudgeSnapshot } = await import(pathToFileURL(spec.boot).href);
  const indexURL = spec.indexURL.endsWith(path.sep) ? spec.indexURL : spec.indexURL + path.sep;
  const { loadPyodide } = require(path.join(indexURL, "pyodide.js"));
  const { image, dataOffset } = await makeJudgeSnapshot({
    loadPyodide, indexURL, lockFileURL: spec.lockFileURL, stdLibURL: spec.stdLibURL,
    archives: spec.archives.map((file) => new Uint8Array(fs.readFileSync(file))),
    wasm: new Uint8Array(fs.readFileSync(path.join(indexURL, "pyodide.asm.wasm"))),
    output: (stream, line) => { if (stream === "stderr") process.stderr.write(`${line}\n`); },
  });
  fs.writeFileSync(spec.out, image);
  process.stdout.write(JSON.stringify({ dataOffset, size: image.length }));
}

main().catch((err) => {
  process.stderr.write(`${(err && err.stack) || err}\n`);
  process.exit(1);
});
