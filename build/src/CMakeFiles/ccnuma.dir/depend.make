# Empty dependencies file for ccnuma.
# This may be replaced when dependencies are built.
