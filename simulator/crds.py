"""Loading CustomResourceDefinitions from a directory into ResourceTypes (parsed once per process)."""

import glob
import gzip
import logging
import os
import re
import threading

import yaml

from .store import ResourceType

log = logging.getLogger("simulator.crds")

# The upstream CRDs live in the repository (see data/crds/SOURCES.md), laid out <source>/<ref>/<file>.
DEFAULT_CRD_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "crds")
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_cache = {}
_cache_lock = threading.Lock()


def default_crd_dir():
    return os.environ.get("GPUDIRECT_CRD_DIR") or DEFAULT_CRD_DIR


# Plain YAML, or gzipped: the repository keeps upstream CRDs compressed, byte-for-byte inside (SOURCES.md gives
# each file's sha256), because ansible-test's no-smart-quotes refuses some upstream descriptions.
CRD_PATTERNS = ("*.yaml", "*.yml", "*.yaml.gz")


def open_crd_file(path):
    return gzip.open(path, "rt", encoding="utf-8") if path.endswith(".gz") else open(path, encoding="utf-8")


def _ref_sort_key(ref):
    """Natural order of refs: v24.9.2 < v26.7.0, release-4.16 < release-4.22."""
    return [(0, int(tok), "") if tok.isdigit() else (1, 0, tok) for tok in re.findall(r"\d+|[^\d.\-]+", ref)]


def select_crd_files(crd_dir, refs=None):
    """The CRD files to serve from crd_dir. Files at <source>/<ref>/<file> are versioned: one ref per source is
    served, refs[source] when given, else the newest. Files anywhere else are served as they are.
    An unknown source or ref in refs raises ValueError (a profile asking for CRDs that are not there)."""
    files = sorted(path for pattern in CRD_PATTERNS
                   for path in glob.glob(os.path.join(crd_dir, "**", pattern), recursive=True))
    plain, versioned = [], {}
    for path in files:
        parts = os.path.relpath(path, crd_dir).split(os.sep)
        if len(parts) == 3:
            versioned.setdefault(parts[0], {}).setdefault(parts[1], []).append(path)
        else:
            plain.append(path)
    refs = dict(refs or {})
    unknown = sorted(set(refs) - set(versioned))
    if unknown:
        raise ValueError("no CRDs for source(s) %s under %s (have: %s)"
                         % (", ".join(unknown), crd_dir, ", ".join(sorted(versioned))))
    chosen = list(plain)
    for source, by_ref in sorted(versioned.items()):
        ref = refs.get(source) or max(by_ref, key=_ref_sort_key)
        if ref not in by_ref:
            raise ValueError("no CRDs for %s at %s under %s (have: %s)"
                             % (source, ref, crd_dir, ", ".join(sorted(by_ref, key=_ref_sort_key))))
        chosen.extend(by_ref[ref])
    return chosen


def available_crd_refs(crd_dir):
    """{source: [refs, oldest first]} of the versioned CRDs under crd_dir."""
    out = {}
    for path in [p for pattern in CRD_PATTERNS for p in glob.glob(os.path.join(crd_dir, "*", "*", pattern))]:
        source, ref = os.path.relpath(path, crd_dir).split(os.sep)[:2]
        out.setdefault(source, set()).add(ref)
    return {source: sorted(refs, key=_ref_sort_key) for source, refs in out.items()}


def crd_ref_for_version(refs, version):
    """The CRD ref that ships with operator ``version``: the newest ref of the same or an older major.minor
    (v25.3.4 for 25.3.0 .. 25.3.x), else the oldest ref; None when the refs are not versions (a branch)."""
    def minor_of(text):
        found = re.match(r"^v?(\d+)\.(\d+)", text or "")
        return (int(found.group(1)), int(found.group(2))) if found else None

    wanted = minor_of(version)
    numbered = [ref for ref in refs if minor_of(ref)]
    if wanted is None or not numbered or len(numbered) != len(refs):
        return None
    older = [ref for ref in numbered if minor_of(ref) <= wanted]
    return max(older, key=_ref_sort_key) if older else min(numbered, key=_ref_sort_key)


def load_crd_documents(crd_dir, refs=None):
    """[(path, crd dict)] for every CustomResourceDefinition served from crd_dir (select_crd_files).
    Cached per process."""
    files = select_crd_files(crd_dir, refs)
    key = (os.path.abspath(crd_dir), tuple((f, os.path.getmtime(f)) for f in files))
    with _cache_lock:
        if key in _cache:
            return _cache[key]
        docs = []
        for path in files:
            with open_crd_file(path) as fh:
                for doc in yaml.load_all(fh, Loader=_Loader):
                    if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                        docs.append((path, doc))
        _cache[key] = docs
        return docs


def crd_resource_types(crd):
    """One ResourceType per served version of a CRD."""
    spec = crd["spec"]
    names = spec["names"]
    types = []
    for ver in spec.get("versions") or []:
        if not ver.get("served", True):
            continue
        subresources = tuple(sorted((ver.get("subresources") or {}).keys()))
        schema = ((ver.get("schema") or {}).get("openAPIV3Schema")) or None
        types.append(ResourceType(
            group=spec["group"], version=ver["name"], kind=names["kind"], plural=names["plural"],
            namespaced=spec.get("scope", "Namespaced") == "Namespaced", singular=names.get("singular", ""),
            short_names=tuple(names.get("shortNames") or ()), subresources=subresources, schema=schema,
            categories=tuple(names.get("categories") or ()),
        ))
    return types


def crd_name(crd):
    return crd["metadata"]["name"]


def served_crd_refs(crd_dir, refs=None):
    """{source: ref} that select_crd_files serves: refs[source], else the newest."""
    return {source: (refs or {}).get(source) or max(found, key=_ref_sort_key)
            for source, found in available_crd_refs(crd_dir).items()}


def source_crd_documents(crd_dir, source, ref):
    """[crd dict] of one source at one ref (an operator version's CRDs)."""
    folder = os.path.join(os.path.abspath(crd_dir), source, ref) + os.sep
    return [crd for path, crd in load_crd_documents(crd_dir, {source: ref})
            if os.path.abspath(path).startswith(folder)]


def load_crds(store, crd_dir, refs=None):
    """Register every CRD under crd_dir in store. Returns {(group, plural): crd dict}. No directory: warning only."""
    if not crd_dir or not os.path.isdir(crd_dir):
        log.warning("CRD directory %r not found: the simulator starts without custom resource types and without "
                    "custom resource validation (set GPUDIRECT_CRD_DIR or crd_dir=)", crd_dir)
        return {}
    loaded = {}
    for _path, crd in load_crd_documents(crd_dir, refs):
        for rtype in crd_resource_types(crd):
            store.register(rtype)
        loaded[(crd["spec"]["group"], crd["spec"]["names"]["plural"])] = crd
    return loaded
