/* The judge engine: Pyodide in a (module) Web Worker, running the same runner as the native judge.
 * The set-up itself is js/boot.mjs, shared with the Node.js harness that `judge check --pyodide`
 * and the parity tests use; this file is the browser's host: messages, fetch, micropip URLs.
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
 *                     json: the Result JSON text of judge.core.runner.judge_source_json (null when a
 *                     KeyboardInterrupt escaped the runner: interrupted is then true)
 *                   {type: "engine-error", runId, message}
 *
 * The page owns the time limit. With cross-origin isolation it shares an Int32 interrupt buffer:
 * writing 2 (SIGINT) there raises KeyboardInterrupt inside the running Python. When that does not
 * land in time the page terminates this worker and switches to a spare one.
 */
import { bootJudge } from "./js/boot.mjs";

let engine = null;

function post(msg) { self.postMessage(msg); }

async function fetchBytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`could not load ${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

async function boot(msg) {
  // the judge's files download while Pyodide starts
  const judgeZip = fetchBytes(msg.judgeZip);
  const judgePyc = msg.judgePyc ? fetchBytes(msg.judgePyc) : null;
  judgeZip.catch(() => {});
  judgePyc?.catch(() => {});
  const { loadPyodide } = await import(new URL("pyodide.mjs", msg.indexURL).href);
  engine = await bootJudge({
    loadPyodide, indexURL: msg.indexURL, packages: msg.packages, lockFileURL: msg.lockFileURL,
    stdLibURL: msg.stdLibURL, judgeZip, judgePyc, interruptBuffer: msg.interruptBuffer || null,
    progress: (text) => post({ type: "progress", text }),
  });
  return engine.timings;
}

async function run({ runId, problem, source, micropip }) {
  try {
    if (problem.wheels && problem.wheels.length) {
      post({ type: "progress", text: `Installing ${problem.packages.join(", ")}…` });
      const url = (path) => new URL(path, self.location.href).href;
      await engine.installWheels(problem.wheels.map(url), micropip ? url(micropip) : null);
    }
    const dir = engine.writeProblem(problem.id, problem.files);
    post({ type: "started", runId });
    const { json, interrupted } = engine.run(dir, source);
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
      post({ type: "ready", timings: await boot(msg) });
    } catch (err) {
      post({ type: "boot-error", message: String(err && err.message || err) });
    }
  } else if (msg.type === "run") {
    await run(msg);
  }
};
