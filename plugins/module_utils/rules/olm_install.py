# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The rules of installing an operator through OLM (v0: Subscription / InstallPlan / CSV), without a cluster client.

Install modes and the OperatorGroup that fits them, the PackageManifest and channel to install from, the InstallPlan
that installs a CSV, the CSV's progress and the Subscription's health during a wait, and the problems known before
any write (a pin that cannot hold, approval modes that clash). The installer (cluster/operator_installer.py) reads
the objects and applies these judgements; plan_status runs them on the lists it read, before any write.
"""


import time
from datetime import datetime, timezone

from ansible_collections.gpudirect.openshift.plugins.module_utils.vocabulary import MANAGED_BY_LABEL, MANAGED_BY_VALUE

# What defines one operator's installation: olm_operator's options, and plan_status's operators[] entries.
OPERATOR_OPTIONS = dict(
    package=dict(type="str", required=True),
    namespace=dict(type="str", required=True),
    channel=dict(type="str"),
    starting_csv=dict(type="str"),
    source=dict(type="str"),
    source_namespace=dict(type="str"),
    package_namespace=dict(type="str", default="openshift-marketplace"),
    install_plan_approval=dict(type="str", choices=["Automatic", "Manual"], default="Automatic"),
    subscription_name=dict(type="str"),
    subscription_config=dict(type="dict"),
    operator_group_name=dict(type="str"),
    target_namespaces=dict(type="list", elements="str"),
    namespace_labels=dict(type="dict", default={"openshift.io/cluster-monitoring": "true"}),
    namespace_annotations=dict(type="dict", default={}),
)

OWN, SINGLE, MULTI, ALL = "OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces"
INSTALL_MODES = (OWN, SINGLE, MULTI, ALL)


class OLMProblem(Exception):
    """A judgement that stops the install (no fitting install mode, no such channel, a CSV or Subscription failure that
    outlasted its grace period); the installer reports it with its partial result. ``reason`` is OLM's own reason."""

    def __init__(self, msg, reason=None):
        super().__init__(msg)
        self.reason = reason


def utc_now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def supported_install_modes(install_modes):
    """Names of the install modes a CSV declares as supported (``installModes[].supported``)."""
    return sorted({m.get("type") for m in install_modes or [] if m.get("supported") and m.get("type") in INSTALL_MODES})


def operator_group_mode(spec, namespace):
    """The install mode an OperatorGroup spec gives to operators in ``namespace``."""
    spec = spec or {}
    if spec.get("selector"):
        return MULTI
    targets = [t for t in spec.get("targetNamespaces") or [] if t]
    if not targets:
        return ALL
    if targets == [namespace]:
        return OWN
    if len(targets) == 1:
        return SINGLE
    return MULTI


def desired_operator_group_spec(install_modes, namespace, target_namespaces=None):
    """The OperatorGroup spec for an operator whose CSV declares ``install_modes``.

    Preference without an explicit ``target_namespaces``: OwnNamespace (what the operators' own
    docs do), then AllNamespaces. Raises OLMProblem when no supported mode can be expressed.
    """
    supported = supported_install_modes(install_modes)
    if target_namespaces is not None:
        spec = {"targetNamespaces": list(target_namespaces)} if target_namespaces else {}
        mode = operator_group_mode(spec, namespace)
        if mode not in supported:
            raise OLMProblem("target_namespaces %s means install mode %s, which the CSV does not support (supported: "
                             "%s)" % (list(target_namespaces), mode, ", ".join(supported) or "none"))
        return spec
    if OWN in supported:
        return {"targetNamespaces": [namespace]}
    if ALL in supported:
        return {}
    raise OLMProblem("The CSV supports only %s; pass target_namespaces to choose the namespaces it watches" % (
        ", ".join(supported) or "no install mode"))


def is_managed(obj):
    return ((obj.get("metadata") or {}).get("labels") or {}).get(MANAGED_BY_LABEL) == MANAGED_BY_VALUE


def operator_group_fits(operator_group, install_modes, namespace):
    return operator_group_mode(operator_group.get("spec"), namespace) in supported_install_modes(install_modes)


