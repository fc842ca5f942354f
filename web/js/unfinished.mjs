// Results that no run produced (time limit, Stop, a crashed or failed engine), from Python's definition.
//
// The site build renders judge.engines.unfinished.templates() into the site configuration
// (`config.unfinished`): one Result per reason, with {problem}, {seconds} and {detail} slots. This
// module only fills the slots in, so the Result format is defined once, in Python.

const SLOT = /\{(problem|seconds|detail)\}/g;

/** The Result (a plain object) for `reason`, filled in from `templates` (config.unfinished). */
export function unfinishedResult(templates, reason, { problem, seconds = 0, detail = "" }) {
  const template = templates && templates[reason];
  if (!template) throw new Error(`the site configuration has no Result for "${reason}"; rebuild the site`);
  const values = { problem, seconds: String(seconds), detail: String(detail) };
  const walk = (value) => {
    if (value === "{seconds}") return seconds;
    if (typeof value === "string") return value.replace(SLOT, (_, name) => values[name]);
    if (Array.isArray(value)) return value.map(walk);
    if (value && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item)]));
    }
    return value;
  };
  return walk(template);
}
