"""apply_manifests with waits: apply and wait in one module run, with resource_wait's messages on failure.

One ansible-playbook run per test drives several apply_manifests tasks against the simulated cluster (see
tests/integration/playbooks/apply_and_wait.yml) and the assertions read the saved results and the request log.
"""

from site_support import run_test_playbook


def config_map(name, **data):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, "data": data}


def wait_on(name, **options):
    return dict({"title": "ConfigMap %s" % name, "api_version": "v1", "kind": "ConfigMap", "name": name,
                 "namespace": "default"}, **options)


def run_steps(sim, tmp_path, steps, check=False):
    return run_test_playbook(sim, tmp_path, "apply_and_wait.yml", {"steps": steps}, check=check)


def test_waits_run_after_the_apply_and_fail_with_the_objects_message(sim_factory, tmp_path):
    sim = sim_factory(profile=None, controllers=False)
    nodes = {"title": "every node listed", "api_version": "v1", "kind": "Node", "condition": "length(items) >= `0`"}
    ready, failing, slow, unserved = run_steps(sim, tmp_path, [
        # The condition sees the object that this same task created.
        {"manifests": [config_map("ready", state="ready")],
         "waits": [wait_on("ready", condition="data.state == 'ready'", progress="data.state"), nodes]},
        {"manifests": [config_map("broken", state="error", reason="firmware too old")],
         "waits": [wait_on("broken", condition="data.state == 'ready'", failure_condition="data.state == 'error'",
                           failure_message="data.reason")]},
        {"manifests": [config_map("slow", state="installing")],
         "waits": [wait_on("slow", condition="data.state == 'ready'", progress="data.state", timeout=1)]},
        {"manifests": [config_map("unserved")],
         "waits": [{"api_version": "example.com/v1", "kind": "Widget", "name": "w", "condition": "status.ready",
                    "timeout": 5}]},
    ])

    assert not ready.get("failed"), ready["msg"]
    assert ready["changed"] is True and ready["counts"]["created"] == 1
    assert [w["title"] for w in ready["waits"]] == ["ConfigMap ready", "every node listed"]
    assert ready["waits"][0]["progress"] == ["ready"] and ready["waits"][0]["elapsed"] < 5

    # A failure names the object as resource_wait does, keeps what was applied, and returns the failing wait.
    assert failing["failed"] is True and failing["changed"] is True
    assert failing["msg"] == "ConfigMap broken reports a failure: firmware too old"
    assert failing["counts"]["created"] == 1 and failing["waits"] == []
    assert failing["wait"]["title"] == "ConfigMap broken" and failing["wait"]["resources"][0]["data"]["state"] == "error"

    assert slow["failed"] is True
    assert slow["msg"] == "ConfigMap slow did not satisfy data.state == 'ready' within 1 s. Last progress: installing."

    assert unserved["failed"] is True
    assert "does not serve example.com/v1 Widget" in unserved["msg"]
    assert unserved["wait"]["title"] == "Widget w"  # no title given: kind and name


def test_a_rerun_writes_nothing_and_check_mode_waits_without_writing(sim_factory, tmp_path):
    sim = sim_factory(profile=None, controllers=False)
    step = {"manifests": [config_map("settled", state="ready")],
            "waits": [wait_on("settled", condition="data.state == 'ready'")]}
    first, = run_steps(sim, tmp_path, [step])
    assert first["changed"] is True and len(first["waits"]) == 1

    since = len(sim.request_log)
    again, = run_steps(sim, tmp_path, [step])
    checked, = run_steps(sim, tmp_path, [dict(step, manifests=[config_map("settled", state="changed")])], check=True)
    assert again["changed"] is False and again["counts"]["unchanged"] == 1 and len(again["waits"]) == 1
    # In check mode the patch is a dry run and the wait reads the unchanged object, which is still ready.
    assert checked["changed"] is True and len(checked["waits"]) == 1
    assert sim.count(writes_only=True, since=since) == 0


def test_an_expression_that_does_not_compile_fails_before_any_write(sim_factory, tmp_path):
    sim = sim_factory(profile=None, controllers=False)
    since = sim.mark()
    result, = run_steps(sim, tmp_path, [{"manifests": [config_map("never")],
                                         "waits": [wait_on("never", condition="data.state == 'ready'"),
                                                   wait_on("never", condition="data.state ==", progress="[")]}])
    assert result["failed"] is True and result.get("changed") is not True
    assert "waits[1].condition is not a valid JMESPath expression (data.state ==)" in result["msg"], result["msg"]
    assert "waits[1].progress is not a valid JMESPath expression ([)" in result["msg"], result["msg"]
    assert sim.count(since=since) == 0, "the task reached the API server"


def test_deleted_by_label_deletes_only_labelled_objects_and_takes_no_manifests(sim_factory, tmp_path):
    sim = sim_factory(profile=None, controllers=False)
    client = sim.dynamic_client()
    config_maps = client.resources.get(api_version="v1", kind="ConfigMap")
    config_maps.create(body=config_map("theirs"), namespace="default")
    created, deleted, again, refused = run_steps(sim, tmp_path, [
        {"manifests": [config_map("ours-1"), config_map("ours-2")]},
        {"state": "deleted_by_label", "prune_kinds": ["v1/ConfigMap"], "prune_label_selector": "app.kubernetes.io/managed-by=gpudirect.openshift"},
        {"state": "deleted_by_label", "prune_kinds": ["v1/ConfigMap"]},
        {"state": "deleted_by_label", "prune_kinds": ["v1/ConfigMap"], "manifests": [config_map("ours-3")]},
    ])
    assert created["counts"]["created"] == 2
    assert deleted["changed"] is True and sorted(r["name"] for r in deleted["results"] if r["action"] == "deleted") == ["ours-1", "ours-2"]
    assert again["changed"] is False
    assert refused["failed"] is True and "takes none" in refused["msg"]
    names = sorted(c["metadata"]["name"] for c in config_maps.get(namespace="default").to_dict()["items"])
    assert "theirs" in names and not [n for n in names if n.startswith("ours")]
