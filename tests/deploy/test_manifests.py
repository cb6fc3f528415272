"""Offline validation of the Kubernetes manifests (deploy/k8s): every overlay renders with
kustomize, every built-in object validates against the Kubernetes OpenAPI schemas
(kubernetes-validate), KEDA ScaledObjects validate against models generated from KEDA's CRD
(cloudcoil-models-keda), CloudNativePG objects carry the fields their CRD requires (no schema
offline: checked by hand), both point at real objects, and the properties the README promises hold: probes on the
services' health ports, limits, hardened security contexts, PDBs, autoscaling, and network
isolation (only the gateway reachable from outside, only the gateway reaches ask)."""

from __future__ import annotations

import ast
import re

import kubernetes_validate
import pytest

from lecturecopilot.settings import Settings

from . import netpol
from .render import OVERLAYS, ROOT, find, one, render

TARGETS = ("base", *(f"overlays/{o}" for o in OVERLAYS))
SERVICES = ("gateway", "ask", "ingest", "transcribe", "index")
WORKERS = ("transcribe", "index")
K8S_VERSIONS = ("1.30.0", kubernetes_validate.latest_version())
CRD_GROUPS = ("keda.sh/", "postgresql.cnpg.io/")
NAMESPACE = {"overlays/dev": "lecture-copilot-dev", "overlays/prod": "lecture-copilot"}


def overlay_ids(targets):
    return [t.split("/")[-1] for t in targets]


def _settings() -> Settings:
    return Settings(_env_file=None, port_offset=0)  # the defaults, whatever offset a local stack keeps


def _health_port(service: str) -> int:
    s = _settings()
    return {"gateway": s.gateway_port, "ingest": s.ingest_port, "ask": s.health_port_ask,
            "transcribe": s.health_port_transcribe, "index": s.health_port_index}[service]


def _durables(service: str) -> set[str]:
    """The durable consumer names a worker's ``__main__`` declares (first argument of ``Stage``)."""
    tree = ast.parse((ROOT / "services" / service / "__main__.py").read_text())
    return {n.args[0].value for n in ast.walk(tree)
            if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "Stage"}


