// Pyodide's set-up for judging, once for every host: the page's Web Worker (../worker.js) and the
// Node.js harness behind `judge check --pyodide` and the parity tests (judge/engines/pyodide_harness/).
//
// bootJudge() starts an interpreter ready to judge, one of two ways:
// - from the site's memory snapshot (made by `judge build` with makeJudgeSnapshot() below, under
//   Node.js): the image is checked against its sha256, decompressed and restored; pytest and the
//   judge are then already imported and warmed up. numpy is not in the image (its shared libraries
//   do not survive a snapshot): engine.loadNumpy() loads it afterwards, in the background, and a
//   run that needs it waits for it (engine.needsNumpy, engine.whenReady). The host may bring the
//   standard library after the restore (snapshot.lateStdlib): the image holds every module the
//   judge's runs import, so only a run importing another standard module waits for it.
// - plain, when the site has no snapshot or restoring fails (a browser without
//   DecompressionStream, a changed or corrupt file...): Pyodide with the site's files (the
//   distribution, or its bytecode-compiled twins through lockFileURL and stdLibURL), a check that
//   the packages really loaded, the judge package and its bytecode unpacked, numpy, pytest and the
//   runner imported, one warm-up run, the garbage collector's view of all that frozen.
// Either way the interrupt buffer is connected. The Python half is judge/engines/pyodide_boot.py.
// A host only provides the loader and the bytes: fetch() in the browser, the file system under
// Node.js.

export const PROBLEMS_ROOT = "/home/pyodide/problems";
const N_ = (message) => message; // marks a progress message the page shows translated (js/i18n.js)
/** What a run that waits for the standard library says (see JudgeEngine.whenReady). */
export const STDLIB_WAIT = N_("Waiting for Python's standard library to finish loading…");

/**
 * Boot Pyodide for judging; resolves with a JudgeEngine.
 *
 * options: {loadPyodide, indexURL, packages, lockFileURL?, stdLibURL?,
 *           judgeZip, judgePyc?      Uint8Array, a promise of one, or a function giving either
 *                                    (only the plain boot reads them; judgePyc may be null)
 *           snapshot?               {bytes, sha256, imageSha256?, wasm?, dataOffset?, gunzip?, image?,
 *                                    onImage?, onKeptImageFailed?, lateStdlib?}: the site's memory snapshot as
 *                                   shipped (gzip; bytes as judgeZip) and, when it was stored as a
 *                                   difference to pyodide.asm.wasm's data segment (dataOffset not
 *                                   null), that wasm file's bytes (as judgeZip); gunzip(bytes)
 *                                   replaces DecompressionStream. image: a complete image the host
 *                                   kept (a promise of a Uint8Array), tried first, unchecked;
 *                                   onImage(image) gets the image after a restore from the site's
 *                                   file, onKeptImageFailed(error) says the kept one failed.
 *                                   lateStdlib: {load() -> a promise of the standard library's
 *                                   bytes}, called once restored: the engine is ready without it
 *           interruptBuffer?        Int32Array over shared memory: 2 (SIGINT) there interrupts Python
 *           progress?(text)         what the boot is doing, for a status line
 *           output?(stream, line)  Pyodide's own stdout/stderr (pytest captures the tests' output)
 *           gate?()}                 awaited between the boot's steps: the browser's spare engine
 *                                    waits there while a run is in progress in another engine
 * engine.mode is "snapshot" or "plain"; engine.snapshotError says why a snapshot was not restored.
 */
export async function bootJudge(options) {
  let snapshotError = null;
  const output = options.output || (() => {});
  const snapshot = options.snapshot;
  if (snapshot && snapshot.image) {
    // a complete image the host kept from an earlier restore: no download, check or decompression
    try {
      const engine = await restoreJudge(options, new Clock(), value(snapshot.image));
      engine.imageSource = "kept";
      return engine;
    } catch (err) {
      output("stderr", `judge: the kept memory image could not be restored (${describe(err)}); using the site's`);
      if (snapshot.onKeptImageFailed) snapshot.onKeptImageFailed(err);
    }
  }
  if (snapshot) {
    const clock = new Clock();
    const image = snapshotImage(snapshot, clock);
    try {
      const engine = await restoreJudge(options, clock, image);
      engine.imageSource = "site";
      if (snapshot.onImage) snapshot.onImage(await image); // the host may keep it for the next boot
      return engine;
    } catch (err) {
      snapshotError = describe(err);
      output("stderr", `judge: the memory snapshot could not be restored (${snapshotError}); starting Python the plain way`);
    }
  }
  const engine = await bootPlain(options);
  engine.snapshotError = snapshotError;
  return engine;
}

