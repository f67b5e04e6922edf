# Empty dependencies file for topology_test.
# This may be replaced when dependencies are built.
