"""Static analysis of what we ship: checkov on every rendered overlay and on the Dockerfile,
hadolint on the Dockerfile. checkov runs from its own virtualenv (.tools/checkov, made by
scripts/setup.sh --test: its pins clash with the project's), offline (--skip-download).

checkov without a platform key reports no severities, so these tests demand *no* failed check
at all; every skip is a `checkov.io/skipN` annotation whose reason is written next to it."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from .render import CHECKOV, OVERLAYS, ROOT, render_text, tool

DOCKERFILE = ROOT / "Dockerfile"
# The only checks we skip, each with its reason in the manifests' annotations.
ALLOWED_SKIPS = {"CKV_K8S_43", "CKV_K8S_35"}


def checkov(path, framework: str) -> dict:
    """checkov's JSON report on ``path`` for ``framework`` (offline)."""
    if not CHECKOV.exists():
        pytest.fail(f"{CHECKOV} missing: run scripts/setup.sh --test")
    env = {**os.environ, "BC_SKIP_MAPPING": "TRUE", "CHECKOV_RUN_SCA_PACKAGE_SCAN_V2": "false"}
    out = subprocess.run([str(CHECKOV), "-f", str(path), "--framework", framework, "--quiet", "--compact",
                          "--skip-download", "-o", "json"], capture_output=True, text=True, env=env, timeout=300)
    assert out.stdout.strip(), out.stderr
    report = json.loads(out.stdout)
    return report[0] if isinstance(report, list) else report


def _failed(report: dict) -> list[str]:
    return [f"{c['check_id']} {c['resource']}: {c['check_name']}" for c in report["results"].get("failed_checks", [])]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_checkov_finds_nothing_in_the_manifests(overlay, tmp_path):
    path = tmp_path / f"{overlay}.yaml"
    path.write_text(render_text(f"overlays/{overlay}"))
    report = checkov(path, "kubernetes")
    assert report["summary"]["parsing_errors"] == 0
    assert report["summary"]["resource_count"] >= 40
    assert _failed(report) == []
    skipped = report["results"].get("skipped_checks", [])
    assert {c["check_id"] for c in skipped} <= ALLOWED_SKIPS
    for c in skipped:
        assert len((c.get("suppress_comment") or "").strip()) > 40, c["check_id"]


def test_checkov_would_catch_a_writable_root_filesystem(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(render_text("overlays/prod").replace("readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false"))
    assert any(f.startswith("CKV_K8S_22 ") for f in _failed(checkov(path, "kubernetes")))


def test_checkov_finds_nothing_in_the_dockerfile():
    report = checkov(DOCKERFILE, "dockerfile")
    assert report["summary"]["passed"] > 10
    assert _failed(report) == []


def _hadolint(path) -> subprocess.CompletedProcess:
    return subprocess.run([tool("hadolint"), "--no-color", str(path)], capture_output=True, text=True, timeout=60)


def test_hadolint_passes():
    out = _hadolint(DOCKERFILE)
    assert out.returncode == 0, out.stdout + out.stderr


def test_hadolint_would_catch_an_unpinned_base(tmp_path):
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:latest\nRUN pip install flask\n")
    out = _hadolint(bad)
    assert out.returncode != 0 and "DL3007" in out.stdout


def test_dockerfile_has_a_hardened_target_per_service():
    text = DOCKERFILE.read_text()
    froms = re.findall(r"^FROM (\S+)(?: AS (\w+))?", text, re.M)
    assert all(re.fullmatch(r"python:\d+\.\d+\.\d+-slim-\w+(@sha256:[0-9a-f]{64})?", image)
               for image, _ in froms if image not in {"build", "runtime"})
    targets = {name for _, name in froms}
    assert {"gateway", "ask", "ingest", "transcribe", "index"} <= targets
    for service in ("gateway", "ask", "ingest", "transcribe", "index"):
        block = text.split(f"AS {service}\n", 1)[1].split("\nFROM ", 1)[0]
        assert "HEALTHCHECK" in block and f'CMD ["services.{service}"]' in block, service
    runtime = text.split("AS runtime\n", 1)[1].split("\nFROM ", 1)[0]
    assert "USER 10001:10001" in runtime
    assert "torch==2.13.0" in text


def test_image_has_the_system_packages_the_services_use():
    """Every apt package scripts/setup.sh installs for the services is in the runtime stage
    (espeak-ng and the fonts only make the demo video)."""
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    pkgs = set(re.search(r"^pkgs=\((.*)\)$", setup, re.M).group(1).split())
    runtime = DOCKERFILE.read_text().split("AS runtime\n", 1)[1].split("\nFROM ", 1)[0]
    installed = set(re.search(r"apt-get install -y --no-install-recommends ([^\\\n]+)", runtime).group(1).split())
    assert pkgs - {"espeak-ng", "fonts-dejavu-core"} <= installed