def foreign_operator_group_error(operator_group, install_modes, namespace):
    mode = operator_group_mode(operator_group.get("spec"), namespace)
    return ("OperatorGroup %s in namespace %s (not created by this module) selects install mode %s "
            "(targetNamespaces: %s), but the CSV supports only %s. Remove or change that OperatorGroup, "
            "or install the operator into another namespace." % (
                operator_group["metadata"]["name"], namespace, mode,
                (operator_group.get("spec") or {}).get("targetNamespaces") or "all namespaces",
                ", ".join(supported_install_modes(install_modes)) or "none"))


def resolve_channel(package_manifest, channel=None):
    """(channel entry, channel name) from a PackageManifest; default channel unless one is given."""
    status = package_manifest.get("status") or {}
    name = channel or status.get("defaultChannel")
    channels = status.get("channels") or []
    for entry in channels:
        if entry.get("name") == name:
            return entry, name
    raise OLMProblem("Package %s has no channel %r (channels: %s)" % (
        package_manifest["metadata"]["name"], name, ", ".join(sorted(c.get("name", "") for c in channels)) or "none"))


def catalog_of(package_manifest):
    """'namespace/name' of the CatalogSource a PackageManifest entry comes from."""
    status = package_manifest.get("status") or {}
    return "%s/%s" % (status.get("catalogSourceNamespace") or "?", status.get("catalogSource") or "?")


def _from_source(package_manifest, source, source_namespace):
    status = package_manifest.get("status") or {}
    return status.get("catalogSource") == source and (not source_namespace
                                                      or status.get("catalogSourceNamespace") == source_namespace)


def choose_package_manifest(manifests, operator, subscription=None, names=None):
    """(PackageManifest, problem): the entry of ``operator["package"]`` (an operator entry) it installs from, or why
    none fits.

    The package server lists a package once per CatalogSource that holds it, all under the package's name, and a GET
    by name answers any one of them (operator-lifecycle-manager, pkg/package-server/provider/registry.go: the cache
    key is catalog/namespace/name; Get returns the first match of its List). So the entry is chosen from a LIST: the
    one of the configured ``source`` (and ``source_namespace``); without a source, the one of the source the existing
    ``subscription`` names, else the only one. ``names`` maps "source" and "source_namespace" to the variables that
    set them, for the problem text. (None, None) when no entry has the package's name at all.
    """
    names = dict({"source": "source", "source_namespace": "source_namespace"}, **(names or {}))
    package = operator["package"]
    listed = [m for m in manifests if (m.get("metadata") or {}).get("name") == package]
    if not listed:
        return None, None
    source, source_namespace = operator.get("source"), operator.get("source_namespace")
    if source:
        fits = [m for m in listed if _from_source(m, source, source_namespace)]
    else:
        spec = (subscription or {}).get("spec") or {}
        fits = [m for m in listed if spec.get("source")
                and _from_source(m, spec["source"], spec.get("sourceNamespace"))]
        fits = fits or listed
    if len(fits) == 1:
        return fits[0], None
    home = (listed[0].get("metadata") or {}).get("namespace") or "openshift-marketplace"
    fix = "Set %s to one of them (and %s to its namespace when that is not %s)" % (
        names["source"], names["source_namespace"], home)
    if not fits:
        asked = "%s=%s" % (names["source"], source) + (", %s=%s" % (names["source_namespace"], source_namespace)
                                                       if source_namespace else "")
        named = "%s/%s" % (source_namespace, source) if source_namespace else source
        where = ", ".join(sorted({catalog_of(m) for m in listed}))
        return None, ("Package %s is not in CatalogSource %s (%s); the catalogs that list it are %s. %s, or add the "
                      "package to %s. Nothing was changed." % (package, named, asked, where, fix, source))
    if source:
        undecided = "%s=%s is in more than one namespace and %s is empty" % (
            names["source"], source, names["source_namespace"])
    else:
        undecided = "%s is empty" % names["source"]
    return None, ("Package %s is listed by %d catalogs (%s) and %s, so which one to install from is not decided (OLM "
                  "installs from the CatalogSource the Subscription names). %s. Nothing was changed." % (
                      package, len(fits), ", ".join(sorted(catalog_of(m) for m in fits)), undecided, fix))


