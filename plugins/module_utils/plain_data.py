# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the filters hand to the pure code: plain Python data instead of Ansible's lazy or tagged containers."""


from ansible.module_utils.common.text.converters import to_text


def plain(value):
    """Turn Ansible's lazy/tagged containers and strings into plain Python ones."""
    if isinstance(value, dict):
        return {to_text(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    if isinstance(value, (str, bytes)):
        return to_text(value, errors='surrogate_or_strict')
    return value
