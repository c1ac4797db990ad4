"""Argument handling of the user-facing transforms: argnums, flattening, vmap's in_axes."""
