"""Setting a project up and checking it: the client table, `init`, `doctor`, the project root,
the pre-commit check and `scan` (a user's config files are edited by configfiles/)."""
