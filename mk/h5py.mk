# h5py's own high-level test modules, run against arca:
#   make h5py-suite   copy them from the installed h5py, rewrite `import h5py`
#                     to arca, deselect the tests listed (with reasons) in
#                     crates/arca-py/h5py-suite/excluded.txt, and run the rest;
#                     every one must pass. ARGS=... passes pytest arguments
#                     (e.g. ARGS='--all -x' also runs the excluded ones).
.PHONY: h5py-suite

h5py-suite: py-build
	$(PY) crates/arca-py/h5py-suite/run.py --build $(TARGET_DIR)/h5py-suite $(or $(ARGS),-q)
