/* The judge engine: Pyodide in a (module) Web Worker, running the same runner as the native judge.
 * The set-up itself is js/boot.mjs, shared with the Node.js harness that `judge check --pyodide`
 * and the parity tests use; this file is the browser's host: messages, fetch, micropip URLs.
 *
 * Protocol (all messages are plain objects with a `type`):
 *   page -> worker  {type: "boot", indexURL, packages, lockFileURL?, stdLibURL?, judgeZip, judgePyc?,
 *                    snapshot?: {url, sha256, imageSha256, dataOffset}, interruptBuffer?}
 *   worker -> page  {type: "progress", text, values?} while booting (text: a message of the catalogs,
 *                                                     values: its {placeholders}; the page translates it)
 *                   {type: "ready", timings, mode, imageSource, snapshotError}
 *                                                     booted (mode "snapshot": restored from the
 *                                                     memory snapshot, imageSource "kept" from the
 *                                                     image a worker kept in the origin private
 *                                                     file system, or "site" from the site's
 *                                                     file; "plain": the long
 *                                                     way, and snapshotError says why when there
 *                                                     was one): pytest and the judge imported
 *                   {type: "numpy", state: "loading" | "ready" | "failed", ms?, message?}
 *                                                     numpy, loaded in the background after a restore
 *                   {type: "boot-error", message}
 *                   {type: "image-kept", kept}        the restored image is on disk for the next boot
 *                                                     (kept false: it could not be written)
 *   page -> worker  {type: "run", runId, problem: {id, entry, files, wheels}, source, micropip, lang}
 *                     (lang: the page's language, which the tests' messages follow: judge.lang)
 *                     (files only with the problem's first run or bare run in this worker)
 *   worker -> page  {type: "waiting", runId, text}    the run waits for numpy to finish loading
 *                   {type: "started", runId}          Python starts running the tests now
 *                   {type: "done", runId, json, interrupted, ms}
 *                     json: the Result JSON text of judge.core.runner.judge_source_json (null when a
 *                     KeyboardInterrupt escaped the runner: interrupted is then true); ms: how
 *                     long the runner took here
 *                   {type: "engine-error", runId, message}
 *   page -> worker  {type: "go"}                      the page's own files are in: downloads may start
 *                   {type: "numpy"}                   load numpy (a problem that needs it is open)
 *                   {type: "run", ..., mode: "try", call}   Try it: call the learner's function
 *                   {type: "run", ..., mode: "console", input, fresh}   the console: (fresh: run the file
 *                                                     in a new namespace first) evaluate `input` there;
 *                                                     "done" carries the answer's JSON, and the page keeps
 *                                                     this worker for the next input (js/engine.js)
 *   worker -> page  {type: "progress", text, loaded?, total?}   bytes of the boot's large files
 *   page -> worker  {type: "prepare", problems, compiled?}   every problem (with its files), prepared
 *                                                     while idle (see prepareProblems); compiled: the
 *                                                     code another engine of the page compiled
 *   worker -> page  {type: "prepared"}                done
 *                   {type: "compiled", data}          this engine's compiled code (a Uint8Array), for
 *                                                     the page's next engines: only from an engine no
 *                                                     learner code has run in
 *                   {type: "adopted", entries}        how many compiled files it took from `compiled`
 *   page -> worker  {type: "pause"} / {type: "resume"}   a spare's background work (its boot's next
 *                                                     step, preparing, numpy, keeping the image) waits
 *                                                     while a run is in progress in another engine
 *   page -> worker  {type: "bare", runId, problem, source}   bench/browser.py's yardstick: time a
 *   worker -> page  {type: "bare-done", runId, ms | error}   bare pytest.main on the same tests
 *
 * The page owns the time limit. With cross-origin isolation it shares an Int32 interrupt buffer:
 * writing 2 (SIGINT) there raises KeyboardInterrupt inside the running Python. When that does not
 * land in time the page terminates this worker and switches to a spare one.
 */
import { bootJudge, isKeyboardInterrupt, STDLIB_WAIT } from "./js/boot.mjs";

const N_ = (message) => message; // marks a message the page shows translated (js/i18n.js), {placeholders} in `values`

let engine = null;

