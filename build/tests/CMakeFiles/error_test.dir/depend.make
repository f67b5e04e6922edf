# Empty dependencies file for error_test.
# This may be replaced when dependencies are built.
