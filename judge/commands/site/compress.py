"""Precompressed twins of a built site's files, for hosts that serve them (``judge serve`` does).

Beside every file worth compressing the build writes ``F.br`` (Brotli, quality 11, 10 for the largest) and ``F.gz``
(gzip -9, no timestamp), when the twin is at least 5 % smaller. A host that negotiates the encoding
(``judge serve``; nginx with ``brotli_static``/``gzip_static``; Caddy's ``precompressed``) answers a
request for ``F`` from a browser that accepts ``br`` with ``F.br`` and ``Content-Encoding: br``;
the browser decodes it, so the page gets exactly ``F``. Hosts that compress on the fly (Netlify,
Cloudflare Pages, GitHub Pages) ignore the twins; the others serve ``F`` as it is.

One exception: a file that is already gzip data (``.gz``: the memory snapshot) gets no ``.gz``
twin, and its ``.br`` twin encodes what it decompresses to (Brotli at quality 11 packs the
30 MB image into about 4 MB, gzip into about 6 MB). A browser served the twin therefore receives
the decompressed image, which the engine accepts (it checks that content's own sha256, see
``web/js/boot.mjs``).

Brotli at quality 11 is slow on the largest files: 62 s for the 28.8 MiB memory image and 37 s for the
9.6 MiB wasm runtime, against 33 s and 21 s at quality 10, for twins 3 to 6 % larger (4.26 MiB and 2.29 MiB
against 4.12 MiB and 2.17 MiB). A fresh machine (a CI job that deploys the site) and every new judge
version pay that, so files over :data:`CACHE_OVER` bytes get quality 10; their twins are also cached on
disk under the sha256 of their source (``~/.cache/pp-judge/compressed-v2/``): Pyodide's runtime never
changes, and an unchanged image is compressed once. The output is reproducible: the same file gives
the same twins.

Brotli comes from Google's ``brotli`` package (the ``site`` extra, pinned); where it cannot be imported,
only gzip twins are written.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

#: Suffixes whose files are compressed (fonts, zips and wheels are compressed data already).
COMPRESSIBLE = (".html", ".js", ".mjs", ".css", ".json", ".wasm", ".svg", ".txt", ".md", ".py", ".img.gz",
                ".map", ".webmanifest")
#: Encodings in the order a host should prefer them, with the twin's suffix.
ENCODINGS = (("br", ".br"), ("gzip", ".gz"))
MIN_SIZE = 512  # smaller files gain nothing worth a second request's bookkeeping
MIN_SAVING = 0.05
CACHE_OVER = 256 * 1024
CACHE_FORMAT = 2  # 2: quality 10 over CACHE_OVER


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pp-judge" / f"compressed-v{CACHE_FORMAT}"


def decoded_content(path: Path) -> bytes:
    """What a browser receives for ``path`` when it is served through a twin (see the module docstring)."""
    data = path.read_bytes()
    return gzip.decompress(data) if path.name.endswith(".gz") else data


def write_twins(site: Path, files: Iterable[str], cache_dir: Path | None = None) -> list[str]:
    """Write the twins of ``files`` (paths relative to ``site``); return the twins written."""
    cache = cache_dir if cache_dir is not None else default_cache_dir()
    written: list[str] = []
    for rel in sorted(files):
        path = site / rel
        if not rel.endswith(COMPRESSIBLE) or not path.is_file() or path.stat().st_size < MIN_SIZE:
            continue
        content = decoded_content(path)
        for encoding, suffix in ENCODINGS:
            if encoding == "gzip" and rel.endswith(".gz"):
                continue  # gzip already
            packed = _compressed(content, encoding, cache)
            if packed is None or len(packed) > (1 - MIN_SAVING) * path.stat().st_size:
                continue
            (site / (rel + suffix)).write_bytes(packed)
            written.append(rel + suffix)
    return written


def _compressed(content: bytes, encoding: str, cache: Path) -> bytes | None:
    if encoding == "gzip":
        return gzip.compress(content, compresslevel=9, mtime=0)
    try:
        import brotli
    except ImportError:  # pragma: no cover - brotli is a dependency; a build without it skips .br
        return None
    if len(content) <= CACHE_OVER:
        return bytes(brotli.compress(content, quality=11, lgwin=22))
    key = cache / f"{hashlib.sha256(content).hexdigest()}.br"
    if key.is_file():
        return key.read_bytes()
    packed = bytes(brotli.compress(content, quality=10, lgwin=24))
    try:
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=cache, delete=False) as handle:
            handle.write(packed)
        os.replace(handle.name, key)
        _prune(cache)
    except OSError:
        pass  # the cache only saves time
    return packed


def _prune(cache: Path, keep: int = 24) -> None:
    """Keep the ``keep`` most recently written twins (images of older judges are never read again)."""
    twins = sorted(cache.glob("*.br"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in twins[keep:]:
        old.unlink(missing_ok=True)