function describe(err) {
  return String((err && err.message) || err);
}

async function bootPlain(options) {
  const clock = new Clock();
  const progress = options.progress || (() => {});
  const gate = options.gate || (() => null);
  await gate();
  progress(N_("Loading Python…"));
  const py = await options.loadPyodide(pyodideOptions(options, options.packages));
  clock.mark("loadPyodide");
  const missing = options.packages.filter((name) => !(name in py.loadedPackages));
  // Pyodide's loader only logs a package that failed to download: fail loudly instead
  if (missing.length) throw new Error(`could not load the Python packages ${missing.join(", ")}`);
  py.setStdin({ error: true }); // without it pytest's capture ends the interpreter in a worker
  await installJudge(py, value(options.judgeZip), value(options.judgePyc));
  clock.mark("installJudge");
  await gate();
  progress(N_("Importing numpy and pytest…"));
  py.runPython("import importlib; importlib.invalidate_caches()");
  const boot = py.pyimport("judge.engines.pyodide_boot");
  boot.prepare(PROBLEMS_ROOT);
  clock.mark("imports");
  progress(N_("Warming up the test runner…"));
  boot.warm_up(PROBLEMS_ROOT);
  boot.freeze();
  clock.mark("warmup");
  if (options.interruptBuffer) py.setInterruptBuffer(options.interruptBuffer);
  const engine = new JudgeEngine(py, boot, options.interruptBuffer || null, clock.timings(), "plain");
  engine.numpy = Promise.resolve(); // loaded at boot
  engine.numpyLoaded = true;
  return engine;
}

async function restoreJudge(options, clock, image) {
  // loadPyodide awaits it and its failure is reported there; handled now, before the gate below may
  // wait (a paused spare): a check that fails meanwhile would otherwise be an unhandled rejection
  Promise.resolve(image).catch(() => {});
  const progress = options.progress || (() => {});
  const gate = options.gate || (() => null);
  await gate();
  progress(N_("Restoring Python from its memory image…"));
  // the standard library the image was made with (the plain one: judge/engines/pyodide_snapshot.py's
  // STDLIB), or, when the host brings it after the restore, an empty zip in its place meanwhile
  const late = options.snapshot.lateStdlib || null;
  const stdLibURL = late ? EMPTY_ZIP_URL : options.snapshot.stdLibURL || options.stdLibURL;
  const py = await options.loadPyodide({ ...pyodideOptions({ ...options, stdLibURL }, []), _loadSnapshot: image });
  clock.mark("restore");
  await gate();
  progress(N_("Writing its files back…"));
  const boot = py.pyimport("judge.engines.pyodide_boot");
  writeSiteFiles(py, boot);
  boot.after_restore(PROBLEMS_ROOT, Boolean(late));
  py.setStdin({ error: true }); // without it pytest's capture ends the interpreter in a worker
  clock.mark("afterRestore");
  if (options.interruptBuffer) py.setInterruptBuffer(options.interruptBuffer);
  const engine = new JudgeEngine(py, boot, options.interruptBuffer || null, clock.timings(), "snapshot");
  if (late) engine.bringStdlib(late);
  return engine;
}

// An empty zip (its end-of-directory record alone): what Pyodide writes as the standard library
// while the host downloads the real one (judge/engines/late_stdlib.py).
const EMPTY_ZIP_URL = "data:application/zip;base64,UEsFBgAAAAAAAAAAAAAAAAAAAAAAAA==";

