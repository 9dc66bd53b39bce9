#!/usr/bin/env bash
# Builds the collection's HTML documentation site (modules, filters, roles, collection index) with antsibull-docs
# and Sphinx, offline. Output: .cache/docs-site/build/html/index.html (override the directory with DOCS_SITE_DIR).
# Opt-in: hack/test.sh lints the documentation (stage docs) but does not build the site.
# Usage: hack/build_docs.sh
# shellcheck source=hack/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT" || exit 1
site="${DOCS_SITE_DIR:-$ROOT/.cache/docs-site}"
t0=$SECONDS

# The venv (with kubernetes.core) lies inside this ignored part of the checkout: stop git from claiming it, or
# antsibull-docs copies dependencies with `git ls-files` and finds none of their files.
export GIT_CEILING_DIRECTORIES="$VENV"

rm -rf "$site" && mkdir -p "$site"
antsibull-docs sphinx-init --use-current --lenient --squash-hierarchy --dest-dir "$site" gpudirect.openshift >/dev/null

# Offline: no intersphinx inventories to download. The Ansible theme is not among the pinned requirements; use it
# when it is installed, else Sphinx's own alabaster.
cat >> "$site/conf.py" <<'PY'

# --- added by hack/build_docs.sh: offline build ---
extensions = [e for e in extensions if e != 'sphinx.ext.intersphinx']
intersphinx_mapping = {}
project = 'gpudirect.openshift'
title = html_short_title = 'gpudirect.openshift documentation'
try:
    import sphinx_ansible_theme  # noqa: F401
except ImportError:
    html_theme = 'alabaster'
PY

"$site/build.sh" > "$site/build.log" 2>&1 || { tail -40 "$site/build.log" >&2; echo "docs site build FAILED, log: $site/build.log" >&2; exit 1; }
grep -E "WARNING|ERROR" "$site/build.log" >&2 || true
test -f "$site/build/html/index.html"
echo "docs site built in $((SECONDS - t0)) s: $site/build/html/index.html"
