"""The Qt shell and the command line."""
