#!/bin/sh
# Rebuild web/vendor/ from the pinned npm packages in package-lock.json.
# Reproducible: `npm ci` installs exactly the locked versions; esbuild (pinned) bundles them.
# The output is committed, so building the site (python -m judge build) needs no npm.
set -eu
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
rm -rf vendor
mkdir -p vendor/katex/fonts
bundle() {
  npx --no-install esbuild "src/vendor/$1.js" --bundle --format=esm --minify \
    --target=es2020 --legal-comments=eof --log-level=warning --outfile="vendor/$1.js"
}
bundle codemirror
bundle fflate
bundle katex
# KaTeX's stylesheet and fonts (woff2 only: every browser that runs Pyodide reads woff2).
sed -E 's/,url\(fonts\/[A-Za-z0-9_-]+\.(woff|ttf)\) format\("(woff|truetype)"\)//g' \
  node_modules/katex/dist/katex.min.css > vendor/katex/katex.min.css
cp node_modules/katex/dist/fonts/*.woff2 vendor/katex/fonts/
for pkg in codemirror katex fflate; do
  cp "node_modules/$pkg/LICENSE" "vendor/LICENSE.$pkg" 2>/dev/null || true
done
# Record the exact versions that went into vendor/.
node -e '
const lock = require("./package-lock.json").packages;
const out = {};
for (const [k, v] of Object.entries(lock)) if (k.startsWith("node_modules/")) out[k.slice(13)] = v.version;
require("fs").writeFileSync("vendor/VERSIONS.json", JSON.stringify(out, null, 1) + "\n");
'
echo "vendor/ rebuilt:"; ls -la vendor
