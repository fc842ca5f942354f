"""GitHub Classroom's grading reporter, as the tests run it: a mirror of its ``@v1`` release in Node.js.

classroom-resources/autograding-grading-reporter is a GitHub Action, not an npm package, so the
tests run :data:`NODE_REPORTER_MIRROR` (what its ``dist/main.js`` does with the runners' results,
read in its source) in one ``exec`` with the runners' results as the environment, as an Actions
runner does. With ``JUDGE_CLASSROOM_REPORTER`` set to a checkout's ``dist/main.js``, the reporter
itself runs too and must log the same Total and Points.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

NODE_REPORTER_MIRROR = r"""
// What classroom-resources/autograding-grading-reporter@v1 (dist/main.js, built from src/) does with the
// runners' results: main.js reads <RUNNER>_RESULTS (base64 -> UTF-8 JSON) for each name of the comma-separated
// runners; console-results.js logs per runner S = (entries with status pass / entries) x max_score, and
// aggregate-results.js a table whose Total row adds up every S and every max_score; notify-classroom.js adds up
// max_score and the tests' score of the runners whose max_score is not 0 and records `Points X/Y`.
const runners = process.argv[1].split(",").map((runner) => {
  const encoded = process.env[`${runner.trim().toUpperCase()}_RESULTS`];
  return { runner, results: JSON.parse(Buffer.from(encoded, "base64").toString("utf-8")) };
});
const logged = runners.map(({ runner, results }) => {
  // console-results.js prints each entry: a passed or failed one after a colour code, an errored one's
  // message as it is (each of its lines a line of the log, where the runner reads workflow commands)
  results.tests.forEach((test) => {
    if (test.status === "pass") console.log(`\x1b[32m✅ ${test.name}\x1b[0m`);
    else if (test.status === "error") console.log(`Error: ${test.message || `Failed to run test '${test.name}'`}\n\x1b[0m`);
    else console.log(`\x1b[31m❌ ${test.name}\x1b[0m`);
  });
  const passed = results.tests.reduce((n, { status }) => (status === "pass" ? n + 1 : n), 0);
  const score = (passed / results.tests.length) * (results.max_score || 0);
  if (results.max_score !== 0) console.log(`Total points for ${runner}: ${score.toFixed(2)}/${results.max_score}`);
  return { score, maxScore: results.max_score || 0 };
});
const logScore = logged.reduce((n, { score }) => n + score, 0);
const logMax = logged.reduce((n, { maxScore }) => n + maxScore, 0);
console.log(`Total: ${logScore}/${logMax}`);
const { totalPoints, maxPoints } = runners.reduce((acc, { results }) => {
  if (!results.max_score) return acc;
  acc.maxPoints += results.max_score;
  results.tests.forEach(({ score }) => { acc.totalPoints += score; });
  return acc;
}, { totalPoints: 0, maxPoints: 0 });
console.log(`Points ${totalPoints}/${maxPoints}`);
"""
ENV_STRING_LIMIT = 128 * 1024  # Linux's MAX_ARG_STRLEN: one NAME=value string of a process's environment
# the reporter's own dist/main.js, where a checkout of it is at hand (it is not on npm): run as well as the mirror
REAL_REPORTER = os.environ.get("JUDGE_CLASSROOM_REPORTER", "")


def reporter(env: dict[str, str]) -> tuple[str, str]:
    """Run the reporter's reading of the results in node, with ``env`` as the step's environment (execve
    refuses an environment string over MAX_ARG_STRLEN, as on GitHub's runners): its log's Total and Points."""
    runners = ",".join(name[: -len("_RESULTS")].lower() for name in env)
    node = shutil.which("node")
    assert node, "node is needed to run the reporter's reading of the results (.ci/setup installs it)"
    done = subprocess.run([node, "-e", NODE_REPORTER_MIRROR, runners], env=dict(os.environ, **env),
                          capture_output=True, text=True, timeout=60, check=True)
    commands = workflow_commands(done.stdout)
    assert not commands, f"the reporter's log would run workflow commands: {commands}"
    *_, total, points = done.stdout.splitlines()
    if REAL_REPORTER:
        real = subprocess.run([node, REAL_REPORTER], env=dict(os.environ, INPUT_RUNNERS=runners, **env),
                              capture_output=True, text=True, timeout=60, check=False).stdout
        real = re.sub(r"\x1b\[[0-9;]*m", "", real)  # the log's colours
        [row] = [line for line in real.splitlines() if "Total: " in line]
        assert row.split("│")[2].strip() == total.split(" ")[1].split("/")[0], real
        assert f"::notice title=Autograding complete::{points}" in real, real
    return total.split(" ")[1], points.split(" ")[1]


def workflow_commands(log: str) -> list[str]:
    """The lines of a step's log the Actions runner would run as workflow commands: a line (ended by \\n or
    \\r) that starts with ``::`` after blanks, or that holds the older ``##[``."""
    return [line for line in re.split(r"\r\n|\r|\n", log) if line.lstrip().startswith("::") or "##[" in line]
