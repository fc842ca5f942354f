/* The judge engine: Pyodide in a Web Worker, running the same runner as the native judge.
 *
 * Protocol (all messages are plain objects with a `type`):
 *   page -> worker  {type: "boot", indexURL, packages, lockFileURL?, stdLibURL?, judgeZip, judgePyc?,
 *                    interruptBuffer?}
 *   worker -> page  {type: "progress", text}          while booting
 *                   {type: "ready", timings}          booted: numpy, pytest and judge imported
 *                   {type: "boot-error", message}
 *   page -> worker  {type: "run", runId, problem: {id, entry, files, wheels}, source, micropip}
 *   worker -> page  {type: "started", runId}          Python starts running the tests now
 *                   {type: "done", runId, json, interrupted}
 *                     json: the Result JSON text of judge.runner.judge_source_json (null when a
 *                     KeyboardInterrupt escaped the runner: interrupted is then true)
 *                   {type: "engine-error", runId, message}
 *
 * The page owns the time limit. With cross-origin isolation it shares an Int32 interrupt buffer:
 * writing 2 (SIGINT) there raises KeyboardInterrupt inside the running Python. When that does not
 * land in time the page terminates this worker and switches to a spare one.
 */
"use strict";

let pyodide = null;
let judgeSourceJson = null;
let resetSigint = null;
let interruptBuffer = null;
const installedWheels = new Set();
const PROBLEMS_ROOT = "/home/pyodide/problems";

function post(msg) { self.postMessage(msg); }

async function fetchBytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`could not load ${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

async function boot({ indexURL, packages, lockFileURL, stdLibURL, judgeZip, judgePyc, interruptBuffer: buffer }) {
  const t0 = performance.now();
  const timings = {};
  const mark = (name, since) => { timings[name] = Math.round(performance.now() - since); };
  post({ type: "progress", text: "Loading Python…" });
  importScripts(new URL("pyodide.js", indexURL).href);
  const judgeZipPromise = fetchBytes(judgeZip);
  const judgePycPromise = judgePyc ? fetchBytes(judgePyc) : null;
  const options = { indexURL, packages };
  if (lockFileURL) options.lockFileURL = lockFileURL;
  if (stdLibURL) options.stdLibURL = stdLibURL;
  pyodide = await loadPyodide(options);
  mark("loadPyodide", t0);
  const missing = packages.filter((name) => !(name in pyodide.loadedPackages));
  if (missing.length) throw new Error(`could not load the Python packages ${missing.join(", ")}`);
  pyodide.setStdin({ error: true });
  pyodide.setStdout({ batched: () => {} });
  pyodide.setStderr({ batched: () => {} });
  const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
  pyodide.unpackArchive(await judgeZipPromise, "zip", { extractDir: sitePackages });
  // its __pycache__/*.pyc (unchecked hash-based, made by this Pyodide at build time)
  if (judgePycPromise) pyodide.unpackArchive(await judgePycPromise, "zip", { extractDir: sitePackages });
  post({ type: "progress", text: "Importing numpy and pytest…" });
  const t1 = performance.now();
  pyodide.runPython(`
