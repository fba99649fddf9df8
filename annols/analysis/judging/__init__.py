"""Judges and PPI: judges against humans, arena vote agreement, PPI++ and its seeded coverage studies."""
