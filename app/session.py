"""The editing session: one open document, its undo history, its recorded strokes and its state.

No Qt and no wgpu here (an import contract checks it): the window, the command line, autosave and
the tests all drive the same :class:`Session`. Every edit goes through it, and it says what changed
through one event, :attr:`Session.changed`, which carries a :class:`Change`:

- ``paint``: one pointer event of a stroke in progress changed ``region``;
- ``stroke``: a stroke ended (``region`` is all it changed); it is recorded and can be undone;
- ``operation``: one undoable operation on a region (:meth:`Session.apply`);
- ``undo`` / ``redo``: a step was taken back or put back;
- ``cancel``: a stroke in progress was undone before it ended (Escape, or a failing brush);
- ``settle``: a finished stroke's or operation's coefficients became what is heard
  (:mod:`spectropaint.brushes.settle`), computed on the session's worker thread and recorded into
  its undo step (``region`` EMPTY when the result was dropped because the document moved on);
- ``selection``: the selection changed (:attr:`Session.selection`; no coefficients changed);
- ``saved``: the document is now held by a project file (no coefficients changed);
- ``document``: :attr:`Session.document` is another document (:meth:`Session.change_analysis`, or
  an undo or redo of that step): whoever shows or plays it starts again from the new one.

The renderer uploads every non-empty ``region``, playback resynthesises it, and autosave counts the
changes that complete an edit (:attr:`Change.completes_edit`). Callbacks run on the thread that
made the change; a GUI bridges them to its own thread.

The session's :attr:`lock` is held while it writes the document; whoever reads the document from
another thread (playback's resynthesis, a save's snapshot) takes it too.
The generation is counted under it too (edits only, on the thread that makes them). A new stroke,
an operation, an undo, a redo, a change of analysis and a snapshot first wait for the pending
settles (:meth:`Session.finish_settles`), so none captures a state before a settle and no settle
lands on a later edit. The window never calls them while settles are pending (it waits on a timer,
:mod:`spectropaint.app.window.when_idle`), so that wait blocks only other threads.

A change of analysis, and the undo or redo of one, analyse the whole sound: they run on a worker
thread, take the lock only to install the new document, and meanwhile (:attr:`Session.replacing`)
every other edit is refused with a ``RuntimeError``.
"""

from __future__ import annotations

import atexit
import dataclasses
import logging
import os
import queue
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from spectropaint.app.analysis_change import AnalysisChange, AnalysisStep, push_change
from spectropaint.brushes.actions import RecordedAction, plan_action
from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.history import DEFAULT_BYTE_BUDGET, History
from spectropaint.brushes.operations import Clipboard, Plan, apply_plans
from spectropaint.brushes.recorded import RecordedStroke
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.settle import SettlePlan, apply_settle, plan_operation_settle
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.analysis import AnalysisSettings
from spectropaint.transforms.document import Document
from spectropaint.transforms.errors import Cancelled
from spectropaint.transforms.events import Event
from spectropaint.transforms.files.project_file import EditedRun, copy_edited_runs, save_project
from spectropaint.transforms.reanalyse import reanalyse
from spectropaint.transforms.regions import EMPTY, Region
from spectropaint.transforms.selection import Selection, resolve
from spectropaint.transforms.transform import Progress

EDIT_KINDS = frozenset({"stroke", "operation", "undo", "redo", "document"})
"""Changes that complete an edit: the document differs from what it was, for good."""
HURRY_AFTER_S = 1.5
"""An edit, undo, redo or snapshot waits this long for the pending settles to finish at their
own pace, then hurries them (they end their iterations at the next one): the settle of a stroke
across minutes of sound would otherwise hold the next edit for a minute."""
log = logging.getLogger(__name__)
_settling: weakref.WeakSet[Session] = weakref.WeakSet()
"""Sessions whose settle thread runs: stopped at exit, before the interpreter tears torch down
(a thread still computing then aborts the process)."""


@atexit.register
def _stop_settling() -> None:
    for session in list(_settling):
        session.close()


