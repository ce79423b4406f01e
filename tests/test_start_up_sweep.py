"""At start-up the window sweeps what killed saves left next to the files a person saves."""

import os
import time

from PySide6.QtCore import QSettings

from spectropaint.app.files.recovery import sweep_save_folders
from spectropaint.app.settings_store import SettingsStore


def test_stale_partials_in_recent_folders_are_swept_and_nothing_else(qapp, tmp_path):
    projects, other, recovery = tmp_path / "projects", tmp_path / "other", tmp_path / "recovery"
    for folder in (projects, other, recovery):
        folder.mkdir()
    store = SettingsStore(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    store.add_recent(str(projects / "song.spp"))
    old = time.time() - 3600
    stale = projects / ".song.spp.0123456789ab.partial"
    fresh = projects / ".song.spp.ba9876543210.partial"
    unrelated = projects / "notes.partial"
    elsewhere = other / ".x.wav.0123456789ab.partial"
    in_recovery = recovery / ".session-1.spp.aaaaaaaaaaaa.partial"
    for path in (stale, fresh, unrelated, elsewhere, in_recovery):
        path.write_bytes(b"half a file")
    for path in (stale, unrelated, elsewhere, in_recovery):
        os.utime(path, (old, old))
    removed = sweep_save_folders(store, str(recovery))
    assert sorted(removed) == sorted([str(stale), str(in_recovery)])
    assert not stale.exists() and not in_recovery.exists()
    assert fresh.exists() and unrelated.exists() and elsewhere.exists()
