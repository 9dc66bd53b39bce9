"""Generate AWX / Automation Controller survey specs from the roles' meta/argument_specs.yml.

    python hack/gen_awx_surveys.py                 # (re)write awx/surveys/<survey>.json
    python hack/gen_awx_surveys.py --check         # exit 1 and show a diff when a committed survey is stale
    python hack/gen_awx_surveys.py --output-dir D  # write somewhere else (the tests do this)

Which surveys exist and which playbook each one describes comes from awx/job_templates.yml. For each survey the
generator collects every role the playbook runs (plays' roles:, include_role/import_role in any task list or role
task file, role dependencies, import_playbook, also by collection name from the example project's shim), in order,
and turns each option that the survey's list under surveys: names into one question; the other options are advanced
settings. A listed option under survey_excluded_variables (cluster connection: it comes from the AWX credential or
the inventory) or a free-text one matching survey_restricted_patterns (images, namespaces, service accounts: what
runs where and as whom) is refused. The mapping is documented in docs/awx.md.
"""

import argparse
import difflib
import fnmatch
import json
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
COLLECTION = "gpudirect.openshift"
JOB_TEMPLATES = Path("awx") / "job_templates.yml"
SURVEY_DIR = Path("awx") / "surveys"
ROLE_INCLUDES = {"include_role", "import_role", "ansible.builtin.include_role", "ansible.builtin.import_role",
                 "ansible.legacy.include_role", "ansible.legacy.import_role"}
PLAYBOOK_IMPORTS = {"import_playbook", "ansible.builtin.import_playbook", "ansible.legacy.import_playbook"}
TASK_LISTS = ("pre_tasks", "tasks", "post_tasks", "handlers")
BLOCK_LISTS = ("block", "rescue", "always")
# Ansible documentation markup -> plain text (AWX shows descriptions verbatim).
MARKUP = re.compile(r"\b(?:[CIBMOVEU]|RV)\(([^)]*)\)|\bL\(([^,)]*),[^)]*\)")
BOOL_CHOICES = ["true", "false"]
BOOL_NOTE = "Answer true or false (AWX surveys have no boolean type)."
TEXTAREA_NOTE = "Answer in YAML or JSON ({kind})."
LINES_NOTE = "One item per line (commas also separate items)."
SCALARS = ("str", "path", "int", "float", "bool", "bytes", "bits")


class SurveyError(Exception):
    """The argument specs or awx/job_templates.yml cannot be turned into a survey."""


def load_yaml(path):
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def plain(text):
    if isinstance(text, list):
        text = " ".join(str(t) for t in text)
    text = str(text or "").strip()
    return MARKUP.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), text)


# --------------------------------------------------------------------------- which roles a playbook runs
def role_dirs(root, name):
    """Role directories under roles/ that a role reference names; Jinja in the name matches like a glob."""
    short = name[len(COLLECTION) + 1:] if name.startswith(COLLECTION + ".") else name
    if "." in short and "{{" not in short:
        return []  # a role of another collection: not ours to survey
    pattern = re.sub(r"\{\{.*?\}\}", "*", short)
    found = sorted(p.name for p in (root / "roles").iterdir()
                   if p.is_dir() and fnmatch.fnmatchcase(p.name, pattern) and (p / "tasks").is_dir())
    if not found and "{{" not in short:
        raise SurveyError("role %s is used but roles/%s does not exist" % (name, short))
    return found


def role_reference(task):
    for key in ROLE_INCLUDES:
        if key in task:
            args = task[key]
            if isinstance(args, str):
                return args, "main"
            return args.get("name"), args.get("tasks_from", "main")
    return None


class RoleCollector:
    def __init__(self, root):
        self.root = root
        self.found = []  # (role, entry point), in the order the playbook runs them
        self._seen_files = set()

    def add_role(self, name, entry="main"):
        for role in role_dirs(self.root, name):
            key = (role, entry)
            if key in self.found:
                continue
            meta = self.root / "roles" / role / "meta" / "main.yml"
            if meta.is_file():
                for dep in (load_yaml(meta) or {}).get("dependencies") or []:
                    self.add_role(dep if isinstance(dep, str) else dep.get("role") or dep.get("name"))
            self.found.append(key)
            task_dir = self.root / "roles" / role / "tasks"
            for task_file in sorted(task_dir.rglob("*.yml")) + sorted(task_dir.rglob("*.yaml")):
                self.add_task_file(task_file)

    def add_task_file(self, path):
        if path in self._seen_files:
            return
        self._seen_files.add(path)
        self.add_tasks(load_yaml(path) or [])

    def add_tasks(self, tasks):
        for task in tasks or []:
            if not isinstance(task, dict):
                continue
            for key in BLOCK_LISTS:
                self.add_tasks(task.get(key))
            reference = role_reference(task)
            if reference and reference[0]:
                self.add_role(*reference)

    def add_playbook(self, path):
        if path in self._seen_files:
            return
        self._seen_files.add(path)
        for play in load_yaml(path) or []:
            for key in PLAYBOOK_IMPORTS:
                if key in play:
                    target = play[key]
                    if target.startswith(COLLECTION + "."):
                        target = self.root / "playbooks" / (target[len(COLLECTION) + 1:] + ".yml")
                    else:
                        target = path.parent / target
                    self.add_playbook(target)
            for key in ("pre_tasks",):
                self.add_tasks(play.get(key))
            for entry in play.get("roles") or []:
                self.add_role(entry if isinstance(entry, str) else entry.get("role") or entry.get("name"))
            for key in ("tasks", "post_tasks", "handlers"):
                self.add_tasks(play.get(key))


