# h5py's own high-level test modules, run against arca:
#   make h5py-suite   copy them from the installed h5py, rewrite `import h5py`
#                     to arca, deselect the tests listed (with reasons) in
#                     crates/arca-py/h5py-suite/excluded.txt (they need libhdf5
#                     itself), run those in pending.txt (features not built
#                     yet) as strict expected failures, and the rest must pass.
#                     ARGS=... passes pytest arguments (e.g. ARGS='--all -x'
#                     also runs the excluded ones).
.PHONY: h5py-suite

h5py-suite: py-build
	$(PY) crates/arca-py/h5py-suite/run.py --build $(TARGET_DIR)/h5py-suite $(or $(ARGS),-p no:warnings)

TEST_TARGETS += h5py-suite
