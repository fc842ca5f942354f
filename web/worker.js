/* The judge engine: Pyodide in a (module) Web Worker, running the same runner as the native judge.
 * The set-up itself is js/boot.mjs, shared with the Node.js harness that `judge check --pyodide`
 * and the parity tests use; this file is the browser's host: messages, fetch, micropip URLs.
 *
 * Protocol (all messages are plain objects with a `type`):
 *   page -> worker  {type: "boot", indexURL, packages, lockFileURL?, stdLibURL?, judgeZip, judgePyc?,
 *                    snapshot?: {url, sha256, imageSha256, dataOffset}, interruptBuffer?}
 *   worker -> page  {type: "progress", text}          while booting
 *                   {type: "ready", timings, mode, imageSource, snapshotError}
 *                                                     booted (mode "snapshot": restored from the
 *                                                     memory snapshot, imageSource "kept" from the
 *                                                     image this worker kept in Cache Storage, or
 *                                                     "site" from the site's file; "plain": the long
 *                                                     way, and snapshotError says why when there
 *                                                     was one): pytest and the judge imported
 *                   {type: "numpy", state: "loading" | "ready" | "failed", ms?, message?}
 *                                                     numpy, loaded in the background after a restore
 *                   {type: "boot-error", message}
 *   page -> worker  {type: "run", runId, problem: {id, entry, files, wheels}, source, micropip}
 *                     (files only with the problem's first run or bare run in this worker)
 *   worker -> page  {type: "waiting", runId, text}    the run waits for numpy to finish loading
 *                   {type: "started", runId}          Python starts running the tests now
 *                   {type: "done", runId, json, interrupted, ms}
 *                     json: the Result JSON text of judge.core.runner.judge_source_json (null when a
 *                     KeyboardInterrupt escaped the runner: interrupted is then true); ms: how
 *                     long the runner took here
 *                   {type: "engine-error", runId, message}
 *   page -> worker  {type: "prepare", problems}       every problem (with its files), prepared while
 *                                                     idle (see prepareProblems)
 *   worker -> page  {type: "prepared"}                done
 *   page -> worker  {type: "bare", runId, problem, source}   bench/browser.py's yardstick: time a
 *   worker -> page  {type: "bare-done", runId, ms | error}   bare pytest.main on the same tests
 *
 * The page owns the time limit. With cross-origin isolation it shares an Int32 interrupt buffer:
 * writing 2 (SIGINT) there raises KeyboardInterrupt inside the running Python. When that does not
 * land in time the page terminates this worker and switches to a spare one.
 */
import { bootJudge, isKeyboardInterrupt } from "./js/boot.mjs";

let engine = null;

function post(msg) { self.postMessage(msg); }

