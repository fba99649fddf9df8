"""annols: published human-evaluation protocols as one-command Label Studio studies."""

__version__ = "0.1.0"
