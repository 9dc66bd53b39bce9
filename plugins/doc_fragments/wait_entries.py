# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)


class ModuleDocFragment:
    # The options of one wait (module_utils/cluster/waits.py WAIT_OPTIONS). DOCUMENTATION nests them under a
    # ``waits`` list (apply_manifests, plan_status: the module documents ``waits`` itself and the fragment adds the
    # suboptions); OBJECT gives them as the module's own options (resource_wait waits on one entry). ansible-test
    # wants literal strings, so the text is written twice; tests/unit/test_one_definition.py keeps both the same.
    DOCUMENTATION = r"""
options:
  waits:
    description: Readiness conditions.
    type: list
    elements: dict
    suboptions:

      title:
        description: What the condition is about, for messages and results.
        type: str

      api_version:
        description: API version of the objects, for example V(mellanox.com/v1alpha1).
        type: str
        required: true
      kind:
        description: Kind of the objects, for example V(NicClusterPolicy).
        type: str
        required: true
      name:
        description:
          - One object. The condition sees the object itself, or an empty object while it does not exist.
          - 'Without it, the condition sees C({"items": [...]}), every object matching the namespace and the label
            selectors.'
        type: str
      namespace:
        description: Namespace of namespaced objects; without it a list covers all namespaces.
        type: str
      label_selectors:
        description: Label selectors that listed objects must all match.
        type: list
        elements: str
        default: []
      condition:
        description:
          - JMESPath expression that is true (not false, null or empty) when the objects are ready.
          - For example V(status.state == 'ready') or V(length(items[?metadata.labels."nvidia.com/gpu.present" ==
            'true']) >= `2`).
          - Each wait has this or C(count), not both.
        type: str
      count:
        description:
          - Instead of C(condition), counters over the listed objects; the wait holds when every counter holds. Each
            watch event evaluates the counters on the one object it carries, so the work per event does not grow with
            the number of objects (a list condition re-reads all of them). Without C(name), C(failure_condition),
            C(failure_message) and C(progress); their forms over one object are C(each_failure_condition),
            C(each_failure_message) and C(each_progress).
          - Minimums only (no C(all), no C(at_most)) start with a watch without resourceVersion, whose first events are
            the current objects, so one request serves any number of them; with C(all) the list is read first, in pages.
        type: list
        elements: dict
        suboptions:
          each:
            description: JMESPath expression over one object that holds when the object counts.
            type: str
            required: true
          at_least:
            description: The counter holds when at least this many objects count.
            type: int
            default: 1
          all:
            description: The counter holds only when every listed object counts (and at least one is listed).
            type: bool
            default: false
          at_most:
            description:
              - The counter holds only when at most this many objects count (with C(at_least) set to 0 for a maximum
                alone, which holds with no object listed too).
            type: int
      failure_condition:
        description: JMESPath expression that is true when the objects report a failure.
        type: str
      failure_message:
        description: JMESPath expression giving the text to quote when the failure condition holds, for example
          V(status.reason).
        type: str
      progress:
        description:
          - JMESPath expression giving a progress text; each distinct value is returned in order, and the last one is
            quoted when the wait times out.
        type: str
      each_failure_condition:
        description:
          - With C(count), a JMESPath expression over one object that is true when that object reports a failure. The
            wait fails once some object has been failing for C(failure_grace_period) without interruption.
        type: str
      each_failure_message:
        description:
          - With C(count), a JMESPath expression over one failing object giving the text to quote; the texts of the
            failing objects are joined with V(; ) in namespace/name order.
        type: str
      each_progress:
        description:
          - With C(count), a JMESPath expression over one object giving its progress text; the progress is the objects'
            texts joined with V(, ) in namespace/name order, instead of the counts.
          - Each object's verdicts and text are kept and recomputed only when an event brings that object.
        type: str
      each_busy:
        description:
          - With C(count), a JMESPath expression over one object that is true while its controller works on a new spec
            (for example the SR-IOV config daemon's V(InProgress)), for controllers whose status carries no observed
            generation and still shows the previous result right after a spec change.
          - An object whose C(metadata.generation) moved after the baseline counts only once this expression was seen
            true on it at its new generation. The baseline is the objects as listed before the task's first write
            (M(gpudirect.openshift.apply_manifests)) or the wait's first list (M(gpudirect.openshift.resource_wait)).
        type: str
      return_resources:
        description:
          - With C(count), also return the objects as last seen in C(resources), for a caller that reads them (a
            counted wait otherwise keeps only its counts).
        type: bool
      timeout:
        description:
          - Seconds to wait before failing; unset means 600.
          - Not used by M(gpudirect.openshift.plan_status), which does not wait.
        type: int
      failure_grace_period:
        description:
          - Seconds the failure condition must hold without interruption before the wait fails; unset means 0 (operators
            often pass through an error state while starting, so the roles set one).
          - Not used by M(gpudirect.openshift.plan_status), which does not wait.
        type: int
      operand_pods:
        description:
          - The pods of the operator's operands (driver, device plugins). While the condition does not hold they are
            listed every few seconds; a container that waits C(CrashLoopBackOff), C(ImagePullBackOff), C(ErrImagePull)
            or cannot be created for longer than C(failure_grace_period) fails the wait, quoting pod, node,
            container, reason, the last termination message and the last log lines.
          - Not used by M(gpudirect.openshift.plan_status), which does not wait.
        type: dict
        suboptions:
          namespace:
            description: Namespace of the operand pods (the operator's namespace).
            type: str
            required: true
          label_selectors:
            description: Label selectors the operand pods must all match.
            type: list
            elements: str
            default: []
          images:
            description:
              - Image references (V(repository/image:tag) or a prefix of one) that some operand DaemonSet's pod template
                must run. Once the condition holds, the wait also needs every DaemonSet of the namespace rolled out as
                C(kubectl rollout status) judges it (observedGeneration, updated and available pods), so a custom
                resource that still reads ready from before a change does not end it.
            type: list
            elements: str
            default: []
"""

    OBJECT = r"""
options:

  api_version:
    description: API version of the objects, for example V(mellanox.com/v1alpha1).
    type: str
    required: true
  kind:
    description: Kind of the objects, for example V(NicClusterPolicy).
    type: str
    required: true
  name:
    description:
      - One object. The condition sees the object itself, or an empty object while it does not exist.
      - 'Without it, the condition sees C({"items": [...]}), every object matching the namespace and the label
        selectors.'
    type: str
  namespace:
    description: Namespace of namespaced objects; without it a list covers all namespaces.
    type: str
  label_selectors:
    description: Label selectors that listed objects must all match.
    type: list
    elements: str
    default: []
  condition:
    description:
      - JMESPath expression that is true (not false, null or empty) when the objects are ready.
      - For example V(status.state == 'ready') or
        V(length(items[?metadata.labels."nvidia.com/gpu.present" == 'true']) >= `2`).
      - Each wait has this or C(count), not both.
    type: str
  count:
    description:
      - Instead of C(condition), counters over the listed objects; the wait holds when every counter holds. Each
        watch event evaluates the counters on the one object it carries, so the work per event does not grow with
        the number of objects (a list condition re-reads all of them). Without C(name), C(failure_condition),
        C(failure_message) and C(progress); their forms over one object are C(each_failure_condition),
        C(each_failure_message) and C(each_progress).
      - Minimums only (no C(all), no C(at_most)) start with a watch without resourceVersion, whose first events are
        the current objects, so one request serves any number of them; with C(all) the list is read first, in pages.
    type: list
    elements: dict
    suboptions:
      each:
        description: JMESPath expression over one object that holds when the object counts.
        type: str
        required: true
      at_least:
        description: The counter holds when at least this many objects count.
        type: int
        default: 1
      all:
        description: The counter holds only when every listed object counts (and at least one is listed).
        type: bool
        default: false
      at_most:
        description:
          - The counter holds only when at most this many objects count (with C(at_least) set to 0 for a maximum
            alone, which holds with no object listed too).
        type: int
  failure_condition:
    description: JMESPath expression that is true when the objects report a failure.
    type: str
  failure_message:
    description: JMESPath expression giving the text to quote when the failure condition holds, for example
      V(status.reason).
    type: str
  progress:
    description:
      - JMESPath expression giving a progress text; each distinct value is returned in order, and the last one is
        quoted when the wait times out.
    type: str
  each_failure_condition:
    description:
      - With C(count), a JMESPath expression over one object that is true when that object reports a failure. The wait
        fails once some object has been failing for C(failure_grace_period) without interruption.
    type: str
  each_failure_message:
    description:
      - With C(count), a JMESPath expression over one failing object giving the text to quote; the texts of the
        failing objects are joined with V(; ) in namespace/name order.
    type: str
  each_progress:
    description:
      - With C(count), a JMESPath expression over one object giving its progress text; the progress is the objects'
        texts joined with V(, ) in namespace/name order, instead of the counts.
      - Each object's verdicts and text are kept and recomputed only when an event brings that object.
    type: str
  each_busy:
    description:
      - With C(count), a JMESPath expression over one object that is true while its controller works on a new spec
        (for example the SR-IOV config daemon's V(InProgress)), for controllers whose status carries no observed
        generation and still shows the previous result right after a spec change.
      - An object whose C(metadata.generation) moved after the baseline counts only once this expression was seen
        true on it at its new generation. The baseline is the objects as listed before the task's first write
        (M(gpudirect.openshift.apply_manifests)) or the wait's first list (M(gpudirect.openshift.resource_wait)).
    type: str
  return_resources:
    description:
      - With C(count), also return the objects as last seen in C(resources), for a caller that reads them (a
        counted wait otherwise keeps only its counts).
    type: bool
  timeout:
    description:
      - Seconds to wait before failing; unset means 600.
      - Not used by M(gpudirect.openshift.plan_status), which does not wait.
    type: int
  failure_grace_period:
    description:
      - Seconds the failure condition must hold without interruption before the wait fails; unset means 0 (operators
        often pass through an error state while starting, so the roles set one).
      - Not used by M(gpudirect.openshift.plan_status), which does not wait.
    type: int
  operand_pods:
    description:
      - The pods of the operator's operands (driver, device plugins). While the condition does not hold they are
        listed every few seconds; a container that waits C(CrashLoopBackOff), C(ImagePullBackOff), C(ErrImagePull) or
        cannot be created for longer than C(failure_grace_period) fails the wait, quoting pod, node, container, reason,
        the last termination message and the last log lines.
      - Not used by M(gpudirect.openshift.plan_status), which does not wait.
    type: dict
    suboptions:
      namespace:
        description: Namespace of the operand pods (the operator's namespace).
        type: str
        required: true
      label_selectors:
        description: Label selectors the operand pods must all match.
        type: list
        elements: str
        default: []
      images:
        description:
          - Image references (V(repository/image:tag) or a prefix of one) that some operand DaemonSet's pod template
            must run. Once the condition holds, the wait also needs every DaemonSet of the namespace rolled out as
            C(kubectl rollout status) judges it (observedGeneration, updated and available pods), so a custom resource
            that still reads ready from before a change does not end it.
        type: list
        elements: str
        default: []
"""
