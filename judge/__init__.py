"""The exercise judge: grades a learner's code against a problem's pytest tests.

The same package runs natively (``python -m judge``) and inside Pyodide in the browser.
Modules on the shared path (problem, workdir, runner, collector, result, artifacts) use
only the standard library and pytest, so they run unchanged on CPython 3.11+ and Pyodide.
"""

__version__ = "0.2.0"