def _container(deploy: dict) -> dict:
    containers = deploy["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1, deploy["metadata"]["name"]
    return containers[0]


def _port_number(container: dict, port) -> int:
    if isinstance(port, int):
        return port
    return next(p["containerPort"] for p in container["ports"] if p["name"] == port)


def _env(container: dict, name: str, config: dict) -> str | None:
    for e in container.get("env") or []:
        if e["name"] == name:
            return e.get("value")
    return config.get(name)


@pytest.mark.parametrize("target", TARGETS, ids=overlay_ids(TARGETS))
def test_renders_all_services(target):
    objs = render(target)
    assert {d["metadata"]["name"] for d in find(objs, "Deployment")} == set(SERVICES)
    assert {s["metadata"]["name"] for s in find(objs, "StatefulSet")} == {"nats", "qdrant"}
    assert len(find(objs, "Cluster")) == 1
    if target in NAMESPACE:
        assert {o["metadata"].get("namespace") for o in objs if o["kind"] != "Namespace"} == {NAMESPACE[target]}


@pytest.mark.parametrize("version", K8S_VERSIONS)
@pytest.mark.parametrize("target", TARGETS, ids=overlay_ids(TARGETS))
def test_builtin_objects_match_kubernetes_schemas(target, version):
    checked = 0
    for obj in render(target):
        if obj["apiVersion"].startswith(CRD_GROUPS):
            continue  # custom resources: test_keda_* and test_cloudnativepg_* below
        kubernetes_validate.validate(obj, version, strict=True)
        checked += 1
    assert checked >= 30


def test_schema_validation_can_fail():
    deploy = one(render("overlays/prod"), "Deployment", "gateway")
    deploy["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]["httpGet"]["port"] = {"no": "such"}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deploy, K8S_VERSIONS[-1], strict=True)
    deploy = one(render("overlays/prod"), "Deployment", "gateway")
    deploy["spec"]["template"]["spec"]["containers"][0]["resourcez"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deploy, K8S_VERSIONS[-1], strict=True)


@pytest.mark.parametrize("target", TARGETS, ids=overlay_ids(TARGETS))
def test_services_have_probes_on_their_health_ports_limits_and_hardening(target):
    objs = render(target)
    config = one(objs, "ConfigMap", "lecture-copilot-config")["data"]
    for name in SERVICES:
        deploy = one(objs, "Deployment", name)
        pod = deploy["spec"]["template"]["spec"]
        c = _container(deploy)
        for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
            get = c[probe]["httpGet"]
            assert get["path"] == path, (name, probe)
            assert _port_number(c, get["port"]) == _health_port(name), (name, probe)
        for kind in ("requests", "limits"):
            assert {"cpu", "memory"} <= set(c["resources"][kind]), (name, kind)
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] >= 10000
        assert pod["automountServiceAccountToken"] is False
        sc = c["securityContext"]
        assert sc["allowPrivilegeEscalation"] is False and sc["readOnlyRootFilesystem"] is True
        assert sc["capabilities"]["drop"] == ["ALL"] and "add" not in sc["capabilities"]
        assert re.fullmatch(r"[\w./-]+:[\w.-]+(@sha256:[0-9a-f]{64})?", c["image"]) and not c["image"].endswith(":latest")
        # the health server must listen on all interfaces in a pod, the service port too
        assert config["LC_HEALTH_HOST"] == "0.0.0.0"
        bind = {"gateway": "LC_GATEWAY_HOST", "ingest": "LC_INGEST_HOST", "ask": "LC_ASK_HOST"}.get(name)
        if bind:
            assert _env(c, bind, config) == "0.0.0.0", name
        secret_refs = {e["valueFrom"]["secretKeyRef"]["name"] for e in c.get("env") or [] if "valueFrom" in e
                       and "secretKeyRef" in e["valueFrom"]}
        assert "lecture-copilot-pg-app" in secret_refs, name
    # the services find each other by Service name
    services = {s["metadata"]["name"]: s for s in find(objs, "Service")}
    assert config["LC_INGEST_HOST"] in services and config["LC_ASK_HOST"] in services
    if target == "overlays/prod":  # the server list of the 3-node cluster (test_prod_lists_every_nats_server)
        assert config["NATS_URL"].startswith("nats://nats-0.nats-headless:4222,") and "nats-headless" in services
    else:
        assert config["NATS_URL"] == "nats://nats:4222" and "nats" in services


@pytest.mark.parametrize("target", TARGETS, ids=overlay_ids(TARGETS))
def test_every_workload_has_a_pdb(target):
    objs = render(target)
    pdbs = find(objs, "PodDisruptionBudget")
    for w in find(objs, "Deployment") + find(objs, "StatefulSet"):
        labels = w["spec"]["template"]["metadata"]["labels"]
        assert any(netpol.selects(p["spec"]["selector"], labels) for p in pdbs), w["metadata"]["name"]
    cluster = find(objs, "Cluster")[0]
    assert cluster["spec"].get("enablePDB", True) is True


@pytest.mark.parametrize("target", TARGETS, ids=overlay_ids(TARGETS))
def test_workers_get_time_to_finish_or_hand_back_the_message(target):
    objs = render(target)
    config = one(objs, "ConfigMap", "lecture-copilot-config")["data"]
    for name in WORKERS:
        deploy = one(objs, "Deployment", name)
        grace = deploy["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
        waits = float(_env(_container(deploy), "LC_GRACEFUL_TIMEOUT_S", config))
        assert waits + 10 <= grace, (name, waits, grace)
        assert grace >= float(config["LC_ACK_WAIT_S"]), name
    assert one(objs, "Deployment", "transcribe")["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] >= 300


def test_ingress_exposes_only_the_gateway():
    for target in TARGETS:
        objs = render(target)
        ingresses = find(objs, "Ingress")
        assert len(ingresses) == 1
        backends = {p["backend"]["service"]["name"] for r in ingresses[0]["spec"]["rules"] for p in r["http"]["paths"]}
        assert backends == {"gateway"}
        assert all(s["spec"].get("type", "ClusterIP") == "ClusterIP" for s in find(objs, "Service"))


def _pods(objs: list[dict], ns: str) -> dict[str, netpol.Endpoint]:
    pods = {w["metadata"]["name"]: netpol.pod(ns, **w["spec"]["template"]["metadata"]["labels"])
            for w in find(objs, "Deployment") + find(objs, "StatefulSet")}
    cluster = find(objs, "Cluster")[0]["metadata"]["name"]
    pods["postgres"] = netpol.pod(ns, **{"cnpg.io/cluster": cluster, "cnpg.io/instanceRole": "primary"})
    return pods


@pytest.mark.parametrize("target", list(NAMESPACE), ids=overlay_ids(NAMESPACE))
def test_network_policies_isolate_the_services(target):
    objs = render(target)
    ns = NAMESPACE[target]
    policies = find(objs, "NetworkPolicy")
    pods = _pods(objs, ns)
    ingress_controller = netpol.pod("ingress-nginx", **{"app.kubernetes.io/name": "ingress-nginx"})
    other_namespace = netpol.pod("someone-else", app="curious")
    internet = netpol.outside("203.0.113.7")
    ports = {"gateway": 8080, "ask": 50051, "ingest": 8081, "transcribe": 8091, "index": 8092,
             "nats": 4222, "qdrant": 6333, "postgres": 5432}

    def ok(src, dst, port):
        return netpol.can_connect(policies, src, dst, port)

    # only the gateway is reachable from outside the namespace, and only through the ingress controller
    assert ok(ingress_controller, pods["gateway"], 8080)
    for name, port in ports.items():
        assert not ok(other_namespace, pods[name], port), name
        assert not ok(internet, pods[name], port), name
        if name != "gateway":
            assert not ok(ingress_controller, pods[name], port), name
    # only the gateway reaches ask (and ingest)
    assert ok(pods["gateway"], pods["ask"], 50051)
    assert ok(pods["gateway"], pods["ingest"], 8081)
    for name in ("ingest", "transcribe", "index", "nats", "qdrant", "postgres"):
        assert not ok(pods[name], pods["ask"], 50051), name
    # the pipeline reaches the bus and the stores
    for name in ("transcribe", "index"):
        assert ok(pods[name], pods["nats"], 4222), name
        assert ok(pods[name], pods["postgres"], 5432), name
        assert ok(pods[name], pods["qdrant"], 6333), name
        assert not ok(pods[name], pods["gateway"], 8080), name
    # media in object storage (prod only): ingest and transcribe reach the store over HTTPS; index never reaches out
    in_s3 = target == "overlays/prod"
    assert ok(pods["transcribe"], internet, 443) == in_s3 and ok(pods["ingest"], internet, 443) == in_s3
    assert not ok(pods["index"], internet, 443) and not ok(pods["gateway"], internet, 443)
    assert not ok(pods["transcribe"], internet, 80)
    assert ok(pods["ingest"], pods["nats"], 4222) and ok(pods["ingest"], pods["postgres"], 5432)
    assert ok(pods["ingest"], pods["qdrant"], 6333)  # deleting a lecture deletes its search points
    assert ok(pods["ask"], pods["postgres"], 5432) and ok(pods["ask"], pods["qdrant"], 6333)
    assert ok(pods["ask"], internet, 443)  # optional cloud writers
    assert not ok(pods["ask"], netpol.outside("10.1.2.3"), 443)
    assert not ok(pods["ask"], pods["nats"], 4222)
    # the stores' peers: NATS routes, Qdrant p2p; KEDA reads NATS monitoring
    assert ok(pods["nats"], pods["nats"], 6222) and ok(pods["qdrant"], pods["qdrant"], 6335)
    assert not ok(pods["index"], pods["qdrant"], 6335)
    assert ok(netpol.pod("keda", app="keda-operator"), pods["nats"], 8222)


def test_network_policy_check_can_fail():
    objs = render("overlays/prod")
    policies = find(objs, "NetworkPolicy")
    pods = _pods(objs, "lecture-copilot")
    loosened = [p for p in policies if p["metadata"]["name"] != "ask-ingress"]
    loosened.append({"metadata": {"name": "oops", "namespace": "lecture-copilot"},
                     "spec": {"podSelector": {"matchLabels": {"app.kubernetes.io/component": "ask"}},
                              "policyTypes": ["Ingress"], "ingress": [{}]}})
    # NATS pods have no egress policy: only ask's ingress policy stands between them and ask
    assert not netpol.can_connect(policies, pods["nats"], pods["ask"], 50051)
    assert netpol.can_connect(loosened, pods["nats"], pods["ask"], 50051)
    # the workers' egress policy still blocks them
    assert not netpol.can_connect(loosened, pods["index"], pods["ask"], 50051)


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "overlays/dev"], ids=["base", "prod"])
def test_autoscaling(target):
    objs = render(target)
    for name in ("gateway", "ask"):
        hpa = one(objs, "HorizontalPodAutoscaler", name)
        assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}
        assert [m["resource"]["name"] for m in hpa["spec"]["metrics"]] == ["cpu"]
        assert 2 <= hpa["spec"]["minReplicas"] < hpa["spec"]["maxReplicas"]
    assert {s["metadata"]["name"] for s in find(objs, "ScaledObject")} == set(WORKERS)


