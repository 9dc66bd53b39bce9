"""AWX surveys as code: awx/surveys/*.json are generated from the roles' meta/argument_specs.yml
(hack/gen_awx_surveys.py), awx/job_templates.yml refers to real things, playbooks/awx_configure.yml is valid."""

import functools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ansible_collections.gpudirect.openshift.tests.hack_scripts import load_hack_script

# One worker runs this module: its module fixture (the rendered AWX objects) would be built again on each xdist worker.
pytestmark = pytest.mark.xdist_group("awx_surveys")


ROOT = Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "hack" / "gen_awx_surveys.py"
gen_awx_surveys = load_hack_script("gen_awx_surveys")

DEFINITIONS = yaml.safe_load((ROOT / "awx" / "job_templates.yml").read_text())
SURVEYED_TEMPLATES = [t for t in DEFINITIONS["job_templates"] if t.get("survey")]
EXCLUDED = DEFINITIONS["survey_excluded_variables"]
RESTRICTED = DEFINITIONS["survey_restricted_patterns"]
# AWX's survey question types and the Python type of a default for each (awx/api/views: survey_spec POST).
LINES_NOTE = "One item per line (commas also separate items)."
SCALAR_TYPES = ("str", "path", "int", "float", "bool", "bytes", "bits")
AWX_DEFAULT_TYPES = {"text": str, "textarea": str, "password": str, "multiplechoice": str, "multiselect": str,
                     "integer": int, "float": (float, int)}


def generate(root, *args):
    return subprocess.run([sys.executable, str(root / "hack" / "gen_awx_surveys.py"), *args],
                          capture_output=True, text=True, check=False, timeout=60, cwd=root)


def playbook_of(template):
    """The project file the template runs: the example project's shim of a collection playbook."""
    return gen_awx_surveys.template_playbook(ROOT, DEFINITIONS, template)


def survey_of(template):
    return json.loads((ROOT / "awx" / "surveys" / ("%s.json" % template["survey"])).read_text())


