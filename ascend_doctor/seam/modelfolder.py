"""Where a model folder's files may lead: a symbolic link inside a downloaded model that points out of it is not read.

A model folder is data from elsewhere (a hub, a colleague's copy, an image layer), and the doctor reads its JSON and
template files as root in a gate, quoting parts of them in findings: `chat_template.jinja -> /root/.ssh/id_rsa` or
`config.json -> /etc/shadow` would put another file's text in a report (#40 item 11). So every file the doctor reads
from a model folder must resolve inside it — or, in the Hugging Face cache layout, inside the repository directory,
since `models--org--name/snapshots/<rev>/config.json` is a link to `../../blobs/<hash>` by design. The folder itself
may be a link (`/models/qwen -> /mnt/nfs/qwen`): the boundary is where it resolves to.

A safetensors shard outside the folder is still sized (only its header's tensor offsets are read, nothing quoted).
"""

from __future__ import annotations

import posixpath
from typing import Optional

from ascend_doctor.i18n import Msg, T


def allowed_root(resolved_folder: str) -> str:
    """The directory the files of a model folder (already resolved) may resolve into."""
    parts = posixpath.normpath(resolved_folder).split("/")
    if len(parts) >= 3 and parts[-2] == "snapshots" and parts[-3].startswith("models--"):
        return "/".join(parts[:-2])  # the Hugging Face cache repository: snapshots/<rev>/* link to its blobs/
    return posixpath.normpath(resolved_folder)


def outside(resolved_file: str, root: str) -> bool:
    """`resolved_file` is not `root` or under it."""
    f, r = posixpath.normpath(resolved_file), posixpath.normpath(root)
    return not (f == r or f.startswith(r.rstrip("/") + "/"))


def refusal(path: str, resolved: str, root: str) -> Optional[Msg]:
    """Why `path` (resolving to `resolved`) is not read, or None when it stays inside `root`."""
    if not outside(resolved, root):
        return None
    return T("{path} is a link to {target}, outside the model folder {root}: not read (copy the file into the folder "
             "if it belongs to the model)", path=path, target=resolved, root=root)
