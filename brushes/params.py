"""Declared parameters: each brush states its settings' label, unit, range and step once, next to
the field, and both the validation and the brush panel read that declaration.

>>> @dataclass(frozen=True)
... class Params:
...     gain_db: float = param(-12.0, "Gain", "dB", low=-150, high=48)
...     def __post_init__(self):
...         check_params(self)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from spectropaint.brushes.validation import check_choice, check_integer, check_number


@dataclass(frozen=True)
class Param:
    """How one parameter is shown and checked.

    Attributes
    ----------
    label : str
        What the person reads next to it.
    unit : str
        Its unit as shown (``dB``, ``Hz``, ``radii``...), empty when it has none.
    low, high : float
        Its range, inclusive (numbers only).
    step : float
        One step of a spin box or slider.
    decimals : int
        Decimals shown.
    choices : tuple of str
        The values a text parameter may take (empty: any number).
    integer : bool
        Whole numbers only.
    optional : bool
        None is allowed too.
    used_when : tuple, optional
        ``(other_field, values)``: the parameter only matters while ``other_field`` has one of
        ``values`` (a panel greys it out otherwise).
    """

    label: str
    unit: str = ""
    low: float = float("-inf")
    high: float = float("inf")
    step: float = 1.0
    decimals: int = 2
    choices: tuple[str, ...] = ()
    integer: bool = False
    optional: bool = False
    used_when: tuple[str, tuple[str, ...]] | None = None

    @property
    def caption(self) -> str:
        """``'Gain (dB)'``: the label with its unit."""
        return f"{self.label} ({self.unit})" if self.unit else self.label

    def check(self, name: str, value: Any) -> None:
        """Raise ``SettingsError`` naming ``name`` unless ``value`` is allowed."""
        if value is None and self.optional:
            return
        if self.choices:
            check_choice(name, value, self.choices)
        elif self.integer:
            check_integer(name, value, int(self.low), int(self.high))
        else:
            check_number(name, value, self.low, self.high)


def param(default: Any, label: str, unit: str = "", **spec: Any) -> Any:
    """A dataclass field with its :class:`Param` declaration (``low``, ``high``, ``step``...)."""
    return dataclasses.field(default=default, metadata={"param": Param(label, unit, **spec)})


def declared(cls_or_instance: Any) -> dict[str, Param]:
    """The declared parameters of a parameter dataclass, in field order."""
    return {
        field.name: field.metadata["param"]
        for field in dataclasses.fields(cls_or_instance)
        if "param" in field.metadata
    }


def check_params(instance: Any) -> None:
    """Check every declared field of ``instance`` against its declaration."""
    for name, spec in declared(instance).items():
        spec.check(name, getattr(instance, name))
