"""``python -m annols``: the same command line as the ``annols`` script, for a checkout without it."""

from annols.cli import main

if __name__ == "__main__":
    main()
