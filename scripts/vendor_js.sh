#!/usr/bin/env bash
# Refetch the pinned browser scripts the offline book serves from book/_static/vendor/ (committed).
# Needs npm and the npm registry; the book build itself needs neither. Licences are kept beside them.
# vega 6.4.0, not 6.3.0: 6.3.0's browser build reports itself as 5.33.1, and vega-embed then warns on every chart
# that the specs (Vega-Lite 6, Altair's) ask for another vega.
set -euo pipefail
dest="$(cd "$(dirname "$0")/.." && pwd)/book/_static/vendor"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
npm pack --silent vega@6.4.0 vega-lite@6.4.1 vega-embed@7.3.0 requirejs@2.3.8 @jupyter-widgets/html-manager@1.0.15 >/dev/null
rm -rf "$dest" && mkdir -p "$dest/licenses"
take() {  # take TARBALL NAME FILE-IN-PACKAGE DEST-NAME
  rm -rf package && tar xzf "$1"
  cp "package/$3" "$dest/$4"
  # the package's own licence file where it ships one, its bundled third-party notices, and the
  # licence named in package.json (requirejs ships none: its MIT notice is the header of require.js)
  for lic in package/LICENSE* package/dist/*.LICENSE.txt; do
    [[ -f $lic ]] && cp "$lic" "$dest/licenses/$2-$(basename "$lic")"
  done
  node -e 'const p=require("./package/package.json"); console.log(p.name+" "+p.version+": "+p.license+" ("+(p.homepage||p.repository&&p.repository.url||"")+")")' \
    >> "$dest/licenses/PACKAGES.txt"
}
take vega-6.4.0.tgz vega build/vega.min.js vega.min.js
take vega-lite-6.4.1.tgz vega-lite build/vega-lite.min.js vega-lite.min.js
take vega-embed-7.3.0.tgz vega-embed build/vega-embed.min.js vega-embed.min.js
take requirejs-2.3.8.tgz requirejs require.js require.js
take jupyter-widgets-html-manager-1.0.15.tgz html-manager dist/embed-amd.js embed-amd.js
cat > "$dest/VERSIONS" <<TXT
vega 6.4.0 (BSD-3-Clause), vega-lite 6.4.1 (BSD-3-Clause), vega-embed 7.3.0 (BSD-3-Clause),
requirejs 2.3.8 (MIT), @jupyter-widgets/html-manager 1.0.15 (BSD-3-Clause); fetched by scripts/vendor_js.sh
TXT
ls -la "$dest"