def playbook_roles(root, playbook):
    collector = RoleCollector(root)
    collector.add_playbook(root / playbook)
    return collector.found


def role_options(root, role, entry):
    spec_file = root / "roles" / role / "meta" / "argument_specs.yml"
    if not spec_file.is_file():
        raise SurveyError("roles/%s has no meta/argument_specs.yml" % role)
    specs = (load_yaml(spec_file) or {}).get("argument_specs") or {}
    if entry not in specs:
        if entry == "main":
            raise SurveyError("roles/%s/meta/argument_specs.yml has no entry point 'main'" % role)
        # Like ansible-core: an include_role tasks_from without its own entry point validates (declares) nothing.
        return {}
    return specs[entry].get("options") or {}


# --------------------------------------------------------------------------- option -> question
COMPARED_KEYS = ("type", "elements", "choices", "default", "no_log")


def question_type(option):
    """The AWX question type for an argument-spec option (see docs/awx.md for the table)."""
    kind = option.get("type", "str")
    if option.get("no_log"):
        if kind != "str":
            raise SurveyError("no_log option of type %s: only strings can be password questions" % kind)
        return "password"
    if kind in ("str", "path", "bytes", "bits"):
        return "multiplechoice" if option.get("choices") else "text"
    if kind == "bool":
        return "multiplechoice"
    if kind == "int":
        return "integer"
    if kind == "float":
        return "float"
    if kind == "list" and option.get("choices") and option.get("elements", "str") == "str":
        return "multiselect"
    if kind in ("list", "dict", "raw", "jsonarg"):
        return "textarea"
    raise SurveyError("argument-spec type %r has no survey question type" % kind)


def is_text_list(option):
    """A list of scalars: answered one item per line, the text form the input model and -e key=value share."""
    return option.get("type") == "list" and option.get("elements", "str") in SCALARS


def survey_default(qtype, option):
    """The option's default as AWX stores it for this question type; None when there is none."""
    default = option.get("default")
    if default is None:
        return None
    if qtype == "password":
        raise SurveyError("a no_log option must not have a default (it would be committed to the survey)")
    if option.get("type") == "bool":
        return "true" if default else "false"
    if qtype == "multiselect" or (qtype == "textarea" and is_text_list(option)):
        return "\n".join(str(d) for d in default)  # one item per line, as AWX stores multiselect defaults
    if qtype == "textarea":
        return json.dumps(default, sort_keys=True)  # JSON is YAML: one line, unambiguous
    if qtype == "integer":
        return int(default)
    if qtype == "float":
        return float(default)
    return str(default)


def question(role, variable, option):
    qtype = question_type(option)
    kind = option.get("type", "str")
    name = variable[len(role) + 1:] if variable.startswith(role + "_") else variable
    description = plain(option.get("description"))
    if kind == "bool":
        description = (description + " " + BOOL_NOTE).strip()
    elif qtype == "textarea" and is_text_list(option):
        description = (description + " " + LINES_NOTE).strip()
    elif qtype == "textarea":
        what = {"list": "a list", "dict": "a mapping"}.get(kind, "any value")
        description = (description + " " + TEXTAREA_NOTE.format(kind=what)).strip()
    item = {
        "question_name": "%s (%s)" % (name.replace("_", " ").capitalize(), role),
        "question_description": description,
        "variable": variable,
        "type": qtype,
        "required": bool(option.get("required", False)),
    }
    if kind == "bool":
        item["choices"] = list(BOOL_CHOICES)
    elif qtype in ("multiplechoice", "multiselect"):
        item["choices"] = [str(c) for c in option["choices"]]
    default = survey_default(qtype, option)
    if default is not None:
        item["default"] = default
    return item


# --------------------------------------------------------------------------- surveys
def load_job_templates(root):
    data = load_yaml(root / JOB_TEMPLATES) or {}
    return data


def restricted(variable, option, patterns):
    """True for a variable that must not be free text at launch (survey_restricted_patterns) and has no choices."""
    return not (option or {}).get("choices") and any(fnmatch.fnmatchcase(variable, p) for p in patterns)


