"""Command-line entry points; each module is one command."""