def operator_package_choices(operators, manifests, subscriptions, roles=None):
    """choose_package_manifest for each of ``operators`` (olm_operator's options; empty strings mean unset), against
    the listed PackageManifests and the existing Subscriptions. With ``roles`` (package -> role), problems name the
    role's <role>_source and <role>_source_namespace variables instead of the options."""
    choices = []
    for operator in operators:
        own = operator.get("subscription_name") or operator["package"]
        home = operator.get("package_namespace") or "openshift-marketplace"
        subscription = next((s for s in subscriptions if s["metadata"].get("namespace") == operator["namespace"]
                             and s["metadata"]["name"] == own), None)
        role = (roles or {}).get(operator["package"])
        names = {"source": "%s_source" % role, "source_namespace": "%s_source_namespace" % role} if role else None
        here = [m for m in manifests if (m.get("metadata") or {}).get("namespace") in (None, home)]
        choices.append(choose_package_manifest(here, operator, subscription, names))
    return choices


def plan_csvs(install_plan):
    return list((install_plan.get("spec") or {}).get("clusterServiceVersionNames") or [])


def select_install_plan(install_plans, csv_name):
    """The InstallPlan that installs ``csv_name``, or None.

    Only plans listing the CSV in spec.clusterServiceVersionNames qualify. When OLM made several
    (a failed attempt and a retry), prefer one not Failed, then the newest.
    """
    matching = [p for p in install_plans if csv_name in plan_csvs(p)]
    if not matching:
        return None

    def rank(plan):
        failed = (plan.get("status") or {}).get("phase") == "Failed"
        meta = plan.get("metadata") or {}
        return (not failed, meta.get("creationTimestamp") or "", int(meta.get("resourceVersion") or 0))

    return sorted(matching, key=rank)[-1]


def needs_approval(install_plan):
    return not (install_plan.get("spec") or {}).get("approved")


def csv_phase(csv):
    return ((csv or {}).get("status") or {}).get("phase")


def csv_failure_text(csv):
    status = (csv or {}).get("status") or {}
    reason = status.get("reason") or "unknown reason"
    message = status.get("message") or "no message"
    return "%s: %s" % (reason, message)


def install_plan_failure(install_plan):
    """'InstallPlan <name> Installed=False (<reason>): <message>' when OLM gave the plan up, else None.

    The catalog operator ends a plan it cannot carry out in phase Failed with condition Installed False and the reason
    (InstallComponentFailed for a step the API server refused, InstallCheckFailed for a bundle that did not unpack:
    operator-framework-olm staging/operator-lifecycle-manager/pkg/controller/operators/catalog/operator.go,
    syncInstallPlans), and projects the same reason and message onto the Subscription as InstallPlanFailed
    (catalog/subscription/state.go)."""
    status = (install_plan or {}).get("status") or {}
    installed = [c for c in status.get("conditions") or [] if c.get("type") == "Installed"
                 and c.get("status") == "False"]
    if status.get("phase") != "Failed" and not [c for c in installed
                                                if c.get("reason") in ("InstallComponentFailed", "InstallCheckFailed")]:
        return None
    cond = installed[-1] if installed else {}
    return "InstallPlan %s Installed=False (%s): %s" % ((install_plan.get("metadata") or {}).get("name"),
                                                        cond.get("reason") or "no reason",
                                                        cond.get("message") or "no message")


def merge_timeline(conditions, observed):
    """CSV phase history: OLM's status.conditions plus what the wait saw, oldest first.

    Conditions give {phase, reason, lastTransitionTime}; observed entries are {phase, reason,
    time}. An observed entry is dropped when the conditions already hold the same phase/reason at
    or after that point (they usually do once OLM catches up).
    """
    timeline = []
    for cond in conditions or []:
        if cond.get("phase"):
            timeline.append({"phase": cond["phase"], "reason": cond.get("reason") or "",
                             "time": cond.get("lastTransitionTime") or cond.get("lastUpdateTime") or ""})
    seen = {(e["phase"], e["reason"]) for e in timeline}
    for entry in observed or []:
        if entry.get("phase") and (entry["phase"], entry.get("reason") or "") not in seen:
            timeline.append({"phase": entry["phase"], "reason": entry.get("reason") or "",
                             "time": entry.get("time") or ""})
            seen.add((entry["phase"], entry.get("reason") or ""))
    timeline.sort(key=lambda e: e["time"])
    return timeline


