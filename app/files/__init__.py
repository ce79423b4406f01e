"""Opening, exporting, projects, autosave and crash recovery, as background jobs."""
