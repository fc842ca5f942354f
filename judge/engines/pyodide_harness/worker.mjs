// Worker thread of the Pyodide harness: boots the engine of a built site once, through the site's
// own js/boot.mjs (the set-up the browser's Web Worker uses), then runs the jobs that the main
// thread (run_jobs.mjs) sends it, one at a time.
//
// It restores the site's memory snapshot when there is one (unless told to boot the plain way),
// as the browser does, and then loads numpy in the background; a job that needs numpy waits for it.
//
// Messages to the main thread:
//   {type: 'ready', timings}                       boot finished (milliseconds per step; timings.mode
//                                                  is "snapshot" or "plain", timings.snapshotError
//                                                  why a snapshot was not restored)
//   {type: 'boot-error', message}                  boot failed (the worker then exits)
//   {type: 'started', index}                       job running
//   {type: 'done', index, json, interrupted}       job finished; json is the Result JSON (null when
//                                                  the interrupt escaped the runner)
//   {type: 'job-error', index, message}            the interpreter failed during a job
// Messages from the main thread: {type: 'job', index, problemId, files, source, includeSecret}.

import { parentPort, workerData } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const require = createRequire(import.meta.url);
const { site, config, interruptBuffer, verbose, bootMode } = workerData;

let engine = null;

// A site-relative URL of the configuration as a path on disk (the harness reads files, not URLs).
function local(url) {
  if (!url) return null;
  if (/^[a-z]+:/i.test(url)) throw new Error(`${url}: the harness needs a site built with --pyodide self`);
  return path.join(site, url);
}

// A wheel missing from the folder makes Pyodide try its CDN, which crashes the boot offline.
function checkFiles(indexDir, lockFile) {
  for (const name of ['pyodide.js', 'pyodide.asm.js', 'pyodide.asm.wasm']) {
    if (!fs.existsSync(path.join(indexDir, name))) throw new Error(`${indexDir} has no ${name}`);
  }
  const lock = JSON.parse(fs.readFileSync(lockFile, 'utf8'));
  for (const [name, entry] of Object.entries(lock.packages)) {
    const file = path.resolve(indexDir, entry.file_name);
    if (!fs.existsSync(file)) throw new Error(`${lockFile} lists ${name} as ${entry.file_name}, which is missing`);
  }
}

async function boot() {
  const pyodide = config.pyodide;
  const indexDir = local(pyodide.indexURL);
  const lockFile = local(pyodide.lockFileURL) || path.join(indexDir, 'pyodide-lock.json');
  checkFiles(indexDir, lockFile);
  const { bootJudge } = await import(pathToFileURL(path.join(site, 'js', 'boot.mjs')).href);
  const { loadPyodide } = require(path.join(indexDir, 'pyodide.js'));
  const read = (url) => () => new Uint8Array(fs.readFileSync(local(url)));
  const snapshot = pyodide.snapshot && bootMode !== 'plain' ? {
    ...pyodide.snapshot, stdLibURL: local(pyodide.snapshot.stdLibURL), bytes: read(pyodide.snapshot.url), wasm: () => new Uint8Array(fs.readFileSync(path.join(indexDir, 'pyodide.asm.wasm'))),
    gunzip: (bytes) => new Uint8Array(zlib.gunzipSync(bytes)),
  } : null;
  engine = await bootJudge({
    loadPyodide,
    indexURL: indexDir + path.sep,
    packages: pyodide.packages,
    lockFileURL: local(pyodide.lockFileURL),
    stdLibURL: local(pyodide.stdLibURL),
    judgeZip: read(config.judge_zip),
    judgePyc: config.judge_pyc ? read(config.judge_pyc) : null,
    snapshot,
    interruptBuffer: new Int32Array(interruptBuffer),
    output: (stream, line) => { if (verbose || /^judge:/.test(line)) process.stderr.write(`[pyodide ${stream}] ${line}\n`); },
  });
  engine.loadNumpy().catch(() => {}); // in the background (a job that needs numpy waits for it)
  return { ...engine.timings, mode: engine.mode, snapshotError: engine.snapshotError };
}

async function runJob(job) {
  const files = job.files.map(([rel, bytes]) => ({ path: rel, bytes }));
  await engine.whenReady(files, job.source);
  engine.clearInterrupt(); // a late interrupt must not hit this job
  const dir = engine.writeProblem(job.problemId, files);
  parentPort.postMessage({ type: 'started', index: job.index });
  const { json, interrupted } = engine.run(dir, job.source, job.includeSecret, job.lang || null);
  engine.removeProblem(dir);
  parentPort.postMessage({ type: 'done', index: job.index, json, interrupted });
}

parentPort.on('message', async (msg) => {
  if (msg.type !== 'job') return;
  try {
    await runJob(msg);
  } catch (err) {
    parentPort.postMessage({ type: 'job-error', index: msg.index, message: String(err && err.stack || err) });
  }
});

try {
  const timings = await boot();
  parentPort.postMessage({ type: 'ready', timings });
} catch (err) {
  parentPort.postMessage({ type: 'boot-error', message: String(err && err.stack || err) });
  process.exit(1);
}
