"""Each brush's settings, parameters and lane choice: kept per brush, stored with the preferences,
shown in the brush panel and handed to the canvas's brush tools."""

from __future__ import annotations

import dataclasses

from spectropaint.app.panels.brush_panel import BrushPanel
from spectropaint.app.settings_store import SettingsStore
from spectropaint.brushes.registry import BRUSHES, brush_kind
from spectropaint.brushes.settings import BrushSettings
from spectropaint.transforms.errors import SettingsError

DEFAULT_TOOL = "gain"


class BrushChoices:
    """What the next stroke of each brush uses.

    Attributes
    ----------
    settings : dict of str to BrushSettings
    params : dict of str to dict
        The kernel's parameters, as JSON values.
    lanes : dict of str to bool
        Brushes that edit the channel under the pointer (when no channel is chosen).
    """

    def __init__(self, panel: BrushPanel):
        self.panel = panel
        self.canvas = None
        """The canvas whose brush tools paint with these (None without a document)."""
        self.n_channels: int | None = None
        """The open document's channels (None without one)."""
        self.settings: dict[str, BrushSettings] = {}
        self.params: dict[str, dict] = {}
        self.lanes: dict[str, bool] = {}
        panel.changed.connect(self._edited)

    def load(self, store: SettingsStore) -> None:
        """Every brush's choices as ``store`` holds them (a brush's defaults where it holds
        something the brush refuses)."""
        for name, kind in BRUSHES.items():
            stored = store.brush(name)
            try:
                settings = BrushSettings.from_dict(stored.get("common", {}))
                params = dataclasses.asdict(kind.params(stored.get("params", {})))
            except SettingsError:
                settings, params = BrushSettings(), dataclasses.asdict(kind.params())
            self.settings[name], self.params[name] = settings, params
            self.lanes[name] = stored.get("lane") is True

    def save(self, store: SettingsStore) -> None:
        for name in BRUSHES:
            store.set_brush(
                name,
                {
                    "common": self.settings[name].to_dict(),
                    "params": self.params[name],
                    "lane": self.lanes[name],
                },
            )

    def attach(self, canvas, n_channels: int) -> None:
        """Give ``canvas``'s brush tools their choices (a document of ``n_channels`` opened)."""
        self.canvas, self.n_channels = canvas, n_channels
        for name in BRUSHES:
            self.apply(name)

    def show_document(self, canvas) -> None:
        """The panel shows sizes in ``canvas``'s document's units and its channels."""
        self.panel.set_channel_count(self.n_channels)
        self.panel.set_geometry(canvas.renderer.geometry)
        self.refresh()

    def detach(self) -> None:
        self.canvas, self.n_channels = None, None

    def refresh(self, name: str | None = None) -> None:
        """Show brush ``name`` (the panel's, by default) in the panel and give it to its tool; a
        channel the document lacks becomes all channels."""
        name = name or self.panel.brush or DEFAULT_TOOL
        brush_kind(name)
        settings = self.settings[name]
        n_channels = self.n_channels
        if (
            n_channels is not None
            and settings.channel is not None
            and settings.channel >= n_channels
        ):
            settings = self.settings[name] = dataclasses.replace(settings, channel=None)
        self.panel.set_brush(name, settings, self.params[name], self.lanes[name])
        self.apply(name)

    def _edited(self) -> None:
        name = self.panel.brush
        self.settings[name] = self.panel.settings()
        self.params[name] = self.panel.params()
        self.lanes[name] = self.panel.per_lane
        self.apply(name)

    def apply(self, name: str) -> None:
        """Give brush ``name``'s tool the settings and parameters its next stroke uses."""
        if self.canvas is not None:
            tool = self.canvas.brush_tool(name)
            tool.settings, tool.params = self.settings[name], dict(self.params[name])
            tool.per_lane = self.lanes[name]
            tool.show_outline()
