# Empty dependencies file for tools_test.
# This may be replaced when dependencies are built.
