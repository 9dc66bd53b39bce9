"""One definition of each thing (issue 16): the kinds the collection prunes are listed once, in module_utils/names.py, and
roles read them through the managed_kinds filter; readiness conditions come from render/waits.py."""

import glob
import os
import re

import yaml

from ansible_collections.gpudirect.openshift.plugins.module_utils import names

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
YAML_FILES = sorted(glob.glob(os.path.join(ROOT, "roles", "*", "*", "*.yml")) + glob.glob(os.path.join(ROOT, "playbooks", "*.yml")))
LIST_ITEM_KIND = re.compile(r"^\s*-\s+([a-z0-9.-]+/v[0-9a-z]+/([A-Z][A-Za-z]+))\s*$")


def test_managed_kinds_are_not_listed_in_roles_or_playbooks():
    managed = set(names.NETWORK_KINDS) | set(names.SRIOV_POLICY_KINDS)
    listed = {}
    for path in YAML_FILES:
        with open(path) as handle:
            for number, line in enumerate(handle, 1):
                match = LIST_ITEM_KIND.match(line)
                if match and match.group(2) in managed:
                    listed.setdefault(match.group(1), []).append("%s:%d" % (os.path.relpath(path, ROOT), number))
    # Finalizer facts are another fact about some of these kinds (teardown waits for their release); they stay listed.
    finalized = {"sriovnetwork.openshift.io/v1/SriovNetwork", "sriovnetwork.openshift.io/v1/SriovIBNetwork",
                 "sriovnetwork.openshift.io/v1/SriovNetworkPoolConfig"}
    repeated = dict((kind, where) for kind, where in listed.items()
                    if not (kind in finalized and all("teardown/vars" in w for w in where) and len(where) == 1))
    assert repeated == {}, "list these kinds through gpudirect.openshift.managed_kinds: %s" % repeated


def test_no_jmespath_is_built_by_jinja_in_the_rdma_role():
    with open(os.path.join(ROOT, "roles", "rdma", "vars", "main.yml")) as handle:
        text = handle.read()
    assert "items[?" not in text and "`" not in text


def test_no_role_builds_jmespath_with_jinja():
    """Readiness conditions with values in them come from render/waits.py through filters; a role may still name a
    fixed condition (``length(items) == `0```), never one assembled by Jinja."""
    jmespath_mark = re.compile(r"items\[\?|`\[\]`|`[0-9]+`|\|\| '")
    found = []
    for path in sorted(glob.glob(os.path.join(ROOT, "roles", "*", "*", "*.yml"))):
        with open(path) as handle:
            text = handle.read()
        # Each YAML value (folded ones included) as one piece of text.
        for piece in re.split(r"\n(?=\s*[A-Za-z_]+:|\s*- )", text):
            if jmespath_mark.search(piece) and "{{" in piece:
                found.append("%s: %s" % (os.path.relpath(path, ROOT), piece.strip()[:120]))
    assert found == [], "build these conditions in render/waits.py: %s" % found


def test_the_operators_are_listed_only_in_the_catalogue():
    """Roles, playbooks and templates read the operators through the gpudirect.openshift.operators lookup: no file
    names an operator package of the catalogue, and no OLM Subscription setting is wired per operator by hand."""
    from ansible_collections.gpudirect.openshift.plugins.module_utils import catalogue

    # "nfd" is also the role key of its entry, so it counts only as a package: value.
    packages = [entry["package"] for entry in catalogue.OPERATORS if entry["package"] != entry["role"]]
    package_name = re.compile(r"(?<![A-Za-z0-9_./-])(%s)(?![A-Za-z0-9_.-])|package:\s*['\"]?(%s)\b" % (
        "|".join(re.escape(p) for p in packages), "|".join(re.escape(e["package"]) for e in catalogue.OPERATORS)))
    files = YAML_FILES + sorted(glob.glob(os.path.join(ROOT, "roles", "*", "templates", "*.j2")))
    found = {}
    for path in files:
        with open(path) as handle:
            for number, line in enumerate(handle, 1):
                if line.lstrip().startswith("#"):
                    continue
                for match in package_name.finditer(line):
                    found.setdefault(os.path.relpath(path, ROOT), []).append("%d: %s" % (number, match.group(0)))
    assert found == {}, "read the operators through query('gpudirect.openshift.operators'): %s" % found


def test_the_olm_objects_of_render_yml_come_from_the_catalogue():
    from ansible_collections.gpudirect.openshift.plugins.module_utils import catalogue
    from ansible_collections.gpudirect.openshift.plugins.module_utils.render import olm

    manifests, errors = olm.olm_manifests({})
    assert errors == []
    subscriptions = [m["manifest"] for m in manifests if m["manifest"]["kind"] == "Subscription"]
    assert [(s["metadata"]["namespace"], s["spec"]["name"]) for s in subscriptions] == [
        (entry["namespace"], entry["package"]) for entry in catalogue.OPERATORS]


