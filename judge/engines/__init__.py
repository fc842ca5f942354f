"""What the judging engines share beyond the runner: Pyodide's set-up and the Results no run produced."""
