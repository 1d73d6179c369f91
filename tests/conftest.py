import os

# Everything the tests execute runs at the smoke profile and on one thread per process (the cores are shared).
os.environ.setdefault("HYBRID_NBS_PROFILE", "smoke")
os.environ.setdefault("NUMBA_NUM_THREADS", "2")
