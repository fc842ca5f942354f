// Local persistence: every edit is written to localStorage at once, per problem.
//
// Keys: pp-judge:v1:code:<problem-id> (the learner's source), pp-judge:v1:status:<problem-id>
// ("failing" | "passed", the last verdict) and pp-judge:v1:last (the last problem opened).
// A write that fails (quota exceeded, storage disabled) is never dropped: the text stays in
// memory, the page shows a warning, and the next edit tries again. Download all still works.

const PREFIX = "pp-judge:v1:";
const memory = new Map(); // writes that localStorage refused, retried on the next save
let onError = () => {};
let storageOk = true;

export function onStorageError(callback) { onError = callback; }
export function storageHealthy() { return storageOk && memory.size === 0; }

function read(key) {
  if (memory.has(key)) return memory.get(key);
  try { return localStorage.getItem(PREFIX + key); } catch { return null; }
}

function write(key, value) {
  try {
    if (value === null) localStorage.removeItem(PREFIX + key);
    else localStorage.setItem(PREFIX + key, value);
    memory.delete(key);
    // retry what failed before, now that a write went through
    for (const [k, v] of [...memory]) {
      if (v === null) localStorage.removeItem(PREFIX + k); else localStorage.setItem(PREFIX + k, v);
      memory.delete(k);
    }
    if (!storageOk) { storageOk = true; onError(null); }
    return true;
  } catch (err) {
    memory.set(key, value);
    storageOk = false;
    onError(err);
    return false;
  }
}

// What this tab last read or wrote per problem: flushing unchanged text (on pagehide, before a run
// or an export) must not overwrite a newer edit made in another tab. Last real edit wins.
const lastSeen = new Map();

export function loadCode(id) {
  const text = read(`code:${id}`);
  lastSeen.set(id, text);
  return text;
}
export function saveCode(id, text) {
  lastSeen.set(id, text);
  return write(`code:${id}`, text);
}
/** Save only if this tab's text differs from what it last read or wrote (or an earlier write failed). */
export function saveCodeIfEdited(id, text) {
  if (lastSeen.get(id) === text && !memory.has(`code:${id}`)) return true;
  return saveCode(id, text);
}
export const clearCode = (id) => write(`code:${id}`, null);
export const loadStatus = (id) => read(`status:${id}`);
export const saveStatus = (id, status) => write(`status:${id}`, status);
export const loadLast = () => read("last");
export const saveLast = (id) => write("last", id);
export const loadLanguage = () => read("lang"); // the statements' language the learner chose
export const saveLanguage = (lang) => write("lang", lang);

// Kept quietly (a refused write loses nothing the learner typed): the last verdict per problem, so
// a reload shows it under its badge (pp-judge:v1:result:<id>), the Try it call (try:<id>), and
// layout preferences (pref:<name>).
const RESULT_CAP = 200_000; // characters; a larger Result is kept without its artifacts and output

function quietRead(key) {
  try { return localStorage.getItem(PREFIX + key); } catch { return null; }
}
function quietWrite(key, value) {
  try {
    localStorage.setItem(PREFIX + key, value);
    return true;
  } catch {
    return false;
  }
}

export function saveResult(id, result, stopped = false) {
  let text = JSON.stringify({ result, stopped, at: Date.now() });
  if (text.length > RESULT_CAP) {
    const slim = { ...result, tests: (result.tests || []).map((t) => ({ ...t, artifacts: [], stdout: t.stdout.slice(0, 2000), stderr: t.stderr.slice(0, 2000) })) };
    text = JSON.stringify({ result: slim, stopped, at: Date.now(), slimmed: true });
  }
  return quietWrite(`result:${id}`, text);
}
export function loadResult(id) {
  const text = quietRead(`result:${id}`);
  if (!text) return null;
  try {
    const kept = JSON.parse(text);
    return kept && kept.result && kept.result.status ? kept : null;
  } catch {
    return null;
  }
}
export const saveTry = (id, text) => quietWrite(`try:${id}`, text);
export const loadTry = (id) => quietRead(`try:${id}`);
export const savePreference = (name, value) => quietWrite(`pref:${name}`, value);
export const loadPreference = (name) => quietRead(`pref:${name}`);
