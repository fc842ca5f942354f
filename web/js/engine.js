// Engines: Pyodide workers that run the judge, one engine per run, with a pre-booted spare.
//
// The pool boots one worker when the page opens and a spare once the first is ready. Every run gets
// an engine no earlier run has used: the learner's code shares Pyodide's one interpreter with the
// tests (judge/sandbox/inprocess.py), so whatever it changed there must not reach a later run. When
// a run is over its engine is terminated and the spare, booted and prepared meanwhile, takes over.
// A run has a time limit (the problem's). Stop and the time limit terminate the run's worker at
// once: it would never run again anyway, and an interrupt that cannot land (time.sleep, C loops,
// code that ignores SIGINT) would keep it busy, and the next run waiting behind it, for a grace
// period. The caller gets its verdict at once and the spare takes over at once. The spare boots
// and prepares the problems while no run is in progress (paused during a run), so it is ready
// when it takes over.

const N_ = (message) => message; // marks the status words; the page translates them (js/i18n.js)
const SPARE_DELAY_MS = 300; // every run ends its engine: the next one should be ready soon

let engineCounter = 0;
// the messages that report an engine's own work (its boot, numpy, the kept image), traced for tests
const BACKGROUND_STEPS = new Set(["progress", "ready", "numpy", "image-kept", "prepared", "compiled", "adopted"]);

/** A new worker, told to boot at once. */
function startWorker(config, id, interrupt) {
  const worker = new Worker("worker.js", { name: `judge-engine-${id}`, type: "module" });
  const { indexURL, packages, lockFileURL, stdLibURL, snapshot } = config.pyodide;
  const url = (path) => (path ? new URL(path, location.href).href : null);
  worker.postMessage({
    type: "boot",
    indexURL: url(indexURL),
    packages,
    // self-hosted builds: bytecode-compiled standard library and packages (see judge/commands/site/build.py)
    lockFileURL: url(lockFileURL),
    stdLibURL: url(stdLibURL),
    judgeZip: url(config.judge_zip),
    judgePyc: url(config.judge_pyc),
    // and the memory snapshot the worker restores instead of booting (js/boot.mjs)
    snapshot: snapshot ? { ...snapshot, url: url(snapshot.url), stdLibURL: url(snapshot.stdLibURL) } : null,
    interruptBuffer: interrupt,
    // the boot's large files and their sizes, for the first visit's progress (bytes of bytes)
    bootFiles: (config.boot_files || []).map((f) => ({ ...f, url: url(f.url) })),
  });
  return worker;
}

function newInterruptBuffer() {
  const shared = typeof SharedArrayBuffer !== "undefined" && self.crossOriginIsolated;
  return shared ? new Int32Array(new SharedArrayBuffer(4)) : null;
}

// The first engine starts as soon as this module runs, before the page's other modules (the editor,
// KaTeX...) have loaded: `judge build` puts an async <script type="module" src="js/engine.js"> right
// after the site configuration in index.html. Its messages wait here until the pool's first Engine
// adopts the worker (see Engine's constructor). Without that tag it starts when app.js loads.
let primed = null;
(function prime() {
  const element = typeof document !== "undefined" ? document.getElementById("site-config") : null;
  if (!element) return;
  try {
    const config = JSON.parse(element.textContent);
    const id = ++engineCounter;
    const interrupt = newInterruptBuffer();
    const worker = startWorker(config, id, interrupt);
    const queue = [];
    worker.onmessage = (event) => queue.push({ message: event });
    worker.onerror = (event) => { event.preventDefault?.(); queue.push({ error: event }); };
    primed = { id, worker, interrupt, queue, startedAt: performance.now() };
  } catch (err) {
    primed = null; // the pool starts its engine the ordinary way
  }
})();

