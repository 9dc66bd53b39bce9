#!/usr/bin/env bash
# What a release needs, checked offline, as a user and Galaxy / Automation Hub meet it (docs/release.md):
#  1. the collection tarball builds and holds exactly the files hack/release-files.txt allows;
#  2. galaxy-importer, in a virtualenv of its own and an environment with nothing of ours (no PATH, PYTHONPATH or
#     ANSIBLE_* of the development virtualenv), reports no error and documents every module;
#  3. ansible-builder turns both execution environment definitions into build contexts: the released one from the
#     tarball alone, outside the checkout, and the development one from the checkout;
#  4. the tarball installs offline into a collections path holding only its dependency (kubernetes.core, copied
#     from the development virtualenv), and a user's shell, in a directory outside the checkout, runs
#     gpudirect.openshift.render and gpudirect.openshift.site by name with a shipped example, the latter against a
#     started simulated cluster;
#  5. the documentation site builds.
# galaxy-importer and ansible-builder live in their own pinned virtualenv (.cache/release-venv): galaxy-importer
# pins its own ansible-core and ansible-lint.
# shellcheck source=hack/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT" || exit 1
t0=$SECONDS
tools="$ROOT/.cache/release-venv"
if [ ! -x "$tools/bin/ansible-builder" ] || [ ! -x "$tools/bin/ansible-doc" ]; then
  "$PYTHON" -m venv "$tools"
  "$tools/bin/python" -m pip install -q --disable-pip-version-check galaxy-importer==0.4.44 ansible-builder==3.2.0 >&2
fi
out="$ROOT/.cache/release"
rm -rf "$out" && mkdir -p "$out"
# The user's side lives outside the checkout: no ansible.cfg, collection or virtualenv of the repository around it.
user=$(mktemp -d "${TMPDIR:-/tmp}/gpudirect-release.XXXXXX")
sim_pid=""
cleanup() {
  if [ -n "$sim_pid" ]; then kill "$sim_pid" 2>/dev/null || true; wait "$sim_pid" 2>/dev/null || true; fi
  rm -rf "$user"
}
trap cleanup EXIT

echo "== 1. tarball"
ansible-galaxy collection build --output-path "$out" "$ROOT" >/dev/null
tarball=$(ls "$out"/gpudirect-openshift-*.tar.gz)
version=$(python -c "import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))['version'])" "$ROOT/galaxy.yml")
echo "built $tarball"
python "$ROOT/hack/release_contents.py" files "$tarball" "$ROOT/hack/release-files.txt"

echo "== 2. galaxy-importer in a clean environment"
mkdir -p "$out/importer-home"
# galaxy-importer gives its ansible-lint step a fixed 180 s (galaxy_importer/loaders/collection.py _lint_collection:
# proc.communicate(timeout=180), no setting), which a loaded machine exceeds: the step is logged as an error and its
# findings are lost. So the importer runs without it (GALAXY_IMPORTER_RUN_ANSIBLE_LINT=false, the environment override
# of galaxy_importer/config.py Config) and the same ansible-lint command runs below, as the importer would run it but
# with no time limit, its output logged the way the importer logs it.
importer_lint_args=(--profile production --exclude tests/integration/ --exclude tests/unit/ --format=pep8 --nocolor
  -x "yaml,var-naming,avoid-dot-notation,import-task-no-when,single-entry-point,use-loop" --offline)
importer_source=$("$tools/bin/python" -c "import galaxy_importer.loaders.collection as m; print(m.__file__)")
for arg in '"--profile",' '"production",' '"tests/integration/",' '"tests/unit/",' '"--format=pep8",' '"--nocolor",' \
    '"yaml,var-naming,avoid-dot-notation,import-task-no-when,single-entry-point,use-loop",' 'cmd.append("--offline")'; do
  grep -qF -- "$arg" "$importer_source" || {
    echo "galaxy-importer's ansible-lint command changed ($arg not in $importer_source): update importer_lint_args" >&2; exit 1; }
done
(cd "$out" && env -i HOME="$out/importer-home" PATH="$tools/bin:/usr/bin:/bin" LANG=C.UTF-8 GALAXY_IMPORTER_RUN_ANSIBLE_LINT=false \
  "$tools/bin/python" -m galaxy_importer.main "$tarball") > "$out/importer.log" 2>&1 || { cat "$out/importer.log"; exit 1; }
