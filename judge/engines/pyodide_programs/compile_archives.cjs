// Compile archives to bytecode inside Pyodide, under Node.js (see compile_archives.py).
//
//   node compile_archives.cjs DIST JOBS.json
//
// JOBS.json: {"compiler": path of compile_archives.py, "extra": [module, ...],
//             "jobs": [{"src", "dst", "kind", "prefix", "used"}, ...]}
// Prints one JSON list on stdout: [modules compiled, modules left as source] per job.
// Called by judge.commands.site.pyodide_dist.ensure_compiled.
"use strict";

const path = require("node:path");
const fs = require("node:fs");

async function main() {
  const [dist, jobsFile] = process.argv.slice(2);
  const jobs = JSON.parse(fs.readFileSync(jobsFile, "utf8"));
  const { loadPyodide } = require(path.join(dist, "pyodide.js"));
  const needUsed = jobs.jobs.some((job) => job.used);
  const py = await loadPyodide({ indexURL: dist + path.sep, packages: needUsed ? ["numpy", "pytest"] : [],
                                 stdout: () => {}, stderr: (line) => console.error(line) });
  py.setStdin({ error: true }); // pytest's capture needs a stdin that is not Node's
  py.runPython(fs.readFileSync(jobs.compiler, "utf8"));
  py.globals.get("check_python")();
  const compileArchive = py.globals.get("compile_archive");
  const used = needUsed ? py.globals.get("used_modules")(py.toPy(jobs.extra)) : null;
  const counts = [];
  for (const [i, job] of jobs.jobs.entries()) {
    py.FS.writeFile(`/tmp/in-${i}`, new Uint8Array(fs.readFileSync(job.src)));
    const result = compileArchive(`/tmp/in-${i}`, `/tmp/out-${i}`, job.kind, job.prefix,
                                  job.used ? used : null).toJs();
    fs.writeFileSync(job.dst, py.FS.readFile(`/tmp/out-${i}`));
    py.FS.unlink(`/tmp/in-${i}`);
    py.FS.unlink(`/tmp/out-${i}`);
    counts.push(result);
  }
  process.stdout.write(JSON.stringify(counts));
}

main().catch((err) => {
  console.error(String(err && err.stack || err));
  process.exit(1);
});