class Engine {
  constructor(config, pool) {
    const early = primed;
    primed = null;
    this.id = early ? early.id : ++engineCounter;
    this.pool = pool;
    this.state = "booting"; // booting | ready | busy | dead
    this.progress = N_("Starting Python…");
    this.timings = null;
    this.mode = null; // "snapshot" (restored from the memory snapshot) or "plain"
    this.imageSource = null; // after a restore: "kept" (the worker's copy in the origin private file system) or "site"
    this.imageKept = false; // the worker has the restored image on disk for the next boot
    this.imageSettled = false; // the worker has tried to keep it (imageKept says whether it could)
    this.snapshotError = null; // why the memory snapshot was not used, when it was not
    this.numpy = null; // "loading" | "ready" | "failed" (after a restore, numpy loads in the background)
    this.bareWaiters = new Map();
    this.sentProblems = new Set(); // problem ids whose files this worker has
    this.handlers = null; // handlers of the run in progress
    this.trace = []; // the boot's and the background's steps as they were reported: {type, text, at} (tests)
    this.interrupt = early ? early.interrupt : newInterruptBuffer();
    this.shared = Boolean(this.interrupt);
    this.startedAt = early ? early.startedAt : performance.now();
    this.worker = early ? early.worker : startWorker(config, this.id, this.interrupt);
    this.worker.onmessage = (event) => this.onMessage(event.data);
    if (pool.pageStarted) this.worker.postMessage({ type: "go" });
    if (pool.numpyWanted) this.worker.postMessage({ type: "numpy" });
    this.worker.onerror = (event) => {
      event.preventDefault?.();
      this.fail(`the Python engine crashed (${event.message || "worker error"})`);
    };
    // what the early worker said before it was adopted, in order, once the pool holds this engine
    if (early && early.queue.length) {
      queueMicrotask(() => {
        for (const item of early.queue) {
          if (item.error) this.worker.onerror(item.error);
          else this.worker.onmessage(item.message);
        }
      });
    }
  }

  onMessage(msg) {
    if (BACKGROUND_STEPS.has(msg.type) && this.trace.length < 200) {
      this.trace.push({ type: msg.type, text: msg.text || msg.state || String(msg.entries ?? ""), at: performance.now() });
    }
    if (msg.type === "progress") {
      this.progress = msg.text;
      this.progressValues = msg.values || null; // the {placeholders} of a marked message
      this.download = msg.total ? { loaded: msg.loaded, total: msg.total } : null;
      this.pool.changed();
    } else if (msg.type === "ready") {
      this.state = "ready";
      this.readyAt = performance.now();
      this.timings = msg.timings;
      this.mode = msg.mode;
      this.imageSource = msg.imageSource || null;
      this.snapshotError = msg.snapshotError || null;
      this.numpy = msg.mode === "plain" ? "ready" : this.numpy;
      this.pool.engineReady(this);
    } else if (msg.type === "image-kept") {
      this.imageKept = msg.kept !== false;
      this.imageSettled = true;
    } else if (msg.type === "prepared") {
      this.preparedAll = true;
    } else if (msg.type === "compiled") {
      this.pool.compiled = msg.data; // the next engines adopt it instead of compiling the same tests
    } else if (msg.type === "bare-done") {
      const waiter = this.bareWaiters.get(msg.runId);
      this.bareWaiters.delete(msg.runId);
      if (waiter && msg.error) waiter.reject(new Error(msg.error));
      else if (waiter) waiter.resolve(msg.ms);
    } else if (msg.type === "numpy") {
      this.numpy = msg.state;
      if (msg.state === "ready") this.numpyMs = msg.ms;
      this.pool.changed();
    } else if (msg.type === "boot-error") {
      this.bootError = msg.message;
      this.fail(`Python could not start: ${msg.message}`);
    } else if (this.handlers && msg.runId === this.handlers.runId) {
      const h = this.handlers;
      if (msg.type === "waiting") {
        if (h.waiting) h.waiting({ text: msg.text, values: msg.values || null, what: msg.what || "numpy" });
      } else if (msg.type === "started") {
        h.running = true;
        h.started();
      } else if (msg.type === "engine-error") {
        // An exception escaped the runner: the interpreter is in doubt (os._exit() ends Pyodide for
        // good), so this engine is replaced and the verdict says what happened.
        this.handlers = null;
        h.finished({ ...msg, crashed: Boolean(h.running), message: `${msg.message}; a fresh engine takes over ` +
          "(did the code call os._exit() or end the interpreter?)" });
        this.terminate();
        this.pool.engineDied(this, null);
      } else if (msg.type === "done") {
        // Used once: the learner's code ran in this interpreter, so no later run may use it. The
        // console's engine is the exception: it judges nothing, and its namespace is kept for the
        // console's next input (EnginePool.consoleEngine).
        this.handlers = null;
        h.finished(msg);
        if (h.keep && !msg.again && msg.json) {
          this.state = "kept";
          this.pool.engineKept(this, h.keep);
        } else {
          this.terminate();
          this.pool.engineDied(this, null);
        }
      }
    }
  }

