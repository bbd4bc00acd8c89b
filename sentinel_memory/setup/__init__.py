"""Setting a project up and checking it: the client table, careful edits of a user's config files,
`init`, `doctor`, the project root, the pre-commit check and `scan`."""
