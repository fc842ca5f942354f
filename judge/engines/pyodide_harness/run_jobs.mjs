#!/usr/bin/env node
// Run judge jobs in Pyodide under Node.js 20: one boot for all jobs, one JSON line per job.
//
//   node run_jobs.mjs --site DIR --jobs JOBS.json --out RESULTS.jsonl [--grace S] [--plain] [--verbose]
//
// DIR is a site made by `judge build` (--pyodide self), or the engine-only site that
// judge.engines.pyodide_files.build_engine_site makes: the harness boots Pyodide from the site's own files
// (compiled twins and memory snapshot included) with the site's own js/boot.mjs, as the browser
// does. --plain boots without the memory snapshot (the browser's fallback).
//
// JOBS.json: {"jobs": [{"problem_dir": host path, "source": text, "include_secret": bool,
//                        "time_limit": seconds, "label": text, "fresh": bool, "lang": code}, ...]}
// A "fresh" job runs in a worker no other job has used, and its worker is not used again: the page
// gives every run an engine of its own (web/js/engine.js); the problems' own solutions may share one.
// RESULTS.jsonl, one line per event, written as it happens (a crash loses nothing written):
//   {"kind": "boot", "worker": n, "timings": {...}}                 a worker booted Pyodide
//   {"kind": "job", "index": i, "label": ..., "result": {Result} | null, "harness_error": null | text,
//    "crash": null | text, "seconds": s, "interrupted": bool, "killed": bool, "worker": n}
//   {"kind": "end", "jobs": n}                                      every job has its line
//
// Python runs in a worker thread (Pyodide blocks the thread it runs on). When a job exceeds its
// time limit the main thread sets Pyodide's interrupt buffer (SIGINT -> KeyboardInterrupt) and
// marks the job "interrupted". If the interrupt does not land within the grace period (time.sleep
// and output floods are not interruptible) the worker is terminated ("killed") and a fresh one is
// booted for the other jobs. A job that kills the interpreter gets "crash" (what happened); the
// other jobs go on in a fresh worker. This program never builds a Result itself: judge.engines.pyodide
// turns these records into Results with judge.engines.unfinished.
// Exit status: 0 when every job has a line, 2 on bad arguments, 3 when Pyodide cannot boot.

import { Worker } from 'node:worker_threads';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const START_TIMEOUT = 60; // seconds

