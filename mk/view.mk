# `arca view`: h5grove for the conformance test (crates/arca-py/tests/
# test_view_conformance.py, run by py-test), the viewer app (viewer/, React +
# Vite around @h5web/app) whose build ships in the Python package, and the
# browser test (Debian's chromium driven by playwright-core).
#   make viewer              rebuild the app when its sources changed
#   make view-browser-test   the app in headless chromium
.PHONY: view-py-deps viewer view-browser-test chromium

VIEW_PY_STAMP := $(VENV)/.arca-view-py.stamp
VIEW_PY_REQS := "h5grove==4.0.0" "tornado>=6.4,<7"

view-py-deps: $(VIEW_PY_STAMP)

$(VIEW_PY_STAMP): $(VENV_STAMP) mk/view.mk
	$(PY) -m pip install --quiet $(VIEW_PY_REQS)
	touch $@

py-test: view-py-deps

VIEWER_OUT := $(PY_CRATE)/python/arca/viewer
VIEWER_SRC := viewer/package.json viewer/package-lock.json viewer/vite.config.js \
	viewer/index.html $(wildcard viewer/src/*)
VIEWER_NPM_STAMP := viewer/node_modules/.arca-npm.stamp
VIEW_SHOTS ?= $(or $(TMPDIR),/tmp)/arca-view-screenshots

$(VIEWER_NPM_STAMP): viewer/package.json viewer/package-lock.json
	cd viewer && npm ci --no-audit --no-fund
	touch $@

# The build is committed (the package ships it; users and CI need no Node):
# rebuilt only when the app's sources are newer.
viewer: $(VIEWER_OUT)/index.html

$(VIEWER_OUT)/index.html: $(VIEWER_SRC) | $(VIEWER_NPM_STAMP)
	cd viewer && npx vite build
	touch $@

chromium:
	command -v chromium >/dev/null || { apt-get update && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }

view-browser-test: viewer chromium arca-cli py-build $(VIEWER_NPM_STAMP)
	mkdir -p $(VIEW_SHOTS)
	$(PY) viewer/browser-test-file.py $(VIEW_SHOTS)/browser-test.arca
	node viewer/browser-test.mjs $(ARCA_BIN) $(VIEW_SHOTS)/browser-test.arca \
		$(VIEWER_OUT) $(VIEW_SHOTS)

TEST_TARGETS += view-browser-test
