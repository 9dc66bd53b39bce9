"""SecurityContextConstraints admission of pods, as OpenShift's API server does it on pod create.

From openshift/apiserver-library-go (release-4.18 to 4.20):
- pkg/securitycontextconstraints/sccadmission/admission.go (computeSecurityContext): every SCC is tried in priority
  order; one is usable when the requesting user or the pod's service account is listed in its users/groups or is
  authorized to `use` it in the pod's namespace (sccmatching/matcher.go ConstraintAppliesTo, authorizedForSCC:
  verb use, group security.openshift.io, resource securitycontextconstraints, the SCC's name); the first usable SCC
  that the pod validates against admits it and is recorded in the `openshift.io/scc` annotation; otherwise the pod is
  refused with "unable to validate against any security context constraint: [...]" listing each SCC's errors
  ("provider \"x\": Forbidden: not usable by user or serviceaccount" for the unusable ones).
- sccmatching/matcher.go (CreateProvidersFromConstraints): a MustRunAsRange SCC takes its UID range from the
  namespace's openshift.io/sa.scc.uid-range annotation (see namespace_annotations below).
- sccmatching/provider.go (mutate, validate): container defaults (runAsUser from the range, runAsNonRoot,
  allowPrivilegeEscalation false when the SCC forbids it, the first allowed seccomp profile), then the checks this
  file models: privileged, added capabilities (capabilities/mustrunas.go), host network/PID/IPC and host ports,
  volume types (hostPath needs allowHostDirVolumePlugin), runAsUser strategies (user/mustrunasrange.go,
  mustrunas.go, nonroot.go, runasany.go), privilege escalation, read-only root filesystem and seccomp profiles
  (seccomp/strategy.go: an SCC that lists no profile refuses a pod that sets one).
- group/mustrunas.go and group/runasany.go with sccmatching/provider.go (createFSGroupStrategy,
  createSupplementalGroupStrategy) and matcher.go (getPreallocatedFSGroup, getPreallocatedSupplementalGroups): a
  MustRunAs fsGroup or supplementalGroups strategy without ranges takes them from the namespace's
  openshift.io/sa.scc.supplemental-groups annotation (the uid range when it is missing), fsGroup only the first
  block's first ID; a pod that sets none gets the first range's minimum; a group outside the ranges is refused
  ("N is not an allowed group").
Not modelled: SELinux, sysctls, flex volumes, the restrictiveness
tie-break between SCCs of equal priority (util/sort) - SCCs of equal priority are tried by name, so the recorded
SCC may differ from a real cluster's when two of them admit a pod, never whether the pod is admitted.
"""

import copy
import random

SCC_GROUP = "security.openshift.io"
SCC_PLURAL = "securitycontextconstraints"
SCC_ANNOTATION = "openshift.io/scc"
UID_RANGE_ANNOTATION = "openshift.io/sa.scc.uid-range"
MCS_ANNOTATION = "openshift.io/sa.scc.mcs"
GROUPS_ANNOTATION = "openshift.io/sa.scc.supplemental-groups"
# cluster-policy-controller (openshift/cluster-policy-controller, pkg/security/controller/
# namespace_scc_allocation_controller.go) gives every namespace a block of 10000 UIDs from 1000000000 upwards and an
# MCS level; admission waits for those annotations, so the simulator sets them when a namespace is created.
UID_BASE, UID_BLOCK = 1000000000, 10000

VOLUME_TYPES = ("configMap", "secret", "emptyDir", "hostPath", "projected", "downwardAPI", "persistentVolumeClaim",
                "csi", "ephemeral", "nfs")


# kubernetes plugin/pkg/admission/serviceaccount/admission.go (mountServiceAccountToken, TokenVolumeSource), which
# runs before SCC admission: unless the pod (else its service account) sets automountServiceAccountToken false, the pod
# gets a projected volume "kube-api-access-<5 random characters>" (the account's bound token, expiring in 3607 s, the
# kube-root-ca.crt ConfigMap and the namespace), mounted read-only in every container at this path. The SCC then sees
# a "projected" volume like any other. (OpenShift's carry patch adds an openshift-service-ca.crt source, not modelled:
# it changes no admission decision.)
TOKEN_VOLUME_PREFIX = "kube-api-access-"
TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_EXPIRATION_SECONDS = 3607


