"""Issue 34 (Deliver 1): the admission policies use admissionregistration.k8s.io/v1, served from Kubernetes 1.30, i.e.
OpenShift 4.17; the support table also lists 4.16 (Kubernetes 1.29, beta API off by default). The generator refuses,
before writing, a --openshift-version that does not serve the API, naming the option and what to apply instead."""

from simulator import admission_policy
from simulator.profiles import OPENSHIFT_RELEASES

from ansible_collections.gpudirect.openshift.plugins.module_utils import catalogue
from ansible_collections.gpudirect.openshift.tests.hack_scripts import load_hack_script


def test_the_oldest_supported_openshift_is_refused_and_the_next_admitted():
    gen = load_hack_script("gen_admission_policies")
    problem = gen.openshift_version_problem("4.16")
    assert problem.startswith("--openshift-version 4.16: OpenShift 4.16 is Kubernetes 1.29, which does not serve "
                              "ValidatingAdmissionPolicy admissionregistration.k8s.io/v1 (Kubernetes 1.30, OpenShift 4.17, and later)")
    assert "nothing was written" in problem and "clusterrole.yml alone" in problem
    assert gen.openshift_version_problem("4.16.45") == problem.replace("4.16:", "4.16.45:", 1)
    for version in ("4.17", "4.17.30", "4.20"):
        assert gen.openshift_version_problem(version) is None
    assert "is not in the support table" in gen.openshift_version_problem("4.9")


def test_every_row_of_the_support_table_has_its_kubernetes_version_as_the_simulator_models_it():
    gen = load_hack_script("gen_admission_policies")
    assert sorted(gen.KUBERNETES_MINOR_OF_OPENSHIFT) == sorted(catalogue.SUPPORT_TABLE)
    for openshift, kubernetes in gen.KUBERNETES_MINOR_OF_OPENSHIFT.items():
        assert OPENSHIFT_RELEASES[openshift][0] == "1.%d" % kubernetes
        # The simulator serves the API exactly where the generator admits the version.
        assert admission_policy.served(kubernetes) is (gen.openshift_version_problem(openshift) is None)
    assert gen.FIRST_KUBERNETES_MINOR == admission_policy.FIRST_KUBERNETES_MINOR


def test_the_generator_writes_nothing_for_a_refused_version(tmp_path, capsys):
    gen = load_hack_script("gen_admission_policies")
    output = tmp_path / "policies.yml"
    assert gen.main(["--openshift-version", "4.16", "--output", str(output)]) == 2
    assert not output.exists()
    assert "--openshift-version 4.16: OpenShift 4.16 is Kubernetes 1.29" in capsys.readouterr().err
