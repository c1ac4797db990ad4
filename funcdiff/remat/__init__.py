"""Checkpointing (rematerialisation): the checkpoint transform, its policies and its partial evaluation."""