grep -q "Importer processing completed successfully" "$out/importer.log" || { cat "$out/importer.log"; exit 1; }
# Where the importer lints: the tarball extracted under ansible_collections/placeholder_namespace/placeholder_name
# (galaxy_importer/collection.py _import_collection), that ansible_collections directory as the collections path.
lint_root="$out/lint/ansible_collections"
mkdir -p "$lint_root/placeholder_namespace/placeholder_name"
tar -xzf "$tarball" -C "$lint_root/placeholder_namespace/placeholder_name"
lint_rc=0
(cd "$lint_root/placeholder_namespace/placeholder_name" && env -i HOME="$out/importer-home" PATH="$tools/bin:/usr/bin:/bin" \
  LANG=C.UTF-8 ANSIBLE_COLLECTIONS_PATH="$lint_root" ANSIBLE_LOCAL_TEMP="$out/importer-home/.ansible/tmp" \
  XDG_CACHE_HOME="$out/importer-home/.ansible/tmp" "$tools/bin/ansible-lint" "${importer_lint_args[@]}") \
  > "$out/lint.out" 2> "$out/lint.err" || lint_rc=$?
if grep -q "Traceback (most recent call last):" "$out/lint.err"; then
  cat "$out/lint.err"; echo "ansible-lint (the importer's lint step) failed" >&2; exit 1
fi
# The importer logs each finding (stdout) and each CRITICAL/ERROR line of stderr as a warning.
{ sed 's/^/WARNING: /' "$out/lint.out"; grep -E "^(CRITICAL|ERROR)" "$out/lint.err" | sed 's/^/WARNING: /'; } >> "$out/importer.log" || true
echo "ansible-lint as galaxy-importer runs it, without its 180 s limit: exit $lint_rc, $(wc -l < "$out/lint.out") finding(s)"
if grep -E "^ERROR" "$out/importer.log"; then echo "galaxy-importer reported the errors above" >&2; exit 1; fi
# Galaxy installs no dependency before it lints, so ansible-lint's syntax check cannot resolve kubernetes.core
# (module_defaults group kubernetes.core.k8s, k8s_info) or awx.awx there; and it lints under the placeholder name, so
# the collection's own FQCNs (gpudirect.openshift.<module>, roles by name, the AWX project's import_playbook of
# gpudirect.openshift.site, which fails with code 1) resolve to nothing either. Those warnings are expected; any other
# fails. Step 4 runs the same playbooks' syntax check where the collection and its dependencies are installed.
dependency_warning="couldn't resolve module/action '(kubernetes\.core|awx\.awx|gpudirect\.openshift)\.|the role 'gpudirect\.openshift\.[a-z_]+' was not found|internal-error: Unexpected error code 4 from execution of: ansible-playbook --syntax-check|internal-error: Unexpected error code 1 from execution of: ansible-playbook --syntax-check -vv awx/project-example/"
if grep -E "^WARNING" "$out/importer.log" | grep -vE "$dependency_warning"; then
  echo "galaxy-importer reported the warnings above" >&2; exit 1
fi
echo "galaxy-importer: no errors; $(grep -cE "^WARNING" "$out/importer.log") warning(s), all about names Galaxy cannot resolve while it lints (dependencies it does not install, the collection under its placeholder name)"
python "$ROOT/hack/release_contents.py" docs "$tarball" "$out/importer_result.json"

echo "== 3. execution environments"
mkdir -p "$user/ee"
tar -xzf "$tarball" -C "$user/ee" execution-environment.yml
cp "$tarball" "$user/ee/"
(cd "$user/ee" && "$tools/bin/ansible-builder" create --file execution-environment.yml --context "$out/ee-context") >/dev/null
test -f "$out/ee-context/_build/collections/$(basename "$tarball")"
echo "ansible-builder create (released, from the tarball alone): $out/ee-context/Dockerfile"
"$tools/bin/ansible-builder" create --file execution-environment-dev.yml --context "$out/ee-dev-context" >/dev/null
test -f "$out/ee-dev-context/Dockerfile"
echo "ansible-builder create (development, from the checkout): $out/ee-dev-context/Dockerfile"

