file(REMOVE_RECURSE
  "libccnuma.a"
)