def surveyed_options(root, playbook, excluded, roles=None, patterns=()):
    """{variable: (role, option)} for every option the survey of `playbook` asks, in playbook order;
    every role defining the same variable must agree on type, elements, choices, default and no_log."""
    if roles is None:
        used = playbook_roles(root, playbook)
    else:
        used = [(r, "main") for r in roles]
    options = {}
    for role, entry in used:
        for variable, option in role_options(root, role, entry).items():
            option = option or {}
            if variable in excluded or restricted(variable, option, patterns):
                continue
            if variable in options:
                first_role, first = options[variable]
                for key in COMPARED_KEYS:
                    if first.get(key) != option.get(key):
                        raise SurveyError("%s is declared by roles %s and %s with different %s (%r, %r)"
                                          % (variable, first_role, role, key, first.get(key), option.get(key)))
                continue
            options[variable] = (role, option)
    return options


def template_playbook(root, data, template):
    """The project file a template runs (the example project's shim), relative to ``root``."""
    example = (data.get("project") or {}).get("example")
    return str(Path(example) / template["playbook"]) if example else template["playbook"]


def collection_playbook(root, path):
    """gpudirect.openshift.<name> that the shim ``path`` imports, or ``path`` itself when it imports none."""
    for play in load_yaml(root / path) or []:
        for key in PLAYBOOK_IMPORTS:
            if isinstance(play, dict) and str(play.get(key, "")).startswith(COLLECTION + "."):
                return play[key]
    return path


def build_surveys(root=ROOT):
    """{survey name: survey spec} for every survey named in awx/job_templates.yml."""
    data = load_job_templates(root)
    excluded = data.get("survey_excluded_variables") or {}
    questions = data.get("surveys") or {}
    sources = {}
    for template in data.get("job_templates") or []:
        survey = template.get("survey")
        if not survey:
            continue
        source = (template_playbook(root, data, template), tuple(template.get("survey_roles") or ()) or None)
        if sources.setdefault(survey, source) != source:
            raise SurveyError("survey %s is used by templates of different playbooks or survey_roles" % survey)
    surveys = {}
    for survey, (playbook, roles) in sorted(sources.items()):
        options = surveyed_options(root, playbook, excluded, roles, data.get("survey_restricted_patterns") or ())
        if survey not in questions:
            raise SurveyError("survey %s has no list of questions under surveys: in %s" % (survey, JOB_TEMPLATES))
        unknown = [v for v in questions[survey] if v not in options]
        if unknown:
            raise SurveyError("survey %s asks %s, which no role of %s offers as a question (not an option, excluded or "
                              "restricted)" % (survey, ", ".join(unknown), playbook))
        if not questions[survey]:
            raise SurveyError("survey %s (%s) would have no questions; AWX rejects an empty survey" % (survey, playbook))
        surveys[survey] = {
            "name": survey,
            "description": ("Variables of %s, generated from the roles' meta/argument_specs.yml by "
                            "hack/gen_awx_surveys.py; do not edit by hand." % collection_playbook(root, playbook)),
            "spec": [question(options[v][0], v, options[v][1]) for v in questions[survey]],
        }
    stale = sorted(set(questions) - set(sources))
    if stale:
        raise SurveyError("surveys: in %s lists %s, which no job template uses" % (JOB_TEMPLATES, ", ".join(stale)))
    return surveys


def render(spec):
    return json.dumps(spec, indent=2, ensure_ascii=False) + "\n"


def write_surveys(output_dir, root=ROOT):
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, spec in build_surveys(root).items():
        path = output_dir / ("%s.json" % name)
        path.write_text(render(spec), encoding="utf-8")
        written.append(path)
    return written


def check_surveys(root=ROOT):
    """Differences between the committed surveys and freshly generated ones (empty list: up to date)."""
    problems = []
    surveys = build_surveys(root)
    survey_dir = root / SURVEY_DIR
    for name, spec in surveys.items():
        path = survey_dir / ("%s.json" % name)
        want = render(spec)
        have = path.read_text(encoding="utf-8") if path.is_file() else ""
        if have != want:
            problems.append("".join(difflib.unified_diff(have.splitlines(True), want.splitlines(True),
                                                         str(path), "generated")) or "%s is missing" % path)
    stale = sorted(p.name for p in survey_dir.glob("*.json") if p.stem not in surveys) if survey_dir.is_dir() else []
    problems.extend("%s/%s is not generated from any job template any more" % (SURVEY_DIR, s) for s in stale)
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--check", action="store_true", help="only report stale or missing survey files")
    parser.add_argument("--output-dir", default=str(ROOT / SURVEY_DIR), help="where to write the surveys")
    args = parser.parse_args(argv)
    try:
        if args.check:
            problems = check_surveys()
            for problem in problems:
                print(problem)
            if problems:
                print("AWX surveys are out of date: run python hack/gen_awx_surveys.py", file=sys.stderr)
            return 1 if problems else 0
        for path in write_surveys(args.output_dir):
            print(path)
    except SurveyError as exc:
        print("error: %s" % exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
