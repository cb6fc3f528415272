"""The local media folder is its owner's alone."""

import stat

from lecturecopilot.storage import MediaStore


def test_the_media_folder_is_private_to_its_owner(tmp_path):
    fresh = MediaStore(tmp_path / "new" / "media")
    assert stat.S_IMODE(fresh.root.stat().st_mode) == 0o700
    old = tmp_path / "old"
    old.mkdir(mode=0o755)
    old.chmod(0o755)  # an install from before: the folder every user could read
    MediaStore(old)
    assert stat.S_IMODE(old.stat().st_mode) == 0o700
