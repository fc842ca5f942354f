/* The floor's worker: loadPyodide with numpy and pytest during boot, then import both. */
"use strict";
self.onmessage = async (event) => {
  const { indexURL, packages } = event.data;
  const t0 = performance.now();
  try {
    importScripts(indexURL + "pyodide.js");
    const pyodide = await loadPyodide({ indexURL, packages });
    const t1 = performance.now();
    const missing = packages.filter((name) => !(name in pyodide.loadedPackages));
    if (missing.length) throw new Error(`packages not loaded: ${missing.join(", ")}`);
    pyodide.runPython("import numpy, pytest");
    const t2 = performance.now();
    self.postMessage({ type: "imported", timings: { loadPyodide: Math.round(t1 - t0), imports: Math.round(t2 - t1) } });
  } catch (err) {
    self.postMessage({ type: "error", message: String(err && err.message || err) });
  }
};
