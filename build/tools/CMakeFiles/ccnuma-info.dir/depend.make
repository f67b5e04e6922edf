# Empty dependencies file for ccnuma-info.
# This may be replaced when dependencies are built.
