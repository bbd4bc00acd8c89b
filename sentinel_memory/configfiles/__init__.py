"""A user's config file, edited or read with care: the file on disk (configedit), JSON and JSONC
by splicing text (jsonedit), TOML through tomlkit (tomledit)."""