async function fetchBytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`could not load ${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

async function boot(msg) {
  // the judge's files (needed by a plain boot only) download while Pyodide starts
  const lazy = (url) => {
    let promise = null;
    return () => {
      if (!promise) promise = fetchBytes(url);
      return promise;
    };
  };
  const judgeZip = lazy(msg.judgeZip);
  const judgePyc = msg.judgePyc ? lazy(msg.judgePyc) : null;
  if (!msg.snapshot) {
    judgeZip().catch(() => {});
    judgePyc?.().catch(() => {});
  }
  let snapshot = null;
  if (msg.snapshot) {
    const kept = await keptImage(msg.snapshot.sha256, msg.snapshot.imageSize); // (a Uint8Array or null)
    const bytes = lazy(msg.snapshot.url);
    // the wasm's data segment completes the image (see js/boot.mjs); Pyodide's own request for
    // the file comes after this one has finished, from the HTTP cache
    const wasm = msg.snapshot.dataOffset == null ? null : lazy(new URL("pyodide.asm.wasm", msg.indexURL).href);
    if (!kept) {
      bytes().catch(() => {});
      wasm?.().catch(() => {});
    }
    snapshot = {
      ...msg.snapshot, bytes, wasm, image: kept,
      onImage: (image) => { setTimeout(() => keepImage(msg.snapshot.sha256, image), 0); },
      onKeptImageFailed: () => { forgetImages().catch(() => {}); },
    };
  }
  const { loadPyodide } = await import(new URL("pyodide.mjs", msg.indexURL).href);
  engine = await bootJudge({
    loadPyodide, indexURL: msg.indexURL, packages: msg.packages, lockFileURL: msg.lockFileURL,
    stdLibURL: msg.stdLibURL, judgeZip, judgePyc, snapshot, interruptBuffer: msg.interruptBuffer || null,
    progress: (text) => post({ type: "progress", text }),
    output: (stream, line) => { if (stream === "stderr" && /^judge:/.test(line)) console.warn(line); },
  });
  return engine;
}

// The decompressed, completed memory image is kept in the origin private file system after a
// restore from the site's file, for the next boot (this page's spare engine, the next visit): no
// download, sha256 check, decompression or wasm read then (most of a restore), and it is read with
// a synchronous access handle, the fastest read a worker has. One image is kept, the current
// build's (named after its sha256). Any failure only costs that speed.
const IMAGE_DIR = "pp-judge-image";

async function imageFolder() {
  if (typeof navigator === "undefined" || !navigator.storage || !navigator.storage.getDirectory) return null;
  const root = await navigator.storage.getDirectory();
  return root.getDirectoryHandle(IMAGE_DIR, { create: true });
}

async function keptImage(sha256, size) {
  try {
    const folder = await imageFolder();
    if (!folder) return null;
    const file = await folder.getFileHandle(`${sha256}.img`);
    const handle = await file.createSyncAccessHandle();
    try {
      if (handle.getSize() !== size) return null; // not (completely) written
      const image = new Uint8Array(size);
      return handle.read(image, { at: 0 }) === size ? image : null;
    } finally {
      handle.close();
    }
  } catch (err) {
    return null; // none kept (or another engine is writing it)
  }
}

async function keepImage(sha256, image) {
  let handle = null;
  try {
    const folder = await imageFolder();
    if (!folder) return;
    for await (const name of folder.keys()) {
      if (name !== `${sha256}.img`) await folder.removeEntry(name).catch(() => {});
    }
    const file = await folder.getFileHandle(`${sha256}.img`, { create: true });
    handle = await file.createSyncAccessHandle();
    if (handle.getSize() === image.length) return; // already kept (by the other engine)
    handle.truncate(0);
    if (handle.write(image, { at: 0 }) !== image.length) handle.truncate(0);
    handle.flush();
  } catch (err) {
    // kept in memory for this boot only
  } finally {
    try {
      handle?.close();
    } catch (err) {
      // closed already
    }
  }
}

async function forgetImages() {
  const root = await navigator.storage.getDirectory();
  await root.removeEntry(IMAGE_DIR, { recursive: true });
}

function loadNumpyInBackground() {
  if (engine.numpyLoaded) return;
  post({ type: "numpy", state: "loading" });
  engine.loadNumpy().then(
    () => post({ type: "numpy", state: "ready", ms: engine.numpyMs }),
    (err) => post({ type: "numpy", state: "failed", message: String((err && err.message) || err) }),
  );
}

// Problem files by id: the page sends them with a problem's first run in this worker only.
const problemFiles = new Map();

function withFiles(problem) {
  if (problem.files) problemFiles.set(problem.id, problem.files);
  const files = problem.files || problemFiles.get(problem.id);
  if (!files) throw new Error(`no files for the problem ${problem.id}`);
  return { ...problem, files };
}

async function run({ runId, problem, source, micropip }) {
  try {
    problem = withFiles(problem);
    if (problem.wheels && problem.wheels.length) {
      post({ type: "progress", text: `Installing ${problem.packages.join(", ")}…` });
      const url = (path) => new URL(path, self.location.href).href;
      await engine.installWheels(problem.wheels.map(url), micropip ? url(micropip) : null);
    }
    await engine.whenReady(problem.files, source, (text) => post({ type: "waiting", runId, text }));
    const dir = engine.writeProblem(problem.id, problem.files);
    post({ type: "started", runId });
    const started = performance.now();
    const { json, interrupted } = engine.run(dir, source);
    // The page knows whether it asked for the interrupt; it decides what the verdict is.
    post({ type: "done", runId, json, interrupted, ms: performance.now() - started });
  } catch (err) {
    if (isKeyboardInterrupt(err)) post({ type: "done", runId, json: null, interrupted: true });
    else post({ type: "engine-error", runId, message: String(err && err.message || err) });
  }
}

async function bare({ runId, problem, source }) {
  try {
    problem = withFiles(problem);
    await engine.whenReady(problem.files, source);
    const dir = engine.writeProblem(problem.id, problem.files);
    post({ type: "bare-done", runId, ms: engine.barePytest(dir, source) * 1000 });
  } catch (err) {
    post({ type: "bare-done", runId, error: String(err && err.message || err) });
  }
}

// Every problem is prepared in the background once numpy has loaded (or at once after a plain
// boot): its folder written and loaded, its tests and helpers compiled into the engine's caches, so a
// problem's first run costs about what a re-run does. One problem per task: a run that arrives in
// between goes first.
let toPrepare = [];

function prepareProblems({ problems }) {
  toPrepare = problems.map(withFiles);
  const next = () => {
    const problem = toPrepare.shift();
    if (!problem) {
      post({ type: "prepared" });
      return;
    }
    try {
      engine.prepareProblem(problem.id, problem.files);
    } catch (err) {
      // a problem that cannot be prepared is loaded by its first run, which reports what is wrong
    }
    setTimeout(next, 0);
  };
  const start = () => setTimeout(next, 0);
  (engine.numpy || Promise.resolve()).then(start, start);
}

self.onmessage = async (event) => {
  const msg = event.data;
  if (msg.type === "boot") {
    try {
      await boot(msg);
    } catch (err) {
      post({ type: "boot-error", message: String(err && err.message || err) });
      return;
    }
    post({ type: "ready", timings: engine.timings, mode: engine.mode, imageSource: engine.imageSource,
           snapshotError: engine.snapshotError });
    loadNumpyInBackground();
  } else if (msg.type === "run") {
    await run(msg);
  } else if (msg.type === "bare") {
    await bare(msg);
  } else if (msg.type === "prepare") {
    prepareProblems(msg);
  }
};
