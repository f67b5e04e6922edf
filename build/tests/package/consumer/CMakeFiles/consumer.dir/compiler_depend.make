# Empty compiler generated dependencies file for consumer.
# This may be replaced when dependencies are built.
