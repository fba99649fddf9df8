"""Per style and per question: each style's findings, and every question of a definition by system."""
