"""A small evaluator of Kubernetes NetworkPolicy semantics, enough to ask of rendered manifests
"may pod A open a TCP connection to pod B on port P?".

Rules implemented (networking.k8s.io/v1): a pod is isolated for ingress (egress) when any policy
in its namespace selects it with ``Ingress`` (``Egress``) in ``policyTypes``; an isolated pod
accepts (sends) only what some rule of those policies allows; a connection needs the sender's
egress and the receiver's ingress. Peers: ``podSelector`` alone = pods of the policy's
namespace, ``namespaceSelector`` (+ optional ``podSelector``) = pods of matching namespaces,
``ipBlock`` = addresses outside the cluster. Ports are numbers (named ports are not used here).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Endpoint:
    """A pod (labels, namespace and its namespace's labels) or an outside address (``ip``)."""

    namespace: str = ""
    labels: dict = field(default_factory=dict, hash=False, compare=False)
    namespace_labels: dict = field(default_factory=dict, hash=False, compare=False)
    ip: str | None = None


def pod(namespace: str, **labels: str) -> Endpoint:
    """A pod in ``namespace`` with ``labels``; its namespace carries the standard name label."""
    return Endpoint(namespace, dict(labels), {"kubernetes.io/metadata.name": namespace})


def outside(ip: str) -> Endpoint:
    """An address outside the cluster (the internet, a client)."""
    return Endpoint(ip=ip)


def selects(selector: dict | None, labels: dict) -> bool:
    """Whether a LabelSelector matches ``labels`` (an empty selector matches everything)."""
    selector = selector or {}
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e["key"], e["operator"], e.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def _peer_matches(peer: dict, policy_ns: str, other: Endpoint) -> bool:
    if "ipBlock" in peer:
        if other.ip is None:
            return False  # pod IPs are treated as cluster-internal and never matched by ipBlock
        addr = ipaddress.ip_address(other.ip)
        block = peer["ipBlock"]
        return addr in ipaddress.ip_network(block["cidr"]) and not any(
            addr in ipaddress.ip_network(x) for x in block.get("except") or [])
    if other.ip is not None:
        return False
    if "namespaceSelector" in peer:
        if not selects(peer["namespaceSelector"], other.namespace_labels):
            return False
        return selects(peer.get("podSelector"), other.labels)
    return other.namespace == policy_ns and selects(peer.get("podSelector"), other.labels)


def _port_matches(ports: list | None, port: int) -> bool:
    if not ports:
        return True
    return any(p.get("port") is None or p.get("port") == port for p in ports if p.get("protocol", "TCP") == "TCP")


def _allowed(policies: list[dict], target: Endpoint, other: Endpoint, port: int | None, direction: str) -> bool:
    kind, rules_key, peers_key = ("Ingress", "ingress", "from") if direction == "in" else ("Egress", "egress", "to")
    selecting = [p for p in policies
                 if p["metadata"].get("namespace", target.namespace) == target.namespace
                 and kind in (p["spec"].get("policyTypes") or ["Ingress"])
                 and selects(p["spec"].get("podSelector"), target.labels)]
    if not selecting:
        return True
    for p in selecting:
        ns = p["metadata"].get("namespace", target.namespace)
        for rule in p["spec"].get(rules_key) or []:
            peers = rule.get(peers_key)
            if (not peers or any(_peer_matches(x, ns, other) for x in peers)) and (
                    port is None or _port_matches(rule.get("ports"), port)):
                return True
    return False


def can_connect(policies: list[dict], src: Endpoint, dst: Endpoint, port: int) -> bool:
    """Whether ``src`` may open a TCP connection to ``dst``:``port`` under ``policies``."""
    egress_ok = src.ip is not None or _allowed(policies, src, dst, port, "out")
    ingress_ok = dst.ip is not None or _allowed(policies, dst, src, port, "in")
    return egress_ok and ingress_ok
