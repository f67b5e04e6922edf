# Empty dependencies file for binding_test.
# This may be replaced when dependencies are built.