class CsvProgress:
    """Predicate for the CSV wait: Succeeded ends it; a failure that lasts ``grace`` seconds aborts it.

    OLM can report Failed for a moment (e.g. while a webhook or a requirement settles) and then recover, so one Failed
    is not yet a failure. But OLM also requeues a failed install: a CSV whose deployment cannot come up goes Failed
    (InstallCheckFailed) and straight back to Pending (NeedsReinstall, "calculated deployment install is bad") and round
    again, about once a second (operator-framework-olm staging/operator-lifecycle-manager/pkg/controller/operators/olm/
    operator.go, transitionCSVState), so it is never Failed for 30 s in a row. A failure episode therefore starts at
    the first Failed and lasts while the CSV keeps returning to Failed within ``grace`` seconds; the wait fails once an
    episode has lasted ``grace`` seconds and either the CSV is Failed now or it entered Failed at least
    ``FAILED_ENTRIES`` times. The message quotes the last Failed status, even when the CSV shows Pending at that moment.
    """

    FAILED_ENTRIES = 2

    def __init__(self, csv_name, grace, clock=time.monotonic, now=utc_now):
        self.csv_name = csv_name
        self.grace = float(grace)
        self.clock = clock
        self.now = now
        self.failing_since = None
        self.last_failed_at = None
        self.failed_entries = 0
        self.last_failure = None
        self.phase = None
        self.observed = []
        self.last = None

    @property
    def failed_since(self):
        return self.failing_since

    def record(self, csv):
        if csv is None:
            return
        status = csv.get("status") or {}
        phase, reason = status.get("phase"), status.get("reason") or ""
        if phase and (not self.observed
                      or (self.observed[-1]["phase"], self.observed[-1]["reason"]) != (phase, reason)):
            self.observed.append({"phase": phase, "reason": reason, "time": self.now()})

    def _track(self, csv, phase):
        now = self.clock()
        if phase == "Failed":
            if self.phase != "Failed":
                self.failed_entries += 1
            if self.failing_since is None:
                self.failing_since = now
            self.last_failed_at = now
            self.last_failure = csv
        elif self.last_failed_at is not None and now - self.last_failed_at >= self.grace:
            # Out of Failed for longer than the grace period: the episode is over (a transient Failed).
            self.failing_since = self.last_failed_at = self.last_failure = None
            self.failed_entries = 0
        self.phase = phase
        return now

    def __call__(self, csv):
        self.last = csv
        self.record(csv)
        phase = csv_phase(csv)
        if phase == "Succeeded":
            return True
        now = self._track(csv, phase)
        if self.failing_since is None or now - self.failing_since < self.grace:
            return False
        if phase == "Failed" or self.failed_entries >= self.FAILED_ENTRIES:
            failed = self.last_failure
            how = "still Failed after %.0f s" % self.grace if self.failed_entries < self.FAILED_ENTRIES else \
                "Failed %d times in %.0f s; OLM retries the install and fails again" % (
                    self.failed_entries, now - self.failing_since)
            raise OLMProblem("ClusterServiceVersion %s failed (%s): %s"
                             % (self.csv_name, how, csv_failure_text(failed)),
                             reason=(failed.get("status") or {}).get("reason"))
        return False

    def recheck_at(self):
        """When the wait must look again without an event: when a failure episode's grace period ends, or, out of
        Failed after a single entry, when the episode is over."""
        if self.failing_since is None:
            return None
        if self.phase == "Failed" or self.failed_entries >= self.FAILED_ENTRIES:
            return self.failing_since + self.grace
        return self.last_failed_at + self.grace


