"""Rankings of the systems: rank intervals and letters, the scores table, whether the conclusions hold."""
