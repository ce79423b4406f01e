"""Audio files, time-frequency transforms with exact inverses, and the editable document."""
