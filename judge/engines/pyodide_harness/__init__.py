"""Node.js harness that runs the judge inside Pyodide (``run_jobs.mjs``); used by ``judge.engines.pyodide``."""
