#!/bin/sh
# PrairieLearn external grader entrypoint (docs/externalGrading.md): judges /grade/student against
# the problem bundle in /grade/tests and writes /grade/results/results.json.
# Written by `python -m judge export prairielearn` (judge @@JUDGE_VERSION@@).
#
# The judge comes from a custom image built with this export's Dockerfile (/opt/pp-judge-venv), or
# is installed on every grading job from the wheels beside this script (no network needed; about
# 5 s more per job). Environment, for testing outside PrairieLearn:
#   GRADE_ROOT          default /grade
#   JUDGE_VENV          a virtual environment with the judge installed (default /opt/pp-judge-venv)
#   JUDGE_STUDENT_USER  the unprivileged user learner code runs as when this runs as root and
#                       bubblewrap cannot be used (default nobody; set it empty to run learner code
#                       unsandboxed, as root: the grade then says so)
set -eu

GRADE="${GRADE_ROOT:-/grade}"
HERE="$GRADE/serverFilesCourse/pp_judge"
VENV="${JUDGE_VENV:-/opt/pp-judge-venv}"

if [ ! -x "$VENV/bin/python" ]; then
  VENV=/tmp/pp-judge-venv
  python3 -m venv --without-pip "$VENV"
  PIP_WHEEL="$(ls "$HERE"/wheels/pip-*.whl | head -n 1)"
  PIP_CONFIG_FILE=/dev/null "$VENV/bin/python" "$PIP_WHEEL/pip" install --isolated --no-index \
    --find-links "$HERE/wheels" --disable-pip-version-check --no-cache-dir --quiet pp-judge
fi

mkdir -p "$GRADE/results"
# Learner code runs in a sandboxed process (judge.sandbox): bubblewrap where it works, else the
# unprivileged user, who must run this Python and numpy but not read the problems or the judge.
# A set-up that cannot sandbox it makes this script fail (no results.json), never a wrong grade.
STUDENT_USER="${JUDGE_STUDENT_USER-nobody}"
set -- --sandbox plain
if [ -n "$STUDENT_USER" ]; then
  set -- --sandbox-user "$STUDENT_USER"
  if [ "$(id -u)" = 0 ]; then
    chmod -R a+rX "$VENV"
    chmod -R go-rwx "$GRADE/tests" "$GRADE/serverFilesCourse" "$VENV"/lib/python*/site-packages/judge
  fi
fi
exec "$VENV/bin/python" -m judge.commands.export.run prairielearn --bundle "$GRADE/tests" \
  --submission "$GRADE/student" -o "$GRADE/results/results.json" "$@"
