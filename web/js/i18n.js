// The page's own words in the reader's language, from the judge's gettext catalogs (docs/i18n.md).
//
// `judge build` puts the compiled catalogs (judge/locale/<lang>/LC_MESSAGES/judge.mo, read with
// Python's gettext) into the site configuration: config.i18n = {languages: {en: "English", ...},
// catalogs: {<lang>: {plural: "<C expression of n>", messages: {msgid: text | [forms]}}}}. English
// is the messages as written. Mark a message with _("...") or ngettext("...", "...", n) (or N_("...")
// for a constant translated where it is used): `pybabel extract -F babel.cfg` finds them, beside the
// Python ones. Placeholders have names, {count}, filled from `values`; a message a catalog lacks reads
// in English. Static text in index.html carries data-i18n (its text is the message; data-i18n="html":
// its markup) and data-i18n-attr="title aria-label ..." (those attributes' values are messages).

export const DEFAULT_LANGUAGE = "en";

let catalogs = {};
let names = { en: "English" };
let current = DEFAULT_LANGUAGE;
let active = null; // {plural(n) -> index, messages}
const listeners = [];
const missing = new Set(); // messages asked for that the active catalog lacks (read in English)

/** The catalogs from the site configuration (config.i18n). */
export function setCatalogs(i18n) {
  catalogs = (i18n && i18n.catalogs) || {};
  names = { en: "English", ...((i18n && i18n.languages) || {}) };
  if (current !== DEFAULT_LANGUAGE && !catalogs[current]) current = DEFAULT_LANGUAGE;
  active = compile(catalogs[current]);
}

/** The languages the page's own words are in (English first). */
export function interfaceLanguages() {
  return [DEFAULT_LANGUAGE, ...Object.keys(catalogs).filter((l) => l !== DEFAULT_LANGUAGE).sort()];
}

/** A language's own name ("中文"); the code when the configuration has none. */
export function languageName(lang) {
  return names[lang] || lang;
}

export function language() {
  return current;
}

/** Translate into `lang` from now on (English without a catalog) and tell the listeners. */
export function setLanguage(lang) {
  current = lang || DEFAULT_LANGUAGE;
  active = compile(catalogs[current]);
  missing.clear();
  for (const listener of listeners) listener(current);
}

export function onLanguageChange(listener) {
  listeners.push(listener);
}

/** The messages asked for in this language that its catalog lacks (for the tests). */
export function missingMessages() {
  return [...missing];
}

const PLURAL = /^[n0-9\s()?:<>=!&|%+\-*/]+$/; // a gettext plural expression: C arithmetic on n

function compile(catalog) {
  if (!catalog) return null;
  let plural = () => 0;
  if (typeof catalog.plural === "string" && PLURAL.test(catalog.plural)) {
    try {
      // eslint-disable-next-line no-new-func -- checked above: only n, numbers and operators
      const rule = new Function("n", `return Number(${catalog.plural});`);
      plural = (n) => rule(n);
    } catch {
      plural = () => 0;
    }
  }
  return { plural, messages: catalog.messages || {} };
}

/** `text` with its {name} placeholders filled from `values` (an unknown name stays as written). */
export function format(text, values) {
  if (!values) return text;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
}

/** `message` in the active language, placeholders filled in. */
export function _(message, values) {
  let text = message;
  if (active) {
    const found = active.messages[message];
    if (typeof found === "string" && found) text = found;
    else missing.add(message);
  }
  return format(text, values);
}

/** The singular or plural form for `n`, in the active language; `n` is also the {n} placeholder. */
export function ngettext(singular, plural, n, values) {
  let text = n === 1 ? singular : plural;
  if (active) {
    const forms = active.messages[singular];
    const form = Array.isArray(forms) ? forms[active.plural(n)] : undefined;
    if (typeof form === "string" && form) text = form;
    else missing.add(singular);
  }
  return format(text, { n, ...values });
}

/** Marks a constant for the catalog, untranslated: _() translates it where it is used. */
export function N_(message) {
  return message;
}

const SPACE = /\s+/g;
const normal = (text) => text.replace(SPACE, " ").trim();

/** Put the page's static words (data-i18n, data-i18n-attr) under `root` in the active language. */
export function translateStatic(root = document) {
  for (const node of root.querySelectorAll("[data-i18n]")) {
    const html = node.dataset.i18n === "html";
    if (node.dataset.i18nId === undefined) node.dataset.i18nId = normal(html ? node.innerHTML : node.textContent);
    const text = _(node.dataset.i18nId);
    if (html) node.innerHTML = text; // the catalog's own markup (<em>, <code>), never the learner's
    else node.textContent = text;
  }
  for (const node of root.querySelectorAll("[data-i18n-attr]")) {
    for (const attr of node.dataset.i18nAttr.split(/\s+/).filter(Boolean)) {
      const key = `i18n${attr.replace(/(^|-)(\w)/g, (_m, _d, c) => c.toUpperCase())}`;
      if (node.dataset[key] === undefined) node.dataset[key] = normal(node.getAttribute(attr) || "");
      if (node.dataset[key]) node.setAttribute(attr, _(node.dataset[key]));
    }
  }
}
