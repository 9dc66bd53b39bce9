"""The documentation is complete and renders: role READMEs, the README's Contents table, the docs/ index, links,
and antsibull-docs' own lint of every module, filter and role documentation.

The lint runs the real `antsibull-docs lint-collection-docs --plugin-docs` on the collection through its
ansible_collections path, as hack/test.sh does (about 30 s on a shared 2-core machine). Building the whole HTML
site is a separate, opt-in script: hack/build_docs.sh.
"""

import ast
import glob
import os
import re
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTION_PATH = os.path.join(ROOT, ".cache", "collections", "ansible_collections", "gpudirect", "openshift")
ROLES = sorted(os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(ROOT, "roles", "*", "tasks")))
DOC_PAGES = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
# [text](target) in Markdown, without images and without absolute URLs or in-page anchors.
MARKDOWN_LINK = re.compile(r"(?<!!)\[[^\]]+\]\(([^)\s]+)\)")


def read(path):
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def argument_spec_options(role):
    specs = yaml.safe_load(read(os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml")))["argument_specs"]
    options = set()
    for entry_point in specs.values():
        options.update((entry_point.get("options") or {}).keys())
    return options


def module_names():
    return sorted(os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(ROOT, "plugins", "modules", "*.py"))
                  if not os.path.basename(p).startswith("_"))


def filter_names():
    """Every filter a FilterModule registers (parsed, not imported, so a broken plugin shows as a missing name)."""
    names = set()
    for path in glob.glob(os.path.join(ROOT, "plugins", "filter", "*.py")):
        for node in ast.walk(ast.parse(read(path))):
            if isinstance(node, ast.FunctionDef) and node.name == "filters":
                for ret in ast.walk(node):
                    if isinstance(ret, ast.Return) and isinstance(ret.value, ast.Dict):
                        names.update(k.value for k in ret.value.keys if isinstance(k, ast.Constant))
    return sorted(names)


def playbook_names():
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "playbooks", "*.yml")))


def contents_table():
    """{(kind, name)} from the README's Contents table."""
    readme = read(os.path.join(ROOT, "README.md"))
    section = readme.split("## Contents", 1)[1].split("\n## ", 1)[0]
    rows = set()
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[2]:
            match = re.fullmatch(r"`([^`]+)`", cells[1])
            if match:
                rows.add((cells[0], match.group(1)))
    return rows


def test_every_plugin_kind_is_found():
    # Guards the tests below against passing on an empty list after a layout change.
    assert len(ROLES) >= 10 and len(module_names()) >= 9 and len(filter_names()) >= 5 and len(playbook_names()) >= 7
    assert "hardware_report_html" in filter_names() and "site.yml" in playbook_names()


@pytest.mark.parametrize("role", ROLES)
def test_role_readme_names_every_argument_spec_option(role):
    path = os.path.join(ROOT, "roles", role, "README.md")
    assert os.path.isfile(path), "roles/%s has no README.md" % role
    readme = read(path)
    options = argument_spec_options(role)
    assert options, "roles/%s/meta/argument_specs.yml has no options" % role
    missing = sorted(o for o in options if not re.search(r"(?<![A-Za-z0-9_])%s(?![A-Za-z0-9_])" % re.escape(o), readme))
    assert not missing, "roles/%s/README.md does not mention: %s" % (role, ", ".join(missing))


@pytest.mark.parametrize("role", ROLES)
def test_role_readme_has_variables_license_and_a_valid_example(role):
    readme = read(os.path.join(ROOT, "roles", role, "README.md"))
    assert readme.startswith("# gpudirect.openshift.%s\n" % role)
    for heading in ("## Role variables", "## License"):
        assert heading in readme, "roles/%s/README.md lacks %r" % (role, heading)
    assert "```yaml\n" in readme, "roles/%s/README.md has no example playbook" % role
    example = readme.split("```yaml\n", 1)[1].split("```", 1)[0]
    play = yaml.safe_load(example)
    assert isinstance(play, list) and play, "the example playbook of %s is not a list of plays" % role
    used = [r if isinstance(r, str) else r.get("role") for p in play for r in p.get("roles") or []]
    included = [t.get("ansible.builtin.include_role", {}).get("name") for p in play for t in p.get("tasks") or []
                for t in ([t] + (t.get("block") or []) + (t.get("rescue") or []))]
    assert "gpudirect.openshift.%s" % role in used + included, "the example playbook of %s does not use it" % role


def test_readme_contents_lists_every_module_filter_role_and_playbook():
    rows = contents_table()
    lookups = {os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(ROOT, "plugins", "lookup", "*.py"))}
    expected = ({("module", m) for m in module_names()} | {("filter", f) for f in filter_names()} | {("lookup", name) for name in lookups}
                | {("role", r) for r in ROLES} | {("playbook", p) for p in playbook_names()})
    assert not expected - rows, "missing from README.md Contents: %s" % sorted(expected - rows)
    assert not rows - expected, "README.md Contents lists what does not exist: %s" % sorted(rows - expected)


def test_readme_keeps_the_two_commands():
    readme = read(os.path.join(ROOT, "README.md"))
    section = readme.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    assert "hack/site.sh      # run the main job" in section and "hack/test.sh      # run every test" in section


