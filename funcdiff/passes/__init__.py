"""The optimisation passes over jaxprs and the pipeline that runs them to a fixed point."""
