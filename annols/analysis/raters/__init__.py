"""Agreement and reliability of the annotators: agreement, span agreement, gold accuracy, annotator models."""
