"""Record / replay round trip and every way a snapshot file can be wrong."""

import json
import os

import pytest

from ascend_doctor.core.errors import InputError
from ascend_doctor.seam.host import NOT_FOUND
from ascend_doctor.seam.snapshot import (
    CommandEntry,
    FileEntry,
    RecordingHost,
    ReplayHost,
    Snapshot,
    load_snapshot,
)
from ascend_doctor.text.redact import REDACTED
from tests.helpers import REPO


def test_replay_answers_recorded_and_not_found_for_the_rest():
    snap = Snapshot.model_validate(dict(commands=[CommandEntry(argv=["npu-smi", "info"], stdout="table")],
                    files={"/etc/x": FileEntry(content="hi")}, env={"A": "1"}))
    host = ReplayHost(snap)
    assert host.run(["npu-smi", "info"]).stdout == "table"
    assert host.run(["hccn_tool", "-i", "0"]).error == NOT_FOUND
    assert host.read_file("/etc/x").content == "hi"
    assert host.read_file("/etc/y").error == NOT_FOUND
    assert host.list_dir("/dev").error == NOT_FOUND
    assert host.readlink("/etc/x").resolved == "/etc/x"
    assert host.env() == {"A": "1"}
    assert not host.python_env().ok


def test_recording_round_trip_and_redaction(tmp_path):
    inner = ReplayHost(Snapshot.model_validate(dict(
        commands=[CommandEntry(argv=["tool", "--api-key", "abc"], stdout="Authorization: Bearer sk-0123456789abcdef")],
        files={"/f": FileEntry(content="x")},
        env={"HF_TOKEN": "hf_0123456789abcdefghij", "PATH": "/bin"},
    )))
    rec = RecordingHost(inner)
    rec.run(["tool", "--api-key", "abc"])
    rec.read_file("/f")
    rec.read_file("/missing")
    rec.env()
    path = tmp_path / "s.json"
    path.write_text(rec.snapshot.dump())
    text = path.read_text()
    assert "sk-0123456789abcdef" not in text and "hf_0123456789" not in text and '"abc"' not in text
    back = ReplayHost(load_snapshot(path))
    assert back.env()["HF_TOKEN"] == REDACTED and back.env()["PATH"] == "/bin"
    assert back.read_file("/f").content == "x"
    assert back.read_file("/missing").error == NOT_FOUND


@pytest.mark.parametrize("content, needle", [
    ("{not json", "not valid JSON"),
    ('{"format": "ascend-doctor-snapshot", "version": 1, "commands": [{"argv": ', "not valid JSON"),
    ('{"format": "something-else", "version": 1}', "not an ascend-doctor snapshot"),
    ('{"format": "ascend-doctor-snapshot", "version": 99}', "format version 99"),
    ('{"format": "ascend-doctor-snapshot", "version": 1, "commands": [{"stdout": "x"}]}', "commands.0.argv"),
    ('[1, 2]', "not an ascend-doctor snapshot"),
])
def test_bad_snapshots_are_one_line_input_errors(tmp_path, content, needle):
    p = tmp_path / "bad.json"
    p.write_text(content)
    with pytest.raises(InputError) as exc:
        load_snapshot(p)
    assert needle in str(exc.value) and "\n" not in str(exc.value)


def test_unreadable_snapshot(tmp_path):
    with pytest.raises(InputError, match="cannot read .*missing.json: No such file"):
        load_snapshot(tmp_path / "missing.json")
    p = tmp_path / "bin.json"
    p.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(InputError):
        load_snapshot(p)


def test_hand_built_minimal_snapshot_is_valid(tmp_path):
    p = tmp_path / "hand.json"
    p.write_text(json.dumps({"format": "ascend-doctor-snapshot", "version": 1,
                             "commands": [{"argv": ["npu-smi", "info"], "stdout": "..."}]}))
    snap = load_snapshot(p)
    assert snap.commands[0].returncode == 0


def test_inline_scripts_are_stored_by_name():
    from ascend_doctor.probes.imports import IMPORT_SCRIPT
    from ascend_doctor.seam.snapshot import canonical_argv

    assert canonical_argv(["/py", "-c", IMPORT_SCRIPT]) == ["/py", "-c", "<script:import-probe>"]
    assert canonical_argv(["/py", "-c", "print(1)"]) == ["/py", "-c", "print(1)"]
    snap = Snapshot(commands=[CommandEntry(argv=["/py", "-c", "<script:import-probe>"], stdout="ok")])
    assert ReplayHost(snap).run(["/py", "-c", IMPORT_SCRIPT]).stdout == "ok"
    rec = RecordingHost(ReplayHost(snap))
    rec.run(["/py", "-c", IMPORT_SCRIPT])
    assert rec.snapshot.commands[0].argv == ["/py", "-c", "<script:import-probe>"]


def test_an_env_var_name_with_a_non_utf8_byte_is_kept_and_noted():
    """pydantic's JSON mode turns a key's \\udcff into three U+FFFD; the snapshot keeps the byte and says where."""
    snap = load_snapshot(str(REPO / "examples" / "healthy-a2.snapshot.json"))
    snap.env["MY\udcffVAR"] = "1"
    text = snap.dump()
    assert '"MY\\udcffVAR"' in text and "\ufffd" not in text
    again = json.loads(text)
    assert any("env.MY\\xffVAR (key)" in n for n in again["notes"]), again["notes"]
    assert os.fsencode(next(k for k in again["env"] if k.startswith("MY"))) == b"MY\xffVAR"
