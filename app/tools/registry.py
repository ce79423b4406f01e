"""Every pointer tool by name: the brushes, the view tools, then the selection tools."""

from __future__ import annotations

from spectropaint.app.session import Session
from spectropaint.app.tools.base import Tool, ToolHost
from spectropaint.app.tools.brush_tool import BrushTool
from spectropaint.app.tools.selection_tools import SELECTION_TOOLS
from spectropaint.app.tools.view_tools import PanTool, SelectTool, ZoomTool
from spectropaint.brushes.registry import BRUSHES
from spectropaint.transforms.errors import SettingsError

VIEW_TOOLS = {"select": SelectTool, "pan": PanTool, "zoom": ZoomTool}
TOOL_NAMES = (*BRUSHES, *VIEW_TOOLS, *SELECTION_TOOLS)


def make_tools(host: ToolHost, session: Session, painter=None) -> dict[str, Tool]:
    """One tool of each kind, acting on ``host`` and ``session``; brushes paint through
    ``painter`` (a :class:`~spectropaint.app.paint_queue.PaintQueue`) when given."""
    tools: dict[str, Tool] = {name: BrushTool(host, session, name, painter) for name in BRUSHES}
    tools.update((name, kind(host)) for name, kind in VIEW_TOOLS.items())
    tools.update((name, kind(host, session)) for name, kind in SELECTION_TOOLS.items())
    return tools


def check_tool(name: str) -> str:
    if name not in TOOL_NAMES:
        raise SettingsError(f"unknown tool {name!r}")
    return name
