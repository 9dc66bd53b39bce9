# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Installing and removing one operator through OLM: ``OperatorInstaller`` reads and writes the Namespace,
OperatorGroup, Subscription and InstallPlan through ClusterClient and waits for the CSV with the watch-based waiter;
every judgement it makes comes from rules/olm_install.py.
"""

import copy
import time

from ansible_collections.gpudirect.openshift.plugins.module_utils.vocabulary import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import (
    ClusterError,
    api_message,
    api_reason,
    api_status,
)
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.client import object_ref
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.olm_changes import Changes
from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.waiter import WaitTimeout, absent, wait_for
from ansible_collections.gpudirect.openshift.plugins.module_utils.rules.olm_install import (
    CsvProgress, OLMProblem, SubscriptionHealth, approval_problem, choose_package_manifest, csv_failure_text,
    csv_phase, desired_operator_group_spec, foreign_operator_group_error, install_plan_failure, is_managed,
    merge_timeline, needs_approval, operator_group_fits, operator_group_mode, pin_problem, plan_csvs, resolve_channel,
    select_install_plan, subscription_drift, subscription_summary, upgrade_offer, uses_automatic_approval,
)

NAMESPACE = ("v1", "Namespace")
OPERATOR_GROUP = ("operators.coreos.com/v1", "OperatorGroup")
SUBSCRIPTION = ("operators.coreos.com/v1alpha1", "Subscription")
INSTALL_PLAN = ("operators.coreos.com/v1alpha1", "InstallPlan")
CSV = ("operators.coreos.com/v1alpha1", "ClusterServiceVersion")
PACKAGE_MANIFEST = ("packages.operators.coreos.com/v1", "PackageManifest")
CRD = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")


class OLMError(ClusterError):
    """A failure of the install/removal that the module reports with the partial result."""


class OperatorInstaller:
    """Drives one operator to installed (``present``) or removed (``absent``).

    ``operator`` is one operator entry (the keys of rules/olm_install.OPERATOR_OPTIONS); the other arguments say what
    to do with it, as olm_operator's options of the same names document.
    """

    def __init__(self, cluster, operator, state="present", wait=True, wait_for="csv", wait_timeout=600,
                 failure_grace_period=30, remove_operator_group=False, remove_crds=False, remove_namespace=False,
                 check_mode=False, warn=None, clock=time.monotonic):
        self.cluster = cluster
        self.operator = operator
        self.state = state
        self.wait, self.wait_for = wait, wait_for
        self.wait_timeout = wait_timeout
        self.failure_grace_period = failure_grace_period
        self.remove_operator_group = remove_operator_group
        self.remove_crds = remove_crds
        self.remove_namespace = remove_namespace
        self.check_mode = check_mode
        self.warn = warn or (lambda msg: None)
        self.clock = clock
        self.start = clock()
        self.changes = Changes()
        self.namespace = operator["namespace"]
        self.package = operator["package"]
        self.subscription_name = operator.get("subscription_name") or self.package
        self.timeline = []
        self.result = {"package": self.package, "namespace": self.namespace}
        self._health = None  # subscription_health()

    # resource handles are looked up lazily: OLM kinds may be missing on a vanilla cluster
    def _res(self, api_kind):
        return self.cluster.require(*api_kind)

    def remaining(self):
        return max(0.0, float(self.wait_timeout or 600) - (self.clock() - self.start))

    def finish(self, **extra):
        self.result.update(extra)
        self.result["changed"] = self.changes.changed
        self.result["objects"] = self.changes.objects
        self.result["elapsed"] = round(self.clock() - self.start, 3)
        return self.result

    def fail(self, msg, **extra):
        self.result.update(extra)
        self.result["changed"] = self.changes.changed
        self.result["objects"] = self.changes.objects
        self.result["elapsed"] = round(self.clock() - self.start, 3)
        return OLMError(msg, result=self.result)

    # -- present ---------------------------------------------------------------------------

    def package_manifest(self, subscription=None):
        """The package's PackageManifest entry from the catalog this operator uses (choose_package_manifest)."""
        resource = self._res(PACKAGE_MANIFEST)
        pm_ns = self.operator.get("package_namespace") or "openshift-marketplace"
        source = self.operator.get("source")
        items, _rv = self.cluster.list(resource, pm_ns, field_selector="metadata.name=%s" % self.package)
        manifest, problem = choose_package_manifest(items, self.operator, subscription)
        if problem:
            raise self.fail(problem)
        if manifest is None:
            raise self.fail("Package %s not found in namespace %s%s (no PackageManifest; is the catalog source "
                            "healthy?)" % (self.package, pm_ns, " from catalog %s" % source if source else ""))
        return manifest

    def ensure_namespace(self, existing):
        """Create the namespace (``existing``: as read, or None) or add the wanted labels/annotations.

        Returns (exists for real now, created by this call)."""
        resource = self._res(NAMESPACE)
        labels = dict(self.operator.get("namespace_labels") or {})
        annotations = dict(self.operator.get("namespace_annotations") or {})
        if existing is not None and (existing.get("status") or {}).get("phase") == "Terminating":
            if self.check_mode:
                raise self.fail("Namespace %s is terminating; it would have to finish before the operator can be "
                                "installed" % self.namespace)
            self._wait_namespace_gone(resource)
            existing = None
        if existing is None:
            body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace}}
            # Only a namespace this module created carries the label, so teardown removes no one else's.
            body["metadata"]["labels"] = dict(labels, **{MANAGED_BY_LABEL: MANAGED_BY_VALUE})
            if annotations:
                body["metadata"]["annotations"] = annotations
            created = self._create(resource, body)
            self.changes.record("create", "Namespace", self.namespace, before=None, after=created)
            # In check mode the create was a dry run: nothing can be read from or written into it.
            return not self.check_mode, True

        def mutate(obj):
            meta = obj["metadata"]
            if all((meta.get("labels") or {}).get(k) == v for k, v in labels.items()) and \
                    all((meta.get("annotations") or {}).get(k) == v for k, v in annotations.items()):
                return False
            if labels:
                meta.setdefault("labels", {}).update(labels)
            if annotations:
                meta.setdefault("annotations", {}).update(annotations)
            return True

        before, after, changed = self.cluster.update(resource, self.namespace, None, mutate, current=existing)
        self.changes.record("update" if changed else "none", "Namespace", self.namespace, before=before, after=after)
        return True, False

    def _create(self, resource, body):
        try:
            return self.cluster.create(resource, body)
        except Exception as exc:  # pylint: disable=broad-except
            raise self.fail("Failed to create %s: %s" % (object_ref(body), api_message(exc)))

    def ensure_operator_group(self, install_modes, namespace_exists, namespace_created=False):
        resource = self._res(OPERATOR_GROUP)
        desired_spec = desired_operator_group_spec(install_modes, self.namespace,
                                                   self.operator.get("target_namespaces"))
        groups = []
        if namespace_exists and not namespace_created:
            groups, _rv = self.cluster.list(resource, self.namespace)
        if len(groups) > 1:
            raise self.fail("Namespace %s holds %d OperatorGroups (%s); OLM installs nothing there until only one is "
                            "left" % (self.namespace, len(groups), ", ".join(g["metadata"]["name"] for g in groups)))
        if groups:
            group = groups[0]
            name = group["metadata"]["name"]
            if not is_managed(group):
                if not operator_group_fits(group, install_modes, self.namespace):
                    raise self.fail(foreign_operator_group_error(group, install_modes, self.namespace))
                if self.operator.get("target_namespaces") is not None and \
                        operator_group_mode(group.get("spec"),
                                            self.namespace) != operator_group_mode(desired_spec, self.namespace):
                    self.warn("OperatorGroup %s (not created by this module) is used as it is; target_namespaces was "
                              "not applied" % name)
                self.changes.record("none", "OperatorGroup", name, self.namespace)
                return group
            if operator_group_mode(group.get("spec"),
                                   self.namespace) == operator_group_mode(desired_spec, self.namespace) and \
                    (group.get("spec") or {}).get("targetNamespaces") == desired_spec.get("targetNamespaces"):
                self.changes.record("none", "OperatorGroup", name, self.namespace)
                return group

            def mutate(obj):
                spec = obj.setdefault("spec", {})
                spec.pop("targetNamespaces", None)
                spec.pop("selector", None)
                spec.update(copy.deepcopy(desired_spec))

            before, after, _changed = self.cluster.update(resource, name, self.namespace, mutate)
            self.changes.record("update", "OperatorGroup", name, self.namespace, before=before, after=after)
            return after
        name = self.operator.get("operator_group_name") or self.namespace
        body = {"apiVersion": OPERATOR_GROUP[0], "kind": "OperatorGroup",
                "metadata": {"name": name, "namespace": self.namespace, "labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE}},
                "spec": desired_spec}
        created = self._create(resource, body) if namespace_exists else body
        self.changes.record("create", "OperatorGroup", name, self.namespace, before=None, after=created)
        return created

    def desired_subscription_spec(self, manifest, channel):
        status = manifest.get("status") or {}
        spec = {
            "name": self.package,
            "channel": channel,
            "source": self.operator.get("source") or status.get("catalogSource"),
            "sourceNamespace": self.operator.get("source_namespace") or status.get("catalogSourceNamespace"),
            "installPlanApproval": self.operator.get("install_plan_approval") or "Automatic",
        }
        if self.operator.get("starting_csv"):
            spec["startingCSV"] = self.operator["starting_csv"]
        if self.operator.get("subscription_config"):
            spec["config"] = self.operator["subscription_config"]
        return spec

    def ensure_subscription(self, desired_spec, namespace_exists, existing):
        resource = self._res(SUBSCRIPTION)
        existing = existing if namespace_exists else None
        if existing is None:
            body = {"apiVersion": SUBSCRIPTION[0], "kind": "Subscription",
                    "metadata": {"name": self.subscription_name, "namespace": self.namespace,
                                 "labels": {MANAGED_BY_LABEL: MANAGED_BY_VALUE}}, "spec": desired_spec}
            created = self._create(resource, body) if namespace_exists else body
            self.changes.record("create", "Subscription", self.subscription_name, self.namespace, before=None,
                                after=created)
            return created
        existing_spec = existing.get("spec") or {}
        installed = (existing.get("status") or {}).get("installedCSV")
        if desired_spec.get("startingCSV") and desired_spec["startingCSV"] == installed:
            # OLM reads startingCSV only for the first install (resolver.go): pinning the CSV that already runs changes
            # nothing, so the Subscription keeps whatever it says (a pins file written after the install).
            desired_spec = dict(desired_spec)
            if "startingCSV" in existing_spec:
                desired_spec["startingCSV"] = existing_spec["startingCSV"]
            else:
                desired_spec.pop("startingCSV")
        if not subscription_drift(existing_spec, desired_spec):
            self.changes.record("none", "Subscription", self.subscription_name, self.namespace)
            return existing

        def mutate(obj):
            obj.setdefault("spec", {}).update(copy.deepcopy(desired_spec))

        before, after, _changed = self.cluster.update(resource, self.subscription_name, self.namespace, mutate)
        self.changes.record("update", "Subscription", self.subscription_name, self.namespace, before=before,
                            after=after)
        return after

    def approve_install_plan(self, wanted_csv):
        """Approve the one InstallPlan that installs ``wanted_csv`` (Manual approval)."""
        resource = self._res(INSTALL_PLAN)
        seen = {}

        health = self.subscription_health()

        def found(plans):
            seen["plans"] = plans
            plan = select_install_plan(plans, wanted_csv)
            if plan is not None:
                # A Failed InstallPlan is final: the catalog operator does not run it again
                # (operator-framework/operator-lifecycle-manager#2215), so waiting on it would only time out.
                failure = (install_plan_failure(plan)
                           if plan_csvs(plan) and (plan.get("status") or {}).get("phase") == "Failed" else None)
                if failure:
                    raise OLMProblem("InstallPlanFailed: %s; OLM does not run a failed InstallPlan again" % failure,
                                     reason="InstallPlanFailed")
                return True
            health.check()
            return False

        try:
            waited = wait_for(self.cluster, resource, found, namespace=self.namespace, timeout=self.remaining(),
                              recheck_at=health.recheck_at)
        except OLMProblem as exc:
            raise self.fail(str(exc), csv=wanted_csv, reason=exc.reason)
        except WaitTimeout:
            others = ["%s (%s, approved=%s)" % (p["metadata"]["name"], ", ".join(plan_csvs(p)),
                                                bool((p.get("spec") or {}).get("approved")))
                      for p in seen.get("plans") or []]
            sub = self.cluster.get(self._res(SUBSCRIPTION), self.subscription_name, self.namespace)
            raise self.fail("No InstallPlan for %s appeared in %s within wait_timeout; InstallPlans seen: %s; "
                            "subscription: %s. "
                            "Plans for other CSVs were left unapproved." % (
                                wanted_csv, self.namespace, "; ".join(others) or "none", subscription_summary(sub)))
        plan = select_install_plan(waited.state, wanted_csv)
        if not needs_approval(plan):
            self.result["install_plan"] = plan["metadata"]["name"]
            self.changes.record("none", "InstallPlan", plan["metadata"]["name"], self.namespace)
            return plan
        return self._approve(resource, plan, wanted_csv)

    def _approve(self, resource, plan, wanted_csv):
        name = plan["metadata"]["name"]
        self.result["install_plan"] = name

        def mutate(obj):
            # Re-checked on every attempt: approve only while the plan installs the wanted CSV and nothing else.
            if wanted_csv not in plan_csvs(obj):
                raise self.fail("InstallPlan %s no longer lists %s; not approving it" % (name, wanted_csv))
            others = [c for c in plan_csvs(obj) if c != wanted_csv]
            if others:
                raise self.fail("InstallPlan %s would install %s together with %s (OLM plans a namespace's "
                                "Subscriptions together); approving it would change another operator, so it was left "
                                "unapproved. Approve it yourself once you want all of them, or install the operators "
                                "into separate namespaces."
                                % (name, wanted_csv, ", ".join(others)))
            if (obj.get("spec") or {}).get("approved"):
                return False
            obj["spec"]["approved"] = True
            return True

        before, after, changed = self.cluster.update(resource, name, self.namespace, mutate)
        self.changes.record("approve" if changed else "none", "InstallPlan", name, self.namespace, before=before,
                            after=after)
        return after

    def approve_if_present(self, wanted_csv):
        """Approve the wanted CSV's InstallPlan if it exists already, without waiting for it (check mode
        dry-runs the approval; wait=false approves what is there)."""
        resource = self._res(INSTALL_PLAN)
        plans, _rv = self.cluster.list(resource, self.namespace)
        plan = select_install_plan(plans, wanted_csv)
        if plan is not None and needs_approval(plan):
            self._approve(resource, plan, wanted_csv)

    def subscription_health(self):
        """One tracker for the whole install: the InstallPlan wait and the CSV wait that follows share its reads (no
        second read within its interval) and its grace period (a failure seen in the first wait keeps its start)."""
        if self._health is None:
            resource = self._res(SUBSCRIPTION)
            groups = self._res(OPERATOR_GROUP)
            self._health = SubscriptionHealth(
                lambda: self.cluster.get(resource, self.subscription_name, self.namespace),
                self.failure_grace_period, clock=self.clock,
                count_operator_groups=lambda: len(self.cluster.list(groups, self.namespace)[0]))
        return self._health

    def wait_for_csv(self, wanted_csv):
        resource = self._res(CSV)
        progress = CsvProgress(wanted_csv, self.failure_grace_period, clock=self.clock)
        health = self.subscription_health()

        def settled(csv):
            if csv_phase(csv) != "Succeeded":
                # The Subscription is read until the CSV succeeds: an InstallPlan that fails after creating the CSV
                # (a later step refused: InstallComponentFailed) shows only there, as InstallPlanFailed
                # (catalog/subscription/state.go), while the CSV waits in Pending for what the plan never created.
                health.check()
            return progress(csv)

        def recheck_at():
            times = [progress.recheck_at(), health.recheck_at()]
            times = [t for t in times if t is not None]
            return min(times) if times else None

        try:
            waited = wait_for(self.cluster, resource, settled, name=wanted_csv, namespace=self.namespace,
                              timeout=self.remaining(), recheck_at=recheck_at)
        except OLMProblem as exc:
            self.timeline = merge_timeline(((progress.last or {}).get("status") or {}).get("conditions"),
                                           progress.observed)
            raise self.fail(str(exc), csv=wanted_csv, phase=csv_phase(progress.last), timeline=self.timeline,
                            reason=exc.reason, message=((progress.last or {}).get("status") or {}).get("message"))
        except WaitTimeout as exc:
            self.timeline = merge_timeline(((exc.state or {}).get("status") or {}).get("conditions"), progress.observed)
            sub = self.cluster.get(self._res(SUBSCRIPTION), self.subscription_name, self.namespace)
            raise self.fail(
                "ClusterServiceVersion %s did not reach Succeeded within wait_timeout (phase: %s%s); subscription: %s"
                % (wanted_csv, csv_phase(exc.state) or "not created",
                   ", %s" % csv_failure_text(exc.state) if csv_phase(exc.state) else "", subscription_summary(sub)),
                csv=wanted_csv, phase=csv_phase(exc.state), timeline=self.timeline)
        csv = waited.state
        self.timeline = merge_timeline((csv.get("status") or {}).get("conditions"), progress.observed)
        return csv

    def existing_subscriptions(self):
        """The Subscriptions of the namespace (one list request; empty when the namespace does not exist)."""
        items, _rv = self.cluster.list(self._res(SUBSCRIPTION), self.namespace)
        return items

    def wanted_csv(self, channel_entry, channel, existing):
        """The CSV this run installs or keeps.

        A pin (starting_csv) is what the user asked for. Without one, an installed operator keeps its CSV: a
        catalog update or a moved default channel must not turn a routine re-run into an upgrade. Under
        Automatic approval OLM upgrades by itself, so the CSV it is moving to (currentCSV) is the one to wait for.
        """
        if self.operator.get("starting_csv"):
            return self.operator["starting_csv"]
        status = (existing or {}).get("status") or {}
        if status.get("installedCSV"):
            if uses_automatic_approval(self.operator):
                return status.get("currentCSV") or status["installedCSV"]
            return status["installedCSV"]
        wanted = channel_entry.get("currentCSV")
        if not wanted:
            raise self.fail("Channel %s of package %s names no current CSV" % (channel, self.package))
        return wanted

    def check_pin_change(self, existing, wanted_csv, channel=None):
        """A changed pin on an installed operator is an upgrade OLM must offer: fail before any write when it does not.

        OLM moves an installed operator only along the channel's replaces/skipRange edges, one InstallPlan at a
        time; a new startingCSV on an existing Subscription is ignored (resolver.go uses it for the first install
        only). So the new pin is reachable exactly when the pending upgrade plan installs it.
        """
        status = (existing or {}).get("status") or {}
        installed = status.get("installedCSV")
        if not installed or installed == wanted_csv:
            return
        if channel and channel != ((existing or {}).get("spec") or {}).get("channel"):
            # A new channel is resolved again from the installed CSV (resolver.go): what OLM offers there is known
            # only after the Subscription changed; present() then approves only a plan that installs wanted_csv.
            return
        offered, plan = upgrade_offer(existing)
        if offered == wanted_csv:
            return
        # Only read the CSV when the Subscription does not settle it (present() reads it again afterwards).
        if self.cluster.get(self._res(CSV), wanted_csv, self.namespace) is not None:
            return
        channel = (existing.get("spec") or {}).get("channel") or "the default channel"
        raise self.fail(
            "starting_csv is %s but %s is installed, and OLM %s. OLM only moves an installed operator along its "
            "channel (%s), one InstallPlan at a time, so approving cannot reach %s. Set starting_csv to the CSV OLM "
            "offers%s, or reinstall at %s (remove the Subscription and CSV %s; the operator's custom resources stay) "
            "and run again. Nothing was changed." % (
                wanted_csv, installed,
                "offers %s (InstallPlan %s)" % (offered, plan) if offered
                else "offers no upgrade (state %s)" % (status.get("state") or "unset"), channel, wanted_csv,
                " (%s)" % offered if offered else "", wanted_csv, installed),
            csv=wanted_csv, installed_csv=installed, upgrade_available=offered)

    def present(self):
        problem = pin_problem(self.operator)
        if problem:
            raise self.fail(problem)
        # A namespace that does not exist yet holds nothing: no Subscription, OperatorGroup or CSV to read in it.
        namespace = self.cluster.get(self._res(NAMESPACE), self.namespace)
        subscriptions = self.existing_subscriptions() if namespace is not None else []
        problem = approval_problem(self.operator, subscriptions)
        if problem:
            raise self.fail(problem)
        existing = next((s for s in subscriptions if s["metadata"]["name"] == self.subscription_name), None)
        manifest = self.package_manifest(existing)
        # An installed operator stays on its channel unless one is asked for: the package's default moves.
        kept_channel = ((existing or {}).get("spec") or {}).get("channel")
        channel_entry, channel = resolve_channel(manifest, self.operator.get("channel") or kept_channel)
        default_channel = (manifest.get("status") or {}).get("defaultChannel")
        if not self.operator.get("channel") and kept_channel and default_channel and kept_channel != default_channel:
            self.warn("The default channel of %s is now %s; the Subscription stays on %s. Set the channel to move." % (
                self.package, default_channel, kept_channel))
        install_modes = (channel_entry.get("currentCSVDesc") or {}).get("installModes") or []
        wanted_csv = self.wanted_csv(channel_entry, channel, existing)
        self.check_pin_change(existing, wanted_csv, channel)
        offered, _plan = upgrade_offer(existing)
        installed = ((existing or {}).get("status") or {}).get("installedCSV")
        self.result.update({"channel": channel, "csv": wanted_csv, "install_plan": None, "installed_csv": installed,
                            "channel_head": channel_entry.get("currentCSV"), "default_channel": default_channel,
                            "upgrade_available": offered if offered and offered != wanted_csv else None})
        if self.result["upgrade_available"] is None and installed == wanted_csv \
                and channel_entry.get("currentCSV") not in (None, wanted_csv):
            self.result["upgrade_available"] = channel_entry["currentCSV"]
        if wanted_csv == channel_entry.get("currentCSV"):
            self.result["version"] = (channel_entry.get("currentCSVDesc") or {}).get("version")

        namespace_exists, namespace_created = self.ensure_namespace(namespace)
        self.ensure_operator_group(install_modes, namespace_exists, namespace_created)
        desired = self.desired_subscription_spec(manifest, channel)
        self.ensure_subscription(desired, namespace_exists, existing)

        csv_resource = self._res(CSV)
        current = (self.cluster.get(csv_resource, wanted_csv, self.namespace)
                   if namespace_exists and not namespace_created else None)
        no_wait = self.check_mode or not self.wait
        if no_wait and namespace_exists and csv_phase(current) != "Succeeded" \
                and desired["installPlanApproval"] == "Manual":
            self.approve_if_present(wanted_csv)
        if no_wait:
            conditions = ((current or {}).get("status") or {}).get("conditions")
            return self.finish(phase=csv_phase(current), timeline=merge_timeline(conditions, []),
                               version=self._version(current), diff=self.changes.diffs)
        if csv_phase(current) != "Succeeded":
            if desired["installPlanApproval"] == "Manual":
                self.approve_install_plan(wanted_csv)
            # OLM installs the CSV by itself; a later call waits (overlapped installs)
            if self.wait_for == "install_plan":
                conditions = ((current or {}).get("status") or {}).get("conditions")
                return self.finish(phase=csv_phase(current), timeline=merge_timeline(conditions, []),
                                   version=self._version(current), diff=self.changes.diffs)
            current = self.wait_for_csv(wanted_csv)
            self.result["installed_csv"] = wanted_csv
        else:
            self.timeline = merge_timeline((current.get("status") or {}).get("conditions"), [])
        return self.finish(phase=csv_phase(current), timeline=self.timeline, version=self._version(current),
                           diff=self.changes.diffs)

    def _version(self, csv):
        version = ((csv or {}).get("spec") or {}).get("version")
        return version or self.result.get("version")

    # -- absent ----------------------------------------------------------------------------

    def _installed_csv_names(self, subscription):
        status = (subscription or {}).get("status") or {}
        names = [n for n in (status.get("installedCSV"), status.get("currentCSV")) if n]
        if not names:
            items, _rv = self.cluster.list(self._res(CSV), self.namespace,
                                           label_selector="operators.coreos.com/%s.%s" % (self.package, self.namespace))
            names = [i["metadata"]["name"] for i in items]
        if not names and self.operator.get("starting_csv"):
            names = [self.operator["starting_csv"]]
        return sorted(set(names))

    def _delete(self, api_kind, name, namespace=None):
        resource = self._res(api_kind)
        existing = self.cluster.get(resource, name, namespace)
        if existing is None:
            return None
        try:
            self.cluster.delete(resource, name, namespace)
        except Exception as exc:  # pylint: disable=broad-except
            raise self.fail("Failed to delete %s: %s" % (object_ref(existing), api_message(exc)))
        self.changes.record("delete", api_kind[1], name, namespace, before=existing, after=None)
        return existing

    def _wait_namespace_gone(self, resource):
        try:
            wait_for(self.cluster, resource, absent, name=self.namespace, timeout=self.remaining())
        except WaitTimeout as exc:
            phase = ((exc.state or {}).get("status") or {}).get("phase")
            conditions = ((exc.state or {}).get("status") or {}).get("conditions") or []
            detail = "; ".join("%s: %s" % (c.get("type"), c.get("message")) for c in conditions
                               if c.get("status") == "True")
            raise self.fail("Namespace %s still exists after wait_timeout (phase %s)%s" % (
                self.namespace, phase, "; " + detail if detail else ""))

    def absent(self):
        ns_resource = self._res(NAMESPACE)
        namespace = self.cluster.get(ns_resource, self.namespace)
        if namespace is None:
            return self.finish(csv=None, phase=None, timeline=[], diff=self.changes.diffs)
        sub_resource = self._res(SUBSCRIPTION)
        subscription = self.cluster.get(sub_resource, self.subscription_name, self.namespace)
        csv_names = self._installed_csv_names(subscription)
        crd_names = []
        if self.remove_crds:
            csv_resource = self._res(CSV)
            for name in csv_names:
                csv = self.cluster.get(csv_resource, name, self.namespace) or {}
                owned = ((csv.get("spec") or {}).get("customresourcedefinitions") or {}).get("owned") or []
                crd_names.extend(o["name"] for o in owned if o.get("name"))
        self.result["csv"] = csv_names[0] if csv_names else None

        if subscription is not None:
            self._delete(SUBSCRIPTION, self.subscription_name, self.namespace)
        for name in csv_names:
            self._delete(CSV, name, self.namespace)
        if self.remove_operator_group and not self.remove_namespace:
            groups, _rv = self.cluster.list(self._res(OPERATOR_GROUP), self.namespace)
            wanted_name = self.operator.get("operator_group_name")
            for group in groups:
                if is_managed(group) or group["metadata"]["name"] == wanted_name:
                    self._delete(OPERATOR_GROUP, group["metadata"]["name"], self.namespace)
                else:
                    self.warn(
                        "OperatorGroup %s was not created by this module; left in place" % group["metadata"]["name"])
        for name in sorted(set(crd_names)):
            self._delete(CRD, name)
        if self.remove_namespace:
            self._delete(NAMESPACE, self.namespace)
            if not self.check_mode and self.wait:
                self._wait_namespace_gone(ns_resource)
        return self.finish(phase=None, timeline=[], diff=self.changes.diffs)

    def run(self):
        try:
            if self.state == "absent":
                return self.absent()
            return self.present()
        except OLMError as exc:
            if not exc.result:
                raise self.fail(str(exc))
            raise
        except OLMProblem as exc:
            raise self.fail(str(exc))
        except ClusterError as exc:
            raise self.fail(str(exc))
        except Exception as exc:  # pylint: disable=broad-except
            if api_status(exc) is not None:
                raise self.fail("API request failed: %s" % api_message(exc), status=api_status(exc),
                                api_reason=api_reason(exc))
            raise