def test_every_input_field_is_documented_in_the_schema():
    from ansible_collections.gpudirect.openshift.plugins.module_utils.render import input_fields

    assert {field.section for field in input_fields.FIELDS.values()} == set(input_fields.DOC_SECTIONS)
    assert all(field.meaning and field.shown_default for field in input_fields.FIELDS.values())
    # A field that applies only to some configurations says where, for the error that refuses it elsewhere.
    assert all(bool(field.scope) == bool(field.scope_text) for field in input_fields.FIELDS.values())


def test_the_rdma_role_carries_the_generated_options_once():
    with open(os.path.join(ROOT, "roles", "rdma", "meta", "argument_specs.yml")) as handle:
        text = handle.read()
    assert text.count("gpudirect_rdma_method:") == 1 and text.count("<<: *gpudirect_rdma_options") == 2


def test_the_hardware_readers_copies_of_the_vocabulary_agree_with_it():
    """The hardware readers run alone in a pod and keep their own copies; they must not drift."""
    from ansible_collections.gpudirect.openshift.plugins.module_utils import vocabulary
    from ansible_collections.gpudirect.openshift.plugins.module_utils.hardware import devices, topology

    assert topology.RELATIONS == vocabulary.TOPOLOGY_RELATIONS
    for value in ("0x1021", "1021", "101B", 4129, 0x101b, "zz", None, ""):
        expected = vocabulary.hex_id(value)
        assert devices.parse_hex_id(value) == (int(expected, 16) if expected else None), value


def test_ids_typed_by_a_user_and_ids_read_from_hardware_have_one_meaning_each():
    from ansible_collections.gpudirect.openshift.plugins.module_utils import vocabulary
    from ansible_collections.gpudirect.openshift.plugins.module_utils import names

    assert vocabulary.hex_id(4129) == "1021"  # a number read from hardware is its value
    assert names.normalise_hex_id(1021) == "1021"  # YAML's unquoted 1021 stands for the digits typed
    assert names.normalise_hex_id("0x101B") == vocabulary.hex_id("0x101B") == "101b"


def test_cluster_errors_are_kubernetes_core_errors():
    from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
    from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import ClusterError

    assert issubclass(ClusterError, CoreException)


def test_the_wait_options_are_documented_once_for_both_shapes():
    """resource_wait's own options and the entries of apply_manifests' and plan_status' ``waits`` are one text."""
    from ansible_collections.gpudirect.openshift.plugins.doc_fragments.wait_entries import ModuleDocFragment
    from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waits import WAIT_OPTIONS

    entries = yaml.safe_load(ModuleDocFragment.DOCUMENTATION)["options"]["waits"]["suboptions"]
    own = yaml.safe_load(ModuleDocFragment.OBJECT)["options"]
    assert own == dict((key, value) for key, value in entries.items() if key != "title")
    assert set(entries) == set(WAIT_OPTIONS)


def test_the_test_pod_options_are_documented_once_for_both_verification_modules():
    """nccl_allreduce and rdma_bandwidth take their shared pod options from the verify_pods fragment (issue 37, D1): neither
    documents them again, and the fragment's type, default and choices are each module's argument spec."""
    from ansible_collections.gpudirect.openshift.plugins.doc_fragments.verify_pods import ModuleDocFragment
    from ansible_collections.gpudirect.openshift.plugins.modules import nccl_allreduce, rdma_bandwidth

    shared = yaml.safe_load(ModuleDocFragment.DOCUMENTATION)["options"]
    assert shared
    for module in (nccl_allreduce, rdma_bandwidth):
        documentation = yaml.safe_load(module.DOCUMENTATION)
        assert "gpudirect.openshift.verify_pods" in documentation["extends_documentation_fragment"], module.__name__
        assert not set(shared) & set(documentation["options"]), module.__name__
        spec = module.argument_spec()
        for name, option in shared.items():
            assert {key: spec[name].get(key) for key in ("type", "default", "choices")} == \
                {key: option.get(key) for key in ("type", "default", "choices")}, (module.__name__, name)


def test_tests_load_hack_scripts_through_one_helper():
    """A test that calls a hack/ script's functions loads it with tests/hack_scripts.py load_hack_script (issue 37, D7),
    never with its own copy of the importlib loader or a sys.path entry for hack/."""
    from ansible_collections.gpudirect.openshift.tests.hack_scripts import load_hack_script

    loader = "spec_from_" + "file_location"  # not written whole, or this file would find itself
    copies = []
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "**", "*.py"), recursive=True)):
        if path == os.path.join(ROOT, "tests", "hack_scripts.py"):
            continue
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        if loader in text or re.search(r"sys\.path\.(insert|append)\([^)]*(hack|GENERATOR)", text):
            copies.append(os.path.relpath(path, ROOT))
    assert copies == [], "load hack/ scripts with load_hack_script: %s" % copies
    first, second = load_hack_script("gen_awx_surveys"), load_hack_script("gen_awx_surveys")
    assert first is not second and first.build_surveys is not second.build_surveys
    assert os.path.samefile(first.__file__, os.path.join(ROOT, "hack", "gen_awx_surveys.py"))
