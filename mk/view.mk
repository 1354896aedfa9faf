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