/** Write back the files the snapshot kept in memory (a memory snapshot holds no file system). */
function writeSiteFiles(py, boot) {
  const files = boot.site_files();
  const [blob, index] = [files.get(0), files.get(1)];
  const paths = index.toJs();
  const buffer = blob.getBuffer("u8");
  try {
    const made = new Set();
    for (const [path, start, end] of paths) {
      const dir = path.slice(0, path.lastIndexOf("/"));
      if (!made.has(dir)) {
        py.FS.mkdirTree(dir);
        made.add(dir);
      }
      py.FS.writeFile(path, buffer.data.subarray(start, end));
    }
  } finally {
    buffer.release();
    for (const proxy of [blob, index, files]) proxy.destroy();
  }
}

/** The snapshot's memory image: checked, decompressed, and completed with the wasm's data segment. */
async function snapshotImage(snapshot, clock) {
  const gunzip = snapshot.gunzip || decompressGzip;
  const [packed, wasm] = await Promise.all([value(snapshot.bytes), snapshot.dataOffset == null ? null : value(snapshot.wasm)]);
  clock.mark("fetchSnapshot");
  let image;
  if (packed[0] === 0x1f && packed[1] === 0x8b) {
    await checkSha256(packed, snapshot.sha256, "the memory snapshot");
    image = await gunzip(packed);
  } else if (snapshot.imageSha256) { // a host that sent it with Content-Encoding: gzip (fetch decompressed it)
    await checkSha256(packed, snapshot.imageSha256, "the memory snapshot (decompressed)");
    image = packed;
  } else {
    throw new Error("the memory snapshot is not gzip data");
  }
  if (snapshot.dataOffset != null) {
    if (!wasm) throw new Error("the memory snapshot needs pyodide.asm.wasm's bytes");
    xorDataSegment(image, wasm, snapshot.dataOffset);
  }
  clock.mark("unpackSnapshot");
  return image;
}

async function decompressGzip(bytes) {
  if (typeof DecompressionStream === "undefined") throw new Error("this browser has no DecompressionStream");
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

async function checkSha256(bytes, expected, what) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const hex = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  if (hex !== expected) throw new Error(`${what} has sha256 ${hex}, the site expects ${expected}`);
}