function parseArgs(argv) {
  const args = { grace: 2, verbose: false, plain: false };
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${key} needs a value`);
      return argv[++i];
    };
    if (key === '--site') args.site = path.resolve(value());
    else if (key === '--jobs') args.jobs = path.resolve(value());
    else if (key === '--out') args.out = path.resolve(value());
    else if (key === '--grace') args.grace = Number(value());
    else if (key === '--verbose') args.verbose = true;
    else if (key === '--plain') args.plain = true;
    else usage(`unknown argument ${key}`);
  }
  if (!args.site || !args.jobs || !args.out) usage('--site, --jobs and --out are required');
  return args;
}

function usage(problem) {
  process.stderr.write(`run_jobs.mjs: ${problem}\nusage: node run_jobs.mjs --site DIR --jobs JOBS.json ` +
    '--out RESULTS.jsonl [--grace SECONDS] [--plain] [--verbose]\n');
  process.exit(2);
}

function log(text) {
  process.stderr.write(`[run_jobs] ${text}\n`);
}

// The problem folder's files, relative paths -> bytes (caches and bytecode left out).
function readTree(root) {
  const files = [];
  const walk = (dir, prefix) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === '__pycache__' || entry.name.endsWith('.pyc')) continue;
      const host = path.join(dir, entry.name);
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(host, rel);
      else if (entry.isFile()) files.push([rel, new Uint8Array(fs.readFileSync(host))]);
    }
  };
  walk(root, '');
  return files;
}

// The site configuration that `judge build` embeds in index.html.
function siteConfig(site) {
  const index = path.join(site, 'index.html');
  const text = fs.readFileSync(index, 'utf8');
  const match = /<script type="application\/json" id="site-config">([\s\S]*?)<\/script>/.exec(text);
  if (!match) throw new Error(`${index} holds no site configuration: is ${site} a site made by judge build?`);
  return JSON.parse(match[1]); // its <\/ is JSON's escape of </
}

class Runner {
  constructor(args, config) {
    this.args = args;
    this.config = config;
    this.interruptBuffer = null; // one per worker: a pending interrupt must not reach the next one
    this.interrupt = null;
    this.worker = null;
    this.workers = 0;
    this.handler = null; // current message/exit handler
  }

  // Boot a fresh worker; resolves with its timings, rejects with a readable error.
  boot() {
    this.workers += 1;
    this.interruptBuffer = new SharedArrayBuffer(4);
    this.interrupt = new Int32Array(this.interruptBuffer);
    const worker = new Worker(path.join(HERE, 'worker.mjs'), {
      workerData: { site: this.args.site, config: this.config, interruptBuffer: this.interruptBuffer,
        verbose: this.args.verbose, bootMode: this.args.plain ? 'plain' : 'site' },
    });
    this.worker = worker;
    worker.on('message', (msg) => this.handler && this.handler({ msg }));
    worker.on('error', (err) => this.handler && this.handler({ error: err }));
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = null;
      if (this.handler) this.handler({ exit: code });
    });
    return new Promise((resolve, reject) => {
      this.handler = ({ msg, error, exit }) => {
        if (msg && msg.type === 'ready') { this.handler = null; resolve(msg.timings); }
        else if (msg && msg.type === 'boot-error') { this.handler = null; reject(new Error(msg.message)); }
        else if (error) { this.handler = null; reject(error); }
        else if (exit !== undefined) { this.handler = null; reject(new Error(`worker exited with ${exit} while booting`)); }
      };
    });
  }

  async kill() {
    const worker = this.worker;
    this.worker = null;
    this.handler = null;
    if (worker) await worker.terminate();
  }

  // Run one job in the current worker; always resolves with the job's record.
  runJob(job, index) {
    const problemDir = path.resolve(job.problem_dir);
    const record = { kind: 'job', index, label: job.label ?? '', result: null, harness_error: null, crash: null,
      seconds: null, interrupted: false, killed: false, worker: this.workers };
    const limit = Number(job.time_limit) || 10;
    let files;
    try {
      files = readTree(problemDir);
    } catch (err) {
      record.harness_error = `cannot read the problem folder ${problemDir}: ${err.message}`;
      return Promise.resolve(record);
    }
    return new Promise((resolve) => {
      let started = 0;
      let timer = null;
      let graceTimer = null;
      let repeat = null;
      // Writing the files takes milliseconds; a worker that does not start the job within
      // START_TIMEOUT is stuck and gets replaced.
      const startTimer = setTimeout(() => {
        finish({ harness_error: `the Pyodide worker did not start the job within ${START_TIMEOUT} s`, dead: true });
      }, START_TIMEOUT * 1000);
      const finish = async (outcome) => {
        clearTimeout(startTimer);
        clearTimeout(timer);
        clearTimeout(graceTimer);
        clearInterval(repeat);
        this.handler = null;
        if (started) record.seconds = +((performance.now() - started) / 1000).toFixed(3);
        Object.assign(record, outcome);
        if (record.killed || outcome.dead) await this.kill();
        delete record.dead;
        resolve(record);
      };
      const crashed = (detail) => {
        if (started) finish({ crash: detail, dead: true });
        else finish({ harness_error: `the Pyodide worker failed before the job started: ${detail}`, dead: true });
      };
      this.handler = ({ msg, error, exit }) => {
        if (msg && msg.type === 'started' && msg.index === index) {
          clearTimeout(startTimer);
          started = performance.now();
          timer = setTimeout(() => {
            record.interrupted = true;
            Atomics.store(this.interrupt, 0, 2); // SIGINT: Pyodide raises KeyboardInterrupt
            // again while the run goes on: an interrupt that lands where Python code catches every exception
            // (on a loaded machine, a slow run may still be in pytest's or the judge's own code) is used up there,
            // and the learner's loop after it would run to the end of the grace and lose its worker
            repeat = setInterval(() => {
              if (Atomics.load(this.interrupt, 0) === 0) Atomics.store(this.interrupt, 0, 2);
            }, 500);
            graceTimer = setTimeout(() => {
              log(`job ${index} (${record.label}) ignored the interrupt for ${this.args.grace} s: terminating the worker`);
              finish({ killed: true });
            }, this.args.grace * 1000);
          }, limit * 1000);
        } else if (msg && msg.type === 'done' && msg.index === index) {
          finish({ result: msg.json, interrupted: record.interrupted || msg.interrupted });
        } else if (msg && msg.type === 'job-error' && msg.index === index) {
          crashed(msg.message.split('\n')[0]);
        } else if (error) {
          crashed(String(error && error.message || error));
        } else if (exit !== undefined) {
          crashed(`the worker exited with code ${exit}`);
        }
      };
      this.worker.postMessage({ type: 'job', index, problemId: path.basename(problemDir), files,
        source: job.source, includeSecret: !!job.include_secret, lang: job.lang || null },
      files.map(([, data]) => data.buffer));
    });
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const jobs = JSON.parse(fs.readFileSync(args.jobs, 'utf8')).jobs;
  let config;
  try {
    config = siteConfig(args.site);
  } catch (err) {
    log(String(err.message || err));
    process.exit(2);
  }
  const out = fs.openSync(args.out, 'w');
  const write = (record) => {
    // The Result stays the JSON text Python wrote (a JS round trip would turn 1.0 into 1).
    const { result, ...rest } = record;
    const line = result === undefined ? JSON.stringify(rest)
      : `${JSON.stringify(rest).slice(0, -1)},"result":${result ?? 'null'}}`;
    fs.writeSync(out, line + '\n');
  };
  const runner = new Runner(args, config);
  let used = false; // whether the current worker ran a job
  for (let index = 0; index < jobs.length; index++) {
    if (jobs[index].fresh && used) {
      await runner.kill();
      used = false;
    }
    if (!runner.worker) {
      try {
        const timings = await runner.boot();
        write({ kind: 'boot', worker: runner.workers, timings });
        log(`worker ${runner.workers} booted in ${timings.total} ms`);
      } catch (err) {
        log(`Pyodide could not boot from ${args.site}: ${err.stack || err}`);
        await runner.kill();
        fs.closeSync(out);
        process.exit(3);
      }
    }
    const record = await runner.runJob(jobs[index], index);
    write(record);
    used = Boolean(runner.worker);
  }
  write({ kind: 'end', jobs: jobs.length });
  fs.closeSync(out);
  await runner.kill();
  process.exit(0);
}

main().catch((err) => {
  log(`internal error: ${err.stack || err}`);
  process.exit(1);
});
