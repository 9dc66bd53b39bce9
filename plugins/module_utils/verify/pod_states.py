# Copyright: (c) 2026, gpudirect.openshift maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""One vocabulary for the states of the collection's short-lived pods (standard library only, no cluster client).

``pod_failure`` is the one answer to "has this pod failed, and why": a terminated container, a waiting reason that
never clears, or a scheduling or image problem that outlasted the grace period, quoting the kubelet's reason and
message. ``new_run_id`` names a run (pod names and the run label). cluster/pods.py runs the pods.
"""


import random

_RUN_ID_CHARS = "bcdfghjklmnpqrstvwxz2456789"

IMAGE_PULL_REASONS = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull",
                      "RegistryUnavailable")
# Scheduler and kubelet states that can clear up by themselves (device plugin registering, registry hiccup): a
# failure only when they last longer than the grace period.
PENDING_PROBLEMS = ("Unschedulable",) + IMAGE_PULL_REASONS + ("CreateContainerConfigError", "CreateContainerError")
# Waiting reasons that never clear by themselves: a failure at once.
NEVER_CLEARS = frozenset(["InvalidImageName", "ErrImageNeverPull", "RunContainerError"])


def new_run_id(rng=random):
    """Five characters for pod names and the run label (no vowels: no words)."""
    return "".join(rng.choice(_RUN_ID_CHARS) for _position in range(5))


# -- the vocabulary of pod states ----------------------------------------------------------------


def pod_phase(pod):
    return ((pod or {}).get("status") or {}).get("phase")


def pending_problem(pod):
    """(reason, message) when a Pending pod shows a scheduling, image or container set-up problem, else None."""
    if not pod or pod_phase(pod) not in (None, "Pending"):
        return None
    status = pod.get("status") or {}
    for condition in status.get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False" \
                and condition.get("reason") == "Unschedulable":
            return "Unschedulable", condition.get("message") or ""
    for container in status.get("containerStatuses") or []:
        waiting = (container.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") in PENDING_PROBLEMS or waiting.get("reason") in NEVER_CLEARS:
            return waiting["reason"], waiting.get("message") or ""
    return None


def container_exit(pod):
    """(exit code, reason) of the first terminated container, else (None, None)."""
    for container in ((pod or {}).get("status") or {}).get("containerStatuses") or []:
        terminated = (container.get("state") or {}).get("terminated")
        if terminated:
            return terminated.get("exitCode"), terminated.get("reason")
    return None, None


def termination_text(pod):
    """'exit code 1 (Error): <message tail>' of the first terminated container, else None."""
    for container in ((pod or {}).get("status") or {}).get("containerStatuses") or []:
        terminated = (container.get("state") or {}).get("terminated") or {}
        if terminated:
            text = "exit code %s" % terminated.get("exitCode")
            if terminated.get("reason"):
                text += " (%s)" % terminated["reason"]
            if terminated.get("message"):
                text += ": %s" % terminated["message"].strip()[-500:]
            return text
    return None


def pod_state_text(pod):
    """Phase plus what explains it, for reports and timeouts: 'Pending (ImagePullBackOff: ...)', 'Failed (exit code 1,
    Error)'."""
    if not pod:
        return "absent"
    text = pod_phase(pod) or "Pending"
    problem = pending_problem(pod)
    if problem:
        text += " (%s: %s)" % problem
    code, reason = container_exit(pod)
    if code is not None:
        text += " (exit code %s%s)" % (code, ", %s" % reason if reason else "")
    return text


def pod_failure(pod, problem_for=None, grace=0, fail_at_once=()):
    """Why the pod failed, or None while it has not (Succeeded, or still on its way).

    problem_for: seconds the pod has shown its current pending problem; at ``grace`` or more it is a failure.
    fail_at_once: pending reasons that are failures at once for this kind of pod (a pod pinned to a node with
    spec.nodeName cannot become schedulable)."""
    status = (pod or {}).get("status") or {}
    phase = status.get("phase")
    if phase == "Succeeded":
        return None
    if phase == "Failed":
        return "pod failed: %s" % (termination_text(pod) or status.get("reason") or status.get("message")
                                   or "no reason given")
    problem = pending_problem(pod)
    if not problem:
        return None
    reason, message = problem
    if reason in NEVER_CLEARS or reason in fail_at_once or (problem_for is not None and problem_for >= grace):
        if reason == "Unschedulable":
            return "pod cannot be scheduled: %s" % (message or reason)
        return "container cannot start: %s: %s" % (reason, message)
    return None


def is_done(pod):
    return pod_phase(pod) in ("Succeeded", "Failed")


# -- operands: the pods an operator runs (driver, device plugins) --------------------------------

# Waiting reasons of an operand container that mean it cannot start (kubernetes pkg/kubelet/kuberuntime, images):
# a crash loop, an image that cannot be pulled, a container that cannot be created. Each may clear by itself (a
# driver that builds on the next attempt, a registry that comes back), so a wait fails on one only after its grace
# period.
OPERAND_PROBLEMS = ("CrashLoopBackOff", "RunContainerError", "CreateContainerConfigError",
                    "CreateContainerError") + IMAGE_PULL_REASONS


def operand_problems(pods):
    """One dict per container of ``pods`` that waits with an OPERAND_PROBLEMS reason: pod, node, container, reason,
    message, restarts, and the last termination's exit code and message when the kubelet kept them."""
    problems = []
    for pod in pods or []:
        meta = pod.get("metadata") or {}
        status = pod.get("status") or {}
        for container in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
            waiting = (container.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") not in OPERAND_PROBLEMS:
                continue
            terminated = (container.get("lastState") or {}).get("terminated") or {}
            problems.append({
                "pod": meta.get("name"), "namespace": meta.get("namespace"),
                "node": (pod.get("spec") or {}).get("nodeName") or "", "container": container.get("name"),
                "reason": waiting.get("reason"), "message": waiting.get("message") or "",
                "restarts": container.get("restartCount") or 0, "exit_code": terminated.get("exitCode"),
                "termination_message": (terminated.get("message") or "").strip(),
            })
    return problems


def describe_operand_problem(problem, log_lines=None):
    """One sentence for an operand problem: pod, node, container, reason, then the last termination (exit code and
    message) or the kubelet's message, then the container's last log lines."""
    text = "pod %s/%s on node %s: container %s is %s" % (
        problem["namespace"], problem["pod"], problem["node"] or "(none)", problem["container"], problem["reason"])
    if problem.get("restarts"):
        text += " (%d restarts)" % problem["restarts"]
    if problem.get("exit_code") is not None:
        text += "; last exit code %s" % problem["exit_code"]
        if problem.get("termination_message"):
            text += ": %s" % problem["termination_message"]
    elif problem.get("message"):
        text += ": %s" % problem["message"]
    lines = [line for line in (log_lines or []) if line.strip()]
    if lines:
        text += "; last log lines: %s" % " | ".join(line.strip() for line in lines)
    return text
