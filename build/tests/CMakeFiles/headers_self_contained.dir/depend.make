# Empty dependencies file for headers_self_contained.
# This may be replaced when dependencies are built.
