# Empty dependencies file for system_test.
# This may be replaced when dependencies are built.
