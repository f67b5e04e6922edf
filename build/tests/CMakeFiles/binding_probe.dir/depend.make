# Empty dependencies file for binding_probe.
# This may be replaced when dependencies are built.
