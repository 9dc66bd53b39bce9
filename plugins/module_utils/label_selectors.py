# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Label selectors as the API server reads them (k8s.io/apimachinery pkg/labels/selector.go: =, ==, !=, in, notin,
exists, !exists), matched in memory. Standard library only: the snapshot client and the filters share it."""


import re

_REQUIREMENT = re.compile(
    r"^\s*(?P<neg>!)?\s*(?P<key>[A-Za-z0-9_./-]+)\s*"
    r"(?:(?P<op>==|!=|=|notin(?=\s*\()|in(?=\s*\())\s*(?P<val>\([^)]*\)|[A-Za-z0-9_.-]*))?\s*\Z"
)


def _split_requirements(selector):
    parts, depth, current = [], 0, []
    for char in selector:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [p for p in parts if p.strip()]


def parse_label_selector(selector):
    """[(key, op, values)] with op in =, !=, in, notin, exists, !exists; ValueError when malformed."""
    requirements = []
    for part in _split_requirements(selector or ""):
        match = _REQUIREMENT.match(part)
        if not match:
            raise ValueError("unable to parse label selector requirement %r" % part.strip())
        key, op, value = match.group("key"), (match.group("op") or "").strip(), match.group("val")
        if match.group("neg"):
            requirements.append((key, "!exists", ()))
        elif not op:
            requirements.append((key, "exists", ()))
        elif op in ("in", "notin"):
            requirements.append((key, op, tuple(v.strip() for v in value[1:-1].split(",") if v.strip())))
        else:
            requirements.append((key, "!=" if op == "!=" else "=", (value,)))
    return requirements


def labels_match(requirements, labels):
    labels = labels or {}
    for key, op, values in requirements:
        present, value = key in labels, labels.get(key)
        if op == "=" and value != values[0]:
            return False
        if op == "!=" and present and value == values[0]:
            return False
        if op == "in" and value not in values:
            return False
        if op == "notin" and present and value in values:
            return False
        if op == "exists" and not present:
            return False
        if op == "!exists" and present:
            return False
    return True