  run(runId, payload, handlers) {
    this.state = "busy";
    this.handlers = { runId, ...handlers };
    if (this.interrupt) Atomics.store(this.interrupt, 0, 0);
    this.worker.postMessage({ type: "run", runId, ...this.withoutKnownFiles(payload) });
  }

  /** The worker keeps a problem's files from its first run: later messages leave them out. */
  withoutKnownFiles(payload) {
    const id = payload.problem.id;
    if (!this.sentProblems.has(id)) {
      this.sentProblems.add(id);
      return payload;
    }
    return { ...payload, problem: { ...payload.problem, files: null } };
  }

  /** Send the problems to prepare, once per worker (`first`: the id of the problem to prepare first). */
  prepare(problems, first = null) {
    if (this.prepared) return;
    this.prepared = true;
    const ordered = [...problems.filter((p) => p.id === first), ...problems.filter((p) => p.id !== first)];
    const payload = ordered.map((problem) => this.withoutKnownFiles({ problem }).problem);
    this.worker.postMessage({ type: "prepare", problems: payload, compiled: this.pool.compiled || null });
  }

  /** A spare's background work (preparing the problems) waits while a run is in progress elsewhere. */
  hold(paused) {
    if (this.state === "dead" || Boolean(this.held) === paused) return;
    this.held = paused;
    this.worker.postMessage({ type: paused ? "pause" : "resume" });
  }

  /** Milliseconds of one bare pytest.main on the tests of a run (bench/browser.py's yardstick). */
  bare(payload) {
    return new Promise((resolve, reject) => {
      const runId = `bare-${++engineCounter}`;
      this.bareWaiters.set(runId, { resolve, reject });
      this.worker.postMessage({ type: "bare", runId, ...this.withoutKnownFiles(payload) });
    });
  }

  fail(message) {
    if (this.state === "dead") return;
    const h = this.handlers;
    this.terminate();
    if (h) h.finished({ type: "engine-error", runId: h.runId, message, crashed: Boolean(h.running) });
    this.pool.engineDied(this, message);
  }

  terminate() {
    this.state = "dead";
    this.handlers = null;
    this.worker.terminate();
  }
}

export class EnginePool {
  /** config: the site configuration; onChange(status) is called whenever the status changes. */
  constructor(config, onChange) {
    this.config = config;
    this.onChange = onChange;
    this.primary = null;
    this.spare = null;
    this.compiled = null; // the tests' code an engine compiled before any run: the next engines adopt it
    this.runCounter = 0;
    this.current = null; // the run in progress (its controller)
    this.waiters = [];
    this.lastError = null;
    this.bootFailures = 0;
    this.runs = []; // the last runs: {engine: its id, waited: it waited for an engine to boot} (tests)
    // ?spare=0 in the page URL: no pre-booted spare (saves memory; a hard stop then boots a new engine)
    this.noSpare = new URLSearchParams(location.search).get("spare") === "0";
  }

  start() {
    this.primary = new Engine(this.config, this);
    this.bootStarted = this.primary.startedAt;
    this.changed();
  }

