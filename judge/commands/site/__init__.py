"""Native-only helpers for building and serving the judge's static site (never loaded in Pyodide)."""
