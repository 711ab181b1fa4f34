"""Imported once by the forkserver so every check starts with torch already loaded.

Only imports: running any parallel torch op here would leave OpenMP state that can
deadlock forked children.
"""

import contextlib

import torch
import torch.distributed
import torch.nn
import torch.optim
import torch.utils.data

with contextlib.suppress(Exception):  # imported lazily by the first optimizer step; pay once here
    import torch._dynamo  # noqa: F401

with contextlib.suppress(ImportError):
    import numpy  # noqa: F401

from . import _child, _supervise  # noqa: F401

_child.remember_modules()  # once here, so a check copies only what was loaded after the fork
