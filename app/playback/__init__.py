"""Playback: the output stream, the transport, and resynthesis of edits into the buffer."""
