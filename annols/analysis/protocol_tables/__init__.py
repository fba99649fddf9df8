"""Protocol additions: the shipped protocols' own tables, and imported judged records' scores."""
