"""Serve a built site on localhost, the way production hosting should serve it.

Every response carries ``Cross-Origin-Opener-Policy: same-origin`` and
``Cross-Origin-Embedder-Policy: require-corp`` so the page is cross-origin isolated (the worker can
then be interrupted through a SharedArrayBuffer). MIME types are explicit (``.wasm`` must be
``application/wasm`` for streaming compilation, ``.mjs`` is JavaScript). Files under a versioned
folder (``pyodide/<version>/``, ``vendor/``, ``assets/``) are cached for a year; everything else is
revalidated on every load (``no-cache``), which the service worker's own versioning needs.
A file with a precompressed twin (``F.br``, ``F.gz``: :mod:`judge.commands.site.compress`) is
answered with the twin and ``Content-Encoding`` when the browser accepts that encoding (and
``Vary: Accept-Encoding`` either way), as nginx's ``brotli_static``/``gzip_static`` do; a twin
older than its file (edited after the build) is not used.

:func:`serve` blocks (``python -m judge serve``); :func:`make_server` returns a server that a test
runs in a background thread (port 0 picks a free port)::

    server = make_server(site_dir, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = server_url(server)
    ...
    server.shutdown(); server.server_close()
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import sys
from pathlib import Path

from ...core.errors import ExitCode
from ..options import PROBLEMS_HELP, PROBLEMS_SOURCE, default_problems_dir, language_option
from .compress import ENCODINGS

__all__ = ["serve", "make_server", "server_url", "SiteRequestHandler", "MIME_TYPES"]

MIME_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".wasm": "application/wasm",
    ".zip": "application/zip",
    ".whl": "application/zip",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".woff2": "font/woff2",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/plain; charset=utf-8",
    ".py": "text/plain; charset=utf-8",
    ".webmanifest": "application/manifest+json",
}

#: Path prefixes whose content never changes under the same URL.
IMMUTABLE_PREFIXES = ("/pyodide/", "/assets/")


class SiteRequestHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with cross-origin isolation headers, exact MIME types and cache lifetimes."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES}
    quiet = True
    _encoding: str | None = None
    _original: str | None = None
    _has_twin = False

    def translate_path(self, path: str) -> str:
        """The file for ``path``; its precompressed twin when the browser accepts that encoding."""
        local = super().translate_path(path)
        self._encoding, self._original, self._has_twin = None, None, False
        if not os.path.isfile(local):
            return local
        accepted = _accepted_encodings(self.headers.get("Accept-Encoding", ""))
        changed = os.stat(local).st_mtime_ns
        for encoding, suffix in ENCODINGS:
            twin = local + suffix
            # a twin older than its file is stale (the file was edited after the build): not used
            if os.path.isfile(twin) and os.stat(twin).st_mtime_ns >= changed:
                self._has_twin = True
                if encoding in accepted and not self._encoding:
                    self._encoding, self._original = encoding, local
        return local + dict(ENCODINGS)[self._encoding] if self._encoding else local

    def end_headers(self) -> None:
        if self._encoding:
            self.send_header("Content-Encoding", self._encoding)
        if self._has_twin:
            self.send_header("Vary", "Accept-Encoding")
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        self.send_header("X-Content-Type-Options", "nosniff")
        path = self.path.split("?", 1)[0]
        if path.startswith(IMMUTABLE_PREFIXES):
            self.send_header("Cache-Control", "public, max-age=31536000, immutable")
        else:
            self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def guess_type(self, path: str | os.PathLike[str]) -> str:
        if self._encoding and self._original:
            path = self._original  # the twin has the type of the file it encodes
        suffix = Path(str(path)).suffix.lower()
        return MIME_TYPES.get(suffix) or super().guess_type(path)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        if not self.quiet:
            super().log_message(format, *args)


def _accepted_encodings(header: str) -> set[str]:
    """The encodings an ``Accept-Encoding`` header accepts (``q=0`` refuses one)."""
    accepted = set()
    for part in header.split(","):
        name, _, params = part.strip().partition(";")
        q = params.strip()
        if q.startswith("q=") and q[2:].strip() in ("0", "0.0", "0.00", "0.000"):
            continue
        if name.strip():
            accepted.add(name.strip().lower())
    return accepted


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def make_server(site_dir: Path, host: str = "127.0.0.1", port: int = 8000, *,
                quiet: bool = True) -> http.server.ThreadingHTTPServer:
    """A threading HTTP server for ``site_dir`` (not started). ``port=0`` picks a free port."""
    site_dir = Path(site_dir).resolve()
    if not (site_dir / "index.html").is_file():
        raise FileNotFoundError(f"{site_dir} has no index.html: build the site first "
                                "(python -m judge build SITE_DIR)")
    handler = type("Handler", (SiteRequestHandler,), {"quiet": quiet})
    return _Server((host, port), functools.partial(handler, directory=str(site_dir)))


def server_url(server: http.server.HTTPServer) -> str:
    """The base URL a browser should open (``http://host:port/``)."""
    address, port = server.server_address[:2]
    host = address.decode() if isinstance(address, bytes) else str(address)
    if host in ("0.0.0.0", "::"):  # listening everywhere: this machine reaches it on loopback
        host = "127.0.0.1"
    if ":" in str(host):
        host = f"[{host}]"
    return f"http://{host}:{port}/"


def serve(site_dir: Path, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve ``site_dir`` until interrupted (Ctrl+C); prints the URL first."""
    server = make_server(site_dir, host, port, quiet=False)
    print(f"Serving {Path(site_dir).resolve()} at {server_url(server)}  (Ctrl+C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("\nstopped", file=sys.stderr)
    finally:
        server.server_close()


# ------------------------------------------------------------------------------------------- the command
DESCRIPTION = "Build the site and serve it on localhost."
EPILOG = PROBLEMS_SOURCE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``judge serve``'s options: where to build, where to listen, which Pyodide and problems."""
    parser.add_argument("--site-dir", type=Path, default=Path("site"), metavar="DIR")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--pyodide", choices=("self", "cdn"), default="self")
    parser.add_argument("--problems", type=Path, metavar="DIR", help=PROBLEMS_HELP)
    language_option(parser, "the errors")


def run(args: argparse.Namespace) -> int:
    """Build the site, then serve it until interrupted."""
    from .build import build_site

    build_site(args.site_dir, pyodide=args.pyodide, problems_dir=args.problems or default_problems_dir())
    serve(args.site_dir, host=args.host, port=args.port)
    return ExitCode.OK
