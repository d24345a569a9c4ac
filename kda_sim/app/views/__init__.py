"""One module a view; each has ``render(ctx)``."""