@functools.lru_cache(maxsize=None)
def argument_spec_options(role, entry="main"):
    """Options of a role entry point; an include_role tasks_from without its own entry point declares none
    (ansible-core validates nothing for it either)."""
    specs = yaml.safe_load((ROOT / "roles" / role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    assert entry in specs or entry != "main", "roles/%s has no main argument spec" % role
    return (specs.get(entry) or {}).get("options") or {}


def roles_listed_by_ansible(playbook):
    """Roles whose tasks `ansible-playbook --list-tasks` shows (static roles and imports)."""
    proc = subprocess.run(["ansible-playbook", "--list-tasks", "-i", "localhost,", str(ROOT / playbook)],
                          capture_output=True, text=True, check=False, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return set(re.findall(r"^\s+gpudirect\.openshift\.(\w+) : ", proc.stdout, re.M))


def expected_question(option):
    """(AWX question type, choices) for an argument-spec option; docs/awx.md has the same table."""
    kind = option.get("type", "str")
    choices = [str(c) for c in option["choices"]] if option.get("choices") else None
    if option.get("no_log"):
        return "password", None
    if kind == "bool":
        return "multiplechoice", ["true", "false"]
    if kind == "int":
        return "integer", None
    if kind == "float":
        return "float", None
    if kind == "list" and choices and option.get("elements", "str") == "str":
        return "multiselect", choices
    if kind in ("list", "dict", "raw", "jsonarg"):
        return "textarea", None
    return ("multiplechoice", choices) if choices else ("text", None)


def is_text_list(option):
    return option.get("type") == "list" and option.get("elements", "str") in SCALAR_TYPES


def answer_from_default(question, option):
    """The role variable's value that the question's default stands for; lists of scalars come as one item per
    line, i.e. as strings."""
    default = question["default"]
    if option.get("type") == "bool":
        return {"true": True, "false": False}[default]
    if is_text_list(option):
        return default.splitlines()
    if question["type"] == "textarea":
        return yaml.safe_load(default)
    return default


def awx_survey_spec_errors(survey):
    """What AWX's survey_spec endpoint would reject (checks written from its documented rules)."""
    errors = []
    for field, kind in (("name", str), ("description", str), ("spec", list)):
        if not isinstance(survey.get(field), kind):
            errors.append("%s must be a %s" % (field, kind.__name__))
    if not survey.get("spec"):
        return errors + ["spec has no questions"]
    seen = set()
    for i, q in enumerate(survey["spec"]):
        for field in ("type", "question_name", "variable"):
            if not isinstance(q.get(field), str) or not q[field]:
                errors.append("question %d: %s must be a non-empty string" % (i, field))
        if not isinstance(q.get("required"), bool):
            errors.append("question %d: required must be a boolean" % i)
        if q.get("variable") in seen:
            errors.append("question %d: variable %s is duplicated" % (i, q.get("variable")))
        seen.add(q.get("variable"))
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", q.get("variable", "")):
            errors.append("question %d: %r is not a variable name" % (i, q.get("variable")))
        if q.get("type") not in AWX_DEFAULT_TYPES:
            errors.append("question %d: type %r is not an AWX question type" % (i, q.get("type")))
            continue
        default = q.get("default", "")
        if default != "" and (not isinstance(default, AWX_DEFAULT_TYPES[q["type"]]) or isinstance(default, bool)):
            errors.append("question %d: default %r does not fit type %s" % (i, default, q["type"]))
        for key in ("min", "max"):
            if q.get(key) is not None and not isinstance(q[key], int):
                errors.append("question %d: %s must be an integer" % (i, key))
        if q["type"] in ("multiplechoice", "multiselect"):
            choices = q.get("choices")
            if not choices or not all(isinstance(c, str) for c in choices):
                errors.append("question %d: choices must be a list of strings" % i)
                continue
            defaults = default.splitlines() if isinstance(default, str) else []
            if q["type"] == "multiplechoice" and len(defaults) > 1:
                errors.append("question %d: a multiple choice question has one default" % i)
            if any(d not in choices for d in defaults):
                errors.append("question %d: default %r is not among the choices" % (i, default))
    return errors


# ----------------------------------------------------------------------------------------------- generated files
def test_committed_surveys_are_up_to_date(tmp_path):
    proc = generate(ROOT, "--output-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    fresh = {p.name: p.read_text() for p in tmp_path.glob("*.json")}
    committed = {p.name: p.read_text() for p in (ROOT / "awx" / "surveys").glob("*.json")}
    assert fresh, "no survey generated"
    assert sorted(committed) == sorted(fresh), "run: python hack/gen_awx_surveys.py"
    for name, text in fresh.items():
        assert committed[name] == text, "awx/surveys/%s is stale: run python hack/gen_awx_surveys.py" % name
    assert generate(ROOT, "--check").returncode == 0


@pytest.mark.parametrize("template", SURVEYED_TEMPLATES, ids=lambda t: t["name"])
def test_every_question_is_an_argument_spec_option(template):
    survey = survey_of(template)
    used = gen_awx_surveys.playbook_roles(ROOT, playbook_of(template))
    for question in survey["spec"]:
        variable = question["variable"]
        declared = {(role, entry): argument_spec_options(role, entry)[variable] or {} for role, entry in used
                    if variable in argument_spec_options(role, entry)}
        assert declared, "%s is not an option of any role of %s" % (variable, template["playbook"])
        assert variable not in EXCLUDED
        for role, option in declared.items():
            qtype, choices = expected_question(option)
            assert question["type"] == qtype, (role, variable)
            assert question.get("choices") == choices, (role, variable)
            assert question["required"] == bool(option.get("required", False)), (role, variable)
            if option.get("default") is None:
                assert "default" not in question, (role, variable)
            else:
                want = [str(item) for item in option["default"]] if is_text_list(option) else option["default"]
                if option.get("type") == "float":
                    want = float(want)  # YAML writes 0 for a float option's 0.0
                answer = answer_from_default(question, option)
                assert answer == want and type(answer) is type(want), (role, variable)
            if question["type"] == "textarea":
                note = LINES_NOTE if is_text_list(option) else "Answer in YAML or JSON"
                assert note in question["question_description"], (role, variable)


@pytest.mark.parametrize("template", SURVEYED_TEMPLATES, ids=lambda t: t["name"])
def test_survey_asks_the_listed_options_and_leaves_the_rest_to_extra_vars(template):
    used = gen_awx_surveys.playbook_roles(ROOT, playbook_of(template))
    # The generator's role discovery (through the shim's import_playbook by collection name) sees at least every
    # role ansible-playbook itself lists.
    assert roles_listed_by_ansible(playbook_of(template)) <= {role for role, _entry in used}
    surveyed = [q["variable"] for q in survey_of(template)["spec"]]
    options = {v: o for role, entry in used for v, o in argument_spec_options(role, entry).items()}
    restricted = {v for v, o in options.items() if gen_awx_surveys.restricted(v, o, RESTRICTED)}
    assert surveyed == DEFINITIONS["surveys"][template["survey"]]
    assert not set(surveyed) & (set(EXCLUDED) | restricted)
    # Everything else is an advanced setting: an option of a role, named in that role's README.
    readmes = "".join((ROOT / "roles" / role / "README.md").read_text() for role, _entry in used)
    assert [v for v in set(options) - set(surveyed) if "`%s`" % v not in readmes] == []


def test_no_survey_lets_a_launcher_choose_images_namespaces_or_service_accounts():
    """Security: what runs where and as whom is never free text at launch (choices or nothing)."""
    for survey_file in sorted((ROOT / "awx" / "surveys").glob("*.json")):
        for question in json.loads(survey_file.read_text())["spec"]:
            name = question["variable"]
            risky = re.search(r"(image|repository|registry|namespace|service_account|scc|binary)s?$|image_overrides$",
                              name)
            assert not risky or question["type"] in ("multiplechoice", "multiselect"), (survey_file.name, name)
    # The patterns cover the options that the roles really have.
    assert {"verify_image", "verify_namespace", "verify_service_account", "hardware_facts_image",
            "hardware_facts_scc"} <= {v for role in os.listdir(ROOT / "roles")
                                      for v, o in argument_spec_options(role).items()
                                      if gen_awx_surveys.restricted(v, o, RESTRICTED)}


def test_no_job_template_asks_for_variables_on_launch():
    """Security: extra variables at launch could redirect the credential's token (gpudirect_api_host)."""
    assert [t["name"] for t in DEFINITIONS["job_templates"] if t.get("ask_variables_on_launch")] == []


def test_excluded_variables_are_connection_or_fact_options_of_the_roles():
    options = {v for role in os.listdir(ROOT / "roles") for v in argument_spec_options(role)}
    assert set(EXCLUDED) <= options, "stale survey_excluded_variables: %s" % sorted(set(EXCLUDED) - options)
    connection = {v for v, reason in EXCLUDED.items() if reason.startswith("cluster connection")}
    facts = {v for v, reason in EXCLUDED.items() if reason.startswith("set by site.yml from hardware facts")}
    from_csv = {v for v, reason in EXCLUDED.items() if re.match(r"set by the \w+ role from the installed CSV", reason)}
    upgrade = {v for v, reason in EXCLUDED.items() if "playbooks/upgrade.yml" in reason}
    other = {"preflight_operator_roles", "gpudirect_pins_file"}
    assert connection | facts | from_csv | upgrade | other == set(EXCLUDED), \
        "every exclusion says why: connection, facts, set from the installed CSV, upgrade mode, internal or a local path"
    # A version a role sets from the installed CSV: that role's tasks pass it to the renderer.
    for variable in from_csv:
        role = re.match(r"set by the (\w+) role", EXCLUDED[variable]).group(1)
        assert variable in (ROOT / "roles" / role / "tasks" / "main.yml").read_text(), (variable, role)
    assert connection == {"gpudirect_kubeconfig", "gpudirect_context", "gpudirect_api_host", "gpudirect_api_key",
                          "gpudirect_validate_certs"}
    # A fact variable is one that site.yml itself sets.
    site = (ROOT / "playbooks" / "site.yml").read_text()
    assert all(re.search(r"^\s+%s:" % v, site, re.M) for v in facts), facts


@pytest.mark.parametrize("survey_file", sorted((ROOT / "awx" / "surveys").glob("*.json")), ids=lambda p: p.name)
def test_surveys_are_valid_awx_survey_specs(survey_file):
    survey = json.loads(survey_file.read_text())
    assert awx_survey_spec_errors(survey) == []


# ------------------------------------------------------------------------------------------------ the generator
@pytest.fixture
def repo_copy(tmp_path):
    """The parts of the repository the generator reads, to change argument specs without touching the checkout."""
    copy = tmp_path / "repo"
    for part in ("awx", "roles", "playbooks"):
        shutil.copytree(ROOT / part, copy / part, symlinks=True)
    (copy / "hack").mkdir()
    shutil.copy(GENERATOR, copy / "hack")
    return copy


def edit_spec(root, role, change):
    path = root / "roles" / role / "meta" / "argument_specs.yml"
    data = yaml.safe_load(path.read_text())
    change(data["argument_specs"]["main"]["options"])
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def ask_in_site_survey(root, *variables):
    path = root / "awx" / "job_templates.yml"
    definitions = yaml.safe_load(path.read_text())
    definitions["surveys"]["site"].extend(variables)
    path.write_text(yaml.safe_dump(definitions, sort_keys=False))


def test_argument_spec_change_without_regenerating_is_detected(repo_copy):
    edit_spec(repo_copy, "preflight", lambda options: options.update(
        preflight_extra_retries={"type": "int", "default": 3, "description": "Added option."}))
    assert generate(repo_copy, "--check").returncode == 0  # a new advanced setting changes no survey
    edit_spec(repo_copy, "nfd", lambda options: options["nfd_install_plan_approval"].update(default="Automatic"))
    ask_in_site_survey(repo_copy, "preflight_extra_retries")
    stale = generate(repo_copy, "--check")
    assert stale.returncode == 1
    assert '"default": "Automatic"' in stale.stdout and "preflight_extra_retries" in stale.stdout

    assert generate(repo_copy).returncode == 0
    assert generate(repo_copy, "--check").returncode == 0
    spec = {q["variable"]: q for q in json.loads((repo_copy / "awx" / "surveys" / "site.json").read_text())["spec"]}
    assert spec["preflight_extra_retries"]["type"] == "integer" and spec["preflight_extra_retries"]["default"] == 3


def test_every_argument_spec_type_maps_to_its_question_type(repo_copy):
    options = {
        "preflight_t_str": {"type": "str", "default": "x"},
        "preflight_t_choice": {"type": "str", "choices": ["a", "b"], "default": "b"},
        "preflight_t_path": {"type": "path", "required": True},
        "preflight_t_bool": {"type": "bool", "default": False},
        "preflight_t_int": {"type": "int", "default": 7},
        "preflight_t_float": {"type": "float", "default": 0.5},
        "preflight_t_multi": {"type": "list", "elements": "str", "choices": ["a", "b", "c"], "default": ["a", "c"]},
        "preflight_t_list": {"type": "list", "elements": "str", "default": ["x", "y"]},
        "preflight_t_ints": {"type": "list", "elements": "int", "default": [1, 2]},
        "preflight_t_dicts": {"type": "list", "elements": "dict", "default": [{"a": 1}]},
        "preflight_t_dict": {"type": "dict", "default": {"k": 1}},
        "preflight_t_secret": {"type": "str", "no_log": True},
    }
    edit_spec(repo_copy, "preflight", lambda existing: existing.update(options))
    ask_in_site_survey(repo_copy, *options)
    assert generate(repo_copy).returncode == 0
    spec = {q["variable"]: q for q in json.loads((repo_copy / "awx" / "surveys" / "site.json").read_text())["spec"]}
    got = {v: (spec[v]["type"], spec[v].get("default")) for v in options}
    assert got == {
        "preflight_t_str": ("text", "x"),
        "preflight_t_choice": ("multiplechoice", "b"),
        "preflight_t_path": ("text", None),
        "preflight_t_bool": ("multiplechoice", "false"),
        "preflight_t_int": ("integer", 7),
        "preflight_t_float": ("float", 0.5),
        "preflight_t_multi": ("multiselect", "a\nc"),
        "preflight_t_list": ("textarea", "x\ny"),
        "preflight_t_ints": ("textarea", "1\n2"),
        "preflight_t_dicts": ("textarea", '[{"a": 1}]'),
        "preflight_t_dict": ("textarea", '{"k": 1}'),
        "preflight_t_secret": ("password", None),
    }
    assert spec["preflight_t_path"]["required"] is True
    assert "YAML or JSON" in spec["preflight_t_dict"]["question_description"]
    assert spec["preflight_t_list"]["question_description"].endswith(LINES_NOTE)
    assert awx_survey_spec_errors({"name": "s", "description": "", "spec": list(spec.values())}) == []


def test_conflicting_declarations_of_one_variable_are_refused(repo_copy):
    """Two roles of one playbook declaring the same variable differently cannot share one survey question."""
    (repo_copy / "awx" / "project-example" / "two_roles.yml").write_text(yaml.safe_dump([{
        "name": "Two roles", "hosts": "all", "gather_facts": False,
        "roles": ["gpudirect.openshift.preflight", {"role": "gpudirect.openshift.nfd"}]}]))
    definitions = yaml.safe_load((repo_copy / "awx" / "job_templates.yml").read_text())
    definitions["job_templates"].append(dict(definitions["job_templates"][0], name="Two roles",
                                             playbook="two_roles.yml", survey="two_roles"))
    definitions["surveys"]["two_roles"] = ["gpudirect_rdma_method", "nfd_channel"]
    (repo_copy / "awx" / "job_templates.yml").write_text(yaml.safe_dump(definitions, sort_keys=False))
    assert generate(repo_copy).returncode == 0
    two = json.loads((repo_copy / "awx" / "surveys" / "two_roles.json").read_text())
    assert {"gpudirect_rdma_method", "nfd_channel"} <= {q["variable"] for q in two["spec"]}

    edit_spec(repo_copy, "preflight", lambda o: o.update({"gpudirect_shared_knob": {"type": "int", "default": 1}}))
    edit_spec(repo_copy, "nfd", lambda o: o.update({"gpudirect_shared_knob": {"type": "int", "default": 1}}))
    definitions["surveys"]["two_roles"].append("gpudirect_shared_knob")
    (repo_copy / "awx" / "job_templates.yml").write_text(yaml.safe_dump(definitions, sort_keys=False))
    assert generate(repo_copy).returncode == 0  # agreeing declarations make one question
    two = json.loads((repo_copy / "awx" / "surveys" / "two_roles.json").read_text())
    assert [q["variable"] for q in two["spec"]].count("gpudirect_shared_knob") == 1

    edit_spec(repo_copy, "nfd", lambda o: o.update({"gpudirect_shared_knob": {"type": "int", "default": 2}}))
    proc = generate(repo_copy, "--check")
    assert proc.returncode == 2
    assert "gpudirect_shared_knob" in proc.stderr and "default" in proc.stderr


# ------------------------------------------------------------------------------------------------ job templates
def test_job_templates_refer_to_existing_playbooks_surveys_and_objects():
    inventories = {i["name"]: i for i in DEFINITIONS["inventories"]}
    credentials = {c["name"] for c in DEFINITIONS["credentials"]}
    assert {c["credential_type"] for c in DEFINITIONS["credentials"]} <= {
        "OpenShift or Kubernetes API Bearer Token", "Vault"}
    for inventory in inventories.values():
        assert (ROOT / DEFINITIONS["project"]["example"] / inventory["source_path"]).is_file(), inventory
    for template in DEFINITIONS["job_templates"]:
        assert (ROOT / playbook_of(template)).is_file(), template["name"]
        assert template["inventory"] in inventories, template["name"]
        assert set(template["credentials"]) <= credentials, template["name"]
        assert template["execution_environment"] == DEFINITIONS["execution_environment"]["name"]
        assert template["job_type"] in ("run", "check")
        assert isinstance(template["extra_vars"], dict)
        assert all(isinstance(v, bool) for k, v in template.items() if k.startswith("ask_"))
        if template.get("survey"):
            assert (ROOT / "awx" / "surveys" / ("%s.json" % template["survey"])).is_file(), template["name"]
    # A template over several clusters must not carry the cluster credential (it would override every host).
    for template in DEFINITIONS["job_templates"]:
        if template["inventory"] != "GPUDirect - one cluster from the credential":
            assert "GPUDirect - OpenShift API token" not in template["credentials"]


def test_awx_configure_playbook_passes_syntax_check_and_lint():
    syntax = subprocess.run(["ansible-playbook", "--syntax-check", "playbooks/awx_configure.yml"],
                            capture_output=True, text=True, check=False, timeout=120, cwd=ROOT)
    assert syntax.returncode == 0, syntax.stdout + syntax.stderr
    lint = subprocess.run(["ansible-lint", "--profile", "production", "playbooks/awx_configure.yml"],
                          capture_output=True, text=True, check=False, timeout=300, cwd=ROOT)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_awx_configure_refuses_a_verifying_credential_without_a_ca(tmp_path):
    """Security: AWX's injector turns verification off for a credential without a CA; refuse before creating it."""
    base = ["ansible-playbook", "playbooks/awx_configure.yml", "-e", "awx_project_scm_url=https://git.example/x.git",
            "-e", "awx_ee_image=quay.example/ee:1", "-e", "awx_cluster_api_host=https://api.ocp.example:6443",
            "-e", "awx_cluster_api_token=sha256~secret"]
    env = dict(os.environ, CONTROLLER_HOST="http://127.0.0.1:9", CONTROLLER_OAUTH_TOKEN="x", ANSIBLE_NOCOLOR="1")
    proc = subprocess.run(base, capture_output=True, text=True, check=False, timeout=120, cwd=ROOT, env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "awx_cluster_ca_cert is not set" in out, out[-3000:]
    assert "TASK [Execution environment]" not in out, "nothing may be created in AWX"
    # With a CA it gets past the check (and then fails only because no controller listens).
    (tmp_path / "ca.yml").write_text("awx_cluster_ca_cert: |\n  -----BEGIN CERTIFICATE-----\n  x\n")
    proc = subprocess.run(base + ["-e", "@%s" % (tmp_path / "ca.yml")], capture_output=True, text=True, check=False,
                          timeout=300, cwd=ROOT, env=env)
    assert "awx_cluster_ca_cert is not set" not in proc.stdout + proc.stderr
    assert "TASK [Execution environment]" in proc.stdout, proc.stdout[-3000:]


def test_awx_configure_without_awx_awx_says_how_to_install_it():
    """Issue 31: awx.awx is no dependency of the collection and the newest `ansible` package lacks it. Hidden here by
    not scanning Python's path (where the `ansible` package of the test environment keeps its collections)."""
    env = dict(os.environ, CONTROLLER_HOST="http://127.0.0.1:9", CONTROLLER_OAUTH_TOKEN="x", ANSIBLE_NOCOLOR="1",
               ANSIBLE_COLLECTIONS_SCAN_SYS_PATH="false")
    proc = subprocess.run(["ansible-playbook", "playbooks/awx_configure.yml", "-e", "awx_project_scm_url=https://git.example/x.git",
                           "-e", "awx_ee_image=quay.example/ee:1"], capture_output=True, text=True, check=False,
                          timeout=300, cwd=ROOT, env=env)
    out = " ".join((proc.stdout + proc.stderr).split())
    assert proc.returncode == 2, out[-3000:]
    assert "needs the awx.awx collection, which is not installed" in out and "ansible-galaxy collection install awx.awx" in out, out[-3000:]
    assert "couldn't resolve module" not in out and "[WARNING]" not in out, out[-3000:]
    assert "TASK [Execution environment]" not in out, "nothing may be created in AWX"


# ------------------------------------------------------------------------------------ the AWX objects, as rendered
SPEC_KEYS = ("type", "elements", "choices", "required", "aliases", "no_log")
RECORDING_MODULE = '''#!/usr/bin/python
# Stands in for awx.awx.{name} with its documented arguments: AnsibleModule validates them as the real module does
# (the same argument spec), then the arguments are recorded instead of being sent to a controller.
import json
import os
from ansible.module_utils.basic import AnsibleModule
SPEC = json.loads({spec!r})
module = AnsibleModule(argument_spec=SPEC, supports_check_mode=True)
with open(os.environ["GPUDIRECT_AWX_RECORD"], "a") as record:
    record.write(json.dumps({{"module": "{name}", "params": module.params}}) + "\\n")
module.exit_json(changed=False)
'''


def argument_spec(options):
    """An AnsibleModule argument spec from ansible-doc's options (awx.awx documents exactly its argument spec:
    ansible-test's validate-modules enforces that for the collection)."""
    spec = {}
    for name, option in options.items():
        spec[name] = {k: option[k] for k in SPEC_KEYS if k in option}
        if option.get("suboptions"):
            spec[name]["options"] = argument_spec(option["suboptions"])
    return spec


@pytest.fixture(scope="module")
def awx_rendered(tmp_path_factory):
    """Run playbooks/awx_configure.yml with every awx.awx module replaced by one that validates its arguments
    against the real module's argument spec and records them: [(module, params)] in task order."""
    tmp = tmp_path_factory.mktemp("awx")
    # The AWX objects are created by the tasks awx_configure.yml includes once awx.awx is found.
    tasks = yaml.safe_load((ROOT / "playbooks" / "tasks" / "awx_objects.yml").read_text())
    modules = sorted({key.split(".")[-1] for task in tasks for key in task if key.startswith("awx.awx.")})
    assert len(modules) >= 6, modules
    docs = json.loads(subprocess.run(["ansible-doc", "--json"] + ["awx.awx." + m for m in modules], capture_output=True,
                                     text=True, check=True, timeout=120, cwd=ROOT).stdout)
    module_dir = tmp / "collections" / "ansible_collections" / "awx" / "awx" / "plugins" / "modules"
    module_dir.mkdir(parents=True)
    (module_dir.parent.parent / "galaxy.yml").write_text("namespace: awx\nname: awx\nversion: 24.6.1\n")
    for name in modules:
        spec = json.dumps(argument_spec(docs["awx.awx." + name]["doc"]["options"]))
        (module_dir / (name + ".py")).write_text(RECORDING_MODULE.format(name=name, spec=spec))
    record = tmp / "record.jsonl"
    secrets = tmp / "secrets.yml"
    secrets.write_text(yaml.safe_dump({"awx_cluster_api_host": "https://api.ocp.example:6443",
                                       "awx_cluster_api_token": "sha256~secret", "awx_vault_password": "vault-secret",
                                       "awx_cluster_ca_cert": "-----BEGIN CERTIFICATE-----\nx\n"}))
    env = dict(os.environ, GPUDIRECT_AWX_RECORD=str(record), ANSIBLE_NOCOLOR="1",
               ANSIBLE_COLLECTIONS_PATH=os.pathsep.join([str(tmp / "collections"), os.environ.get("ANSIBLE_COLLECTIONS_PATH", "")]))
    # By name, from another directory: as a user of the installed collection runs it.
    proc = subprocess.run(["ansible-playbook", "gpudirect.openshift.awx_configure", "-e", "awx_project_scm_url=https://git.example/ops/gpu.git",
                           "-e", "awx_ee_image=quay.example/ops/ee:1", "-e", "@%s" % secrets], capture_output=True, text=True,
                          check=False, timeout=300, cwd=tmp, env=env)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-3000:]
    return [(r["module"], r["params"]) for r in map(json.loads, record.read_text().splitlines())]


def test_every_awx_object_is_valid_for_the_awx_awx_module_that_creates_it(awx_rendered):
    """Each call passed AnsibleModule validation with awx.awx's argument spec (else the run above failed); here:
    every object of awx/job_templates.yml was rendered, and each job template as the data says."""
    by_module = {}
    for module, params in awx_rendered:
        by_module.setdefault(module, []).append(params)
    assert [t["name"] for t in by_module["job_template"]] == [t["name"] for t in DEFINITIONS["job_templates"]]
    project = by_module["project"][0]
    assert project["name"] == DEFINITIONS["project"]["name"] and project["scm_url"] == "https://git.example/ops/gpu.git"
    assert sorted({s["source_path"] for s in by_module["inventory_source"]}) == sorted(
        i["source_path"] for i in DEFINITIONS["inventories"])
    for params, template in zip(by_module["job_template"], DEFINITIONS["job_templates"]):
        assert params["project"] == project["name"] and params["playbook"] == template["playbook"]
        assert params["ask_variables_on_launch"] is False, template["name"]
        assert params["survey_enabled"] is True
        assert params["survey_spec"] == survey_of(template), template["name"]
        assert awx_survey_spec_errors(params["survey_spec"]) == []
    # Secrets reach only the credential calls, never another object.
    for module, params in awx_rendered:
        if module != "credential":
            assert "sha256~secret" not in json.dumps(params) and "vault-secret" not in json.dumps(params), module


def test_site_survey_asks_only_what_a_person_answers():
    site = json.loads((ROOT / "awx" / "surveys" / "site.json").read_text())["spec"]
    variables = [q["variable"] for q in site]
    assert len(variables) < 20, variables
    assert variables == DEFINITIONS["surveys"]["site"]
    assert "The `site` survey (%d questions)" % len(variables) in (ROOT / "docs" / "awx.md").read_text()
    assert {"gpudirect_rdma_method", "gpudirect_rdma_fabric", "gpudirect_rdma_nic_selection", "gpudirect_rdma_nic_interfaces",
            "gpudirect_rdma_ipam_range", "nvidia_gpu_operator_install_plan_approval"} <= set(variables)
    assert not [v for v in variables if v.startswith(("diagnostics_", "hardware_facts_", "preflight_"))
                or v.endswith(("_timeout", "_grace_period"))], "internal settings are advanced settings (extra vars)"