@dataclass(frozen=True)
class Change:
    """What a session changed: ``region`` of the coefficients (``EMPTY`` if none), how, and the
    session's generation after it (for ``saved``: the generation the project holds)."""

    region: Region
    kind: str
    generation: int

    @property
    def completes_edit(self) -> bool:
        """A stroke ended, or a step was undone or redone."""
        return self.kind in EDIT_KINDS


class BrushFailed(RuntimeError):
    """A brush raised while painting; its stroke was undone (the message says which brush)."""


Entry = RecordedStroke | RecordedAction | AnalysisChange


class StrokeLog:
    """The strokes and operations that made the document, in step with its undo history.

    ``done`` are the entries in the document, oldest first; ``undone`` those undone and not yet
    redone (the next to redo last). The undo history holds the newest undoable entries of ``done`` (older ones may have
    left it when over its budget), so an undo that changed something undid the last of them. An
    entry that is no undo step (a copy) stays with the undoable entry before it: undoing that one
    takes both back, so that a replay of ``done`` copies what was there when it copied.
    """

    def __init__(self, strokes: Iterable[Entry] = ()):
        self.done: list[Entry] = list(strokes)
        self.undone: list[Entry] = []
        self._undoable: list[bool] = [True] * len(self.done)
        self._undone_undoable: list[bool] = []
        self._groups: list[int] = []
        """How many entries of ``undone`` each undo took back, in order."""

    def add(self, entry: Entry, *, undoable: bool = True) -> None:
        """A new entry: an undoable one ends the redo list, as it ends the history's."""
        self.done.append(entry)
        self._undoable.append(undoable)
        if undoable:
            self.undone.clear()
            self._undone_undoable.clear()
            self._groups.clear()

    def undo(self) -> None:
        count = 0
        while self.done:
            undoable = self._undoable.pop()
            self.undone.append(self.done.pop())
            self._undone_undoable.append(undoable)
            count += 1
            if undoable:
                break
        if count:
            self._groups.append(count)

    def redo(self) -> None:
        if self._groups:
            for _ in range(self._groups.pop()):
                self.done.append(self.undone.pop())
                self._undoable.append(self._undone_undoable.pop())

    def to_dicts(self) -> list[dict[str, Any]]:
        """The strokes and operations (a change of analysis is the project's, not replayed)."""
        return [entry.to_dict() for entry in self.done if not isinstance(entry, AnalysisChange)]


@dataclass(frozen=True)
class Snapshot:
    """What a save writes: the document (whose audio and settings nothing writes after loading),
    host copies of its edited frames as they were, the view and strokes, and the session's
    generation at that moment."""

    document: Document
    edits: list[EditedRun]
    view: dict[str, Any]
    strokes: list[dict[str, Any]]
    generation: int

    def write(self, path: str, progress: Progress | None = None):
        """Save as a project at ``path`` (no lock needed); the ``ProjectReport``."""
        return save_project(
            self.document,
            path,
            view=self.view,
            strokes=self.strokes,
            edits=self.edits,
            progress=progress,
        )


def _reporting(plans: list[Plan], progress: Progress) -> list[Plan]:
    """``plans`` whose computations tell ``progress`` the share of them done before and after
    each one, raising ``Cancelled`` when it returns False (before the plan's values are written:
    a cancel during the last computation writes nothing of it)."""

    def told(index: int, plan: Plan) -> Plan:
        def compute(magnitude: torch.Tensor, phase: torch.Tensor):
            _check(progress, index / len(plans))
            values = plan.compute(magnitude, phase)
            _check(progress, (index + 1) / len(plans))
            return values

        return dataclasses.replace(plan, compute=compute)

    return [told(index, plan) for index, plan in enumerate(plans)]


def _check(progress: Progress, fraction: float) -> None:
    if progress(fraction) is False:
        raise Cancelled("the operation was cancelled")


