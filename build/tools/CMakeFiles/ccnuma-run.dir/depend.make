# Empty dependencies file for ccnuma-run.
# This may be replaced when dependencies are built.
