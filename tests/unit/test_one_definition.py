"""One definition of each thing (issue 16): the kinds the collection prunes are listed once, in render/names.py, and
roles read them through the managed_kinds filter; readiness conditions come from render/waits.py."""

import glob
import os
import re

from ansible_collections.gpudirect.openshift.plugins.module_utils.render import names

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
