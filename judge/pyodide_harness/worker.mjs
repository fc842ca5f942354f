// Worker thread of the Pyodide harness: boots Pyodide once, installs the judge package, then
// runs the jobs that the main thread (run_jobs.mjs) sends it, one at a time.
//
// Messages to the main thread:
//   {type: 'ready', timings}                       boot finished
//   {type: 'boot-error', message}                  boot failed (the worker then exits)
//   {type: 'started', index, timeoutJson, crashJson}  job running; the two fallback Results
//   {type: 'done', index, json, seconds}           job finished; json is the Result JSON
//   {type: 'job-error', index, message}            the interpreter failed during a job
// Messages from the main thread: {type: 'job', index, problemId, files, source, includeSecret, timeLimit}.

import { parentPort, workerData } from 'node:worker_threads';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { dist, judgeDir, interruptBuffer, verbose } = workerData;
const REQUIRED_PACKAGES = ['numpy', 'pytest', 'pluggy', 'iniconfig', 'packaging'];
const SKIP_DIRS = new Set(['__pycache__', 'node_modules', '.pytest_cache', '_problems']);

let py = null;
let jobsModule = null;

function now() {
  return performance.now() / 1000;
}

function output(stream) {
  // Pyodide's own stdout/stderr (pytest captures the tests' output itself). Dropped unless
  // verbose: stdout of this process is not a channel the harness relies on.
  return (line) => {
    if (verbose) process.stderr.write(`[pyodide ${stream}] ${line}\n`);
  };
}

function checkDistribution() {
  const lockPath = path.join(dist, 'pyodide-lock.json');
  const needed = ['pyodide.js', 'pyodide.asm.js', 'pyodide.asm.wasm', 'python_stdlib.zip', 'pyodide-lock.json'];
  for (const name of needed) {
    if (!fs.existsSync(path.join(dist, name))) throw new Error(`distribution ${dist} has no ${name}`);
  }
  const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
  for (const name of REQUIRED_PACKAGES) {
    const entry = lock.packages[name];
    if (!entry) throw new Error(`${lockPath} has no entry for ${name}`);
    // A wheel missing from the folder makes Pyodide try its CDN, which crashes the boot offline.
    if (!fs.existsSync(path.join(dist, entry.file_name))) {
      throw new Error(`distribution ${dist} lacks ${entry.file_name} (listed in pyodide-lock.json)`);
    }
  }
}

function copyTree(hostDir, fsDir, skip = SKIP_DIRS) {
  py.FS.mkdirTree(fsDir);
  for (const entry of fs.readdirSync(hostDir, { withFileTypes: true })) {
    const host = path.join(hostDir, entry.name);
    const target = `${fsDir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!skip.has(entry.name)) copyTree(host, target, skip);
    } else if (entry.isFile() && !entry.name.endsWith('.pyc')) {
      py.FS.writeFile(target, new Uint8Array(fs.readFileSync(host)));
    }
  }
}

async function boot() {
  const t0 = now();
  checkDistribution();
  const { loadPyodide } = require(path.join(dist, 'pyodide.js'));
  py = await loadPyodide({
    indexURL: dist.endsWith('/') ? dist : dist + '/',
    packages: ['numpy', 'pytest'],
    stdout: output('stdout'),
    stderr: output('stderr'),
  });
  const t1 = now();
  const missing = REQUIRED_PACKAGES.filter((name) => !(name in py.loadedPackages));
  if (missing.length) throw new Error(`Pyodide did not load: ${missing.join(', ')} (see the log above)`);
  py.setStdin({ error: true }); // without it pytest's capture kills the interpreter in a worker
  py.setInterruptBuffer(new Int32Array(interruptBuffer));
  const sitePackages = py.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
  copyTree(judgeDir, `${sitePackages}/judge`);
  py.runPython('import importlib; importlib.invalidate_caches()');
  const t2 = now();
  py.runPython('import numpy, pytest, judge.runner, judge.pyodide_harness.jobs');
  jobsModule = py.pyimport('judge.pyodide_harness.jobs');
  const t3 = now();
  return {
    loadPyodide: +(t1 - t0).toFixed(3),
    installJudge: +(t2 - t1).toFixed(3),
    imports: +(t3 - t2).toFixed(3),
    total: +(t3 - t0).toFixed(3),
  };
}

function runJob(job) {
  Atomics.store(new Int32Array(interruptBuffer), 0, 0); // a late interrupt must not hit this job
  const problemDir = `/jobs/${job.index}/${job.problemId}`;
  for (const [rel, data] of job.files) {
    const target = `${problemDir}/${rel}`;
    py.FS.mkdirTree(target.slice(0, target.lastIndexOf('/')));
    py.FS.writeFile(target, data);
  }
  const timeoutJson = jobsModule.timeout_json(problemDir, job.timeLimit);
  const crashJson = jobsModule.crash_json(problemDir);
  parentPort.postMessage({ type: 'started', index: job.index, timeoutJson, crashJson });
  const t0 = now();
  const json = jobsModule.run_job(problemDir, job.source, job.includeSecret, job.timeLimit);
  const seconds = now() - t0;
  jobsModule.remove_tree(`/jobs/${job.index}`);
  parentPort.postMessage({ type: 'done', index: job.index, json, seconds });
}

parentPort.on('message', (msg) => {
  if (msg.type !== 'job') return;
  try {
    runJob(msg);
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
