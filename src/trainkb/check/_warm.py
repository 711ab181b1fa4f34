"""Imported once by the forkserver so every check starts with torch already loaded.

Only imports: running any parallel torch op here would leave OpenMP state that can
deadlock forked children.
"""

import torch
import torch.distributed
import torch.nn
import torch.optim
import torch.utils.data

try:  # imported lazily by the first optimizer step; worth paying once here
    import torch._dynamo  # noqa: F401
except Exception:  # pragma: no cover - optional on exotic builds
    pass

try:
    import numpy  # noqa: F401
except ImportError:  # pragma: no cover
    pass

from . import _child  # noqa: F401
