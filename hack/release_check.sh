#!/usr/bin/env bash
# What a release needs, checked offline: the collection tarball builds, galaxy-importer (as Galaxy and
# Automation Hub run it) reports no error, ansible-builder turns execution-environment.yml into a build context,
# and the documentation site builds. The two importer/builder tools live in their own pinned virtualenv because
# galaxy-importer pins its own ansible-lint and friends.
# shellcheck source=hack/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT" || exit 1
tools="$ROOT/.cache/release-venv"
if [ ! -x "$tools/bin/ansible-builder" ]; then
  "$PYTHON" -m venv "$tools"
  "$tools/bin/python" -m pip install -q --disable-pip-version-check galaxy-importer==0.4.44 ansible-builder==3.2.0 >&2
fi
out="$ROOT/.cache/release"
rm -rf "$out" && mkdir -p "$out"
ansible-galaxy collection build --output-path "$out" "$ROOT"
tarball=$(ls "$out"/gpudirect-openshift-*.tar.gz)
(cd "$out" && "$tools/bin/python" -m galaxy_importer.main "$tarball") > "$out/importer.log" 2>&1 || { cat "$out/importer.log"; exit 1; }
if grep -E "^(ERROR|WARNING)" "$out/importer.log"; then echo "galaxy-importer reported the lines above" >&2; exit 1; fi
grep -q "Importer processing completed successfully" "$out/importer.log"
echo "galaxy-importer: no errors or warnings ($tarball)"
"$tools/bin/ansible-builder" create --file execution-environment.yml --context "$out/ee-context" >/dev/null
test -f "$out/ee-context/Dockerfile" && echo "ansible-builder create: $out/ee-context/Dockerfile"
bash "$ROOT/hack/build_docs.sh"
test -f "$ROOT/.cache/docs-site/build/html/index.html" && echo "docs site: .cache/docs-site/build/html/index.html"
