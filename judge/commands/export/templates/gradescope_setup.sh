#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image. It installs the judge
# into a virtual environment from the wheels in pp-judge/wheels/: no package index is needed.
# Written by `python -m judge export gradescope` (judge @@JUDGE_VERSION@@).
#
# Environment (for testing outside Gradescope):
#   AUTOGRADER_ROOT     where the autograder lives (default /autograder; the bundle is in $AUTOGRADER_ROOT/source)
#   JUDGE_PYTHON        the Python @@PYTHON_VERSION@@ to use (default: found on PATH, else installed with apt-get)
#   JUDGE_STUDENT_USER  the unprivileged user learner code runs as where bubblewrap cannot be used
#                       (default judge-student, created here; set it empty to run learner code as
#                       root, unsandboxed: the grade then says so)
#   JUDGE_SANDBOX       auto (default: bubblewrap where it works, else the user above), bubblewrap or user
set -euo pipefail

ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="$ROOT/source"
BUNDLE="$SOURCE/pp-judge"
VENV="$ROOT/pp-judge-venv"
WANTED="@@PYTHON_VERSION@@"   # the wheels (numpy's) are built for this Python

is_wanted() { "$1" -c "import sys; sys.exit(f'{sys.version_info[0]}.{sys.version_info[1]}' != '$WANTED')" 2>/dev/null; }

PY="${JUDGE_PYTHON:-}"
if [ -z "$PY" ]; then
  for candidate in "python$WANTED" python3 python; do
    if command -v "$candidate" >/dev/null 2>&1 && is_wanted "$candidate"; then PY="$(command -v "$candidate")"; break; fi
  done
fi
if [ -z "$PY" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Python $WANTED with apt-get (the image has no Python $WANTED)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "python$WANTED"
    PY="$(command -v "python$WANTED")"
  else
    echo "error: no Python $WANTED found; set JUDGE_PYTHON or export again with --python-version" >&2
    exit 1
  fi
fi
is_wanted "$PY" || { echo "error: $PY is not Python $WANTED" >&2; exit 1; }

# --without-pip: Debian and Ubuntu ship ensurepip separately; pip runs from its own wheel instead
rm -rf "$VENV"
"$PY" -m venv --without-pip "$VENV"
PIP_WHEEL="$(ls "$BUNDLE"/wheels/pip-*.whl | head -n 1)"
PIP_CONFIG_FILE=/dev/null "$VENV/bin/python" "$PIP_WHEEL/pip" install --isolated --no-index \
  --find-links "$BUNDLE/wheels" --disable-pip-version-check --no-cache-dir --quiet pp-judge
"$VENV/bin/python" -c "import judge; print('Installed the judge', judge.__version__, 'in $VENV')"

# Learner code runs in a sandboxed process of its own (judge.sandbox): under bubblewrap where it works,
# else as the unprivileged user below. That user must run this Python and import numpy, and must not
# read the problems (secret tests) or the installed judge (its bundled problems).
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && ! command -v bwrap >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null 2>&1 || true
fi
chmod a+x "$ROOT"
chmod -R a+rX "$VENV"
chmod -R go-rwx "$SOURCE" "$VENV"/lib/python*/site-packages/judge
STUDENT_USER="${JUDGE_STUDENT_USER-judge-student}"
if [ "$(id -u)" = 0 ] && [ -n "$STUDENT_USER" ] && ! id -u "$STUDENT_USER" >/dev/null 2>&1; then
  useradd --system --no-create-home --shell /usr/sbin/nologin "$STUDENT_USER"
fi
# A set-up that would grade wrong fails here, loudly, not at the first submission.
if [ -n "$STUDENT_USER" ]; then
  "$VENV/bin/python" -m judge.commands.export.run check-sandbox --bundle "$BUNDLE" --sandbox "${JUDGE_SANDBOX:-auto}" \
    --sandbox-user "$STUDENT_USER"
else
  "$VENV/bin/python" -m judge.commands.export.run check-sandbox --bundle "$BUNDLE" --sandbox plain
fi
