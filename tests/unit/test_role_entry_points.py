"""Every role entry point has an argument specification (issue 37).

An entry point is a task file that a playbook or a role runs with include_role/import_role and tasks_from. ansible-core
validates an entry point against the entry of the role's meta/argument_specs.yml whose key is the tasks_from value as
written (ansible/playbook/role/__init__.py, Role._prepend_validation_task: argspecs.get(self._from_files['tasks'])),
so ``tasks_from: prune.yml`` never meets a ``prune`` entry: the key and the value must be the same string.
"""

import glob
import os
import re
import subprocess

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTION = "gpudirect.openshift."
ROLE_INCLUDES = {"%s%s" % (prefix, action) for prefix in ("", "ansible.builtin.", "ansible.legacy.")
                 for action in ("include_role", "import_role")}


def yaml_files(root):
    """The playbooks and the role task files (also a role's other YAML: handlers may include roles too)."""
    return sorted(glob.glob(os.path.join(root, "playbooks", "**", "*.yml"), recursive=True)
                  + glob.glob(os.path.join(root, "roles", "*", "*", "**", "*.yml"), recursive=True))


def role_includes(node, where, actions=frozenset(ROLE_INCLUDES)):
    """(role, tasks_from, where) for every include_role/import_role (of ``actions``) with tasks_from anywhere in a
    parsed YAML document."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in actions and isinstance(value, dict) and "tasks_from" in value:
                yield str(value.get("name", "")), str(value["tasks_from"]), where
            else:
                yield from role_includes(value, where, actions)
    elif isinstance(node, list):
        for item in node:
            yield from role_includes(item, where, actions)


def entry_points(root):
    """{(role, tasks_from): [file, ...]} of the collection's own roles, from every playbook and role file."""
    found = {}
    for path in yaml_files(root):
        with open(path, encoding="utf-8") as handle:
            documents = list(yaml.safe_load_all(handle))
        for name, tasks_from, where in role_includes(documents, os.path.relpath(path, root)):
            if "." in name and not name.startswith(COLLECTION):
                continue  # another collection's role
            found.setdefault((name[len(COLLECTION):] if name.startswith(COLLECTION) else name, tasks_from), []).append(where)
    return found


def argument_specs(root, role):
    path = os.path.join(root, "roles", role, "meta", "argument_specs.yml")
    with open(path, encoding="utf-8") as handle:
        return (yaml.safe_load(handle) or {}).get("argument_specs") or {}


def role_defaults(role):
    path = os.path.join(ROOT, "roles", role, "defaults", "main.yml")
    if not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle) or {}


def missing_entry_points(root):
    """'role tasks_from (where)' for each entry point without an argument specification under its tasks_from value."""
    missing = []
    for (role, tasks_from), where in sorted(entry_points(root).items()):
        if tasks_from not in argument_specs(root, role):
            missing.append("%s %s (%s)" % (role, tasks_from, ", ".join(sorted(set(where)))))
    return missing


def test_the_walk_finds_the_entry_points_site_yml_uses():
    found = entry_points(ROOT)
    # Known ones, so that a walk that finds nothing cannot pass the test below.
    for entry in (("preflight", "input_lookups"), ("preflight", "plan"), ("olm_install", "subscribe"), ("rdma", "prune")):
        assert entry in found, (entry, sorted(found))
    assert any(where.startswith("roles" + os.sep) for places in found.values() for where in places)


def test_every_entry_point_has_an_argument_spec_under_its_tasks_from_value():
    missing = missing_entry_points(ROOT)
    assert not missing, ("add an entry to the role's meta/argument_specs.yml named exactly as tasks_from is written "
                         "(without .yml, in both places): %s" % "; ".join(missing))


def test_a_tasks_from_with_the_file_extension_is_reported(tmp_path):
    """The check catches the name mismatch ansible-core ignores in silence: the spec is 'prune', the include 'prune.yml'."""
    (tmp_path / "roles" / "r" / "meta").mkdir(parents=True)
    (tmp_path / "roles" / "r" / "tasks").mkdir(parents=True)
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "roles" / "r" / "meta" / "argument_specs.yml").write_text(
        "argument_specs:\n  main: {short_description: m, options: {}}\n  prune: {short_description: p, options: {}}\n")
    (tmp_path / "playbooks" / "p.yml").write_text(
        "- hosts: all\n  tasks:\n    - block:\n        - ansible.builtin.import_role: {name: gpudirect.openshift.r, tasks_from: prune.yml}\n"
        "        - ansible.builtin.include_role: {name: gpudirect.openshift.r, tasks_from: prune}\n"
        "        - ansible.builtin.include_role: {name: other.collection.r, tasks_from: anything}\n")
    assert missing_entry_points(str(tmp_path)) == ["r prune.yml (%s)" % os.path.join("playbooks", "p.yml")]


def test_every_entry_point_names_an_existing_task_file():
    for (role, tasks_from), where in entry_points(ROOT).items():
        assert os.path.isfile(os.path.join(ROOT, "roles", role, "tasks", tasks_from + ".yml")), (role, tasks_from, where)


def test_every_spec_entry_is_a_task_file_with_a_described_short_spec():
    """Each entry names a task file; each has a short description; each option a type and a description; a default
    that the role's defaults/main.yml gives as a plain value is the spec's default too (a required option has none:
    the placeholder in defaults/main.yml only keeps the name known)."""
    for path in sorted(glob.glob(os.path.join(ROOT, "roles", "*", "meta", "argument_specs.yml"))):
        role = path.split(os.sep)[-3]
        defaults = role_defaults(role)
        for entry, spec in argument_specs(ROOT, role).items():
            assert os.path.isfile(os.path.join(ROOT, "roles", role, "tasks", entry + ".yml")), (role, entry)
            assert spec.get("short_description"), (role, entry)
            assert isinstance(spec.get("options"), dict), "%s %s: options: {} when it declares none" % (role, entry)
            for name, option in spec["options"].items():
                assert option.get("type") and option.get("description"), (role, entry, name)
                value = defaults.get(name)
                if name in defaults and not option.get("required") and not (isinstance(value, str) and "{{" in value):
                    assert option.get("default") == value, (role, entry, name, option.get("default"), value)


def test_ansible_core_validates_the_imported_entry_points_of_site_yml():
    """Through ansible-playbook itself: each static import_role of site.yml with tasks_from lists the validation task
    ansible-core adds for its spec (include_role is dynamic and only the run shows it)."""
    with open(os.path.join(ROOT, "playbooks", "site.yml"), encoding="utf-8") as handle:
        imports = {(name, entry) for name, entry, _where in role_includes(
            yaml.safe_load(handle), "site.yml", {"import_role", "ansible.builtin.import_role"})}
    proc = subprocess.run(["ansible-playbook", "--list-tasks", "-i", "localhost,", os.path.join(ROOT, "playbooks", "site.yml")],
                          capture_output=True, text=True, check=False, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    listed = set(re.findall(r"^\s+(gpudirect\.openshift\.\w+) : Validating arguments against arg spec '(\w+)'", proc.stdout, re.M))
    assert {(COLLECTION + "rdma", "prune"), (COLLECTION + "rdma", "machineconfigs"), (COLLECTION + "olm_install", "subscribe")} <= imports
    assert imports <= listed, "no validation task for: %s" % sorted(imports - listed)
