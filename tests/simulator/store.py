"""In-memory object store of the simulated OpenShift API server.

INTERFACE CONTRACT (implemented by the API-server work, used by controllers and tests).
Everything the HTTP layer and the simulated operators (controllers) do to objects goes through
this class, so that resourceVersion, generation, events and watches behave the same for both.

Keys: a resource type is identified by (group, version, plural); group "" is the core API.
Objects are plain dicts as they appear on the wire (apiVersion, kind, metadata, spec, status).
All methods return deep copies; callers never hold references into the store.

Semantics the implementation must provide (as kube-apiserver does):
- metadata.uid (uuid4), metadata.resourceVersion (cluster-wide increasing integer, as string),
  metadata.generation (starts at 1, bumps only when spec (or non-metadata, non-status content)
  changes), metadata.creationTimestamp (RFC3339 UTC, "Z").
- create() of an existing name raises ApiError(409, "AlreadyExists").
- update()/replace with a metadata.resourceVersion that is set and differs from the stored one raises
  ApiError(409, "Conflict"). An empty resourceVersion means unconditional.
- For types with a status subresource, update() ignores incoming status; update_status() changes
  only status (and bumps resourceVersion, not generation).
- delete(): if metadata.finalizers is non-empty, set deletionTimestamp (once) and keep the object
  (MODIFIED event); otherwise remove it (DELETED event). An update that empties finalizers of an
  object with deletionTimestamp removes it. Namespaces: delete sets status.phase Terminating, and the
  namespace is removed once it holds no objects (the store's namespace controller does this).
- Every successful change appends an event (type, object) with its resourceVersion to a bounded
  history (default 10000 events) used to serve watches from a resourceVersion; a resourceVersion older
  than the history raises ApiError(410, "Gone", "too old resource version").
- subscribe(callback) registers a synchronous callback(event_type, resource_type, obj) called after
  every change, in order; controllers use it to react (they must not block; they schedule work on
  the event loop).
"""

# --- Signatures (S1 implements; keep names and parameters stable, add what you need) ---
#
# @dataclass(frozen=True)
# class ResourceType:
#     group: str            # "" for core
#     version: str
#     kind: str
#     plural: str
#     namespaced: bool
#     singular: str = ""
#     short_names: tuple = ()
#     subresources: tuple = ()      # e.g. ("status",) or ("log",) for pods
#     schema: dict | None = None    # openAPIV3Schema of this version, None = no validation
#     served: bool = True           # False until the owning operator's CSV succeeds
#     api_version -> "v1" or "group/version" (property)
#
# class ApiError(Exception):
#     def __init__(self, code: int, reason: str, message: str, causes: list[dict] | None = None,
#                  details: dict | None = None)
#     def to_status(self) -> dict   # kind: Status body as kube-apiserver sends it
#
# class Store:
#     def __init__(self, history_limit: int = 10000)
#     def register(self, rtype: ResourceType) -> None
#     def set_served(self, group: str, plural: str, served: bool) -> None
#     def resource_types(self) -> list[ResourceType]
#     def find_type(self, group: str, version: str, plural: str) -> ResourceType   # ApiError 404 if absent/unserved
#     def find_kind(self, api_version: str, kind: str) -> ResourceType
#     def get(self, rtype, namespace: str | None, name: str) -> dict                 # ApiError 404
#     def try_get(self, rtype, namespace, name) -> dict | None
#     def list(self, rtype, namespace: str | None = None, label_selector: str | None = None,
#              field_selector: str | None = None) -> tuple[list[dict], str]          # (items, list resourceVersion)
#     def create(self, rtype, obj: dict, dry_run: bool = False) -> dict
#     def update(self, rtype, obj: dict, dry_run: bool = False) -> dict             # full replace (PUT)
#     def update_status(self, rtype, namespace, name, status: dict, dry_run=False) -> dict
#     def patch_status(self, rtype, namespace, name, status_patch: dict) -> dict    # merge patch into status
#     def mutate(self, rtype, namespace, name, fn) -> dict  # controller helper: fn(obj_copy) edits in place, stored as update
#     def delete(self, rtype, namespace, name, dry_run: bool = False) -> dict
#     def events_since(self, resource_version: str, rtype, namespace=None) -> list[tuple[str, dict]]  # 410 if too old
#     def subscribe(self, callback) -> None      # callback(event_type: str, rtype: ResourceType, obj: dict)
#     current_resource_version: str (property)
#
# Label selector syntax: "a=b,c!=d,e in (x,y),f notin (z),g,!h"; field selectors: metadata.name,
# metadata.namespace, spec.nodeName, status.phase (= and !=).
