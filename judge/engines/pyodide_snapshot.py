"""The memory snapshot a self-hosted site boots from: made under Node.js at build time, cached on disk.

A Pyodide memory snapshot is the interpreter's whole memory saved after start-up work; restoring
it skips that work. ``judge build`` makes one with the judge imported and warmed up (see
``makeJudgeSnapshot`` in ``web/js/boot.mjs`` and ``prepare_snapshot`` in
``judge/engines/pyodide_boot.py``), from exactly the files the site ships: the distribution's
runtime, the bytecode-compiled standard library and wheels (:func:`ensure_compiled`), the judge
package and its bytecode. numpy is left out (its shared libraries do not survive a snapshot); the
browser loads it after restoring.

The image (about 30 MB, mostly the Python heap) is stored with ``pyodide.asm.wasm``'s data segment
XORed into it where the runtime places that segment (the static memory barely changes, so that
part becomes zeros), then gzip-compressed (the browser decompresses it with DecompressionStream).
Its sha256 goes into the site configuration; the worker checks it and boots the plain way when the
image is missing, changed or cannot be restored.

Cached in ``<cache>/pp-judge-snapshot-v<FORMAT>/<key>/`` where the key is the sha256 of every input
(the runtime files, the compiled files, the judge's zips, the programs that make the image), so a
second build with the same inputs runs no Node.js. The image is not byte-for-byte reproducible
across machines (it holds addresses, times and hash seeds), but the cache makes repeated builds
identical.

Pure standard library: native-only, never imported inside Pyodide.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import pyodide_dist
from .pyodide_dist import DistributionError

#: Bump when the recipe changes in a way the inputs' hashes do not show.
SNAPSHOT_FORMAT = 1
NODE_PROGRAM = pyodide_dist.PROGRAMS / "make_snapshot.mjs"
_NODE_TIMEOUT = 600
_KEEP = 6  # cached images kept (about 6 MB each)
#: What the image is made from: the runtime files read from the plain distribution...
RUNTIME_FILES = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip")
#: ... and the compiled wheels unpacked into it (the standard library is the plain one: ``STDLIB``).
COMPILED_WHEELS = tuple(w.file_name for w in pyodide_dist.PURE_WHEELS)
#: The standard library the image is made with and a restore mounts: the distribution's *plain* zip.
#: Every module a run needs is imported in the image already, so the compiled twin's bytecode would
#: only make a first visit download 1.9 MB more (the image, whose code is then compiled from source
#: at build time, is 0.3 MB larger). The plain boot keeps the compiled twin.
STDLIB = "python_stdlib.zip"


@dataclass(frozen=True)
class Snapshot:
    """A cached snapshot: ``path`` is the gzip file the site ships."""

    path: Path
    sha256: str  # of the gzip file
    size: int  # of the gzip file
    image_size: int  # uncompressed
    image_sha256: str  # uncompressed, as stored (data segment XORed in)
    data_offset: int | None  # where pyodide.asm.wasm's data segment is XORed in (None: not)

    def config(self, url: str) -> dict[str, object]:
        """Its entry in the site configuration (``pyodide.snapshot``)."""
        return {"url": url, "sha256": self.sha256, "size": self.size, "imageSize": self.image_size,
                "imageSha256": self.image_sha256, "dataOffset": self.data_offset}


def snapshot_cache_dir(cache_dir: Path | None = None) -> Path:
    dist = (Path(cache_dir) if cache_dir is not None else pyodide_dist.default_cache_dir()).expanduser().absolute()
    return dist.parent / f"pp-judge-snapshot-v{SNAPSHOT_FORMAT}"


def ensure_snapshot(compiled: pyodide_dist.CompiledDistribution, judge_zip: bytes, judge_pyc: bytes,
                    boot_mjs: Path, cache_dir: Path | None = None) -> Snapshot:
    """The snapshot for these inputs, made (with Node.js) when it is not cached yet.

    ``boot_mjs`` is the ``js/boot.mjs`` the site ships (it makes the image, and restores it).
    Raises :class:`DistributionError` when Node.js is missing or fails.
    """
    inputs = _inputs(compiled, judge_zip, judge_pyc, boot_mjs)
    key = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()
    root = snapshot_cache_dir(cache_dir)
    folder = root / key
    found = _load(folder, key)
    if found is not None:
        return found
    node = shutil.which("node")
    if node is None:
        raise DistributionError("making the memory snapshot needs Node.js, which is not installed "
                                "(install Node.js 20, e.g. `apt-get install nodejs`)")
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{key[:12]}.tmp-", dir=root))
    try:
        made = _make(node, compiled, judge_zip, judge_pyc, boot_mjs, staging)
        meta = {"format": SNAPSHOT_FORMAT, "key": key, "inputs": inputs, **made}
        (staging / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        staging.chmod(0o755)
        try:
            os.rename(staging, folder)
        except OSError:
            if _load(folder, key) is None:  # not another process's finished copy
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    _prune(root, keep=_KEEP)
    found = _load(folder, key, verify=True)
    if found is None:
        raise DistributionError(f"the memory snapshot made in {folder} does not verify")
    return found


def _inputs(compiled: pyodide_dist.CompiledDistribution, judge_zip: bytes, judge_pyc: bytes,
            boot_mjs: Path) -> dict[str, str]:
    def sha(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()

    inputs = {f"runtime/{name}": pyodide_dist.DIST_FILES[name].sha256 for name in RUNTIME_FILES}
    inputs.update({f"compiled/{name}": compiled.files[name].sha256 for name in COMPILED_WHEELS})
    inputs.update({"judge.zip": sha(judge_zip), "judge-pyc.zip": sha(judge_pyc),
                   "boot.mjs": sha(Path(boot_mjs).read_bytes()), "make_snapshot.mjs": sha(NODE_PROGRAM.read_bytes())})
    return inputs


def _make(node: str, compiled: pyodide_dist.CompiledDistribution, judge_zip: bytes, judge_pyc: bytes,
          boot_mjs: Path, staging: Path) -> dict[str, object]:
    (staging / "judge.zip").write_bytes(judge_zip)
    (staging / "judge-pyc.zip").write_bytes(judge_pyc)
    raw = staging / "image.bin"
    spec = {"boot": str(Path(boot_mjs).resolve()), "indexURL": str(compiled.dist),
            "lockFileURL": str(compiled.dist / pyodide_dist.TRIMMED_LOCK.name),
            "stdLibURL": str(compiled.dist / STDLIB),
            "archives": [str(compiled.folder / name) for name in COMPILED_WHEELS]
            + [str(staging / "judge.zip"), str(staging / "judge-pyc.zip")],
            "out": str(raw)}
    (staging / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    try:
        proc = subprocess.run([node, str(NODE_PROGRAM), str(staging / "spec.json")], capture_output=True, text=True,
                              timeout=_NODE_TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise DistributionError(f"making the memory snapshot (Node.js) took over {_NODE_TIMEOUT} s") from None
    if proc.returncode != 0:
        raise DistributionError("making the memory snapshot (Node.js) failed:\n"
                                + (proc.stderr.strip() or proc.stdout.strip())[-2000:])
    result = json.loads(proc.stdout)
    image = raw.read_bytes()
    packed = gzip.compress(image, compresslevel=9, mtime=0)
    (staging / "judge.img.gz").write_bytes(packed)
    for name in ("image.bin", "spec.json", "judge.zip", "judge-pyc.zip"):
        (staging / name).unlink()
    return {"sha256": hashlib.sha256(packed).hexdigest(), "size": len(packed), "image_size": len(image),
            "image_sha256": hashlib.sha256(image).hexdigest(), "data_offset": result["dataOffset"]}


def _load(folder: Path, key: str, verify: bool = False) -> Snapshot | None:
    """The cached snapshot in ``folder``, or None when it is missing, incomplete or damaged.

    The gzip file's size is checked every time and its sha256 when ``verify`` (or once per process).
    """
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        path = folder / "judge.img.gz"
        if meta.get("format") != SNAPSHOT_FORMAT or meta.get("key") != key or path.stat().st_size != meta["size"]:
            return None
        signature = (str(path), meta["size"], path.stat().st_mtime_ns)
        if verify or signature not in _VERIFIED:
            if pyodide_dist._sha256_file(path) != meta["sha256"]:  # noqa: SLF001 - same package
                return None
            _VERIFIED.add(signature)
        return Snapshot(path, meta["sha256"], meta["size"], meta["image_size"], meta["image_sha256"],
                        meta["data_offset"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


_VERIFIED: set[tuple[str, int, int]] = set()


def _prune(root: Path, keep: int) -> None:
    """Keep the ``keep`` most recently made snapshots."""
    folders = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")]
    folders.sort(key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in folders[keep:]:
        shutil.rmtree(old, ignore_errors=True)
