"""The session's changes on the GUI thread: each told to every listener in turn, and ``taken``
after the last of those queued together (the canvas draws them in one frame then)."""

import threading

import pytest
from brush_fixtures import small_document
from PySide6.QtWidgets import QApplication

from spectropaint.app.session import Change, Session
from spectropaint.app.window.session_bridge import SessionBridge
from spectropaint.transforms.regions import Region

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture
def bridge(qapp):
    bridge = SessionBridge(Session(small_document()))
    heard = []
    bridge.changed.connect(lambda change: heard.append(("changed", change.generation)))
    bridge.changed.connect(lambda change: heard.append(("second listener", change.generation)))
    bridge.taken.connect(lambda: heard.append(("taken", None)))
    bridge.start()
    yield bridge, heard
    bridge.close()


def change(generation: int) -> Change:
    return Change(Region(0, 4, 0, 4, (0,)), "paint", generation)


def test_changes_from_another_thread_are_told_in_order_then_taken_once(bridge):
    bridge, heard = bridge
    painting = threading.Thread(
        target=lambda: [bridge.session.changed.emit(change(k)) for k in range(3)]
    )
    painting.start()
    painting.join()
    assert heard == []  # queued for the GUI thread's event loop
    QApplication.processEvents()
    told = [(name, k) for k in range(3) for name in ("changed", "second listener")]
    assert heard == [*told, ("taken", None)]


def test_a_change_on_the_gui_thread_is_told_and_taken_at_once(bridge):
    bridge, heard = bridge
    bridge.session.changed.emit(change(1))
    assert heard == [("changed", 1), ("second listener", 1), ("taken", None)]
    bridge.session.changed.emit(change(2))
    assert heard[3:] == [("changed", 2), ("second listener", 2), ("taken", None)]


def test_a_change_made_while_one_is_told_is_taken_with_it(bridge):
    bridge, heard = bridge
    bridge.changed.connect(
        lambda c: bridge.session.changed.emit(change(9)) if c.generation == 1 else None
    )
    bridge.session.changed.emit(change(1))
    names = [name for name, _ in heard]
    assert names.count("taken") == 1 and names[-1] == "taken"
    assert [k for name, k in heard if name == "changed"] == [1, 9]
