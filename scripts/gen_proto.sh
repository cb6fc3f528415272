#!/usr/bin/env bash
# Regenerates the Python code for proto/ into lecturecopilot/{events,ask}/v1/ (committed).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
$PY -m grpc_tools.protoc -Iproto --python_out=. --pyi_out=. --grpc_python_out=. \
  proto/lecturecopilot/events/v1/events.proto proto/lecturecopilot/ask/v1/ask.proto
rm -f lecturecopilot/events/v1/events_pb2_grpc.py  # events have no service
for d in lecturecopilot/events lecturecopilot/events/v1 lecturecopilot/ask lecturecopilot/ask/v1; do
  touch "$d/__init__.py"
done
