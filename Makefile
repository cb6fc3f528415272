# Lecture Copilot — one entry point. See README.md.
PY := .venv/bin/python

.PHONY: setup setup-test demo up down test test-fast proto eval bench screenshots

setup:
	@bash scripts/setup.sh

setup-test:
	@bash scripts/setup.sh --test

## Make the demo lecture, start the stack on embedded defaults, process it, ask it; print the URL.
demo: setup
	$(PY) -m lecturecopilot demo

## Start / stop every service (embedded Postgres + NATS unless DATABASE_URL / NATS_URL are set).
up: setup
	$(PY) -m lecturecopilot up

down:
	@[ -x $(PY) ] && $(PY) -m lecturecopilot down || true

## All tests: unit, integration against real NATS/Postgres/ffmpeg/models, browser.
test: setup-test
	$(PY) -m pytest -q

## Unit tests only (no services).
test-fast: setup-test
	$(PY) -m pytest -q tests/unit

proto: setup-test
	PY=$(PY) bash scripts/gen_proto.sh

## Retrieval evaluation on the MIT 6.006 dev set (writes evals/results/).
eval: setup
	$(PY) -m evals.retrieval

## Search-index scale benchmark (writes bench/results/search_scale.json).
bench: setup
	$(PY) -m bench.search_scale --points 1000 10000 100000 1000000

## Deployment checks only (Dockerfile, deploy/k8s: kustomize, schemas, checkov, hadolint); no services.
.PHONY: test-deploy
test-deploy: setup-test
	$(PY) -m pytest -q tests/deploy

## PNGs of the course list, the course page, a streamed answer with chips and the instructor's upload page,
## at desktop and phone widths, into docs/screenshots/ (a throw-away stack, a real browser).
screenshots: setup-test
	LC_TEST_NATS=embedded LC_SCREENSHOTS=$(CURDIR)/docs/screenshots $(PY) -m pytest -q tests/integration/test_web_browser.py tests/integration/test_web_practice.py -k "screenshots or uploads or practises or insights"
