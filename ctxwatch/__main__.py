"""``python -m ctxwatch``: the same command as the ``ctxwatch`` script (a virtualenv's interpreter run
directly, or an install whose scripts folder is not on PATH)."""

from ctxwatch.cli import run

if __name__ == "__main__":
    run()
