"""The interpreters of funcdiff: one module per way of running a program."""
