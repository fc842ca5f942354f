"""What runs in both engines, natively and in the browser: shipped to Pyodide as it is.

problem (the folder format) -> workdir (the tests' folder) -> runner (pytest with the collector, the
learner's module reached through a stand-in) -> result (the Result, the contract every output
reads), with codec and protocol (what crosses between the tests and the learner's code, and how),
scoring (points), errors, assets and wrong (authoring checks).
Standard library and pytest only: no processes, threads or signals (the engines own those).
"""