// The page's own background work in this worker (a spare's boot and preparing, numpy loading in
// the background, keeping the memory image) waits while a run is in progress: in another engine
// ("pause" from the page, until "resume") or in this one (`running`). On a busy 2-core laptop it
// would otherwise take CPU from the run, whose time counts against its limit.
let paused = false;
let running = false;
let ranCode = false; // learner code ran in this engine: its compiled code is not handed on
let keeping = null; // the memory image being written for the next boot (keepImage)
const idleWaiters = [];
/** Resolves once nothing runs here and the page has not paused this worker. */
function idle() {
  if (!paused && !running) return Promise.resolve();
  return new Promise((resolve) => idleWaiters.push(resolve));
}
function wake() {
  if (!paused && !running) idleWaiters.splice(0).forEach((resolve) => resolve());
}

function post(msg) { self.postMessage(msg); }

async function fetchBytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`could not load ${url}: HTTP ${response.status}`);
  return new Uint8Array(await counted(url, response).arrayBuffer());
}

// First-visit progress: the boot's large files (config.boot_files: runtime, standard library,
// memory image) are fetched here, counted as they stream in, and their sum reported as
// {type: "progress", text, loaded, total} (bytes on the wire, estimated from the Content-Length
// and how much of the decoded file has arrived). The runtime's own requests for the same URLs
// then come from the HTTP cache.
const download = { files: new Map(), reported: 0, active: false };

function expectedFile(url) {
  return download.files.get(new URL(url, self.location.href).href) || null;
}

function counted(url, response) {
  const file = expectedFile(url);
  if (!file || !response.body) return response;
  const length = Number(response.headers.get("Content-Length")) || 0;
  const encoded = Boolean(response.headers.get("Content-Encoding"));
  // what this response decodes to: the file, or (the memory image sent decoded) the image itself
  let decoded = file.size;
  let first = true;
  const reader = response.body.getReader();
  const stream = new ReadableStream({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) {
        file.loaded = file.wire;
        reportDownload();
        controller.close();
        return;
      }
      if (first && file.decodedSize && !(value[0] === 0x1f && value[1] === 0x8b)) decoded = file.decodedSize;
      first = false;
      file.read += value.length;
      file.wire = length && encoded ? length : (length || decoded);
      file.loaded = Math.min(file.wire, Math.round((file.read / decoded) * file.wire));
      reportDownload();
      controller.enqueue(value);
    },
    cancel(reason) { reader.cancel(reason); },
  });
  return new Response(stream, { status: response.status, statusText: response.statusText, headers: response.headers });
}

function reportDownload(final = false) {
  if (!download.active) return;
  let loaded = 0;
  let total = 0;
  for (const f of download.files.values()) {
    loaded += f.loaded;
    total += f.wire || f.size;
  }
  const now = performance.now();
  if (!final && now - download.reported < 100 && loaded < total) return;
  download.reported = now;
  const mb = (n) => (n / 1e6).toFixed(1);
  post({ type: "progress", text: `Downloading Python: ${mb(loaded)} of ${mb(total)} MB`, loaded, total });
}

/** Fetch the boot's large files that this worker does not read itself, for the count (and the cache). */
function prefetchBootFiles(own) {
  for (const [url, file] of download.files) {
    if (own.has(url)) continue;
    fetch(url).then((response) => counted(url, response).arrayBuffer()).catch(() => { file.loaded = file.wire || file.size; });
  }
}

