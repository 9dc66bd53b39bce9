"""Loading CustomResourceDefinitions from a directory into ResourceTypes (parsed once per process)."""

import glob
import logging
import os
import threading

import yaml

from .store import ResourceType

log = logging.getLogger("simulator.crds")

DEFAULT_CRD_DIR = "/work/shared/crds"
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_cache = {}
_cache_lock = threading.Lock()


def default_crd_dir():
    return os.environ.get("GPUDIRECT_CRD_DIR") or DEFAULT_CRD_DIR


def load_crd_documents(crd_dir):
    """[(path, crd dict)] for every CustomResourceDefinition under crd_dir (recursive). Cached per process."""
    files = sorted(glob.glob(os.path.join(crd_dir, "**", "*.yaml"), recursive=True)
                   + glob.glob(os.path.join(crd_dir, "**", "*.yml"), recursive=True))
    key = (os.path.abspath(crd_dir), tuple((f, os.path.getmtime(f)) for f in files))
    with _cache_lock:
        if key in _cache:
            return _cache[key]
        docs = []
        for path in files:
            with open(path, encoding="utf-8") as fh:
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


def load_crds(store, crd_dir):
    """Register every CRD under crd_dir in store. Returns {(group, plural): crd dict}. No directory: warning only."""
    if not crd_dir or not os.path.isdir(crd_dir):
        log.warning("CRD directory %r not found: the simulator starts without custom resource types and without "
                    "custom resource validation (set GPUDIRECT_CRD_DIR or crd_dir=)", crd_dir)
        return {}
    loaded = {}
    for _path, crd in load_crd_documents(crd_dir):
        for rtype in crd_resource_types(crd):
            store.register(rtype)
        loaded[(crd["spec"]["group"], crd["spec"]["names"]["plural"])] = crd
    return loaded