  /** {state: booting|ready|running, text, waiting?} for the status line. */
  status() {
    const p = this.primary;
    if (this.current) {
      const waiting = this.waitingStatus();
      // a run that waits for its engine says so (and what the engine is doing), not "Running tests…"
      if (waiting) return { state: "booting", ...waiting, waiting: "engine", download: p ? p.download || null : null };
      const what = { try: N_("Calling your function…"), console: N_("Running your code in the console…") }[this.current.mode]
        || N_("Running tests…");
      return { state: "running", text: this.current.aborting ? N_("Stopping…") : what };
    }
    if (p && p.state === "ready") {
      return { state: "ready", text: p.numpy === "loading" ? N_("Python ready (numpy is loading)") : N_("Python ready") };
    }
    if (p && p.state === "busy") return { state: "running", text: N_("Finishing the previous run…") };
    if (this.lastError && (!p || p.state === "dead")) return { state: "booting", text: this.lastError, error: true };
    return { state: "booting", text: p ? p.progress : N_("Starting Python…"), values: p ? p.progressValues : null,
             download: p ? p.download || null : null };
  }

  /** What the run in progress waits for before its engine can start it: {text, values, step?}, the
   * step being the engine's own progress message ({text, values}); null when it does not wait. */
  waitingStatus() {
    const ctl = this.current;
    if (!ctl || ctl.engine || ctl.aborting || ctl.settled) return null;
    const p = this.primary;
    if (p && p.state === "ready") return null;
    if (!this.firstReadyAt) return null; // the first boot: the page says "Waiting for Python to start"
    if (!p || !p.progress || p.progress === "Starting Python…") return { text: N_("Starting a fresh Python…") };
    return { text: N_("Starting a fresh Python ({step})…"), step: { text: p.progress, values: p.progressValues } };
  }

  changed() {
    const status = this.status();
    const ctl = this.current;
    const shown = status.waiting === "engine" ? JSON.stringify([status.text, status.step]) : null;
    if (ctl && shown && ctl.onWaiting && ctl.waitingShown !== shown) {
      ctl.waitingShown = shown;
      ctl.onWaiting(status, "engine");
    }
    this.onChange(status);
  }

  /** The page's own files are in: the engines may start their downloads (see worker.js, "go"). */
  pageReady() {
    if (this.pageStarted) return;
    this.pageStarted = true;
    for (const engine of [this.primary, this.spare]) if (engine && engine.state !== "dead") engine.worker.postMessage({ type: "go" });
  }

  /** Load numpy in every engine from now on (a problem that imports it is open). */
  wantNumpy() {
    if (this.numpyWanted) return;
    this.numpyWanted = true;
    for (const engine of [this.primary, this.spare]) if (engine && engine.state !== "dead") engine.worker.postMessage({ type: "numpy" });
  }

  /** Every problem, for the engines to prepare while idle (each engine once, when it is ready). */
  prepareProblems(problems) {
    this.problemsToPrepare = problems;
    for (const engine of [this.primary, this.spare]) if (engine && engine.state === "ready") engine.prepare(problems);
  }

  engineReady(engine) {
    // every engine prepares the problems once it is ready, the last run's problem first: a spare
    // too, so that it is prepared when it takes over (its work waits while a run is in progress)
    if (engine === this.spare) engine.hold(Boolean(this.current));
    if (this.problemsToPrepare) engine.prepare(this.problemsToPrepare, this.lastProblemId);
    if (engine === this.spare && (!this.primary || this.primary.state === "dead")) this.promote();
    if (engine === this.primary) {
      if (!this.firstReadyAt) {
        this.firstReadyAt = performance.now();
        this.bootMs = Math.round(this.firstReadyAt - this.bootStarted);
      }
      this.scheduleSpare();
      const waiters = this.waiters.splice(0);
      waiters.forEach((resolve) => resolve());
    }
    this.changed();
  }