// The page sends "go" once its own files are in (its modules, fonts and problem manifest, which
// index.html preloads): on a slow first visit the runtime's downloads would otherwise share the
// line with them. A kept image needs no download, so that boot does not wait.
let go = null;
const goSignal = new Promise((resolve) => { go = resolve; });
setTimeout(() => go(), 4000); // never wait long for a page that does not say it

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
  if (msg.snapshot) post({ type: "progress", text: N_("Reading the kept memory image…") });
  const kept = msg.snapshot ? await keptImage(msg.snapshot.sha256, msg.snapshot.imageSize) : null; // (a Uint8Array or null)
  if (!kept) {
    await goSignal;
    for (const f of msg.bootFiles || []) {
      download.files.set(new URL(f.url, self.location.href).href,
                         { size: f.size, decodedSize: f.decodedSize || 0, read: 0, loaded: 0, wire: 0 });
    }
    download.active = download.files.size > 0;
    if (download.active) {
      reportDownload(true);
      const own = new Set(msg.snapshot ? [new URL(msg.snapshot.url, self.location.href).href,
                                          new URL("pyodide.asm.wasm", msg.indexURL).href] : []);
      prefetchBootFiles(own);
    }
  }
  if (msg.snapshot) {
    const bytes = lazy(msg.snapshot.url);
    // the wasm's data segment completes the image (see js/boot.mjs); Pyodide's own request for
    // the file comes after this one has finished, from the HTTP cache
    const wasm = msg.snapshot.dataOffset == null ? null : lazy(new URL("pyodide.asm.wasm", msg.indexURL).href);
    if (!kept) {
      bytes().catch(() => {});
      wasm?.().catch(() => {});
    }
    // On a first visit the standard library downloads once Python is restored (only a run importing
    // a module the image lacks waits for it: js/boot.mjs). With a kept image (a repeat visit, the
    // spare, the engine after a run) it is in the browser's caches: the restore reads it, as
    // before, and nothing downloads beside a run in progress.
    const stdlib = msg.snapshot.stdLibURL && !kept ? new URL(msg.snapshot.stdLibURL, self.location.href).href : null;
    snapshot = {
      ...msg.snapshot, bytes, wasm, image: kept,
      lateStdlib: stdlib ? { load: () => fetchBytes(stdlib) } : null,
      // kept right after the boot, before any run: a run that arrives meanwhile waits for it (a few
      // tens of milliseconds) before its clock starts; a paused spare keeps it once resumed
      onImage: (image) => {
        keeping = new Promise((resolve) => setTimeout(resolve, 0))
          .then(() => (paused ? idle() : null))
          .then(() => keepImage(msg.snapshot.sha256, image))
          .finally(() => { keeping = null; });
      },
      onKeptImageFailed: () => { forgetImages().catch(() => {}); },
    };
  }
  const { loadPyodide } = await import(new URL("pyodide.mjs", msg.indexURL).href);
  const started = bootJudge({
    loadPyodide, indexURL: msg.indexURL, packages: msg.packages, lockFileURL: msg.lockFileURL,
    stdLibURL: msg.stdLibURL, judgeZip, judgePyc, snapshot, interruptBuffer: msg.interruptBuffer || null,
    progress: (text) => { if (!download.active) post({ type: "progress", text }); },
    gate: () => (paused ? idle() : null),
    output: (stream, line) => { if (stream === "stderr" && /^judge:/.test(line)) console.warn(line); },
  });
  engine = await started;
  if (download.active) {
    reportDownload(true);
    download.active = false;
  }
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
    const handle = await syncHandle(file);
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