# Subscription conditions that mean OLM cannot get on with the install (operator-lifecycle-manager,
# pkg/controller/operators/catalog/operator.go); BundleUnpacking only with the catalog operator's image-pull message.
# OpenShift 4.18-4.22 ship operator-framework-olm, whose catalog operator never writes that message: while the unpack
# pod cannot pull, the Subscription shows BundleUnpacking (reason UnpackingInProgress, no message) until the unpack
# deadline (10 minutes by default), then BundleUnpackFailed "bundle unpacking failed. Reason: DeadlineExceeded, ..."
# (staging/operator-lifecycle-manager/pkg/controller/operators/catalog/operator.go, syncResolvingNamespace), which
# this list catches.
SUBSCRIPTION_FAILURES = ("BundleUnpackFailed", "ResolutionFailed", "CatalogSourcesUnhealthy", "InstallPlanFailed")
IMAGE_PULL_FAILED = "Bundle image pull failed"


def subscription_failure(subscription):
    """'Type (reason): message' of the first condition saying the install cannot proceed, or None."""
    for cond in ((subscription or {}).get("status") or {}).get("conditions") or []:
        if cond.get("status") != "True":
            continue
        kind = cond.get("type")
        if kind in SUBSCRIPTION_FAILURES or (kind == "BundleUnpacking"
                                             and (cond.get("message") or "").startswith(IMAGE_PULL_FAILED)):
            return "%s (%s): %s" % (kind, cond.get("reason") or "no reason", cond.get("message") or "no message")
    return None


class SubscriptionHealth:
    """Reads the Subscription now and then during a wait on InstallPlans or the CSV, which say nothing while
    OLM is stuck before them (unpacking, resolution); a failure that lasts ``grace`` seconds aborts the wait."""

    def __init__(self, read, grace, clock=time.monotonic, count_operator_groups=None):
        self.read = read
        self.count_operator_groups = count_operator_groups
        self.grace = float(grace)
        self.clock = clock
        self.interval = max(1.0, min(10.0, self.grace / 3))
        self.next_read = clock()
        self.failing_since = None
        self.unresolved = False

    def check(self):
        now = self.clock()
        if now < self.next_read:
            return
        self.next_read = now + self.interval
        subscription = self.read()
        failure = subscription_failure(subscription)
        status = (subscription or {}).get("status") or {}
        unresolved, self.unresolved = self.unresolved, not (status.get("installPlanRef") or status.get("installedCSV"))
        if failure is None and self.count_operator_groups and unresolved and self.unresolved:
            # OLM resolves nothing, and says so only in its log, while the namespace has no or several OperatorGroups
            # (catalog/operator.go syncResolvingNamespace: "found N operatorGroups, expected 1"). A Subscription
            # created a moment ago is unresolved too: the OperatorGroups are counted once it stays so for one read.
            count = self.count_operator_groups()
            if count != 1:
                failure = "OperatorGroups (found %d operatorGroups, expected 1): OLM resolves nothing in the " \
                          "namespace until exactly one OperatorGroup is left" % count
        if failure is None:
            self.failing_since = None
            return
        if self.failing_since is None:
            self.failing_since = now
        if now - self.failing_since >= self.grace:
            raise OLMProblem("The Subscription reports %s (for %.0f s; OLM creates no InstallPlan or CSV until that is "
                             "fixed)" % (failure, now - self.failing_since), reason=failure.split(" ", 1)[0])

    def recheck_at(self):
        return self.next_read


def strip_for_diff(obj):
    """What a user wants to compare: identity, labels, annotations, spec (no server bookkeeping)."""
    if not obj:
        return {}
    meta = obj.get("metadata") or {}
    out = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": {"name": meta.get("name")}}
    for key in ("namespace", "labels", "annotations"):
        if meta.get(key):
            out["metadata"][key] = meta[key]
    for key in ("spec",):
        if key in obj:
            out[key] = obj[key]
    return out


def subscription_drift(existing_spec, desired_spec):
    """Keys of the desired Subscription spec that the existing one does not match."""
    existing_spec = existing_spec or {}
    return sorted(k for k, v in desired_spec.items() if existing_spec.get(k) != v)