def _keda_validate(obj: dict) -> None:
    """Validates a ScaledObject with the models generated from KEDA's CRD (cloudcoil-models-keda):
    required fields and types; unknown fields fail too, as they would not survive the round trip."""
    from cloudcoil.models.keda.v1alpha1 import ScaledObject

    model = ScaledObject.model_validate(obj)
    assert model.model_dump(by_alias=True, exclude_unset=True, mode="json") == obj, "unknown fields"


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "overlays/dev"], ids=["base", "prod"])
def test_keda_scaledobjects_match_the_crd(target):
    for so in find(render(target), "ScaledObject"):
        _keda_validate(so)


def test_keda_validation_can_fail():
    import pydantic

    so = one(render("overlays/prod"), "ScaledObject", "transcribe")
    del so["spec"]["scaleTargetRef"]
    with pytest.raises(pydantic.ValidationError):
        _keda_validate(so)
    so = one(render("overlays/prod"), "ScaledObject", "transcribe")
    so["spec"]["triggers"][0]["metadata"]["lagThreshold"] = 1  # KEDA wants strings
    with pytest.raises(pydantic.ValidationError):
        _keda_validate(so)
    so = one(render("overlays/prod"), "ScaledObject", "transcribe")
    so["spec"]["maxReplicas"] = 3  # the HPA's name, not KEDA's
    with pytest.raises(AssertionError):
        _keda_validate(so)


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "overlays/dev"], ids=["base", "prod"])
def test_keda_scaledobjects_scale_on_the_workers_consumers(target):
    """Required fields of keda.sh/v1alpha1 ScaledObject (spec.scaleTargetRef.name, spec.triggers[].type
    and .metadata, all metadata values strings) and the nats-jetstream trigger's parameters,
    checked against the stream and durable consumer names the code declares."""
    objs = render(target)
    ns = NAMESPACE.get(target, "lecture-copilot")
    config = one(objs, "ConfigMap", "lecture-copilot-config")["data"]
    assert config["LC_STREAM"] == _settings().stream
    headless = one(objs, "Service", "nats-headless")
    assert headless["spec"]["clusterIP"] == "None"
    assert 8222 in {p["port"] for p in headless["spec"]["ports"]}
    for name in WORKERS:
        so = one(objs, "ScaledObject", name)
        assert so["apiVersion"] == "keda.sh/v1alpha1"
        spec = so["spec"]
        assert set(spec) <= {"scaleTargetRef", "minReplicaCount", "maxReplicaCount", "pollingInterval",
                             "cooldownPeriod", "idleReplicaCount", "fallback", "advanced", "triggers",
                             "initialCooldownPeriod"}
        assert spec["scaleTargetRef"]["name"] == name and one(objs, "Deployment", name)
        assert 1 <= spec["minReplicaCount"] <= spec["maxReplicaCount"]
        consumers = set()
        for trig in spec["triggers"]:
            assert trig["type"] == "nats-jetstream"
            md = trig["metadata"]
            assert all(isinstance(v, str) for v in md.values()), md
            assert {"natsServerMonitoringEndpoint", "account", "stream", "consumer", "lagThreshold"} <= set(md)
            assert md["stream"] == config["LC_STREAM"]
            assert md["natsServerMonitoringEndpoint"] == f"nats-headless.{ns}.svc.cluster.local:8222"
            assert int(md["lagThreshold"]) >= 1
            consumers.add(md["consumer"])
        # every trigger names a consumer the code declares (KEDA errors on an unknown one), and the
        # service's main consumer (named after it) is among them
        assert name in consumers and consumers <= _durables(name), (name, consumers, _durables(name))


