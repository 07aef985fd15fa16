import os

os.environ.setdefault("STABLEJIT_VERIFY", "1")  # verify IR after every pass in tests
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
