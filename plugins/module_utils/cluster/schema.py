# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Rendered custom resources checked against the CRD schema the cluster serves, before any write.

The API server prunes fields that a structural schema does not declare (Kubernetes apiextensions-apiserver,
pkg/apiserver/schema/pruning); an operator version that predates a field would then run without it, and every
re-run would patch it again. The collection refuses such a manifest instead, naming the field and the operator.
"""


from ansible_collections.gpudirect.openshift.plugins.module_utils.cluster.api_errors import api_status

CRD_API_VERSION = "apiextensions.k8s.io/v1"
_ROOT_FIELDS = ("apiVersion", "kind", "metadata", "status")


def version_schema(crd, version):
    """openAPIV3Schema of ``version`` in a CRD, or None."""
    for entry in ((crd or {}).get("spec") or {}).get("versions") or []:
        if entry.get("name") == version:
            return ((entry.get("schema") or {}).get("openAPIV3Schema")) or None
    return None


def unknown_fields(value, schema, path=""):
    """Dotted paths in ``value`` that ``schema`` would prune (list indexes as [n])."""
    if not isinstance(schema, dict):
        return []
    found = []
    if isinstance(value, dict):
        properties = schema.get("properties")
        additional = schema.get("additionalProperties")
        preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
        embedded = schema.get("x-kubernetes-embedded-resource") is True
        for key, child in value.items():
            child_path = "%s.%s" % (path, key) if path else key
            if properties and key in properties:
                found.extend(unknown_fields(child, properties[key], child_path))
            elif isinstance(additional, dict):
                found.extend(unknown_fields(child, additional, child_path))
            elif additional is True or preserve or (embedded and key in ("apiVersion", "kind", "metadata")):
                continue
            elif properties is None and schema.get("type") != "object":
                continue  # no structural information here (int-or-string, anyOf): nothing is pruned
            else:
                found.append(child_path)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            found.extend(unknown_fields(item, schema["items"], "%s[%d]" % (path, index)))
    return found


def manifest_unknown_fields(manifest, crd):
    """Unknown fields of a manifest's spec (and other top-level content) under the CRD version it names."""
    version = (manifest.get("apiVersion") or "").rpartition("/")[2]
    schema = version_schema(crd, version)
    if not schema:
        return []
    body = {k: v for k, v in manifest.items() if k not in _ROOT_FIELDS}
    return unknown_fields(body, schema)


class SchemaChecker:
    """Reads each kind's CRD once (GET by name, which the least-privilege ClusterRole allows) and reports
    fields the served version does not declare. Kinds without a readable CRD (built-in kinds, a CRD the
    token may not read, an operator not installed yet) are not checked."""

    def __init__(self, cluster):
        self.cluster = cluster
        self._crds = {}

    def _crd(self, resource):
        name = "%s.%s" % (resource.name, resource.group)
        if name not in self._crds:
            crd = None
            if resource.group and "." in resource.group:
                crd_resource = self.cluster.resource(CRD_API_VERSION, "CustomResourceDefinition")
                if crd_resource is not None:
                    try:
                        crd = self.cluster.get(crd_resource, name)
                    except Exception as exc:  # pylint: disable=broad-except
                        if api_status(exc) != 403:
                            raise
            self._crds[name] = crd
        return self._crds[name]

    def problems(self, manifests, owner=""):
        """One message per manifest with fields the cluster's schema would drop."""
        out = []
        for manifest in manifests:
            resource = self.cluster.resource(manifest.get("apiVersion"), manifest.get("kind"))
            if resource is None:
                continue
            crd = self._crd(resource)
            fields = manifest_unknown_fields(manifest, crd) if crd else []
            if fields:
                out.append("%s %s: %s %s not declared by the %s schema this cluster serves (CRD %s%s); the API server "
                           "would drop %s. Upgrade the operator (docs/upgrades.md) or change the input that renders %s."
                           % (manifest.get("kind"), (manifest.get("metadata") or {}).get("name"), ", ".join(fields),
                              "is" if len(fields) == 1 else "are", manifest.get("apiVersion"), crd["metadata"]["name"],
                              ", installed with %s" % owner if owner else "", "it" if len(fields) == 1 else "them",
                              "it" if len(fields) == 1 else "them"))
        return out
