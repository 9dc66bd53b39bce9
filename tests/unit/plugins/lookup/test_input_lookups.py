"""Held-out input of issue 31: a gpudirect_rdma_* value holding Jinja that calls a lookup is refused from its raw
text (plugins/lookup/input_lookups.py), never evaluated and never shown."""

from ansible_collections.gpudirect.openshift.plugins.lookup.input_lookups import calls_lookup, lookup_problems


def test_lookups_are_found_in_strings_lists_and_mappings():
    assert calls_lookup("{{ lookup('pipe', 'id') }}")
    assert calls_lookup('{{ query("file", "/etc/passwd") | first }}')
    assert calls_lookup("prefix {{q('env','HOME')}}")
    assert calls_lookup("{% set x = lookup('pipe', 'id') %}{{ x }}")
    assert calls_lookup(["ens8f0np0", "{{ lookup('pipe', 'id') }}"])
    assert calls_lookup({"name": "a", "interfaces": ["{{ lookup('pipe', 'id') }}"]})
    assert calls_lookup({"{{ lookup('pipe', 'id') }}": 1})


def test_plain_values_and_references_are_not_lookups():
    assert not calls_lookup("192.168.2.0/24")
    assert not calls_lookup("{{ hardware_facts_nic_ports }}")
    assert not calls_lookup("{{ lab_ranges | first }}")
    assert not calls_lookup("lookup('pipe', 'id')")  # no Jinja: plain text, which the input model refuses as such
    assert not calls_lookup("{{ my_lookup_table['x'] }}")
    assert not calls_lookup(["a", 8, None, {"k": True}])


def test_problems_name_the_variable_and_never_the_value():
    raw = {"gpudirect_rdma_ipam_range": "{{ lookup('pipe', 'id') }}", "gpudirect_rdma_mtu": 9000,
           "gpudirect_rdma_nic_facts": "{{ hardware_facts_nic_ports }}", "other": "{{ lookup('pipe', 'id') }}"}
    problems = lookup_problems(raw)
    assert problems == ["gpudirect_rdma_ipam_range: the value holds Jinja that calls a lookup (it would run on the "
                        "controller before it could be checked); give the value itself (a string, list or mapping), "
                        "not a lookup."]
    assert "pipe" not in problems[0]
    assert [p.split(":")[0] for p in lookup_problems(raw, ["other"])] == ["gpudirect_rdma_ipam_range", "other"]