def random_suffix(length=5):
    """utilrand.String (k8s.io/apimachinery pkg/util/rand): consonants and digits that spell no word."""
    return "".join(random.choice("bcdfghjklmnpqrstvwxz2456789") for _position in range(length))


def mount_service_account_token(pod, account, suffix):
    """The pod as the ServiceAccount admission plugin leaves it: with the token volume unless automount is off.
    ``account`` is the ServiceAccount object (None for "default", which the simulator does not store)."""
    spec = pod.setdefault("spec", {})
    automount = spec.get("automountServiceAccountToken")
    if automount is None:
        automount = (account or {}).get("automountServiceAccountToken")
    if automount is False:
        return pod
    if any(m.get("mountPath") == TOKEN_MOUNT_PATH for _path, c in _containers(pod) for m in c.get("volumeMounts") or []):
        return pod
    name = TOKEN_VOLUME_PREFIX + suffix
    spec.setdefault("volumes", []).append({"name": name, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}})
    for _path, container in _containers(pod):
        container.setdefault("volumeMounts", []).append({"name": name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH})
    return pod


def namespace_annotations(index):
    start = UID_BASE + index * UID_BLOCK
    return {UID_RANGE_ANNOTATION: "%d/%d" % (start, UID_BLOCK), GROUPS_ANNOTATION: "%d/%d" % (start, UID_BLOCK),
            MCS_ANNOTATION: "s0:c%d,c%d" % (26 + index // 26, index % 26 + 1)}


def _uid_range(scc, namespace):
    run_as = scc.get("runAsUser") or {}
    if run_as.get("uidRangeMin") is not None or run_as.get("uidRangeMax") is not None:
        return run_as.get("uidRangeMin"), run_as.get("uidRangeMax")
    value = ((namespace or {}).get("metadata", {}).get("annotations") or {}).get(UID_RANGE_ANNOTATION)
    if not value:
        return None
    start, _sep, size = value.partition("/")
    return int(start), int(start) + int(size) - 1


def _group_ranges(scc, field, namespace):
    """[(min, max)] of a MustRunAs group strategy: the SCC's own ranges, else the namespace's pre-allocated block(s)
    (fsGroup: the first block's first ID only); None when the namespace has no annotation to take them from."""
    ranges = [(r.get("min"), r.get("max")) for r in (scc.get(field) or {}).get("ranges") or []]
    if ranges:
        return ranges
    annotations = (namespace or {}).get("metadata", {}).get("annotations") or {}
    value = annotations.get(GROUPS_ANNOTATION) or annotations.get(UID_RANGE_ANNOTATION)
    if not value:
        return None
    blocks = []
    for segment in value.split(","):
        start, _sep, size = segment.strip().partition("/")
        blocks.append((int(start), int(start) + int(size) - 1))
    return [(blocks[0][0], blocks[0][0])] if field == "fsGroup" else blocks


def _validate_groups(scc, spec, namespace, err):
    """fsGroup and supplementalGroups: MustRunAs defaults then checks them; RunAsAny accepts any (group 0 included)."""
    for field in ("fsGroup", "supplementalGroups"):
        if (scc.get(field) or {}).get("type") != "MustRunAs":
            continue
        ranges = _group_ranges(scc, field, namespace)
        if ranges is None:
            err("spec.securityContext", "unable to find pre-allocated group annotation for namespace")
            continue
        psc = spec.setdefault("securityContext", {})
        value = psc.get(field)
        groups = ([] if value is None else [value]) if field == "fsGroup" else list(value or [])
        if not groups:
            groups = [ranges[0][0]]
            psc[field] = groups[0] if field == "fsGroup" else list(groups)
        for group in groups:
            if not any(low <= group <= high for low, high in ranges):
                err("spec.securityContext.%s" % field, "Invalid value: []int64{%s}: %d is not an allowed group"
                    % (", ".join(str(g) for g in groups), group))


def _volume_type(volume):
    for key in VOLUME_TYPES:
        if key in volume:
            return key
    return next((k for k in volume if k != "name"), "unknown")


def _containers(pod):
    spec = pod.get("spec") or {}
    for kind in ("initContainers", "containers"):
        for index, container in enumerate(spec.get(kind) or []):
            yield "spec.%s[%d]" % (kind, index), container


def validate(scc, pod, namespace):
    """(mutated pod, errors) of one SCC for one pod (provider.go mutate then validate)."""
    name = scc["metadata"]["name"]
    errors = []
    pod = copy.deepcopy(pod)
    spec = pod.setdefault("spec", {})
    psc = spec.get("securityContext") or {}
    prefix = 'provider "%s": ' % name

    def err(path, message):
        errors.append("%s%s: %s" % (prefix, path, message))

    for flag, allowed, label in (("hostNetwork", "allowHostNetwork", "Host network"), ("hostPID", "allowHostPID", "Host PID"),
                                 ("hostIPC", "allowHostIPC", "Host IPC")):
        if spec.get(flag) and not scc.get(allowed):
            err("spec.securityContext.%s" % flag, "Invalid value: true: %s is not allowed to be used" % label)
    allowed_volumes = scc.get("volumes") or []
    for index, volume in enumerate(spec.get("volumes") or []):
        vtype = _volume_type(volume)
        ok = "*" in allowed_volumes or vtype in allowed_volumes
        if vtype == "hostPath" and not scc.get("allowHostDirVolumePlugin"):
            ok = False
        if not ok:
            err("spec.volumes[%d]" % index, 'Invalid value: "%s": %s volumes are not allowed to be used' % (vtype, vtype))

    profiles = scc.get("seccompProfiles") or []
    pod_profile = _seccomp(psc.get("seccompProfile"))
    if not pod_profile and [p for p in profiles if p != "*"]:
        pod_profile = [p for p in profiles if p != "*"][0]
        spec.setdefault("securityContext", {})["seccompProfile"] = {"type": "RuntimeDefault"} \
            if pod_profile in ("runtime/default", "docker/default") else {"type": "Localhost"}
    seccomp_error = _seccomp_error(profiles, pod_profile)
    if seccomp_error:
        err("pod.metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]", seccomp_error)

    _validate_groups(scc, spec, namespace, err)
    psc = spec.get("securityContext") or {}

    uid_range = _uid_range(scc, namespace)
    strategy = (scc.get("runAsUser") or {}).get("type", "RunAsAny")
    if strategy == "MustRunAsRange" and uid_range is None:
        err("spec.securityContext", "unable to find pre-allocated uid annotation for namespace")
    allowed_caps = set(scc.get("allowedCapabilities") or []) | set(scc.get("defaultAddCapabilities") or [])
    required_drop = set(scc.get("requiredDropCapabilities") or [])
    for path, container in _containers(pod):
        csc = container.setdefault("securityContext", {})
        run_as_user = csc.get("runAsUser", psc.get("runAsUser"))
        if run_as_user is None and strategy == "MustRunAsRange" and uid_range:
            run_as_user = csc["runAsUser"] = uid_range[0]
        if run_as_user is None and strategy == "MustRunAs":
            run_as_user = csc["runAsUser"] = (scc.get("runAsUser") or {}).get("uid")
        non_root = csc.get("runAsNonRoot", psc.get("runAsNonRoot"))
        if non_root is None and ((run_as_user is None and strategy == "MustRunAsNonRoot") or (run_as_user or 0) > 0):
            non_root = csc["runAsNonRoot"] = True
        if scc.get("readOnlyRootFilesystem") and csc.get("readOnlyRootFilesystem") is None:
            csc["readOnlyRootFilesystem"] = True
        if scc.get("allowPrivilegeEscalation") is False and csc.get("allowPrivilegeEscalation") is None \
                and not csc.get("privileged"):
            csc["allowPrivilegeEscalation"] = False

        if csc.get("privileged") and not scc.get("allowPrivilegedContainer"):
            err(path + ".securityContext.privileged", "Invalid value: true: Privileged containers are not allowed")
        for cap in (csc.get("capabilities") or {}).get("add") or []:
            if cap in required_drop or not ("*" in allowed_caps or cap in allowed_caps):
                err(path + ".securityContext.capabilities.add", 'Invalid value: "%s": capability may not be added' % cap)
        if strategy == "MustRunAsRange" and uid_range and run_as_user is not None \
                and not uid_range[0] <= run_as_user <= uid_range[1]:
            err(path + ".securityContext.runAsUser", "Invalid value: %d: must be in the ranges: [%d, %d]"
                % (run_as_user, uid_range[0], uid_range[1]))
        if strategy == "MustRunAs" and run_as_user != (scc.get("runAsUser") or {}).get("uid"):
            err(path + ".securityContext.runAsUser", "Invalid value: %s: must be: %s" % (run_as_user, (scc.get("runAsUser") or {}).get("uid")))
        if strategy == "MustRunAsNonRoot":
            if non_root is False:
                err(path + ".securityContext.runAsNonRoot", "Invalid value: false: must be true")
            if run_as_user == 0:
                err(path + ".securityContext.runAsUser", "Invalid value: 0: running with the root UID is forbidden")
        if scc.get("allowPrivilegeEscalation") is False and csc.get("allowPrivilegeEscalation"):
            err(path + ".securityContext.allowPrivilegeEscalation",
                "Invalid value: true: Allowing privilege escalation for containers is not allowed")
        if scc.get("readOnlyRootFilesystem") and csc.get("readOnlyRootFilesystem") is False:
            err(path + ".securityContext.readOnlyRootFilesystem", "Invalid value: false: ReadOnlyRootFilesystem must be set to true")
        for port in container.get("ports") or []:
            if port.get("hostPort") and not scc.get("allowHostPorts"):
                err(path + ".ports", "Invalid value: %s: Host ports are not allowed to be used" % port["hostPort"])
        container_profile = _seccomp(csc.get("seccompProfile")) or pod_profile
        seccomp_error = _seccomp_error(profiles, container_profile)
        if seccomp_error and container_profile != pod_profile:
            err("pod.metadata.annotations[container.seccomp.security.alpha.kubernetes.io/%s]" % container.get("name"), seccomp_error)
    return pod, errors


def _seccomp(field):
    if not field:
        return ""
    kind = field.get("type")
    if kind == "RuntimeDefault":
        return "runtime/default"
    if kind == "Unconfined":
        return "unconfined"
    if kind == "Localhost":
        return "localhost/%s" % field.get("localhostProfile", "")
    return ""


def _seccomp_error(profiles, profile):
    named = [p for p in profiles if p != "*"]
    if "*" not in profiles and not named and profile:
        return "Forbidden: seccomp may not be set"
    if not named and not profile:
        return None
    if "*" in profiles:
        return None
    defaults = {"runtime/default", "docker/default"}
    if profile in named or (profile in defaults and defaults & set(named)):
        return None
    return "Forbidden: %s is not an allowed seccomp profile. Valid values are [%s]" % (profile, " ".join(named))


def admit(sccs, pod, namespace, usable):
    """(admitted pod, None) or (None, refusal message). ``usable(scc)`` says whether the user or the SA may use it."""
    ordered = sorted(sccs, key=lambda s: (-(s.get("priority") or 0), s["metadata"]["name"]))
    errors = []
    for scc in ordered:
        name = scc["metadata"]["name"]
        if not usable(scc):
            errors.append('provider "%s": Forbidden: not usable by user or serviceaccount' % name)
            continue
        admitted, problems = validate(scc, pod, namespace)
        if problems:
            errors.extend(problems)
            continue
        admitted.setdefault("metadata", {}).setdefault("annotations", {})[SCC_ANNOTATION] = name
        return admitted, None
    return None, "unable to validate against any security context constraint: [%s]" % ", ".join(errors)
