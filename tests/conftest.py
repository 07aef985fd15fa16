import os

os.environ.setdefault("STABLEJIT_VERIFY", "1")  # verify IR after every pass in tests
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

# Tests compile for real, with a private persistent cache per test process, never the
# user's ~/.cache/stablejit.
if "STABLEJIT_CACHE_DIR" not in os.environ:
    import tempfile

    os.environ["STABLEJIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="stablejit-test-cache-")
    os.chmod(os.environ["STABLEJIT_CACHE_DIR"], 0o700)