@pytest.mark.parametrize("target", TARGETS, ids=overlay_ids(TARGETS))
def test_cloudnativepg_cluster(target):
    """Required fields of postgresql.cnpg.io/v1 Cluster/ScheduledBackup, the image pin, pgvector,
    and the generated app Secret the services read DATABASE_URL from."""
    objs = render(target)
    cluster = find(objs, "Cluster")[0]
    assert cluster["apiVersion"] == "postgresql.cnpg.io/v1"
    spec = cluster["spec"]
    assert isinstance(spec["instances"], int) and spec["instances"] >= 1
    assert re.fullmatch(r"ghcr\.io/cloudnative-pg/postgresql:\d+\.\d+-standard-\w+", spec["imageName"])
    assert re.fullmatch(r"\d+(\.\d+)?[MGT]i", spec["storage"]["size"])
    assert any("vector" in sql for sql in spec["bootstrap"]["initdb"]["postInitApplicationSQL"])
    app_secret = f"{cluster['metadata']['name']}-app"
    for name in SERVICES:
        c = _container(one(objs, "Deployment", name))
        db = next(e for e in c["env"] if e["name"] == "DATABASE_URL")
        assert db["valueFrom"]["secretKeyRef"] == {"name": app_secret, "key": "uri"}
    if target == "overlays/prod":
        assert spec["instances"] == 3 and spec["minSyncReplicas"] == 1
        store = spec["backup"]["barmanObjectStore"]
        assert store["destinationPath"].startswith("s3://")
        backup = one(objs, "ScheduledBackup", "lecture-copilot-pg-nightly")
        assert backup["spec"]["cluster"]["name"] == cluster["metadata"]["name"]
        assert len(backup["spec"]["schedule"].split()) == 6  # CNPG schedules have a seconds field