echo "== 4. installed offline, run by name"
# The dependencies already installed in that path, copied from the development virtualenv (the ansible package's
# copies cannot be packed back into tarballs: FILES.json lists files the package left out). ansible-galaxy then
# resolves kubernetes.core against galaxy.yml's range from what it finds installed, offline. awx.awx is only for the
# syntax check of awx_configure.yml.
site_packages=$(python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
for dep in kubernetes/core awx/awx; do
  mkdir -p "$user/collections/ansible_collections/${dep%/*}"
  cp -r "$site_packages/ansible_collections/$dep" "$user/collections/ansible_collections/$dep"
done
mkdir -p "$user/home" "$user/work"
# A user's shell: the controller's ansible-core and Python libraries, nothing else of ours.
user_env=(env -i HOME="$user/home" PATH="$VENV/bin:/usr/bin:/bin" LANG=C.UTF-8 ANSIBLE_NOCOLOR=1
  ANSIBLE_COLLECTIONS_PATH="$user/collections" ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false)
(cd "$user/work" && "${user_env[@]}" ansible-galaxy collection install --offline -p "$user/collections" \
  "$tarball") > "$out/install.log" 2>&1 || { cat "$out/install.log"; exit 1; }
installed="$user/collections/ansible_collections/gpudirect/openshift"
grep -q "\"version\": \"$version\"" "$installed/MANIFEST.json"
test -f "$user/collections/ansible_collections/kubernetes/core/MANIFEST.json"
k8s_version=$(python -c "import json, sys; print(json.load(open(sys.argv[1]))['collection_info']['version'])" \
  "$user/collections/ansible_collections/kubernetes/core/MANIFEST.json")
echo "installed $version offline into a collections path that held only kubernetes.core $k8s_version (and awx.awx)"
names=()
for playbook in "$installed"/playbooks/*.yml; do names+=("gpudirect.openshift.$(basename "$playbook" .yml)"); done
(cd "$user/work" && "${user_env[@]}" ansible-playbook --syntax-check "${names[@]}") > "$out/syntax.log" 2>&1 \
  || { cat "$out/syntax.log"; echo "syntax check by name failed with the dependencies installed" >&2; exit 1; }
echo "syntax check by name, dependencies installed: ${#names[@]} playbooks, every one of the tarball"
example="$installed/playbooks/vars/examples/1-shared-device-roce.yml"
(cd "$user/work" && "${user_env[@]}" ansible-playbook gpudirect.openshift.render -e "@$example" \
  -e render_dir="$user/work/manifests") > "$out/render.log" 2>&1 || { cat "$out/render.log"; exit 1; }
echo "ansible-playbook gpudirect.openshift.render: $(find "$user/work/manifests" -name '*.yaml' | wc -l) manifests"

mkdir -p "$user/sim"
python -m simulator serve --profile mixed-lab --kubeconfig "$user/sim/kubeconfig" --ready-file "$user/sim/ready" \
  > "$out/simulator.log" 2>&1 &
sim_pid=$!
for _ in $(seq 1 300); do
  [ -f "$user/sim/ready" ] && break
  kill -0 "$sim_pid" 2>/dev/null || { cat "$out/simulator.log"; exit 1; }
  sleep 0.1
done
[ -f "$user/sim/ready" ] || { echo "the simulator did not start; see $out/simulator.log" >&2; exit 1; }
(cd "$user/work" && "${user_env[@]}" K8S_AUTH_KUBECONFIG="$user/sim/kubeconfig" \
  ansible-playbook gpudirect.openshift.site -e "@$example") > "$out/site.log" 2>&1 || { tail -n 60 "$out/site.log"; exit 1; }
grep -q "Installed and configured." "$out/site.log" || { tail -n 60 "$out/site.log"; exit 1; }
grep -E "^localhost +: " "$out/site.log" | sed 's/^/ansible-playbook gpudirect.openshift.site (simulated cluster, mixed-lab): /'
kill "$sim_pid" 2>/dev/null || true; wait "$sim_pid" 2>/dev/null || true; sim_pid=""

echo "== 5. documentation site"
bash "$ROOT/hack/build_docs.sh" > "$out/docs-site.log" 2>&1 || { cat "$out/docs-site.log"; exit 1; }
test -f "$ROOT/.cache/docs-site/build/html/index.html" && echo "docs site: .cache/docs-site/build/html/index.html"
echo "release check passed in $((SECONDS - t0)) s"