class Session:
    """One document being edited.

    Parameters
    ----------
    document : Document
    path : str, optional
        The file it was opened from (a sound or a project); None for the demo or an array.
    project_path : str, optional
        The project file that holds it (None until saved, unless opened from one).
    strokes : iterable of RecordedStroke or RecordedAction
        The strokes and operations that made it (a project's).
    recovered : bool
        It comes from a recovery copy that no file holds yet: it starts modified.
    history_budget : int
        Bytes the undo history may keep.
    settle : bool
        Settle each finished stroke (the default); False leaves strokes as painted.
    """

    def __init__(
        self,
        document: Document,
        *,
        path: str | None = None,
        project_path: str | None = None,
        strokes: Iterable[Entry] = (),
        recovered: bool = False,
        history_budget: int = DEFAULT_BYTE_BUDGET,
        settle: bool = True,
    ):
        self.document = document
        self.history = History(document, byte_budget=history_budget)
        self.strokes = StrokeLog(strokes)
        self.lock = threading.Lock()
        self.path = path
        self.project_path = project_path
        self.recovered = recovered
        self.modified = recovered
        """The document holds edits that no project file has."""
        self.generation = 0
        """Counts the completed edits; a save notes the generation it wrote. A settle is part of
        its edit and counts nothing: every save waits for the pending settles first, so a
        generation names the settled state."""
        self.changed: Event[Change] = Event()
        self._stroke: StrokeSession | None = None
        self._events: list[InputEvent] = []
        self.settling = settle
        self._settles: queue.Queue[SettlePlan | None] = queue.Queue()
        self._settled = threading.Condition()
        self._pending_settles = 0
        """Settles not yet applied (a listener told of a settle finds it no longer counted)."""
        self._unsettled: list[SettlePlan] = []
        """The plans queued, computing, or whose settle is being told (under ``_settled``)."""
        self._settler: threading.Thread | None = None
        self.selection = Selection()
        """What operations act on (empty: nothing selected)."""
        self.clipboard = Clipboard()
        self._replacing = False
        """A change of analysis (or its undo or redo) is analysing the sound (under ``lock``)."""
        self.document_step: str | None = None
        """How the session came to hold its document: ``'change'`` (of analysis), ``'undo'`` or
        ``'redo'`` (of one); None as opened. Who cannot show it reverses that step."""

    @property
    def notices(self) -> Event[str]:
        """Messages for the person (the document's: a switch to the CPU, a damaged file opened)."""
        return self.document.notices

    @property
    def name(self) -> str:
        """The project's file name, else the sound's, else ``'Demo sound'``."""
        path = self.project_path or self.path
        return os.path.basename(path) if path else "Demo sound"

    def _emit(self, region: Region, kind: str) -> None:
        """Tell ``changed``; an edit counts a generation, under the lock (edits come from the GUI
        thread and the painting thread; a paint event does not wait for it). Never called with the
        lock held."""
        generation = self.generation
        if kind in EDIT_KINDS:
            with self.lock:
                self.generation += 1
                self.modified = True
                generation = self.generation
        self.changed.emit(Change(region, kind, generation))

    # ---------------------------------------------------------------------------------- strokes
    @property
    def painting(self) -> bool:
        """A stroke is in progress."""
        return self._stroke is not None

    def begin_stroke(
        self,
        brush: str,
        settings: BrushSettings,
        params: Mapping[str, Any],
        event: InputEvent,
    ) -> Region:
        """Start a stroke of ``brush`` at ``event`` (which dabs); the box it changed.

        Raises ``SettingsError`` for settings or parameters the brush refuses (nothing begins).
        """
        if self._stroke is not None:
            raise RuntimeError("a stroke is already in progress")
        self.finish_settles()
        with self.lock:
            self._refuse_while_replacing()
            self._stroke = StrokeSession(
                self.document, brush, settings, params=params, history=self.history
            )
        self._events = []
        return self.paint(event)

    def paint(self, *events: InputEvent) -> Region:
        """Apply pointer events to the stroke in progress, together (one change); the box they
        changed.

        A brush that raises has its stroke undone (a ``cancel`` change) and :class:`BrushFailed`
        says so.
        """
        stroke = self._require_stroke()
        try:
            with self.lock:
                region = stroke.add_events(events)
        except Exception as exc:  # a brush bug must not leave a half-open stroke behind
            name = stroke.state.kind.name
            self.cancel_stroke()
            raise BrushFailed(f"The {name} brush failed and its stroke was undone: {exc}") from exc
        self._events.extend(events)
        if not region.empty:
            self._emit(region, "paint")
        return region

    def end_stroke(self) -> Region:
        """Finish the stroke in progress; record it when it changed something. The box changed."""
        stroke = self._require_stroke()
        self._stroke = None
        with self.lock:
            stroke.end(to_host=False)  # the tiles go to the host later, outside the lock
            plan = stroke.settle_plan() if self.settling else None
        region = stroke.region
        if plan is not None:
            self._settle_later(plan)
        if region.empty:
            return region
        state = stroke.state
        self.strokes.add(
            RecordedStroke(state.kind.name, state.settings, state.params, tuple(self._events))
        )
        self._emit(region, "stroke")
        self.history.steps_to_host(self.lock)  # but this stroke's, which stays for a quick undo
        return region

    def cancel_stroke(self) -> Region:
        """Undo the stroke in progress and forget it; the box restored."""
        stroke = self._require_stroke()
        self._stroke = None
        with self.lock:
            region = stroke.abort()
        if not region.empty:
            self._emit(region, "cancel")
        return region

    def _require_stroke(self) -> StrokeSession:
        if self._stroke is None:
            raise RuntimeError("no stroke is in progress")
        return self._stroke

    # -------------------------------------------------------------------------------- settling
    def finish_settles(self) -> None:
        """Wait for the pending settles (a no-op on the settle thread itself, whose listeners may
        call back), hurrying them after :data:`HURRY_AFTER_S`. Every edit, undo, redo and
        snapshot does this first, so none captures a state before a settle, and no settle lands on
        a later edit (where it would be dropped)."""
        if threading.current_thread() is self._settler or self.wait_settled(HURRY_AFTER_S):
            return
        self.hurry_settles()
        self.wait_settled()

    def hurry_settles(self) -> None:
        """Tell the queued and computing settles to end their iterations at the next one."""
        with self._settled:
            for plan in self._unsettled:
                plan.hurry.set()

    def _settle_later(self, plan: SettlePlan) -> None:
        """Compute ``plan`` on the worker thread, then apply it under the lock (dropped there if
        the document moved on meanwhile: another stroke, an undo)."""
        with self._settled:
            self._pending_settles += 1
            self._unsettled.append(plan)
        if self._settler is None:
            self._settler = threading.Thread(target=self._settle_loop, name="settle", daemon=True)
            self._settler.start()
            _settling.add(self)
        self._settles.put(plan)

    def _settle_loop(self) -> None:
        while (plan := self._settles.get()) is not None:
            region = EMPTY
            try:
                result = plan.compute()
                with self.lock:
                    region = apply_settle(self.document, self.history, result)
            except Exception:  # the edit stays as painted; painting goes on
                log.exception("settling an edit failed")
            with self._settled:  # before telling: a listener finds no settle pending for it
                self._pending_settles -= 1
            self.changed.emit(Change(region, "settle", self.generation))  # EMPTY when dropped
            with self._settled:  # after telling: who waits for it finds the listeners told
                self._unsettled.remove(plan)
                self._settled.notify_all()

    @property
    def settles_pending(self) -> bool:
        """Finished strokes or operations are still settling (a save now would hold them as
        painted)."""
        return self._pending_settles > 0

    def wait_settled(self, timeout: float | None = None) -> bool:
        """Block until every finished edit has settled and ``changed`` has told it; False if
        ``timeout`` passed first."""
        with self._settled:
            return self._settled.wait_for(lambda: not self._unsettled, timeout)

    def close(self) -> None:
        """Stop the settle thread, hurrying the settles under way (see :meth:`finish_settles`)."""
        if self._settler is not None:
            self.hurry_settles()
            self._settles.put(None)
            self._settler.join()
            self._settler = None
            _settling.discard(self)

    # ------------------------------------------------------------------------------ operations
    def apply(
        self,
        label: str,
        region: Region,
        compute: Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
    ) -> Region:
        """One undoable operation: ``compute(magnitude, phase)`` of ``region`` (each
        ``[channels, bins, frames]``) gives the values written there. The box changed."""
        if self._stroke is not None:
            raise RuntimeError("an operation cannot run while a stroke is in progress")
        self.finish_settles()
        with self.lock:
            self._refuse_while_replacing()
            changed = apply_plans(
                self.document, [Plan(label, region, compute)], label=label, history=self.history
            )
            plan = self._operation_settle(changed, [region])
        self._emit(changed, "operation")
        if plan is not None:
            self._settle_later(plan)
        return changed

    # ------------------------------------------------------------------------------- selection
    def set_selection(self, selection: Selection | None) -> None:
        """Select ``selection`` (None or an empty one: nothing), measured on the document where
        it depends on the sound (a harmonic's track, a wand's cells); tells it as ``selection``."""
        selection = selection or Selection()
        if not selection.empty and not selection.resolved:
            with self.lock:
                selection = resolve(selection, self.document)
        self.selection = selection
        self.changed.emit(Change(EMPTY, "selection", self.generation))

    def apply_to_selection(
        self,
        operation: str,
        params: Mapping[str, Any] | None = None,
        *,
        channel: int | None = None,
        progress: Progress | None = None,
    ) -> Region | None:
        """Run ``operation`` (an operation or a helper of :mod:`spectropaint.brushes.actions`) on
        the selection as one undo step, and record it; the box changed, None if nothing changed.

        Raises ``SettingsError`` for bad parameters, or an operation that needs a selection
        without one; ``progress`` as for :meth:`apply_action`.
        """
        selection = None if self.selection.empty else self.selection
        if operation == "paste":
            selection = None
        action = RecordedAction(operation, dict(params or {}), selection, channel)
        return self.apply_action(action, progress)

    def apply_action(
        self, action: RecordedAction, progress: Progress | None = None
    ) -> Region | None:
        """Run a recorded operation as one undo step and add it to the log (a copy, which changes
        nothing, is logged too, for replays to paste what it took).

        ``progress(fraction)`` is told before and after each of the operation's parts is computed
        (a window runs a long one, a heal, on a worker thread); returning False raises
        ``Cancelled`` and leaves the document (coefficients and edited frames) and the history as
        they were.
        """
        if self._stroke is not None:
            raise RuntimeError("an operation cannot run while a stroke is in progress")
        self.finish_settles()
        with self.lock:
            self._refuse_while_replacing()
            label, plans = plan_action(self.document, action, clipboard=self.clipboard)
            if plans:
                region = self._apply_plans(plans, label, progress)
                settle = self._operation_settle(region, [plan.region for plan in plans])
        if not plans:
            if action.apply == "copy":
                self.strokes.add(action, undoable=False)
            return None
        self.strokes.add(action)
        self._emit(region, "operation")
        if settle is not None:
            self._settle_later(settle)
        return region

    def _apply_plans(self, plans: list[Plan], label: str, progress: Progress | None) -> Region:
        """:func:`apply_plans` as one undo step, cancellable through ``progress`` (under the
        lock): a cancel undoes what was written and unmarks the frames it marked edited."""
        if progress is None:
            return apply_plans(self.document, plans, label=label, history=self.history)
        edited = [block.edited_frames.copy() for block in self.document.blocks]
        try:
            return apply_plans(
                self.document, _reporting(plans, progress), label=label, history=self.history
            )
        except Cancelled:
            for block, frames in zip(self.document.blocks, edited, strict=True):
                block.edited_frames[:] = frames
            raise

    def _operation_settle(self, changed: Region, regions: list[Region]) -> SettlePlan | None:
        """The settle of the operation just applied (under the lock), None when not settling."""
        return plan_operation_settle(self.history, changed, regions) if self.settling else None

    # ---------------------------------------------------------------------------- undo and redo
    def undo(self, progress: Progress | None = None) -> Region | None:
        """Take back the latest step (and its recorded stroke); the box changed, None if none.

        ``progress`` sees the analysis when the step is a change of analysis
        (:meth:`step_replaces`); returning False raises ``Cancelled`` and nothing changes.
        """
        return self._step(self.history.undo, self.strokes.undo, "undo", progress)

    def redo(self, progress: Progress | None = None) -> Region | None:
        """Put back the latest undone step; the box changed, None if none (``progress`` as for
        :meth:`undo`)."""
        return self._step(self.history.redo, self.strokes.redo, "redo", progress)

    def next_step(self, kind: str):
        """The step the next ``'undo'`` or ``'redo'`` takes (its ``label`` names it), None when
        there is none."""
        steps = self.history.undo_steps if kind == "undo" else self.history.redo_steps
        return steps[-1] if steps else None

    def step_replaces(self, kind: str) -> bool:
        """The next ``'undo'`` or ``'redo'`` is of a change of analysis: it analyses the whole
        sound (run it on a worker thread, with progress)."""
        return isinstance(self.next_step(kind), AnalysisStep)

    def _step(self, step, log_step, kind: str, progress: Progress | None) -> Region | None:
        if self._stroke is not None:
            return None
        replacing = self.step_replaces(kind)
        if replacing:  # analysed before the lock: the step rebuilds from its own copies
            self._begin_replacing()
            try:
                analysis = self.next_step(kind)
                if isinstance(analysis, AnalysisStep):  # still, now that edits wait
                    analysis.prepare(progress)
            except BaseException:
                self._replacing = False
                raise
        else:
            self.finish_settles()
        with self.lock:
            if replacing:
                self._replacing = False  # ours: the step installs what was prepared
            else:
                self._refuse_while_replacing()
            region = step()
            replaced = self.history.document is not self.document
            self.document = self.history.document
        if region is None:
            return None
        log_step()
        if replaced:
            self.document_step = kind
        self._emit(region, "document" if replaced else kind)
        return region

    # --------------------------------------------------------------------------------- analysis
    def change_analysis(
        self,
        settings: AnalysisSettings,
        *,
        progress: Progress | None = None,
        reserve_bytes: int = 0,
    ) -> None:
        """Analyse the edited sound anew with ``settings`` (STFT or NSGT settings) as one undo step
        (:mod:`spectropaint.app.analysis_change`), and tell it as ``document``.

        Raises ``SettingsError`` for settings the sample rate cannot have, ``Cancelled`` when
        ``progress`` returns False, and what opening a document raises for memory; nothing
        changes then. The sound is analysed without the lock (other threads read and play the
        document meanwhile; edits are refused: :attr:`replacing`).
        """
        self._begin_replacing()
        try:
            document = self.document
            new = reanalyse(document, settings, progress=progress, reserve_bytes=reserve_bytes)
            with self.lock:
                push_change(self.history, new, settings)
                self.document = new
            self.strokes.add(AnalysisChange(document.settings, settings))
            self.document_step = "change"
        finally:
            self._replacing = False
        self._emit(EMPTY, "document")

    @property
    def replacing(self) -> bool:
        """A change of analysis, or its undo or redo, is analysing the sound: edits are refused."""
        return self._replacing

    def _begin_replacing(self) -> None:
        """Wait for the pending settles, then refuse edits until ``_replacing`` is cleared (a
        ``RuntimeError`` with a stroke in progress or another replacement under way)."""
        while True:
            self.finish_settles()
            with self.lock:
                if self._stroke is not None:
                    raise RuntimeError("the analysis cannot change while a stroke is in progress")
                self._refuse_while_replacing()
                if not self.settles_pending:  # else an edit ended meanwhile: wait for it too
                    self._replacing = True
                    return

    def _refuse_while_replacing(self) -> None:
        """Under the lock: a ``RuntimeError`` while the analysis changes."""
        if self._replacing:
            raise RuntimeError("the document cannot be edited while its analysis changes")

    # ----------------------------------------------------------------------------------- saving
    def snapshot(self, view: Mapping[str, Any]) -> Snapshot:
        """The document, ``view`` and strokes now, holding the lock only while the edited frames
        are copied (time and memory in proportion to them, not to the document)."""
        self.finish_settles()
        with self.lock:
            edits = copy_edited_runs(self.document)
            generation = self.generation
        return Snapshot(self.document, edits, dict(view), self.strokes.to_dicts(), generation)

    def mark_saved(self, path: str, generation: int) -> None:
        """The document as it was at ``generation`` is now the project at ``path``."""
        self.project_path, self.recovered = path, False
        if generation == self.generation:
            self.modified = False
        self.changed.emit(Change(EMPTY, "saved", generation))
