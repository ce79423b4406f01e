"""Audio files, project files, atomic writes and the demo sound: what goes to and from disk."""