  engineDied(engine, message) {
    if (this.console && this.console.engine === engine) {
      this.console = null;
      this.changed();
      return;
    }
    if (engine === this.primary) {
      this.lastError = message;
      if (engine.bootError) this.bootFailures += 1;
      this.primary = null;
      this.promote();
    } else if (engine === this.spare) {
      this.spare = null;
      if (engine.bootError) this.bootFailures += 1;
    }
    this.waiters.splice(0).forEach((resolve) => resolve()); // let acquire() look again
    this.changed();
  }

  /**
   * The console's engine after an input: kept (out of the pool: no run ever uses it) for the next
   * input while the console's key (the problem and the file's text) is unchanged.
   */
  engineKept(engine, key) {
    if (this.console && this.console.engine !== engine) this.endConsole();
    this.console = { engine, key };
    engine.hold(true); // it prepares no problems: it runs no tests
    if (engine === this.primary) {
      this.primary = null;
      this.promote();
    }
    this.changed();
  }

  /** End the console's namespace (and its worker): the next input runs the file afresh. */
  endConsole() {
    const kept = this.console;
    if (!kept) return;
    // an input in progress there is stopped (its caller gets "stopped"; abort ends the engine)
    if (this.current && this.current.engine === kept.engine) {
      this.abort("stopped");
      return;
    }
    this.console = null;
    if (kept.engine.state !== "dead") kept.engine.terminate();
  }

  /** Make the spare the primary (booting or ready) and start a new spare later. */
  promote() {
    if (this.primary && this.primary.state !== "dead") return;
    if (this.bootFailures >= 3) return; // do not loop on a distribution that cannot boot
    this.primary = this.spare || new Engine(this.config, this);
    this.spare = null;
    this.primary.hold(false);
    // a ready engine schedules its own spare at once; a booting one once it is ready (two boots at
    // once would slow down the one the next run waits for)
    if (this.primary.state === "ready") this.engineReady(this.primary);
    this.changed();
  }

  scheduleSpare() {
    if (this.noSpare || this.spare || this.spareTimer || this.bootFailures >= 3) return;
    // Boot the spare while no run is in progress: on a small machine a booting engine would slow
    // the learner's run down (and that time counts against the time limit).
    this.spareTimer = setTimeout(() => {
      this.spareTimer = null;
      if (this.spare) return;
      if (this.current) this.scheduleSpare();
      else this.spare = new Engine(this.config, this);
    }, SPARE_DELAY_MS);
  }

  /** Resolve when the primary engine is ready for a run. */
  async acquire() {
    while (!this.primary || this.primary.state !== "ready") {
      if (!this.primary || this.primary.state === "dead") this.promote();
      if (!this.primary) throw new Error(this.lastError || "Python could not start");
      await new Promise((resolve) => this.waiters.push(resolve));
    }
    return this.primary;
  }

