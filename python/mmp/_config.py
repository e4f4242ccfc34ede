"""The libdir of the installed mmp library; python/setup.py replaces this file in
the built package with the folder pkg-config names (None: not recorded)."""
LIBDIR = None