// A worker of the page being reloaded (or an engine reading the file) may hold the file's lock for a
// moment, longer on a busy machine (a reloaded page's workers end late): try again for up to 2 s
// before booting without the kept image (or not keeping it).
async function syncHandle(file) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await file.createSyncAccessHandle();
    } catch (err) {
      if (attempt >= 20 || !err || err.name !== "NoModificationAllowedError") throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

async function keepImage(sha256, image) {
  let kept = false;
  let handle = null;
  try {
    const folder = await imageFolder();
    if (!folder) return;
    for await (const name of folder.keys()) {
      if (name !== `${sha256}.img`) await folder.removeEntry(name).catch(() => {});
    }
    const file = await folder.getFileHandle(`${sha256}.img`, { create: true });
    // kept already (by the other engine, which booted first): no lock taken, so the next boot (the
    // spare, a reload) never waits for this one to let go of the file
    const existing = await file.getFile().catch(() => null);
    if (existing && existing.size === image.length) {
      kept = true;
      return;
    }
    handle = await syncHandle(file);
    if (handle.getSize() !== image.length) {
      handle.truncate(0);
      if (handle.write(image, { at: 0 }) !== image.length) {
        handle.truncate(0);
        return;
      }
      handle.flush();
    } // else kept already (by the other engine)
    kept = true;
  } catch (err) {
    // kept in memory for this boot only
  } finally {
    try {
      handle?.close();
    } catch (err) {
      // closed already
    }
    // after the handle is closed: the page starts the spare engine, which reads the file, on this
    post({ type: "image-kept", kept });
  }
}

async function forgetImages() {
  const root = await navigator.storage.getDirectory();
  await root.removeEntry(IMAGE_DIR, { recursive: true });
}

let numpyWanted = false;
let numpyQueued = false;

/** numpy loads once the page asks (a problem that needs it is open), never for problems without it. */
function loadNumpyInBackground() {
  numpyWanted = true;
  if (!engine || engine.numpyLoaded || engine.numpy || numpyQueued) return;
  numpyQueued = true;
  idle().then(() => {
    if (!engine.numpy) post({ type: "numpy", state: "loading" }); // (else a run that needed it started it)
    return engine.loadNumpy();
  }).then(
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

// Try it: the learner's module imported fresh (support modules beside it, as in a practice folder)
// and one of its functions called with the literal arguments typed in the page. Runs like a run:
// the page's time limit and Stop apply, and the engine is replaced afterwards.
const TRY_PY = `
def _judge_try(folder, entry, source, call):
    import ast, contextlib, importlib.util, io, json, os, sys, tempfile, traceback
    out, err = io.StringIO(), io.StringIO()
    result = {"ok": False, "value": None, "type": None, "stdout": "", "stderr": "", "error": None, "frames": []}
    work = tempfile.mkdtemp(prefix="try-")
    path = os.path.join(work, entry)
    name = entry[:-3]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(source)
    support = os.path.join(folder, "support")
    sys.path[:0] = [work] + ([support] if os.path.isdir(support) else [])
    def refuse(code, detail=""):
        # why, by its code: the page words it in its language (TRY_REFUSALS in js/app.js)
        result["error"] = f"Cannot call that ({code}) {detail}".strip()
        result["refused"] = {"code": code, "detail": detail}
        return json.dumps(result)
    try:
        node = ast.parse(call.strip(), mode="eval").body
    except (SyntaxError, ValueError) as exc:  # ValueError: a null byte
        return refuse("syntax", str(exc.msg if isinstance(exc, SyntaxError) else exc))
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return refuse("not_a_call")
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return refuse("starred")
    try:
        args = [ast.literal_eval(a) for a in node.args]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
    except (ValueError, TypeError, RecursionError):
        return refuse("not_literal")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            sys.modules.pop(name, None)
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            function = getattr(module, node.func.id, None)
            if not callable(function):
                raise NameError(f"{entry} has no function {node.func.id}()")
            value = function(*args, **kwargs)
        text = repr(value)
        result.update(ok=True, value=text if len(text) <= 20000 else text[:20000] + " ...", type=type(value).__name__)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        result["error"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        result["frames"] = [{"line": f.lineno, "function": f.name, "code": f.line or ""}
                            for f in traceback.extract_tb(exc.__traceback__) if f.filename == path][-5:]
    result["stdout"] = out.getvalue()[-8192:]
    result["stderr"] = err.getvalue()[-8192:]
    return json.dumps(result)
`;

function tryCall(dir, entry, source, call) {
  const py = engine.pyodide;
  if (!py.globals.has("_judge_try")) py.runPython(TRY_PY);
  const fn = py.globals.get("_judge_try");
  try {
    return fn(dir, entry, source, call);
  } finally {
    fn.destroy();
  }
}

// The console: the learner's file run in a fresh namespace (a module of its own, in a folder of its
// own with the problem's support modules beside it, as a run's learner side has), then what the
// learner types evaluated there: the last statement's value shown (its repr) when it is an
// expression. Every execution of learner code is confined by the run's guard (judge.sandbox.guard:
// no writes outside that folder, no processes), in that folder as the working directory. The
// namespace lives as long as this worker: the page keeps the worker for the console's next input
// while the file is unchanged, and it never judges anything (runs get engines of their own).
const CONSOLE_PY = `
def _judge_console(folder, entry, source, text, fresh):
    import ast, contextlib, io, json, linecache, os, shutil, sys, tempfile, traceback, types
    from judge.sandbox import guard
    global _judge_console_state
    cap = 65536
    out = []
    size = [0]
    class Stream(io.TextIOBase):
        def __init__(self, name):
            self.name = name
        def writable(self):
            return True
        def write(self, s):
            s = str(s)
            if size[0] < cap:
                piece = s[: cap - size[0]]
                size[0] += len(piece)
                if out and out[-1][0] == self.name:
                    out[-1][1] += piece
                else:
                    out.append([self.name, piece])
            return len(s)
    answer = {"ok": True, "output": out, "value": None, "type": None, "error": None, "frames": [], "fresh": bool(fresh)}
    def failed(exc, files):
        answer["ok"] = False
        answer["error"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        answer["frames"] = [{"file": "console" if f.filename.startswith("<console") else os.path.basename(f.filename),
                             "line": f.lineno, "function": f.name, "code": f.line or ""}
                            for f in traceback.extract_tb(exc.__traceback__) if f.filename in files][-8:]
    state = globals().get("_judge_console_state")
    if fresh or state is None:
        work = tempfile.mkdtemp(prefix="console-")
        support = os.path.join(folder, "support")
        if os.path.isdir(support):
            for name in sorted(os.listdir(support)):
                if name.endswith(".py"):
                    shutil.copyfile(os.path.join(support, name), os.path.join(work, name))
        path = os.path.join(work, entry)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(source)
        name = entry[:-3]
        sys.path.insert(0, work)
        for gone in [m for m in sys.modules if m == name]:
            del sys.modules[gone]
        module = types.ModuleType(name)
        module.__file__ = path
        sys.modules[name] = module
        state = _judge_console_state = {"work": work, "path": path, "module": module, "count": 0, "cwd": work}
        try:
            code = compile(source, path, "exec")
            with contextlib.redirect_stdout(Stream("stdout")), contextlib.redirect_stderr(Stream("stderr")):
                with guard.confined(work):
                    os.chdir(state["cwd"])
                    try:
                        exec(code, module.__dict__)
                    finally:
                        state["cwd"] = os.getcwd()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            failed(exc, {path})
            answer["file_error"] = True
            return json.dumps(answer)
    if not text.strip():
        return json.dumps(answer)
    state["count"] += 1
    where = f"<console-{state['count']}>"
    linecache.cache[where] = (len(text), None, text.splitlines(True), where)
    namespace = state["module"].__dict__
    try:
        tree = ast.parse(text, where, "exec")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        body = compile(tree, where, "exec")
        tail = compile(ast.Expression(last.value), where, "eval") if last is not None else None
        with contextlib.redirect_stdout(Stream("stdout")), contextlib.redirect_stderr(Stream("stderr")):
            with guard.confined(state["work"]):
                os.chdir(state["cwd"])
                try:
                    exec(body, namespace)
                    value = eval(tail, namespace) if tail is not None else None
                finally:
                    state["cwd"] = os.getcwd()
        if tail is not None and value is not None:
            namespace["_"] = value
            shown = repr(value)
            answer.update(value=shown if len(shown) <= 20000 else shown[:20000] + " ...", type=type(value).__name__)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        failed(exc, {state["path"], where})
        if isinstance(exc, SyntaxError) and exc.filename == where and exc.text is not None:
            answer["error"] = "".join(traceback.format_exception_only(type(exc), exc)).rstrip()
    return json.dumps(answer)
`;

function consoleInput(dir, entry, source, text, fresh) {
  const py = engine.pyodide;
  if (!py.globals.has("_judge_console")) py.runPython(CONSOLE_PY);
  const fn = py.globals.get("_judge_console");
  try {
    return fn(dir, entry, source, text, Boolean(fresh));
  } finally {
    fn.destroy();
  }
}

async function run(msg) {
  running = true;
  ranCode = true;
  try {
    await runOne(msg);
  } finally {
    running = false;
    wake();
  }
}

async function runOne({ runId, problem, source, micropip, mode, call, input, fresh, lang, stdlibFirst }) {
  try {
    problem = withFiles(problem);
    if (problem.wheels && problem.wheels.length) {
      post({ type: "progress", text: N_("Installing {packages}…"), values: { packages: problem.packages.join(", ") } });
      const url = (path) => new URL(path, self.location.href).href;
      await engine.installWheels(problem.wheels.map(url), micropip ? url(micropip) : null);
    }
    const wait = (text, what) => post({ type: "waiting", runId, text, what });
    const typed = mode === "console" ? `${source}\n${input || ""}` : source; // numpy typed in the console waits too
    await engine.whenReady(problem.files, typed, wait, Boolean(stdlibFirst));
    const dir = engine.writeProblem(problem.id, problem.files);
    if (keeping) await keeping; // not beside the run's code: its clock starts after this
    post({ type: "started", runId });
    const started = performance.now();
    if (mode === "try" || mode === "console") engine.clearInterrupt();
    let json;
    let interrupted = false;
    if (mode === "try") json = tryCall(dir, problem.entry, source, call);
    else if (mode === "console") json = consoleInput(dir, problem.entry, source, input || "", fresh);
    else ({ json, interrupted } = engine.run(dir, source, false, lang || null));
    if (!interrupted && engine.missedStdlib()) {
      // an import the files do not show needed the standard library before it was in: the page
      // makes the run again in the next engine, which waits for it first (stdlibFirst)
      wait(STDLIB_WAIT, "stdlib");
      post({ type: "done", runId, json: null, interrupted: false, again: true });
      return;
    }
    // The page knows whether it asked for the interrupt; it decides what the verdict is.
    post({ type: "done", runId, json, interrupted, ms: performance.now() - started });
  } catch (err) {
    if (isKeyboardInterrupt(err)) post({ type: "done", runId, json: null, interrupted: true });
    else post({ type: "engine-error", runId, message: String(err && err.message || err) });
  }
}

async function bare({ runId, problem, source }) {
  ranCode = true;
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

let preparing = false;
let prepareAsked = false;
let toAdopt = null; // another engine's compiled code, adopted as the first step of preparing

function prepareProblems({ problems, compiled }) {
  if (!engine) return;
  prepareAsked = true;
  toAdopt = compiled || null;
  // a problem that imports numpy is prepared once numpy is there (it loads only when asked for)
  const all = problems.map(withFiles);
  const later = all.filter((p) => !engine.numpyLoaded && engine.needsNumpy(p.files, ""));
  // one that imports a standard module the engine has yet to get, once the standard library is in
  const afterStdlib = all.filter((p) => !later.includes(p) && engine.needsStdlib(p.files, ""));
  toPrepare = all.filter((p) => !later.includes(p) && !afterStdlib.includes(p));
  const queue = (problems) => () => {
    toPrepare.push(...problems);
    if (!preparing) startPreparing();
  };
  if (later.length) {
    const watch = () => (engine.numpy ? engine.numpy.then(queue(later), () => {}) : setTimeout(watch, 500));
    watch();
  }
  if (afterStdlib.length) engine.waitForStdlib().then(queue(afterStdlib), () => {});
  startPreparing();
}

function startPreparing() {
  preparing = true;
  const next = () => {
    if (paused) {
      preparing = false; // "resume" starts again
      return;
    }
    if (toAdopt) {
      try {
        post({ type: "adopted", entries: engine.adoptCompiled(toAdopt) });
      } catch (err) {
        // this engine compiles for itself
      }
      toAdopt = null;
      setTimeout(next, 0);
      return;
    }
    const problem = toPrepare.shift();
    if (!problem) {
      preparing = false;
      post({ type: "prepared" });
      offerCompiled();
      return;
    }
    try {
      engine.prepareProblem(problem.id, problem.files);
    } catch (err) {
      // a problem that cannot be prepared is loaded by its first run, which reports what is wrong
    }
    setTimeout(next, 0);
  };
  setTimeout(next, 0);
}

/** This engine's compiled code for the page's next engines, unless learner code has run here (a run
 * could have changed what this engine compiles: the next engines must not inherit that). */
function offerCompiled() {
  if (ranCode || !engine) return;
  try {
    const data = engine.exportCompiled();
    self.postMessage({ type: "compiled", data }, [data.buffer]);
  } catch (err) {
    // the next engines compile for themselves
  }
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
    if (numpyWanted) loadNumpyInBackground();
  } else if (msg.type === "go") {
    go();
  } else if (msg.type === "numpy") {
    loadNumpyInBackground();
  } else if (msg.type === "run") {
    await run(msg);
  } else if (msg.type === "bare") {
    await bare(msg);
  } else if (msg.type === "prepare") {
    prepareProblems(msg);
  } else if (msg.type === "pause") {
    paused = true;
  } else if (msg.type === "resume") {
    paused = false;
    wake();
    if (!preparing && prepareAsked && engine) startPreparing();
  }
};
