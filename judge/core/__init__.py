"""What runs in both engines, natively and in the browser: shipped to Pyodide as it is.

problem (the folder format) -> workdir (the learner's code beside the tests) -> runner (pytest with
the collector) -> result (the Result, the contract every output reads), with scoring (points),
guard and integrity (what learner code may not do), errors, assets and wrong (authoring checks).
Standard library and pytest only: no processes, threads or signals (the engines own those).
"""
