# Empty dependencies file for version_test.
# This may be replaced when dependencies are built.