def test_prod_is_highly_available():
    objs = render("overlays/prod")
    config = one(objs, "ConfigMap", "lecture-copilot-config")["data"]
    assert config["LC_STREAM_REPLICAS"] == "3"
    assert one(objs, "StatefulSet", "nats")["spec"]["replicas"] == 3
    conf = one(objs, "ConfigMap", "nats-config")["data"]["nats.conf"]
    assert "jetstream" in conf and "store_dir" in conf and conf.count("nats://nats-") == 3
    qdrant = one(objs, "StatefulSet", "qdrant")
    assert qdrant["spec"]["replicas"] == 3
    env = {e["name"]: e.get("value") for e in qdrant["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["QDRANT__CLUSTER__ENABLED"] == "true"
    assert env["QDRANT__STORAGE__COLLECTION__REPLICATION_FACTOR"] == "2"
    for name in ("gateway", "ask"):
        assert one(objs, "Deployment", name)["spec"]["replicas"] >= 3


def test_prod_keeps_media_and_resumable_chunks_in_object_storage_and_dev_on_the_shared_volume():
    from lecturecopilot.objectstore import parse_media_url

    objs = render("overlays/prod")
    config = one(objs, "ConfigMap", "lecture-copilot-config")["data"]
    assert parse_media_url(config["LC_MEDIA_URL"])[0]  # what S3MediaStore accepts
    claims = {o["metadata"]["name"]: o for o in find(objs, "PersistentVolumeClaim")}
    assert not any("ReadWriteMany" in c["spec"]["accessModes"] for c in claims.values()), claims  # no shared volume
    for name in ("ingest", "transcribe", "gateway"):
        pod = one(objs, "Deployment", name)["spec"]["template"]["spec"]
        volumes = {v["name"]: v for v in pod["volumes"]}
        assert set(volumes["media"]) == {"name", "emptyDir"}, name
        assert {"secretRef": {"name": "lecture-copilot-media-s3"}} in pod["containers"][0]["envFrom"], name
        assert not [v for v in pod["volumes"] if "persistentVolumeClaim" in v], name  # resumable chunks are objects
        assert [m["name"] for m in pod["containers"][0]["volumeMounts"] if "uploads" in m["mountPath"]] == [], name
    dev = render("overlays/dev")
    assert "LC_MEDIA_URL" not in one(dev, "ConfigMap", "lecture-copilot-config")["data"]
    assert {o["metadata"]["name"] for o in find(dev, "PersistentVolumeClaim")} >= {"lecture-media"}


def test_prod_lists_every_nats_server_and_replicates_the_stream_on_each():
    from lecturecopilot import bus

    objs = render("overlays/prod")
    config = one(objs, "ConfigMap", "lecture-copilot-config")["data"]
    nats = one(objs, "StatefulSet", "nats")
    n = nats["spec"]["replicas"]
    headless = one(objs, "Service", nats["spec"]["serviceName"])
    assert headless["spec"]["clusterIP"] == "None" and 4222 in {p["port"] for p in headless["spec"]["ports"]}
    # one client URL per pod of the StatefulSet, by its stable name under the headless Service
    assert bus.servers(config["NATS_URL"]) == [f"nats://nats-{i}.{headless['metadata']['name']}:4222"
                                               for i in range(n)]
    assert int(config["LC_STREAM_REPLICAS"]) == n == 3
    assert Settings(_env_file=None, NATS_URL=config["NATS_URL"]).nats_url == config["NATS_URL"]


def test_dev_is_single_replica():
    objs = render("overlays/dev")
    for w in find(objs, "Deployment") + find(objs, "StatefulSet"):
        assert w["spec"]["replicas"] == 1, w["metadata"]["name"]
    assert find(objs, "Cluster")[0]["spec"]["instances"] == 1
    assert not find(objs, "HorizontalPodAutoscaler") and not find(objs, "ScaledObject")
    assert "cluster {" not in one(objs, "ConfigMap", "nats-config")["data"]["nats.conf"]
    assert one(objs, "ConfigMap", "lecture-copilot-config")["data"]["LC_STREAM_REPLICAS"] == "1"


@pytest.mark.parametrize("target", TARGETS, ids=overlay_ids(TARGETS))
def test_gateway_balances_ask_calls_over_every_ask_pod(target):
    """The gateway's LC_ASK_TARGET_URI names a headless Service selecting the ask pods on the gRPC
    port, so gRPC's round_robin spreads calls per call, not per connection."""
    objs = render(target)
    gateway = one(objs, "Deployment", "gateway")
    uri = _env(_container(gateway), "LC_ASK_TARGET_URI", {})
    m = re.fullmatch(r"dns:///([a-z0-9-]+):(\d+)", uri or "")
    assert m, uri
    svc = one(objs, "Service", m.group(1))
    assert svc["spec"].get("clusterIP") == "None"
    ask = one(objs, "Deployment", "ask")
    labels = ask["spec"]["template"]["metadata"]["labels"]
    assert all(labels.get(k) == v for k, v in svc["spec"]["selector"].items())
    assert int(m.group(2)) in {p["port"] for p in svc["spec"]["ports"]}
    assert int(m.group(2)) == _settings().ask_port


def test_prod_bounds_transcribes_local_copies_below_its_media_volume():
    objs = render("overlays/prod")
    config = one(objs, "ConfigMap", "lecture-copilot-config")["data"]
    settings = Settings(media_cache_bytes=config["LC_MEDIA_CACHE_BYTES"], media_cache_s=config["LC_MEDIA_CACHE_S"])
    pod = one(objs, "Deployment", "transcribe")["spec"]["template"]["spec"]
    limit = {v["name"]: v for v in pod["volumes"]}["media"]["emptyDir"]["sizeLimit"]
    number, unit = re.fullmatch(r"(\d+)(Gi|Mi)", limit).groups()
    limit_bytes = int(number) << (30 if unit == "Gi" else 20)
    # the budget counts the copies, not what the stages write meanwhile (web copies, audio): half the volume
    assert settings.media_cache_bytes <= limit_bytes // 2, (settings.media_cache_bytes, limit)
    assert settings.media_cache_s <= 86400