/** The bytes of the one active data segment of a WebAssembly module (the initial memory's content). */
export function wasmDataSegment(wasm) {
  const leb = (pos) => {
    let result = 0;
    let shift = 0;
    let byte;
    do {
      byte = wasm[pos++];
      result += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return [result, pos];
  };
  let pos = 8;
  while (pos < wasm.length) {
    const id = wasm[pos++];
    let size;
    [size, pos] = leb(pos);
    if (id === 11) {
      let count;
      let flags;
      [count, pos] = leb(pos);
      [flags, pos] = leb(pos);
      // one segment, active, placed by a constant expression of one instruction (i32.const / global.get)
      if (count !== 1 || flags !== 0) throw new Error("unexpected data section in pyodide.asm.wasm");
      pos += 1;
      [, pos] = leb(pos);
      if (wasm[pos++] !== 0x0b) throw new Error("unexpected data segment offset in pyodide.asm.wasm");
      let length;
      [length, pos] = leb(pos);
      return wasm.subarray(pos, pos + length);
    }
    pos += size;
  }
  throw new Error("pyodide.asm.wasm has no data section");
}

/**
 * XOR the wasm's data segment into image at offset (in place). The build stores the snapshot that
 * way: the data segment is most of the interpreter's static memory and barely changes, so the
 * stored image is mostly zeros there and compresses better; XOR again restores it.
 */
export function xorDataSegment(image, wasm, offset) {
  const data = wasmDataSegment(wasm);
  if (offset + data.length > image.length) throw new Error("the memory snapshot is shorter than its data segment");
  for (let i = 0; i < data.length; i++) image[offset + i] ^= data[i];
}

/**
 * Make the memory snapshot a site ships (judge build runs this under Node.js).
 *
 * options: {loadPyodide, indexURL, lockFileURL?, stdLibURL?, archives: [Uint8Array] (zips unpacked
 *           into site-packages: the wheels of pytest and its dependencies, the judge and its
 *           bytecode), wasm?: Uint8Array (pyodide.asm.wasm), output?}
 * Resolves with {image, dataOffset}: the image as loadPyodide({_loadSnapshot}) takes it, except that
 * when dataOffset is not null the wasm's data segment is XORed into it there (see xorDataSegment).
 */
export async function makeJudgeSnapshot(options) {
  const print = (stream) => (line) => { if (options.output) options.output(stream, line); };
  const py = await options.loadPyodide({
    indexURL: options.indexURL, ...(options.lockFileURL ? { lockFileURL: options.lockFileURL } : {}),
    ...(options.stdLibURL ? { stdLibURL: options.stdLibURL } : {}), packages: [], _makeSnapshot: true,
    stdout: print("stdout"), stderr: print("stderr"),
  });
  // unpacked by Python's zipfile (pyodide.unpackArchive and loadPackage leave JavaScript objects
  // behind that a snapshot cannot hold)
  for (const archive of options.archives) {
    py.FS.writeFile("/tmp/archive.zip", archive);
    py.runPython("import site, zipfile\nwith zipfile.ZipFile('/tmp/archive.zip') as z: z.extractall(site.getsitepackages()[0])");
    py.FS.unlink("/tmp/archive.zip");
  }
  const boot = py.pyimport("judge.engines.pyodide_boot");
  boot.prepare_snapshot(PROBLEMS_ROOT);
  boot.destroy();
  zeroFreeMemory(py._module);
  const image = py.makeMemorySnapshot();
  let dataOffset = null;
  if (options.wasm) {
    const data = wasmDataSegment(options.wasm);
    const heapStart = new Uint32Array(image.buffer, image.byteOffset, 4)[1];
    // where the runtime put the segment (Emscripten's GLOBAL_BASE): the offset where it matches
    for (const base of [1024, 0, 2048, 4096]) {
      const at = heapStart + base;
      let same = 0;
      for (let i = 0; i < data.length; i += 61) if (image[at + i] === data[i]) same += 1;
      if (same > 0.8 * Math.ceil(data.length / 61)) {
        xorDataSegment(image, options.wasm, at);
        dataOffset = at;
        break;
      }
    }
  }
  return { image, dataOffset };
}

/**
 * Overwrite the allocator's free memory with zeros: what freed blocks still hold (files read,
 * temporary objects of the warm-up) is dead weight in the image, and zeros compress to nothing.
 * Allocates every free block it can without growing the memory (dlmalloc's footprint limit), clears
 * it and frees it again.
 */
function zeroFreeMemory(module) {
  const malloc = module.___libc_malloc;
  const free = module.___libc_free;
  if (!malloc || !free || !module._malloc_footprint || !module._malloc_set_footprint_limit) return;
  module._malloc_set_footprint_limit(module._malloc_footprint());
  const blocks = [];
  try {
    for (let size = 1 << 24; size >= 16; size >>>= 1) {
      for (let block = malloc(size); block; block = malloc(size)) {
        module.HEAPU8.fill(0, block, block + size);
        blocks.push(block);
      }
    }
  } finally {
    for (const block of blocks) free(block);
    module._malloc_set_footprint_limit(0xffffffff);
  }
}

function value(x) {
  return typeof x === "function" ? x() : x;
}

function pyodideOptions({ indexURL, lockFileURL, stdLibURL, output }, packages) {
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
  const pyc = await judgePyc;
  if (pyc) py.unpackArchive(pyc, "zip", { extractDir: sitePackages });
}

const NUMPY_IMPORT = /^[ \t]*(?:import[ \t]+numpy\b|from[ \t]+numpy\b)/m;

/** A booted Pyodide that judges: write a problem folder, run code against it. */
export class JudgeEngine {
  constructor(py, boot, interruptBuffer, timings, mode) {
    this.pyodide = py;
    this.boot = boot;
    this.interruptBuffer = interruptBuffer;
    this.timings = timings; // milliseconds per boot step, and total
    this.mode = mode; // "snapshot" | "plain"
    this.imageSource = null; // after a restore: "kept" (the host's copy) or "site" (the site's file)
    this.snapshotError = null;
    this.installedWheels = new Set();
    this.signatures = new Map(); // problem folder -> signature of the files written there
    this.numpy = null; // a promise once numpy is loading or loaded
    this.stdlib = null; // while the standard library is downloading after a restore: {load, done}
    this.lateStdlib = null; // judge.engines.late_stdlib, after such a restore
    this.numpyLoaded = false;
    this.numpyMs = null;
  }

  /**
   * After a restore without the standard library (options.snapshot.lateStdlib, {load}: load()
   * resolves with the zip's bytes): write it in when it has downloaded. Meanwhile runs that import
   * from it wait for it (whenReady), and a run that imported from it anyway is made again
   * (missedStdlib).
   */
  bringStdlib({ load }) {
    const lateStdlib = this.pyodide.pyimport("judge.engines.late_stdlib");
    const arrive = async () => {
      const bytes = await load();
      this.pyodide.FS.writeFile(lateStdlib.path(), bytes);
      lateStdlib.arrived();
      this.stdlib = null;
    };
    this.lateStdlib = lateStdlib;
    this.stdlib = { load, done: arrive() };
    this.stdlib.done.catch(() => {}); // tried again by the next wait (waitForStdlib)
  }

  /** Resolve once the standard library is in (at once unless it is downloading after a restore). */
  async waitForStdlib() {
    while (this.stdlib) {
      const pending = this.stdlib;
      try {
        await pending.done;
      } catch (err) {
        if (this.stdlib === pending) this.bringStdlib(pending); // a failed download: once more
        await this.stdlib.done; // a second failure is the caller's
      }
    }
  }

  /** Whether a run of `source` against these files imports a standard module the engine has yet to get. */
  needsStdlib(files, source) {
    if (!this.stdlib) return false;
    const texts = [source, ...files.filter((file) => file.path.endsWith(".py")).map(fileText)];
    const list = this.pyodide.toPy(texts);
    try {
      return Boolean(this.lateStdlib.needed(list));
    } finally {
      list.destroy();
    }
  }

  /** Whether the last run imported a standard module before it was in: that run must be made again. */
  missedStdlib() {
    return Boolean(this.lateStdlib) && Boolean(this.lateStdlib.missed());
  }

  /** Load numpy (after a restore from the snapshot): once, in the background; resolves when usable. */
  loadNumpy() {
    if (!this.numpy) {
      const started = performance.now();
      this.numpy = (async () => {
        const py = this.pyodide;
        let failed = null;
        await this.waitForStdlib(); // numpy imports standard modules the image lacks
        await py.loadPackage(["numpy"], { messageCallback: () => {}, errorCallback: (text) => { failed = text; } });
        if (!("numpy" in py.loadedPackages)) throw new Error(`could not load numpy${failed ? `: ${failed}` : ""}`);
        this.boot.prepare_numpy(PROBLEMS_ROOT);
        this.numpyLoaded = true;
        this.numpyMs = Math.round(performance.now() - started);
      })();
      // a failure (or a Stop that interrupted the warm-up) is retried by the next run that needs numpy
      this.numpy.catch(() => { this.numpy = null; });
    }
    return this.numpy;
  }

  /** Whether a run of `source` against these problem files imports numpy. */
  needsNumpy(files, source) {
    if (NUMPY_IMPORT.test(source)) return true;
    return files.some((file) => file.path.endsWith(".py") && NUMPY_IMPORT.test(fileText(file)));
  }

  /**
   * Resolve when a run of `source` against `files` can start: at once, or once what it needs has
   * loaded: the standard library (after a restore that went without it), numpy (onWait(text, what) is
   * called first, what "stdlib" or "numpy", so the host can say so). stdlibFirst: wait for the
   * standard library whatever the files show (a run made again after missedStdlib()).
   */
  async whenReady(files, source, onWait, stdlibFirst = false) {
    if (stdlibFirst ? this.stdlib : this.needsStdlib(files, source)) {
      if (onWait) onWait(STDLIB_WAIT, "stdlib");
      await this.waitForStdlib();
    }
    if (this.numpyLoaded || !this.needsNumpy(files, source)) return;
    if (onWait) onWait(N_("Waiting for numpy to finish loading…"), "numpy");
    await this.loadNumpy();
  }

  /**
   * Write a problem folder; files: [{path, text} | {path, base64} | {path, bytes}]. Returns its path.
   * The folder is left as it is when the same files were written there last (runs never write
   * into it: the guard confines them to their own folder).
   */
  writeProblem(id, files) {
    const FS = this.pyodide.FS;
    const dir = `${PROBLEMS_ROOT}/${id}`;
    const sig = signature(files);
    if (this.signatures.get(dir) === sig && FS.analyzePath(dir).exists) return dir;
    this.removeProblem(dir);
    for (const file of files) {
      const target = `${dir}/${file.path}`;
      FS.mkdirTree(target.slice(0, target.lastIndexOf("/")));
      FS.writeFile(target, fileData(file), file.text !== undefined ? { encoding: "utf8" } : undefined);
    }
    this.signatures.set(dir, sig);
    return dir;
  }

  removeProblem(dir) {
    this.signatures.delete(dir);
    removeTree(this.pyodide.FS, dir);
  }

  /** No interrupt from an earlier run may hit the next one. */
  clearInterrupt() {
    if (this.interruptBuffer) Atomics.store(this.interruptBuffer, 0, 0);
  }

  /**
   * Judge `source` against the problem folder `dir`: {json, interrupted}. json is the Result JSON
   * text (null when an interrupt escaped the runner: interrupted is then true). Any other error
   * escaping Python is thrown: the interpreter is then in doubt and the host replaces it. `lang`: the
   * learner's language, which the tests' messages follow (judge.lang; null: English).
   */
  run(dir, source, includeSecret = false, lang = null) {
    try {
      const json = this.boot.run(dir, source, includeSecret, this.signatures.get(dir) ?? null, lang);
      return json === undefined || json === null ? { json: null, interrupted: true } : { json, interrupted: false };
    } catch (err) {
      if (isKeyboardInterrupt(err)) return { json: null, interrupted: true };
      throw err;
    }
  }

  /** The tests' and helpers' code this engine compiled (a Uint8Array), for the page's next engine. */
  exportCompiled() {
    const bytes = this.boot.export_compiled();
    try {
      return bytes.toJs();
    } finally {
      bytes.destroy();
    }
  }

  /** Keep the code another engine of the page compiled (exportCompiled's bytes): preparing compiles nothing. */
  adoptCompiled(bytes) {
    return this.boot.adopt_compiled(bytes);
  }

  /** Before a problem's first run (while idle): write its folder, load it and compile its files into the caches. */
  prepareProblem(id, files) {
    const dir = this.writeProblem(id, files);
    this.boot.prepare_problem(dir, this.signatures.get(dir) ?? null);
  }

  /** Seconds one bare pytest.main takes on the tests of a run of `source` (bench/browser.py's yardstick). */
  barePytest(dir, source, includeSecret = false) {
    return this.boot.bare_pytest(dir, source, includeSecret, this.signatures.get(dir) ?? null);
  }

  /** Install a problem's extra pure-Python wheels (absolute URLs) with micropip, once each. */
  async installWheels(wheelURLs, micropipURL) {
    const wanted = wheelURLs.filter((url) => !this.installedWheels.has(url));
    if (!wanted.length) return;
    await this.waitForStdlib(); // micropip imports standard modules the image lacks
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

export function isKeyboardInterrupt(err) {
  return Boolean(err) && (err.type === "KeyboardInterrupt" || /KeyboardInterrupt/.test(String(err.message || err)));
}

/** A short signature of a problem's files (paths and contents): the same files give the same one. */
function signature(files) {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  const mix = (code) => {
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  };
  for (const file of files) {
    for (let i = 0; i < file.path.length; i++) mix(file.path.charCodeAt(i));
    mix(0x110000);
    if (file.text !== undefined) {
      for (let i = 0; i < file.text.length; i++) mix(file.text.charCodeAt(i));
    } else {
      const data = fileData(file);
      for (let i = 0; i < data.length; i++) mix(data[i]);
    }
    mix(0x110001);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return `${files.length}-${(h2 >>> 0).toString(16)}-${(h1 >>> 0).toString(16)}`;
}

function fileText(file) {
  if (file.text !== undefined) return file.text;
  if (file.bytes !== undefined) return new TextDecoder().decode(file.bytes);
  try {
    return atob(file.base64);
  } catch (err) {
    return "";
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