  /**
   * Run the public tests. Resolves with one of
   *   {kind: "result", json}            the Result JSON text from the runner
   *   {kind: "timeout", seconds}        the time limit hit (interrupted or worker replaced)
   *   {kind: "stopped", seconds}        the learner pressed Stop
   *   {kind: "crashed", message}        the engine died during the run (it is replaced)
   *   {kind: "error", message}          the engine failed (boot error, internal error)
   * onWaiting(message, what) is called when the run waits: for the standard library or numpy (still
   * loading after a restore), what "stdlib" or "numpy", message {text, values}; for a fresh engine
   * (after a hard stop), what "engine", message the status ({text, values?, step?}).
   */
  run(problem, source, timeLimit, onWaiting = null, extra = {}) {
    if (this.current) return Promise.reject(new Error("a run is already in progress"));
    return new Promise((resolve) => {
      const ctl = { aborting: null, startedAt: null, resolve, settled: false, engine: null, problemId: problem.id,
                    mode: extra.mode || "run", onWaiting };
      this.current = ctl;
      this.lastProblemId = problem.id;
      if (this.spare) this.spare.hold(true);
      const settle = (outcome) => {
        if (ctl.settled) return;
        ctl.settled = true;
        clearTimeout(ctl.timer);
        if (this.current === ctl) this.current = null;
        if (this.spare && !this.current) this.spare.hold(false);
        this.changed();
        resolve(outcome);
      };
      ctl.settle = settle;
      this.changed();
      const waited = !(this.primary && this.primary.state === "ready") && !(extra.mode === "console" && this.console);
      // again: the first engine's run imported a standard module before its standard library was in
      // (worker.js): the run is made once more, in the next engine, once that one has it
      // the console's input goes to its kept engine while the file is unchanged, else to a fresh
      // engine, which runs the file first (extra.console: the key of the console's namespace)
      const consoleKey = extra.mode === "console" ? extra.console : null;
      const kept = consoleKey && this.console && this.console.key === consoleKey && this.console.engine.state === "kept"
        ? this.console.engine : null;
      if (consoleKey && !kept) this.endConsole();
      const engineFor = (again) => (kept && !again ? Promise.resolve(kept) : this.acquire());
      const dispatch = (again) => engineFor(again).then((engine) => {
        if (ctl.aborting) return settle({ kind: ctl.aborting, seconds: 0 });
        ctl.engine = engine;
        this.runs = [...this.runs.slice(-19), { engine: engine.id, waited }];
        const runId = ++this.runCounter;
        // the page's language (its switch sets <html lang>): the tests' messages follow it (judge.lang)
        const lang = globalThis.document?.documentElement?.lang || null;
        const payload = { problem, source, micropip: this.config.micropip || null, lang, ...extra, stdlibFirst: again,
                          fresh: Boolean(consoleKey) && engine !== kept };
        this.changed(); // no longer waiting for an engine
        engine.run(runId, payload, {
          keep: consoleKey,
          waiting: (message) => {
            clearTimeout(ctl.timer); // the time limit counts the run, not a download it waits for
            if (onWaiting && !ctl.settled) onWaiting(message, message.what);
          },
          started: () => {
            ctl.startedAt = performance.now();
            ctl.timer = setTimeout(() => this.abort("timeout", timeLimit), timeLimit * 1000);
          },
          finished: (msg) => {
            if (ctl.aborting) return; // the verdict was already given
            clearTimeout(ctl.timer);
            if (msg.again && !again) {
              ctl.engine = null;
              dispatch(true);
            } else if (msg.type === "engine-error") {
              settle({ kind: msg.crashed ? "crashed" : "error", message: msg.message });
            } else if (msg.interrupted) {
              settle({ kind: "error", message: "the run was interrupted (KeyboardInterrupt)" });
            } else {
              settle({ kind: "result", json: msg.json, engineMs: msg.ms });
            }
          },
        });
      }).catch((err) => settle({ kind: "error", message: String(err.message || err) }));
      dispatch(false);
    });
  }

  /**
   * For bench/browser.py: milliseconds of one bare pytest.main, in the primary engine, on the tests a
   * run of `source` would have (no Result; never while a run is in progress).
   */
  async barePytest(problem, source) {
    if (this.current) throw new Error("a run is in progress");
    const engine = await this.acquire();
    return engine.bare({ problem, source });
  }

  /** Stop the run in progress (reason "stopped" or "timeout"). */
  abort(reason = "stopped", limit = null) {
    const ctl = this.current;
    if (!ctl || ctl.aborting) return;
    ctl.aborting = reason;
    const elapsed = ctl.startedAt ? (performance.now() - ctl.startedAt) / 1000 : 0;
    const seconds = reason === "timeout" && limit !== null ? limit : Math.round(elapsed * 10) / 10;
    const engine = ctl.engine;
    ctl.settle({ kind: reason, seconds });
    if (!engine) { this.waiters.splice(0).forEach((r) => r()); return; }
    if (engine.state !== "busy") return;
    // This engine is never used again (one engine per run): end it now, and the spare takes over
    // at once. Waiting for an interrupt to land would gain nothing, and when it cannot land the
    // next run would wait behind the stuck worker.
    engine.terminate();
    this.engineDied(engine, null);
    this.lastError = null;
  }

  get busy() { return Boolean(this.current); }
}
