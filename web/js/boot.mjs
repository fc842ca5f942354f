// Pyodide's set-up for judging, once for every host: the page's Web Worker (../worker.js) and the
// Node.js harness behind `judge check --pyodide` and the parity tests (judge/engines/pyodide_harness/).
//
// bootJudge() loads Pyodide with the site's files (the distribution, or its bytecode-compiled
// twins through lockFileURL and stdLibURL), checks the packages really loaded, unpacks the judge
// package and its compiled bytecode, imports numpy, pytest and the runner, does one warm-up run,
// freezes the garbage collector's view of all that, and connects the interrupt buffer. The Python
// half is judge/engines/pyodide_boot.py. A host only provides the loader and the bytes: fetch()
// in the browser, the file system under Node.js.

export const PROBLEMS_ROOT = "/home/pyodide/problems";

/**
 * Boot Pyodide for judging; resolves with a JudgeEngine.
 *
 * options: {loadPyodide, indexURL, packages, lockFileURL?, stdLibURL?,
 *           judgeZip, judgePyc?      Uint8Array, or a promise of one (judgePyc may be null)
 *           interruptBuffer?        Int32Array over shared memory: 2 (SIGINT) there interrupts Python
 *           progress?(text)         what the boot is doing, for a status line
 *           output?(stream, line)}  Pyodide's own stdout/stderr (pytest captures the tests' output)
 */
export async function bootJudge(options) {
  const clock = new Clock();
  const progress = options.progress || (() => {});
  progress("Loading Python…");
  const py = await options.loadPyodide(pyodideOptions(options));
  clock.mark("loadPyodide");
  const missing = options.packages.filter((name) => !(name in py.loadedPackages));
  // Pyodide's loader only logs a package that failed to download: fail loudly instead
  if (missing.length) throw new Error(`could not load the Python packages ${missing.join(", ")}`);
  py.setStdin({ error: true }); // without it pytest's capture ends the interpreter in a worker
  await installJudge(py, options.judgeZip, options.judgePyc);
  clock.mark("installJudge");
  progress("Importing numpy and pytest…");
  py.runPython("import importlib; importlib.invalidate_caches()");
  const boot = py.pyimport("judge.engines.pyodide_boot");
  boot.prepare(PROBLEMS_ROOT);
  clock.mark("imports");
  progress("Warming up the test runner…");
  boot.warm_up(PROBLEMS_ROOT);
  boot.freeze();
  clock.mark("warmup");
  if (options.interruptBuffer) py.setInterruptBuffer(options.interruptBuffer);
  return new JudgeEngine(py, boot, options.interruptBuffer || null, clock.timings());
}

function pyodideOptions({ indexURL, packages, lockFileURL, stdLibURL, output }) {
  const print = (stream) => (line) => { if (output) output(stream, line); };
  const options = { indexURL, packages, stdout: print("stdout"), stderr: print("stderr") };
  if (lockFileURL) options.lockFileURL = lockFileURL;
  if (stdLibURL) options.stdLibURL = stdLibURL;
  return options;
}

async function installJudge(py, judgeZip, judgePyc) {
  const sitePackages = py.runPython("import site; site.getsitepackages()[0]");
  py.unpackArchive(await judgeZip, "zip", { extractDir: sitePackages });
  // its __pycache__/*.pyc (unchecked hash-based, made by this Pyodide at build time)
  if (judgePyc) py.unpackArchive(await judgePyc, "zip", { extractDir: sitePackages });
}

/** A booted Pyodide that judges: write a problem folder, run code against it. */
export class JudgeEngine {
  constructor(py, boot, interruptBuffer, timings) {
    this.pyodide = py;
    this.boot = boot;
    this.interruptBuffer = interruptBuffer;
    this.timings = timings; // milliseconds per boot step, and total
    this.installedWheels = new Set();
  }

  /** Write a problem folder; files: [{path, text} | {path, base64} | {path, bytes}]. Returns its path. */
  writeProblem(id, files) {
    const FS = this.pyodide.FS;
    const dir = `${PROBLEMS_ROOT}/${id}`;
    this.removeProblem(dir);
    for (const file of files) {
      const target = `${dir}/${file.path}`;
      FS.mkdirTree(target.slice(0, target.lastIndexOf("/")));
      FS.writeFile(target, fileData(file), file.text !== undefined ? { encoding: "utf8" } : undefined);
    }
    return dir;
  }

  removeProblem(dir) {
    removeTree(this.pyodide.FS, dir);
  }

  /** No interrupt from an earlier run may hit the next one. */
  clearInterrupt() {
    if (this.interruptBuffer) Atomics.store(this.interruptBuffer, 0, 0);
  }

  /**
   * Judge `source` against the problem folder `dir`: {json, interrupted}. json is the Result JSON
   * text (null when an interrupt escaped the runner: interrupted is then true). Any other error
   * escaping Python is thrown: the interpreter is then in doubt and the host replaces it.
   */
  run(dir, source, includeSecret = false) {
    try {
      const json = this.boot.run(dir, source, includeSecret);
      return json === undefined || json === null ? { json: null, interrupted: true } : { json, interrupted: false };
    } catch (err) {
      if (isKeyboardInterrupt(err)) return { json: null, interrupted: true };
      throw err;
    }
  }

  /** Install a problem's extra pure-Python wheels (absolute URLs) with micropip, once each. */
  async installWheels(wheelURLs, micropipURL) {
    const wanted = wheelURLs.filter((url) => !this.installedWheels.has(url));
    if (!wanted.length) return;
    if (!micropipURL) throw new Error("this site ships no micropip, so extra packages cannot be installed");
    const py = this.pyodide;
    await py.loadPackage(["packaging", micropipURL]);
    const micropip = py.pyimport("micropip");
    await micropip.install.callKwargs(py.toPy(wanted), { deps: false });
    micropip.destroy?.();
    py.runPython("import importlib; importlib.invalidate_caches()");
    for (const url of wanted) this.installedWheels.add(url);
  }
}

function fileData(file) {
  if (file.text !== undefined) return file.text;
  if (file.bytes !== undefined) return file.bytes;
  return Uint8Array.from(atob(file.base64), (c) => c.charCodeAt(0));
}

function removeTree(FS, path) {
  if (!FS.analyzePath(path).exists) return;
  for (const name of FS.readdir(path)) {
    if (name === "." || name === "..") continue;
    const child = `${path}/${name}`;
    if (FS.isDir(FS.stat(child).mode)) removeTree(FS, child);
    else FS.unlink(child);
  }
  FS.rmdir(path);
}

function isKeyboardInterrupt(err) {
  return Boolean(err) && (err.type === "KeyboardInterrupt" || /KeyboardInterrupt/.test(String(err.message || err)));
}

class Clock {
  constructor() {
    this.start = performance.now();
    this.last = this.start;
    this.steps = {};
  }

  mark(name) {
    const now = performance.now();
    this.steps[name] = Math.round(now - this.last);
    this.last = now;
  }

  timings() {
    return { ...this.steps, total: Math.round(this.last - this.start) };
  }
}