def subscription_summary(subscription):
    if not subscription:
        return "no Subscription"
    status = subscription.get("status") or {}
    parts = ["state=%s" % (status.get("state") or "unset"),
             "currentCSV=%s" % (status.get("currentCSV") or "unset"),
             "installedCSV=%s" % (status.get("installedCSV") or "unset")]
    for cond in status.get("conditions") or []:
        if cond.get("status") == "True":
            parts.append("%s: %s" % (cond.get("type"), cond.get("message") or cond.get("reason") or ""))
    return ", ".join(parts)


def _approval(spec_or_operator, key):
    return (spec_or_operator or {}).get(key) or "Automatic"


def uses_automatic_approval(operator):
    """Whether the options leave InstallPlans to OLM (install_plan_approval unset or Automatic)."""
    return _approval(operator, "install_plan_approval") == "Automatic"


def pin_problem(operator):
    """Why ``starting_csv`` with Automatic approval cannot hold a version, or None.

    OLM's resolver replaces an installed CSV with any bundle of the channel that replaces or skips it
    (operator-lifecycle-manager, pkg/controller/registry/resolver/resolver.go, getSubscriptionVariables), and
    Automatic approval installs that plan at once: startingCSV only chooses the first install.
    """
    if operator.get("starting_csv") and uses_automatic_approval(operator):
        return ("starting_csv=%s with install_plan_approval=Automatic does not pin the version: OLM installs %s and "
                "then upgrades along the channel without asking. Set install_plan_approval to Manual to pin it (the "
                "collection then approves exactly that CSV), or leave starting_csv empty to follow the channel." % (
                    operator["starting_csv"], operator["starting_csv"]))
    return None


def approval_problem(operator, subscriptions):
    """Why the namespace's other Subscriptions make this one's approval mode impossible, or None.

    ``subscriptions`` are Subscription objects (existing ones and, for preflight, the planned ones). OLM makes
    every InstallPlan of a namespace Manual once any Subscription in it is Manual, and one plan can carry the
    CSVs of several Subscriptions (operator-lifecycle-manager, pkg/controller/operators/catalog/operator.go,
    syncResolvingNamespace).
    """
    namespace = operator["namespace"]
    own = operator.get("subscription_name") or operator["package"]
    mine = _approval(operator, "install_plan_approval")
    others = sorted({"%s (%s)" % (s["metadata"]["name"], _approval(s.get("spec"), "installPlanApproval"))
                     for s in subscriptions
                     if s["metadata"].get("namespace") == namespace and s["metadata"]["name"] != own
                     and _approval(s.get("spec"), "installPlanApproval") != mine})
    if not others:
        return None
    return ("namespace %s also holds Subscription %s, while %s asks for install_plan_approval=%s. OLM makes every "
            "InstallPlan of a namespace Manual as soon as one Subscription there is Manual, and one plan can install "
            "several operators: an Automatic operator would wait forever, and approving a plan could upgrade the other "
            "operator. Install %s into its own namespace, or give both the same approval." % (
                namespace, ", ".join(others), own, mine, operator["package"]))


def operator_problems(operator, subscriptions):
    """Every reason, known before any write, why the operator's options cannot be honoured."""
    return [p for p in (pin_problem(operator), approval_problem(operator, subscriptions)) if p]


def planned_subscription(operator):
    """The identity and approval of the Subscription the options describe (for approval_problem)."""
    return {"metadata": {"namespace": operator["namespace"],
                         "name": operator.get("subscription_name") or operator["package"]},
            "spec": {"installPlanApproval": _approval(operator, "install_plan_approval")}}


def upgrade_offer(subscription):
    """(CSV, InstallPlan name) OLM offers beyond the installed CSV, from the Subscription status, or (None, None).

    While an upgrade waits, the status reads state UpgradePending with currentCSV the new CSV and installedCSV
    the old one (operator-lifecycle-manager, pkg/controller/operators/catalog/operator.go).
    """
    status = (subscription or {}).get("status") or {}
    current, installed = status.get("currentCSV"), status.get("installedCSV")
    if status.get("state") == "UpgradePending" and current and installed and current != installed:
        return current, (status.get("installPlanRef") or {}).get("name")
    return None, None


# -- the installer -----------------------------------------------------------------------------
