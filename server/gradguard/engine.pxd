# Declarations for engine.py in the build Cython compiles (setup.py); Python ignores this file.
# ``Engine.ev``'s count of nested evaluations left is a C int: counted as a Python attribute it
# cost the compiled analysis 5 %.
cdef int _nesting_left