import importlib, os, sys
importlib.invalidate_caches()
import numpy, pytest
import judge.runner
os.makedirs(${JSON.stringify(PROBLEMS_ROOT)}, exist_ok=True)
`);
  mark("imports", t1);
  judgeSourceJson = pyodide.globals.get("judge").runner.judge_source_json;
  resetSigint = pyodide.runPython(
    "import signal\ndef _reset_sigint():\n    signal.signal(signal.SIGINT, signal.default_int_handler)\n_reset_sigint");
  // One throw-away run, so the learner's first run does not pay for pytest's first start
  // (plugin set-up, assertion rewriting, first imports): that cost lands on the time limit.
  post({ type: "progress", text: "Warming up the test runner…" });
  const t2 = performance.now();
  warmUp();
  // Everything loaded so far lives as long as the worker: move it out of the garbage collector's
  // generations, so the collections that runs trigger do not walk numpy's and pytest's objects.
  pyodide.runPython("import gc; gc.collect(); gc.freeze()");
  mark("warmup", t2);
  if (buffer) {
    interruptBuffer = buffer;
    pyodide.setInterruptBuffer(interruptBuffer);
  }
  timings.total = Math.round(performance.now() - t0);
  return timings;
}

const WARMUP = {
  id: "warm-up",
  files: [
    { path: "problem.toml", text: 'format = 1\nid = "warm-up"\ntitle = "Warm-up"\nsummary = "Warm-up."\norder = 0\n' +
      'difficulty = "easy"\nentry = "warm.py"\ntime_limit = 10\ntags = []\n' },
    { path: "README.md", text: "# Warm-up\n" },
    { path: "starter/warm.py", text: "def f():\n    return 1\n" },
    { path: "tests/public/test_warm.py", text:
      "import pytest\nimport numpy as np\nfrom judge.artifacts import timeline\nimport warm\n\n" +
      "@pytest.mark.parametrize('x', [1, 2])\ndef test_f(x, record_property, capsys):\n" +
      "    record_property('timeline', timeline([[('F', 0, 0, 1)]]))\n    print(np.arange(2, dtype=np.float64).sum())\n" +
      "    assert warm.f() == x, f'expected {x}'\n" },
  ],
};

function warmUp() {
  const dir = writeProblem(WARMUP);
  judgeSourceJson(dir, "def f():\n    return 1\n");
  removeTree(dir);
}

function writeProblem(problem) {
  const FS = pyodide.FS;
  const dir = `${PROBLEMS_ROOT}/${problem.id}`;
  removeTree(dir);
  for (const file of problem.files) {
    const path = `${dir}/${file.path}`;
    FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
    if (file.text !== undefined) FS.writeFile(path, file.text, { encoding: "utf8" });
    else FS.writeFile(path, Uint8Array.from(atob(file.base64), (c) => c.charCodeAt(0)));
  }
  return dir;
}

function removeTree(path) {
  const FS = pyodide.FS;
  if (!FS.analyzePath(path).exists) return;
  for (const name of FS.readdir(path)) {
    if (name === "." || name === "..") continue;
    const child = `${path}/${name}`;
    if (FS.isDir(FS.stat(child).mode)) removeTree(child);
    else FS.unlink(child);
  }
  FS.rmdir(path);
}

async function installWheels(problem, micropipWheel) {
  const wanted = (problem.wheels || []).filter((w) => !installedWheels.has(w));
  if (!wanted.length) return;
  if (!micropipWheel) throw new Error("this site ships no micropip, so extra packages cannot be installed");
  const base = self.location.href;
  await pyodide.loadPackage(["packaging", new URL(micropipWheel, base).href]);
  const micropip = pyodide.pyimport("micropip");
  const urls = wanted.map((w) => new URL(w, base).href);
  await micropip.install.callKwargs(pyodide.toPy(urls), { deps: false });
  micropip.destroy?.();
  pyodide.runPython("import importlib; importlib.invalidate_caches()");
  for (const w of wanted) installedWheels.add(w);
}

function isKeyboardInterrupt(err) {
  return err && (err.type === "KeyboardInterrupt" || /KeyboardInterrupt/.test(String(err.message || err)));
}

async function run({ runId, problem, source, micropip }) {
  try {
    if (problem.wheels && problem.wheels.length) {
      post({ type: "progress", text: `Installing ${problem.packages.join(", ")}…` });
      await installWheels(problem, micropip);
    }
    const dir = writeProblem(problem);
    // an earlier run may have changed the SIGINT handler; Stop needs the default one
    resetSigint();
    post({ type: "started", runId });
    let json = null;
    let interrupted = false;
    try {
      json = judgeSourceJson(dir, source);
    } catch (err) {
      if (!isKeyboardInterrupt(err)) throw err;
      interrupted = true;
    }
    // The page knows whether it asked for the interrupt; it decides what the verdict is.
    post({ type: "done", runId, json, interrupted });
  } catch (err) {
    post({ type: "engine-error", runId, message: String(err && err.message || err) });
  }
}

self.onmessage = async (event) => {
  const msg = event.data;
  if (msg.type === "boot") {
    try {
      const timings = await boot(msg);
      post({ type: "ready", timings });
    } catch (err) {
      post({ type: "boot-error", message: String(err && err.message || err) });
    }
  } else if (msg.type === "run") {
    await run(msg);
  }
};
