"""ApiError: an error answered as a `kind: Status` body, with the codes and reasons of kube-apiserver."""


class ApiError(Exception):
    def __init__(self, code, reason, message, causes=None, details=None, headers=None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.causes = causes or []
        self.details = dict(details or {})
        self.headers = dict(headers or {})
        self.list_meta = {}  # metadata of the Status (an expired list's continue token)

    def to_status(self):
        body = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": dict(self.list_meta),
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        details = dict(self.details)
        if self.causes:
            details["causes"] = list(self.causes)
        if details:
            body["details"] = details
        return body

    def __repr__(self):
        return "ApiError(%d, %r, %r)" % (self.code, self.reason, self.message)


def resource_ref(rtype):
    """'configmaps' or 'nicclusterpolicies.mellanox.com' as error messages name a resource."""
    return rtype.plural if not rtype.group else "%s.%s" % (rtype.plural, rtype.group)


def kind_ref(rtype):
    """'ConfigMap' or 'NicClusterPolicy.mellanox.com' as Invalid messages name a kind."""
    return rtype.kind if not rtype.group else "%s.%s" % (rtype.kind, rtype.group)


def not_found(rtype, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (resource_ref(rtype), name),
                    details={"name": name, "group": rtype.group, "kind": rtype.plural})


def already_exists(rtype, name):
    return ApiError(409, "AlreadyExists", '%s "%s" already exists' % (resource_ref(rtype), name),
                    details={"name": name, "group": rtype.group, "kind": rtype.plural})


def conflict(rtype, name, why="the object has been modified; please apply your changes to the latest version and try again"):
    return ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": %s' % (resource_ref(rtype), name, why),
                    details={"name": name, "group": rtype.group, "kind": rtype.plural})


def invalid(rtype, name, causes):
    """causes: list of {reason, message, field}; message joins them like the apiserver's aggregate."""
    parts = ["%s: %s" % (c["field"], c["message"]) if c.get("field") else c["message"] for c in causes]
    joined = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    return ApiError(422, "Invalid", '%s "%s" is invalid: %s' % (kind_ref(rtype), name, joined),
                    causes=causes, details={"name": name, "group": rtype.group, "kind": rtype.kind})


def bad_request(message):
    return ApiError(400, "BadRequest", message)
