"""site.yml run as AWX runs it: ansible-runner, a private data directory, and the cluster only in the
environment variables that AWX's "OpenShift or Kubernetes API Bearer Token" credential injects."""

import json
import secrets

import pytest

from runner_support import (PROFILE_VARIABLES, ROOT, failure_messages, files_containing, isolate_from_clusters,
                            module_results, private_data_dir, run_site)


def bearer_token_credential(sim):
    """The environment AWX injects for an OpenShift credential without a CA certificate (verify_ssl off):
    K8S_AUTH_HOST, K8S_AUTH_API_KEY and K8S_AUTH_VERIFY_SSL='False'."""
    return {"K8S_AUTH_HOST": sim.url, "K8S_AUTH_API_KEY": sim.token, "K8S_AUTH_VERIFY_SSL": "False"}


def openshift_token():
    return "sha256~" + secrets.token_urlsafe(32)


def survey_answer(question, value):
    """`value` as AWX sends a survey answer of this question: a string for text, textarea and multiple choice
    (booleans as "true"/"false", lists one item per line), a list for multiselect, a number for numbers."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if question["type"] == "textarea" and isinstance(value, list) and all(not isinstance(v, dict) for v in value):
        return "\n".join(str(v) for v in value)
    if question["type"] == "textarea":
        return json.dumps(value)
    return value


BLANK_OMITTED = object()


def awx_launch_extra_vars(survey, answers, blank=BLANK_OMITTED):
    """The extra vars of an AWX launch where the user answers `answers` ({variable: value}), keeps every other
    default and leaves the remaining optional questions blank; depending on the AWX version a blank answer is
    left out, sent as null or sent as an empty string (`blank`)."""
    extra = {}
    for question in survey["spec"]:
        variable = question["variable"]
        if variable in answers:
            extra[variable] = survey_answer(question, answers[variable])
        elif "default" in question and question["type"] != "password":
            default = question["default"]
            extra[variable] = default.splitlines() if question["type"] == "multiselect" else default
        elif question["required"]:
            raise AssertionError("the test gives no answer to the required question %s" % variable)
        elif blank is not BLANK_OMITTED:
            extra[variable] = blank
    return extra


def test_site_uses_only_the_awx_credential_environment(sim_factory, tmp_path, monkeypatch):
    sim = sim_factory(profile="roce-lab", token=openshift_token(), tls=True)
    isolate_from_clusters(monkeypatch, tmp_path)
    pdd = private_data_dir(tmp_path, {"localhost": {}}, envvars=bearer_token_credential(sim),
                           extravars=PROFILE_VARIABLES["roce-lab"])
    assert not list(pdd.rglob("*kubeconfig*"))

    runner = run_site(pdd)

    stdout = runner.stdout.read()
    assert (runner.status, runner.rc) == ("successful", 0), stdout
    info = module_results(runner, "gpudirect.openshift.plan_status")["localhost"][0]["cluster"]
    assert sorted(n["name"] for n in info["nodes"]) == sorted(n.name for n in sim.profile.nodes)
    assert sim.count() > 0
    shown = [e for e in runner.events if e.get("event") == "runner_on_ok"
             and e["event_data"].get("resolved_action") == "ansible.builtin.debug"]
    assert info["summary"]["node_count"] == len(sim.profile.nodes)
    # Counts and a few names, not every node (issue 21): "<n> nodes (<r> ready, <w> workers): ..."
    summary = info["summary"]
    line = "%d nodes (%d ready, %d workers)" % (summary["node_count"], summary["ready_nodes"], summary["worker_nodes"])
    assert any(str(e["event_data"]["res"].get("msg", "")).startswith(line) for e in shown), "the cluster summary was not printed"

    # The token is never printed nor stored by the job: ansible-runner's own launch record (artifacts/<ident>/
    # command, which holds the environment it started ansible-playbook with) is the only artifact that has it.
    artifacts = pdd / "artifacts"
    assert sim.token not in stdout
    leaked = files_containing(artifacts, sim.token)
    assert [p.relative_to(artifacts).as_posix() for p in leaked] == ["job/command"]
    assert json.loads((artifacts / "job" / "command").read_text())["env"]["K8S_AUTH_API_KEY"] == sim.token


def site_survey():
    return json.loads((ROOT / "awx" / "surveys" / "site.json").read_text())


def test_survey_answers_as_awx_passes_them(sim_factory, tmp_path, monkeypatch):
    """The configuration answered in the survey and every other question at its default, typed as AWX sends them
    (booleans as "true"/"false", lists as text): site.yml accepts it and configures the cluster."""
    survey = site_survey()
    extra = awx_launch_extra_vars(survey, PROFILE_VARIABLES["infiniband-lab"])
    assert {"true", "false"} & set(extra.values()) and isinstance(extra["gpudirect_rdma_nic_interfaces"], str)
    sim = sim_factory(profile="infiniband-lab", token=openshift_token(), tls=True)
    isolate_from_clusters(monkeypatch, tmp_path)
    pdd = private_data_dir(tmp_path, {"localhost": {}}, envvars=bearer_token_credential(sim), extravars=extra)

    runner = run_site(pdd)

    assert (runner.status, runner.rc) == ("successful", 0), runner.stdout.read()
    info = module_results(runner, "gpudirect.openshift.plan_status")["localhost"][0]["cluster"]
    assert sorted(n["name"] for n in info["nodes"]) == sorted(n.name for n in sim.profile.nodes)


@pytest.mark.parametrize("blank", [None, ""], ids=["blank-null", "blank-empty-string"])
def test_blank_optional_survey_answers_are_accepted(blank, sim_factory, tmp_path, monkeypatch):
    """AWX 24 sends an optional question left blank as null (ansible/awx#16205), other versions as an empty
    string (ansible/awx#16289); the checks before any write (preflight, tagged always) must read both as unset."""
    extra = awx_launch_extra_vars(site_survey(), PROFILE_VARIABLES["roce-lab"], blank=blank)
    sim = sim_factory(profile="roce-lab", tls=True)
    isolate_from_clusters(monkeypatch, tmp_path)
    pdd = private_data_dir(tmp_path, {"localhost": {}}, envvars=bearer_token_credential(sim), extravars=extra)

    runner = run_site(pdd, tags="preflight")

    assert (runner.status, runner.rc) == ("successful", 0), failure_messages(runner)
    assert sim.count(writes_only=True) == 0


def test_no_cluster_configured_stops_with_the_message(tmp_path, monkeypatch):
    isolate_from_clusters(monkeypatch, tmp_path)
    pdd = private_data_dir(tmp_path, {"localhost": {}}, extravars=PROFILE_VARIABLES["roce-lab"])

    runner = run_site(pdd)

    assert runner.status == "failed"
    assert runner.rc != 0
    messages = failure_messages(runner)
    # the preflight assert, then site.yml's rescue naming the step that stopped (it does not repeat the message: issue
    # 31 point 8; diagnostics are skipped, there is no cluster)
    assert len(messages) == 2, messages
    assert "No OpenShift cluster is configured for localhost" in messages[0], messages
    assert "K8S_AUTH_HOST" in messages[0] and "KUBECONFIG" in messages[0]
    assert messages[1].startswith('Stopped at "Stop when no cluster is configured"'), messages
    assert not module_results(runner, "gpudirect.openshift.plan_status")
