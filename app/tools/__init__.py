"""Pointer tools as small Qt-free objects: press, drag and release handled by one object per tool.

:data:`~spectropaint.app.tools.registry.TOOLS` names every tool; the canvas widget turns its
pointer events into :class:`~spectropaint.app.tools.base.Pointer` values and hands them to the
active tool, which acts through a :class:`~spectropaint.app.tools.base.ToolHost` (the canvas, or a
stand-in in tests).
"""