@pytest.mark.parametrize("index", ["README.md", "docs/index.md"])
def test_every_doc_page_is_linked(index):
    text = read(os.path.join(ROOT, index))
    base = os.path.dirname(os.path.join(ROOT, index))
    linked = {os.path.normpath(os.path.join(base, t.split("#")[0])) for t in MARKDOWN_LINK.findall(text)}
    missing = [p for p in DOC_PAGES if os.path.join(ROOT, "docs", p) not in linked and p != os.path.basename(index)]
    assert not missing, "%s does not link: %s" % (index, ", ".join(missing))


def test_docs_roles_page_links_every_role_readme():
    text = read(os.path.join(ROOT, "docs", "roles.md"))
    for role in ROLES:
        assert "(../roles/%s/README.md)" % role in text, "docs/roles.md does not link roles/%s/README.md" % role


def test_relative_links_resolve():
    pages = ([os.path.join(ROOT, "README.md")] + glob.glob(os.path.join(ROOT, "docs", "*.md"))
             + glob.glob(os.path.join(ROOT, "roles", "*", "README.md")))
    broken = []
    for page in pages:
        for target in MARKDOWN_LINK.findall(read(page)):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            path = os.path.normpath(os.path.join(os.path.dirname(page), target.split("#")[0]))
            if not os.path.exists(path):
                broken.append("%s -> %s" % (os.path.relpath(page, ROOT), target))
    assert not broken, "broken links: %s" % "; ".join(broken)


def test_antsibull_docs_lint_collection_docs():
    assert os.path.isdir(COLLECTION_PATH), "run under `source hack/env.sh` (it links %s)" % COLLECTION_PATH
    env = dict(os.environ)
    # The venv (with kubernetes.core) lies inside this git checkout and is ignored; without a ceiling antsibull-docs
    # copies the dependency with `git ls-files`, which yields nothing, and every kubernetes.core doc fragment is missing.
    venv = os.environ.get("VIRTUAL_ENV") or os.path.dirname(os.path.dirname(sys.executable))
    env["GIT_CEILING_DIRECTORIES"] = venv
    antsibull_docs = os.path.join(os.path.dirname(sys.executable), "antsibull-docs")
    proc = subprocess.run([antsibull_docs, "lint-collection-docs", "--plugin-docs", COLLECTION_PATH], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-8000:]


# A line may name cluster-admin only to say it is not needed or what amounts to it.
CLUSTER_ADMIN_DISCLAIMERS = ("no cluster-admin", "not need", "instead of", "amount to", "without cluster-admin", "never cluster-admin")


def test_no_page_recommends_cluster_admin_or_long_lived_tokens():
    """Issue 20 point 10: the AWX and least-privilege docs send automation to the generated roles of deploy/rbac with
    tokens of hours, never to cluster-admin or a token of days (the old awx.md said cluster-admin and --duration=720h)."""
    pages = [os.path.join(ROOT, "README.md")] + [os.path.join(ROOT, "docs", p) for p in DOC_PAGES]
    pages += glob.glob(os.path.join(ROOT, "roles", "*", "README.md"))
    for page in pages:
        for number, line in enumerate(read(page).splitlines(), 1):
            where = "%s:%d: %s" % (os.path.relpath(page, ROOT), number, line)
            if "cluster-admin" in line.lower():
                assert any(d in line.lower() for d in CLUSTER_ADMIN_DISCLAIMERS), where
            for amount, unit in re.findall(r"--duration[= ](\d+)([smhd])", line):
                hours = int(amount) * {"s": 1.0 / 3600, "m": 1.0 / 60, "h": 1, "d": 24}[unit]
                assert hours <= 24, where
    awx = read(os.path.join(ROOT, "docs", "awx.md"))
    assert "deploy/rbac/clusterrole.yml" in awx and "oc create token gpudirect-automation" in awx


def test_docs_index_says_which_profile_every_shipped_example_fits():
    """Issue 31: the examples fit mixed-lab only and nothing a newcomer read said so. docs/index.md names each
    example of playbooks/vars/examples with the shipped profile it fits, and every shipped profile with its variables,
    and each example's NIC names or PCI addresses are on that profile's nodes."""
    from simulator.profiles import shipped_profiles  # pylint: disable=import-outside-toplevel

    text = read(os.path.join(ROOT, "docs", "index.md"))
    fits = dict(re.findall(r"^\| `([\w.-]+\.yml)` \| [^|]+ \| ([\w-]+) \|$", text, re.M))
    examples = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "playbooks", "vars", "examples", "*.yml")))
    assert sorted(fits) == examples, (sorted(fits), examples)
    profiles = shipped_profiles()
    for profile in profiles:
        assert re.search(r"^\| `%s`( \(the default\))? \| .* \| `playbooks/vars/simulator/%s\.yml`" % (profile, profile), text, re.M), profile
    for example, profile in fits.items():
        assert profile in profiles, (example, profile)
        hardware = read(os.path.join(ROOT, "simulator", "profiles", profile + ".yaml"))
        values = yaml.safe_load(read(os.path.join(ROOT, "playbooks", "vars", "examples", example)))
        named = (values.get("gpudirect_rdma_nic_interfaces") or []) + (values.get("gpudirect_rdma_nic_pci_addresses") or [])
        assert named, example
        for name in named:
            assert re.search(r"\b%s\b" % re.escape(name), hardware), "%s names %s, which %s does not have" % (example, name, profile)
